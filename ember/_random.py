"""Counter-based random numbers: Philox4x32-10 and the `Generator` that owns its state.

A Generator switched with manual_seed(s, generator="mt19937") (or created after that switch,
or with EMBER_RNG=mt19937 set) draws from PyTorch's own CPU engine instead
(ember/_mt19937.py): the samplers then give torch's numbers for the same seed.

Note: a generator's whole state is (seed, offset). Philox4x32-10 (Salmon et al.,
"Parallel Random Numbers: As Easy as 1, 2, 3", SC'11) maps a 128-bit counter and a
64-bit key to four 32-bit words. ember uses
    key     = (seed & 0xffffffff, seed >> 32)
    counter = (c & 0xffffffff, c >> 32, 0, 0)     for block c = offset, offset+1, ...
and the block's words come out in the order x0, x1, x2, x3. A draw of n words takes
ceil(n / 4) blocks starting at `offset` and then advances `offset` by that many
blocks, so every draw starts on a fresh block and (seed, offset) fixes every later
number. Generated C code implements the same function and the same bit-to-number
mappings below, so eager and compiled runs draw identical numbers.

Bits to numbers (word i of a draw goes to element i unless said otherwise):
  uniform [0, 1)  float32      (w >> 8) * 2**-24               (1 word / element)
                  float16      (w >> 21) * 2**-11   (exact in the dtype, so never 1.0)
                  bfloat16     (w >> 24) * 2**-8
                  float64      ((w[2i] | w[2i+1] << 32) >> 11) * 2**-53   (2 words)
                  complex      real and imaginary parts drawn as 2n reals, interleaved
  transforms      normal, exponential, geometric, log_normal, cauchy, bernoulli and
                  multinomial use uniforms on the float64 grid for double tensors and
                  on the float32 grid otherwise (ember/ops/random.py `_grid`), compute
                  in float64 and round once to the output dtype
  normal          Box-Muller on consecutive uniform pairs (u1, u2):
                  r = sqrt(-2 log(1 - u1)), element 2j = r cos(2 pi u2),
                  element 2j+1 = r sin(2 pi u2)
  integer in [low, low + range)
                  low + w % range when range <= 2**32, else the 64-bit word pair
                  (w[2i] | w[2i+1] << 32) % range (the same rule as PyTorch's
                  random_from_to; the modulo bias is below 2**-32 * range)
  randperm        stable argsort of 64-bit keys (w[2i] | w[2i+1] << 32)
"""
import os

import numpy as np

from . import _dtype as D
from ._device import as_device, check_supported

# Philox4x32 constants (Random123).
M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
ROUNDS = 10
_MASK = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)

DEFAULT_SEED = 67280421310721        # PyTorch's default CPU seed
# the engine new generators start with: EMBER_RNG=mt19937 in the environment, or the last
# ember.manual_seed(s, generator=...) switch (so a DataLoader's fresh Generator() follows)
_DEFAULTS = {"engine": "mt19937" if os.environ.get("EMBER_RNG", "").lower() == "mt19937"
             else "philox"}
_STATE_BYTES = 16                    # uint64 seed, uint64 offset (little-endian)


