"""PyTorch's CPU random numbers: the MT19937 engine and PyTorch's bits-to-numbers rules.

Why: ember's own generator is Philox (ember/_random.py), so `manual_seed(s)` + `rand`
cannot give PyTorch's numbers. `ember.manual_seed(s, generator="mt19937")` switches a
generator to this engine, which reproduces PyTorch 2.x's CPU generator number for number,
so a ported program can be checked against PyTorch value by value.

Note (what PyTorch's CPU kernels do, reproduced here; each is tested against torch):
  engine        at::mt19937 seeded with seed & 0xffffffff (init_genrand); random() is one
                32-bit output, random64() = random() << 32 | random()
  uniform       float32 (r & 2**24-1) * 2**-24 (half/bfloat16: that float rounded), float64
                (random64 & 2**53-1) * 2**-53; uniform_(a, b) = fma(x, b - a, a)
  normal        >= 16 contiguous elements: all uniforms first, then Box-Muller on blocks of
                16 (u1 = 1 - d[j], u2 = d[j + 8]), the last partial block recomputed from
                16 fresh uniforms. float32 follows the AVX2 kernel (avx_mathfun's cephes
                log/sincos with GCC's fused multiply-adds), float64 libm's log/cos/sin.
                < 16 elements: normal_distribution<double> per element, which caches the
                second (sine) value in the generator for the next draw.
  randint       (r % range) + low with r = random() when range < 2**28, else random64()
  randperm      Fisher-Yates: swap i with i + random() % (n - i) for i < n - 1
  bernoulli     u < p, u a double uniform for a float p or a double p tensor, a float
                uniform for a float32 p tensor
  exponential, cauchy, log_normal, geometric
                PyTorch's serial double distributions (libm's log1p/tan/exp/log)
  multinomial   without replacement: top-k of p / Exponential(1); with: binary search of
                a double uniform in the row's normalised running sum
The state tensor (get_state/set_state) has PyTorch's 5056-byte layout, so a state saved by
torch.get_rng_state() loads here and back.

Not reproduced bit for bit (checked against torch 2.13 on x86-64 with AVX2/AVX-512):
randn/normal_ of >= 16 float16/bfloat16 elements (PyTorch computes those in the reduced
type; ~85% equal, the rest 1 ulp apart) and of a non-contiguous tensor (PyTorch walks it
element by element in memory order); randn of float32 on a CPU without AVX2, or on ARM,
where PyTorch takes other math kernels; randperm of n >= 2**32 / 20 (a different PyTorch
algorithm); Gamma/Beta/Dirichlet/Poisson/Binomial samples (PyTorch's own samplers);
ops whose math differs by rounding after the draw (nn.init.orthogonal_'s QR, Laplace's
log1p) agree to an ulp, not bitwise.
"""
import math

import numpy as np

N = 624
STATE_BYTES = 5056                    # sizeof(at::CPUGeneratorImplState)
_F32, _F64 = np.float32, np.float64


def _init_key(seed):
    """init_genrand: the 624-word key of a 32-bit seed."""
    key = np.empty(N, np.uint32)
    s = seed & 0xFFFFFFFF
    for i in range(N):
        key[i] = s
        s = (1812433253 * (s ^ (s >> 30)) + i + 1) & 0xFFFFFFFF
    return key


