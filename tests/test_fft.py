"""ember.fft against torch.fft: forward values/dtypes/shapes, gradients, float64 and
complex128 gradcheck of every transform, and PyTorch's errors (OpInfo tables)."""
import numpy as np
import pytest

from oracle import NC, check, check_error, randn
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, C128, I64, B

import ember

torch = pytest.importorskip("torch")



@pytest.fixture(autouse=True, scope="module")
def _torch_one_thread():
    """torch's MKL FFT spends ~30 ms a call starting threads on a busy 2-core machine
    (6 us with one thread): the oracle runs single-threaded here."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


REAL = (F32, F64, I64)
ANY = (F32, C128, I64)


def crandn(*shape, seed=0):
    return randn(*shape, dtype=F64, seed=seed) + 1j * randn(*shape, dtype=F64, seed=seed + 9)


def _fn(name):
    """Call L.fft.<name>; torch marks some results conjugate (a lazy bit) -> resolve."""
    return lambda L, *a, **k: getattr(L.fft, name)(*a, **k).resolve_conj()


# ------------------------------------------------------------------ sample tables
# Forward rows compare values, dtypes and gradients with torch on every sample; the
# gradcheck rows (float64 / complex128 finite differences) use a few small inputs.

def _samples_1d():
    x = randn(3, 5)
    return [
        S(randn(5)),
        S(x, n=3),                        # trim
        S(randn(4, 3), 7, 0),             # positional n, dim; zero-pad
        S(randn(2, 3, 4), dim=-2, n=2),   # negative dim
        S(NC(randn(4, 3)), dim=0),        # non-contiguous
        S(x, norm="ortho"),
        S(x, n=6, norm="forward"),
        S(x, norm="backward"),
        S(np.array([1.0, np.nan, 2.0, 0.5]), grad=False),   # NaN propagates
    ]


def _gc_1d():
    return [S(randn(5)), S(randn(2, 4), n=6, dim=0, norm="ortho"),
            S(randn(2, 3), n=2, norm="forward")]


def _errors_1d(real_only=False):
    x = randn(3, 4)
    errs = [
        E(x, n=0),                                       # invalid number of data points
        E(x, n=-2),
        E(x, dim=2),                                     # out of range
        E(x, dim=-3),
        E(np.array(1.0)),                                # 0-d: no dim to transform
        E(randn(3, 0)),                                  # empty transform dim
        E(x.astype(F16)),                                # Unsupported dtype Half
        E(x, norm="bad"),
        E(x, dim=1.5),
        E(x, n=2.5),
    ]
    if real_only:
        errs.append(E(crandn(3, 4)))                     # expects a real input
    return errs


def _samples_nd(two=False):
    x = randn(3, 4, 5)
    s = [
        S(randn(4, 6)),
        S(x, s=(2, 6)),                   # trim + pad, dims default to the last len(s)
        S(x, s=(-1, 3)),                  # -1 keeps the size
        S(x, s=(4, 2), dim=(-1, 0)),      # dims in any order, negative
        S(NC(randn(3, 4)), norm="ortho"),
        S(x, dim=(0, 1), norm="forward"),
        S(x, norm="backward"),
    ]
    if not two:
        s += [S(x, dim=1), S(x, s=(4, 2, 3)), S(x, dim=(2, 0, 1))]
    return s


def _gc_nd(two=False):
    return [S(randn(2, 3)), S(randn(2, 3), s=(3, 2), norm="ortho"),
            S(randn(2, 2, 3), dim=(0, 2), norm="forward")]


def _errors_nd(two=False):
    x = randn(3, 4)
    errs = [
        E(x, s=(2, 3, 4)),                       # more sizes than dims
        E(x, s=(2,), dim=(0, 1)),                # s and dim lengths differ
        E(x, dim=(0, 0)),                        # duplicate dims
        E(x, dim=(0, 2)),                        # out of range
        E(x, s=(0, 2)),                          # invalid number of data points
        E(randn(3, 0), dim=(0, 1)),              # empty transform dim
        E(x.astype(F16)),
        E(x, norm="ortho1"),
    ]
    if two:
        errs.append(E(randn(4)))                 # fewer than 2 dims
    return errs


OPS, GC = [], []


def _add(name, samples, gc_samples, dtypes, gc_dtypes, errors):
    OPS.append(OpInfo(f"fft.{name}", samples, dtypes=dtypes, gradcheck_dtypes=(),
                      errors=list(errors), fn=_fn(name)))
    GC.append(OpInfo(f"fft.{name}", gc_samples, gradcheck_dtypes=gc_dtypes, fn=_fn(name)))


for _name in ("fft", "ifft"):
    _add(_name, _samples_1d(), _gc_1d(), ANY, (F64, C128), _errors_1d())
for _name in ("rfft", "ihfft"):
    _add(_name, _samples_1d(), _gc_1d(), REAL, (F64,), _errors_1d(real_only=True))
for _name in ("irfft", "hfft"):
    _add(_name, _samples_1d() + [S(randn(3, 4), n=1), S(randn(3, 4), n=7)],
         _gc_1d() + [S(randn(2, 3), n=5)], ANY, (F64, C128),
         _errors_1d() + [E(randn(3, 1))])
for _name in ("fftn", "ifftn", "fft2", "ifft2"):
    two = _name.endswith("2")
    _add(_name, _samples_nd(two), _gc_nd(two), ANY, (F64, C128), _errors_nd(two))
for _name in ("rfftn", "ihfftn", "rfft2", "ihfft2"):
    two = _name.endswith("2")
    _add(_name, _samples_nd(two), _gc_nd(two), REAL, (F64,),
         _errors_nd(two) + [E(crandn(3, 4)), E(randn(3, 4), dim=())])
for _name in ("irfftn", "hfftn", "irfft2", "hfft2"):
    two = _name.endswith("2")
    _add(_name, _samples_nd(two) + [S(randn(3, 4), s=(2, 1)), S(randn(2, 3, 4), s=(3, 7))],
         _gc_nd(two) + [S(randn(2, 3), s=(2, 5))], ANY, (F64, C128),
         _errors_nd(two) + [E(randn(3, 1), dim=(0, 1)), E(randn(3, 4), dim=())])

# helper functions
OPS += [
    OpInfo("fft.fftshift", [S(randn(5)), S(randn(4, 5)), S(randn(3, 4), dim=0),
                            S(randn(3, 4, 5), dim=(-1, 0)), S(NC(randn(4, 5)), dim=(1,))],
           dtypes=(F32, C128, I64, B), gradcheck_dtypes=(),
           errors=[E(randn(3), dim=1), E(np.array(1.0))]),
    OpInfo("fft.ifftshift", [S(randn(5)), S(randn(4, 5)), S(randn(3, 4), dim=-1),
                             S(NC(randn(5, 3)), dim=(0, 1))],
           dtypes=(F64, C128, I64), gradcheck_dtypes=(), errors=[E(randn(3), dim=(0, 2))]),
]
GC += [OpInfo("fft.fftshift", [S(randn(2, 3))]),
       OpInfo("fft.ifftshift", [S(randn(3, 2), dim=0)], gradcheck_dtypes=(C128,))]

test_forward, _, test_errors = make_tests(OPS)
_, test_gradcheck, _ = make_tests(GC)


# ----------------------------------------------------------- what the tables miss

@pytest.mark.parametrize("name", ["fft", "rfft", "ihfft", "fftn", "rfftn", "hfft", "irfft",
                                  "irfftn"])
def test_empty_batch_dim_matches_numpy(name):
    """Nothing to transform in a batch of 0: an empty result of the right shape and
    dtype (numpy.fft agrees; PyTorch's CPU build raises an MKL error here)."""
    x = randn(0, 4)
    kw = {"axes": (1,)} if name.endswith("n") else {"axis": 1}
    tkw = {"dim": (1,)} if name.endswith("n") else {"dim": 1}
    want = getattr(np.fft, name)(x, **kw)
    got = getattr(ember.fft, name)(ember.from_numpy(x), **tkw)
    assert tuple(got.shape) == want.shape
    assert got.dtype == (ember.float32 if want.dtype.kind == "f" else ember.complex64)


@pytest.mark.parametrize("name,args", [("fft", (7,)), ("ifftn", ((3, 5),)),
                                       ("irfft", (8,)), ("hfft", (8,)), ("rfft", (8,))])
def test_matches_numpy(name, args):
    """NumPy compatibility (the issue's wording): same values as numpy.fft."""
    x = crandn(4, 6) if name in ("fft", "ifftn", "irfft", "hfft") else randn(4, 6, dtype=F64)
    got = getattr(ember.fft, name)(ember.from_numpy(x), *args).numpy()
    np.testing.assert_allclose(got, getattr(np.fft, name)(x, *args), atol=1e-10)


def test_float32_stays_single_precision():
    x = ember.from_numpy(randn(8))
    assert ember.fft.fft(x).dtype is ember.complex64
    assert ember.fft.irfft(ember.fft.rfft(x)).dtype is ember.float32
    assert ember.fft.fft(ember.from_numpy(randn(8, dtype=F64))).dtype is ember.complex128
    assert ember.fft.fft(ember.tensor([1, 2, 3])).dtype is ember.complex64    # int -> float


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn",
                                  "hfftn", "ihfftn"])