def philox4x32(c0, c1, c2, c3, k0, k1, rounds=ROUNDS):
    """Philox4x32-R on arrays of 32-bit counter words; returns the four output words.

    Words are held in uint64 so that one multiply gives both halves of the 64-bit
    product; every step writes into preallocated arrays (3x faster than temporaries).
    """
    x0, x1, x2, x3 = (np.array(c, dtype=np.uint64) for c in (c0, c1, c2, c3))
    p0, p1 = np.empty_like(x0), np.empty_like(x0)
    m0, m1 = np.uint64(M0), np.uint64(M1)
    k0, k1 = int(k0) & 0xFFFFFFFF, int(k1) & 0xFFFFFFFF
    for r in range(rounds):
        if r:
            k0 = (k0 + W0) & 0xFFFFFFFF
            k1 = (k1 + W1) & 0xFFFFFFFF
        np.multiply(x0, m0, out=p0)
        np.multiply(x2, m1, out=p1)
        # (x0, x1, x2, x3) <- (hi(p1) ^ x1 ^ k0, lo(p1), hi(p0) ^ x3 ^ k1, lo(p0))
        np.right_shift(p1, _S32, out=x0)
        x0 ^= x1
        x0 ^= np.uint64(k0)
        np.bitwise_and(p1, _MASK, out=x1)
        np.right_shift(p0, _S32, out=x2)
        x2 ^= x3
        x2 ^= np.uint64(k1)
        np.bitwise_and(p0, _MASK, out=x3)
    return tuple(x.astype(np.uint32) for x in (x0, x1, x2, x3))


def _philox_block(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 of one counter on Python ints: a few draws of a few words cost
    ~100 NumPy calls on tiny arrays (~90 us) in `philox4x32`, ~3 us here."""
    for r in range(ROUNDS):
        if r:
            k0 = (k0 + W0) & 0xFFFFFFFF
            k1 = (k1 + W1) & 0xFFFFFFFF
        p0 = c0 * M0
        p1 = c2 * M1
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & 0xFFFFFFFF,
                          (p0 >> 32) ^ c3 ^ k1, p0 & 0xFFFFFFFF)
    return c0, c1, c2, c3


_SMALL_BLOCKS = 32


def philox_words(seed, offset, n):
    """The first n 32-bit words of the stream of (seed, offset); see the module note."""
    nblocks = -(-n // 4)
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    if nblocks <= _SMALL_BLOCKS:
        words = []
        for c in range(offset, offset + nblocks):
            words.extend(_philox_block(c & 0xFFFFFFFF, c >> 32, 0, 0, k0, k1))
        return np.array(words[:n], dtype=np.uint32)
    ctr = np.arange(nblocks, dtype=np.uint64) + np.uint64(offset)
    zero = np.zeros(nblocks, np.uint64)
    out = philox4x32(ctr & _MASK, ctr >> _S32, zero, zero, k0, k1)
    return np.stack(out, axis=1).reshape(-1)[:n]


class Generator:
    """torch.Generator: a Philox stream per device, with state (seed, offset)."""

    def __init__(self, device="cpu"):
        self._device = check_supported(as_device(device))
        if self._device.type != "cpu":
            raise RuntimeError(f"{self._device.type.upper()} device type not an accelerator.")
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._mt = None                  # an _mt19937.MT19937 when the engine is PyTorch's
        if _DEFAULTS["engine"] == "mt19937":
            self._set_engine("mt19937")

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed, generator=None):
        """Seeds this generator. `generator="mt19937"` switches it to PyTorch's CPU engine
        (the same numbers as torch for the same seed), `"philox"` back to ember's."""
        seed = _check_seed(seed)
        if generator is not None:
            self._set_engine(generator)
        self._seed = seed
        self._offset = 0
        if self._mt is not None:
            self._mt.seed(seed)
        return self

    @property
    def engine(self):
        """'philox' (ember's counter-based default) or 'mt19937' (PyTorch's CPU engine)."""
        return "philox" if self._mt is None else "mt19937"

    def _set_engine(self, name):
        if name not in ("philox", "mt19937"):
            raise ValueError(f"generator must be 'philox' or 'mt19937', got {name!r}")
        if name == "philox":
            self._mt = None
        elif self._mt is None:
            from ._mt19937 import MT19937
            self._mt = MT19937(self._seed)

    def seed(self):
        """Seeds from the OS's entropy source; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from ._tensor import wrap
        if self._mt is not None:                 # PyTorch's 5056-byte CPU state
            return wrap(self._mt.get_state(), D.uint8)
        arr = np.array([self._seed, self._offset], dtype="<u8").view(np.uint8).copy()
        return wrap(arr, D.uint8)

    def set_state(self, new_state):
        from ._tensor import Tensor
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        from ._mt19937 import STATE_BYTES as MT_BYTES
        if new_state.numel() == MT_BYTES:       # a PyTorch CPU state: use its engine
            self._set_engine("mt19937")
            self._mt.set_state(new_state._data.reshape(-1))
            self._seed = self._mt.initial_seed
            return self
        if new_state.numel() != _STATE_BYTES:
            raise RuntimeError(f"Expected a Philox generator state of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {new_state.numel()}")
        seed, offset = np.ascontiguousarray(new_state._data).reshape(-1).view("<u8")
        self._seed, self._offset = int(seed), int(offset)
        self._mt = None
        return self

    def __getstate__(self):
        st = {"device": str(self._device), "seed": self._seed, "offset": self._offset}
        if self._mt is not None:
            st["mt19937"] = self._mt.get_state()
        return st

    def __setstate__(self, state):
        self._device = as_device(state["device"])
        self._seed, self._offset = state["seed"], state["offset"]
        self._mt = None
        if "mt19937" in state:
            self._set_engine("mt19937")
            self._mt.set_state(state["mt19937"])

    def __repr__(self):
        if self._mt is not None:
            return f"<ember.Generator object (device='{self._device}', seed={self._seed}, " \
                   f"engine='mt19937')>"
        return f"<ember.Generator object (device='{self._device}', seed={self._seed}, " \
               f"offset={self._offset})>"

    # -------------------------------------------------------------- drawing
    def _words(self, n):
        """n fresh 32-bit words; advances the offset by ceil(n / 4) blocks."""
        if self._mt is not None:
            return self._mt.random(n).astype(np.uint32)
        words = philox_words(self._seed, self._offset, n)
        self._offset += -(-n // 4)
        return words


def _check_seed(seed):
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        if hasattr(seed, "__index__") and not isinstance(seed, float):
            seed = seed.__index__()
        else:
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & ((1 << 64) - 1)


default_generator = Generator()


def get_generator(generator):
    """The generator a random op draws from (the default one when None)."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator for argument 'generator', got "
                        f"{type(generator).__name__}")
    return generator