class MT19937:
    """at::mt19937 plus the cached normal sample of PyTorch's CPUGeneratorImpl."""

    def __init__(self, seed):
        self.bitgen = np.random.MT19937()
        self.seed(seed)

    def seed(self, seed):
        self.initial_seed = seed
        self.bitgen.state = {"bit_generator": "MT19937",
                             "state": {"key": _init_key(seed), "pos": N}}
        self.next_double_normal = None
        self.next_float_normal = None

    def random(self, n):
        """n 32-bit outputs (uint64 array)."""
        return self.bitgen.random_raw(n)

    def random64(self, n):
        w = self.bitgen.random_raw(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    # ------------------------------------------------------------------ state
    def get_state(self):
        """PyTorch's CPUGeneratorImplState bytes."""
        st = self.bitgen.state["state"]
        pos = int(st["pos"])
        buf = bytearray(STATE_BYTES)
        nxt, left = (pos, N + 1 - pos) if pos < N else (0, 1)
        np.frombuffer(buf, "<u8", 1, 0)[:] = self.initial_seed
        np.frombuffer(buf, "<i4", 2, 8)[:] = (left, 1)
        np.frombuffer(buf, "<u8", 1, 16)[:] = nxt
        np.frombuffer(buf, "<u8", N, 24)[:] = st["key"]
        off = 24 + 8 * N                             # normal_x, normal_y, normal_rho, valid
        if self.next_double_normal is not None:
            np.frombuffer(buf, "<f8", 1, off + 8)[:] = self.next_double_normal
            np.frombuffer(buf, "<i4", 1, off + 24)[:] = 1
        if self.next_float_normal is not None:
            np.frombuffer(buf, "<f4", 1, off + 32)[:] = self.next_float_normal
            buf[off + 36] = 1
        return np.frombuffer(bytes(buf), np.uint8).copy()

    def set_state(self, data):
        buf = np.ascontiguousarray(data, np.uint8).tobytes()
        seed = int(np.frombuffer(buf, "<u8", 1, 0)[0])
        left, seeded = (int(v) for v in np.frombuffer(buf, "<i4", 2, 8))
        nxt = int(np.frombuffer(buf, "<u8", 1, 16)[0])
        key = np.frombuffer(buf, "<u8", N, 24).astype(np.uint32)
        if not seeded or not 1 <= left <= N or nxt > N:
            raise RuntimeError("The given RNG state is not valid")
        off = 24 + 8 * N
        self.initial_seed = seed
        self.bitgen.state = {"bit_generator": "MT19937",
                             "state": {"key": key, "pos": N if left == 1 else nxt}}
        valid = int(np.frombuffer(buf, "<i4", 1, off + 24)[0])
        self.next_double_normal = float(np.frombuffer(buf, "<f8", 1, off + 8)[0]) \
            if valid else None
        self.next_float_normal = float(np.frombuffer(buf, "<f4", 1, off + 32)[0]) \
            if buf[off + 36] else None


# ------------------------------------------------------------ exact arithmetic

def _two_prod(a, b):
    p = a * b
    s = 134217729.0                                   # 2**27 + 1 (Veltkamp split)
    ah = a * s - (a * s - a)
    bh = b * s - (b * s - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma64(a, b, c):
    """Correctly rounded a * b + c on float64 arrays (Boldo-Melquiond: an exact product and
    sum, the low parts added with round-to-odd), as the compiled kernels' fused
    multiply-adds give."""
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    v, err = _two_sum(tl, ul)
    fix = (err != 0) & ((v.view(np.int64) & 1) == 0)
    if fix.any():
        v = np.where(fix, np.nextafter(v, np.where(err > 0, np.inf, -np.inf)), v)
    return th + v


def fma32(a, b, c):
    """float32 fused multiply-add: the float64 product is exact, one rounding after."""
    return (np.asarray(a, _F32).astype(_F64) * np.asarray(b, _F32).astype(_F64)
            + np.asarray(c, _F32).astype(_F64)).astype(_F32)


_vlog = np.frompyfunc(math.log, 1, 1)                # libm's, as PyTorch's double kernels
_vcos = np.frompyfunc(math.cos, 1, 1)
_vsin = np.frompyfunc(math.sin, 1, 1)


def _libm(f, x):
    return f(x).astype(_F64) if x.size else x.astype(_F64)


# ------------------------------------------------------ avx_mathfun (float32)

_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1)


def _log_ps(x):
    """log256_ps (cephes logf) with the multiply-adds GCC fuses."""
    x = np.maximum(x.astype(_F32), _F32(1.17549435e-38))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    x = ((bits & ~0x7F800000) | np.int32(0x3F000000)).view(_F32)
    mask = x < _F32(0.707106781186547524)
    tmp = np.where(mask, x, _F32(0))
    x = x - _F32(1)
    e = e - mask.astype(_F32)
    x = x + tmp
    z = x * x
    y = np.full_like(x, _F32(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = fma32(y, x, _F32(p))
    y = fma32(y * x, z, e * _F32(-2.12194440e-4))
    y = y - z * _F32(0.5)
    return fma32(e, _F32(0.693359375), x + y)


def _sincos_ps(x):
    """sincos256_ps (cephes sinf/cosf) with the multiply-adds GCC fuses."""
    x = x.astype(_F32)
    sign_sin = x.view(np.int32) & np.int32(-0x80000000)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F32)
    sign_sin = sign_sin ^ ((j & 4) << 29)
    poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = fma32(y, _F32(dp), x)
    sign_cos = (~(j - 2) & 4) << 29
    z = x * x
    c = fma32(_F32(2.443315711809948e-5), z, _F32(-1.388731625493765e-3))
    c = fma32(c, z, _F32(4.166664568298827e-2))
    c = fma32(c * z, z, -(z * _F32(0.5))) + _F32(1)
    s = fma32(_F32(-1.9515295891e-4), z, _F32(8.3321608736e-3))
    s = fma32(s, z, _F32(-1.6666654611e-1))
    s = fma32(s * z, x, x)
    sin = np.where(poly, s, c).view(np.int32) ^ sign_sin
    cos = np.where(poly, c, s).view(np.int32) ^ sign_cos
    return sin.view(_F32), cos.view(_F32)


# ---------------------------------------------------------------- uniform

def uniform01(mt, n, name):
    """at::uniform_real_distribution(0, 1) draws: float64 values for float64, float32 ones
    (24 bits) for float32 and for float16/bfloat16, which PyTorch rounds from float."""
    if name == "float64":
        return (mt.random64(n) & np.uint64((1 << 53) - 1)).astype(_F64) * 2.0 ** -53
    return (mt.random(n) & np.uint64((1 << 24) - 1)).astype(_F32) * _F32(2.0 ** -24)


def uniform(mt, n, name, a, b):
    """uniform_(a, b) for n elements of the real floating dtype `name`: fma(x, b - a, a) in
    float (float bounds) for float/half/bfloat16, rounded to the dtype after; in double
    for double."""
    x = uniform01(mt, n, name)
    if name == "float64":
        return fma64(x, b - a, a) if (a, b) != (0.0, 1.0) else x
    fa, fb = _F32(a), _F32(b)          # float bounds for float, half and bfloat16 alike
    return fma32(x, fb - fa, fa)


# ----------------------------------------------------------------- normal

def _serial_normal(mt, n, mean, std):
    """normal_distribution<double> element by element (with the cached sine value)."""
    out = np.empty(n, _F64)
    i = 0
    if n and mt.next_double_normal is not None:
        out[0] = fma64(mt.next_double_normal, std, mean)
        mt.next_double_normal = None
        i = 1
    pairs = (n - i + 1) // 2
    if pairs:
        u = uniform01(mt, 2 * pairs, "float64")
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * np.array([math.log1p(-v) for v in u2]))
        theta = 2.0 * math.pi * u1
        cos = r * _libm(_vcos, theta)
        sin = r * _libm(_vsin, theta)
        vals = np.empty(2 * pairs, _F64)
        vals[0::2], vals[1::2] = cos, sin
        m = n - i
        out[i:] = fma64(vals[:m], std, mean)
        if m % 2:                                     # the last sine waits in the generator
            mt.next_double_normal = float(sin[-1])
    return out


def _fill_blocks(d, mean, std, name):
    """normal_fill_16 on rows of 16 uniforms (float32: the AVX2 kernel; float64: libm)."""
    if name == "float64":
        u1, u2 = 1.0 - d[:, :8], d[:, 8:]
        r = np.sqrt(-2.0 * _libm(_vlog, u1))
        theta = 2.0 * math.pi * u2
        n1, n2 = r * _libm(_vcos, theta), r * _libm(_vsin, theta)
        return np.concatenate([fma64(n1, std, mean), fma64(n2, std, mean)], 1)
    u1, u2 = _F32(1) - d[:, :8], d[:, 8:]
    r = np.sqrt(_F32(-2) * _log_ps(u1))
    sin, cos = _sincos_ps(_F32(2.0 * math.pi) * u2)
    m, s = _F32(mean), _F32(std)
    return np.concatenate([fma32(r * cos, s, m), fma32(r * sin, s, m)], 1)


def normal(mt, n, name, mean, std, contiguous=True):
    """normal_(mean, std) on n elements of dtype `name` (values as float32/float64)."""
    if n < 16 or not contiguous:
        return _serial_normal(mt, n, mean, std)
    grid = "float64" if name == "float64" else "float32"
    data = uniform01(mt, n, grid)
    full = n // 16 * 16
    out = np.empty(n, data.dtype)
    out[:full] = _fill_blocks(data[:full].reshape(-1, 16), mean, std, grid).reshape(-1)
    if n % 16:
        tail = uniform01(mt, 16, grid)
        out[n - 16:] = _fill_blocks(tail.reshape(1, 16), mean, std, grid).reshape(-1)
    return out


# ------------------------------------------------------------- integers

def from_to(mt, n, low, span):
    """random_(low, low + span): int64 values (as PyTorch's uniform_int_from_to)."""
    r = mt.random(n) if span < 1 << 28 else mt.random64(n)
    r = r if span == 1 << 64 else r % np.uint64(span)
    return (r + np.uint64(low & ((1 << 64) - 1))).view(np.int64)


def full_range(mt, n, name):
    """random_() with no bounds: uniform_int_distribution of the dtype."""
    if name in ("int64", "float64"):
        mod = (1 << 63) if name == "int64" else (1 << 53) + 1
        return (mt.random64(n) % np.uint64(mod)).astype(np.int64)
    mod = {"bool": 2, "uint8": 256, "int8": 128, "int16": 1 << 15, "int32": 1 << 31,
           "float32": (1 << 24) + 1, "float16": (1 << 11) + 1,
           "bfloat16": (1 << 8) + 1}[name]
    return (mt.random(n) % np.uint64(mod)).astype(np.int64)


def randperm(mt, n):
    """randperm_cpu's Fisher-Yates shuffle."""
    perm = list(range(n))
    if n > 1:
        z = mt.random(n - 1)
        for i, zi in enumerate(z.tolist()):
            j = i + zi % (n - i)
            perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, np.int64)