def test_gradgradcheck(name):
    """Backward formulas are ember ops, so double backward works."""
    x = crandn(6) if name in ("fft", "irfft", "hfft", "fftn", "irfftn", "hfftn") else \
        randn(6, dtype=F64)
    t = ember.from_numpy(x).requires_grad_(True)
    fn = getattr(ember.fft, name)
    assert ember.autograd.gradgradcheck(lambda a: fn(a), (t,))


@pytest.mark.parametrize("name,dtype", [("fft", "complex64"), ("irfft", "float32"),
                                        ("rfftn", "complex64"), ("ihfft", "complex128")])
def test_out(name, dtype):
    check(lambda L, x: getattr(L.fft, name)(x, out=L.empty(0, dtype=getattr(L, dtype)))
          .resolve_conj(), randn(3, 4, dtype=F64 if "128" in dtype else F32), grad=False)


@pytest.mark.parametrize("name,dtype", [("fft", "float32"), ("irfft", "complex64"),
                                        ("rfft", "float64")])
def test_out_wrong_kind(name, dtype):
    check_error(lambda L, x: getattr(L.fft, name)(x, out=L.empty(0, dtype=getattr(L, dtype))),
                randn(3, 4))


FREQ = [
    (lambda L: L.fft.fftfreq(5)),
    (lambda L: L.fft.fftfreq(6, 0.25)),
    (lambda L: L.fft.fftfreq(4, d=2.0, dtype=L.float64)),
    (lambda L: L.fft.fftfreq(1)),
    (lambda L: L.fft.fftfreq(0)),
    (lambda L: L.fft.rfftfreq(5)),
    (lambda L: L.fft.rfftfreq(8, 0.1, dtype=L.float64)),
    (lambda L: L.fft.rfftfreq(1)),
    (lambda L: L.fft.fftfreq(5, requires_grad=True)),
    (lambda L: L.fft.fftfreq(4, out=L.empty(0, dtype=L.float64))),
]