# ------------------------------------------------------------ bits -> numbers

_UNIFORM_BITS = {"float32": 24, "float16": 11, "bfloat16": 8}


def uniform01(gen, n, dtype):
    """n float64 values in [0, 1) on the grid of the real floating dtype (module note)."""
    if dtype is D.float64:
        w = gen._words(2 * n).astype(np.uint64)
        bits = (w[0::2] | (w[1::2] << _S32)) >> np.uint64(11)
        return bits.astype(np.float64) * 2.0 ** -53
    nbits = _UNIFORM_BITS[dtype.name]
    w = gen._words(n)
    return (w >> np.uint32(32 - nbits)).astype(np.float64) * 2.0 ** -nbits


def normal01(gen, n, dtype):
    """n float64 standard normals (Box-Muller on the dtype's uniform grid)."""
    m = -(-n // 2)
    u = uniform01(gen, 2 * m, dtype)
    r = np.sqrt(-2.0 * np.log1p(-u[0::2]))
    theta = 2.0 * np.pi * u[1::2]
    out = np.empty(2 * m, np.float64)
    out[0::2] = r * np.cos(theta)
    out[1::2] = r * np.sin(theta)
    return out[:n]


def integers(gen, n, low, span):
    """n int64 values low + [0, span), 1 <= span <= 2**64 (module note)."""
    if span <= 1 << 32:
        w = gen._words(n).astype(np.uint64)
    else:
        w = gen._words(2 * n).astype(np.uint64)
        w = w[0::2] | (w[1::2] << _S32)
    r = w if span == 1 << 64 else w % np.uint64(span)
    # wrap-around uint64 addition is exact: the true value lies in int64's range
    return (r + np.uint64(low & ((1 << 64) - 1))).view(np.int64)