def bernoulli(mt, p, p_is_float32):
    """u < p per element of the flat float64 array p (u's grid by p's dtype)."""
    u = uniform01(mt, p.size, "float32" if p_is_float32 else "float64")
    return u.astype(_F64) < p


# ------------------------------------------- the serial double distributions

_vtan = np.frompyfunc(math.tan, 1, 1)
_vexp = np.frompyfunc(math.exp, 1, 1)


def cauchy(mt, n, median, sigma):
    """cauchy_distribution<double>: median + sigma * tan(pi * (u - 0.5))."""
    u = uniform01(mt, n, "float64")
    return fma64(sigma, _libm(_vtan, math.pi * (u - 0.5)), median)


def log_normal(mt, n, mean, std):
    """lognormal_distribution<double>: exp of normal_distribution<double> (with its cached
    second value)."""
    return _libm(_vexp, _serial_normal(mt, n, mean, std))


def geometric(mt, n, p):
    """geometric_distribution<double>: ceil(log(u) / log1p(-p))."""
    u = uniform01(mt, n, "float64")
    with np.errstate(divide="ignore"):
        return np.ceil(_libm(_vlog, u) / math.log1p(-p))


_vlog1p = np.frompyfunc(math.log1p, 1, 1)


def exponential(mt, n, lambd):
    """exponential_distribution<double>: (-1 / lambda) * log1p(-u)."""
    u = uniform01(mt, n, "float64")
    return (-1.0 / lambd) * _libm(_vlog1p, -u)


def multinomial(mt, probs, num_samples, replacement):
    """PyTorch's CPU multinomial on a (rows, k) probability array: without replacement (or
    one sample) the top num_samples of p / q with q ~ Exponential(1) drawn in p's dtype;
    with replacement, per row, a binary search of u (a double uniform) in the row's
    normalised running sum kept in p's dtype."""
    rows, k = probs.shape
    if not replacement or num_samples == 1:
        q = exponential(mt, rows * k, 1.0).astype(probs.dtype).reshape(rows, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = (probs / q).astype(probs.dtype)
        # topk / argmax: largest first, the lower index first among equal keys
        order = np.argsort(-keys.astype(np.float64), axis=1, kind="stable")
        return order[:, :num_samples]
    out = np.empty((rows, num_samples), np.int64)
    for r in range(rows):
        cum = np.cumsum(probs[r], dtype=probs.dtype)
        total = cum[-1]
        if total > 0:
            cum = (cum / total).astype(probs.dtype)
        u = uniform01(mt, num_samples, "float64")
        out[r] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out