@pytest.mark.parametrize("i", range(len(FREQ)))
def test_fftfreq(i):
    e, t = FREQ[i](ember), FREQ[i](torch)
    assert e.requires_grad == t.requires_grad
    check(lambda L: FREQ[i](L).detach(), grad=False)


@pytest.mark.parametrize("fn", [lambda L: L.fft.fftfreq(4, dtype=L.int64),
                                lambda L: L.fft.rfftfreq(4, dtype=L.complex64),
                                lambda L: L.fft.fftfreq(-1)])
def test_fftfreq_errors(fn):
    check_error(lambda L: fn(L))


def test_fft_primitives_run_float32_under_autocast():
    """PyTorch's AutocastCPU fp32 list holds fft_fft ... fft_ihfft."""
    from ember.ops import REGISTRY
    assert {REGISTRY[n].amp_policy for n in ("fft_c2c", "fft_r2c", "fft_c2r")} == {"fp32"}
    x = torch.randn(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.fft.fft(x.bfloat16()).dtype == torch.complex64


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2",
                                  "rfftn", "irfft2", "hfft2", "ihfftn"])
def test_autocast_half_inputs(name):
    """Under cpu autocast the listed functions take bfloat16 input as float32; the
    hfft2/hfftn/ihfft2/ihfftn family is not on the list and refuses it, as in torch."""
    x = randn(4, 4)
    for L in (ember, torch):
        with L.autocast("cpu", dtype=L.bfloat16):
            y = L.from_numpy(x).to(L.bfloat16)
            try:
                r = getattr(L.fft, name)(y)
            except RuntimeError as e:
                r = e
        if L is ember:
            got = r
    if isinstance(r, Exception):
        assert isinstance(got, RuntimeError) and str(got) == str(r)
    else:
        assert str(got.dtype) == str(r.dtype)


def test_ember_import_does_not_import_scipy_fft():
    import subprocess
    import sys
    code = "import sys, ember; print('scipy.fft' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_c2r_ignores_imaginary_edge_bins_like_torch():
    """c2r drops the imaginary part of the DC and Nyquist bins (pocketfft and MKL agree)."""
    z = crandn(2, 5)
    check(lambda L, a: L.fft.irfft(a), z)
    check(lambda L, a: L.fft.irfft(a, n=9), z)
