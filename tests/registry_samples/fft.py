"""Samples for the FFT primitives (ember/fft/_ops.py), through the public ember.fft API."""
import ember

from ._util import C128, t

NON_DIFFERENTIABLE = set()
NO_GRADCHECK = {}

SAMPLES = {
    "fft_c2c": lambda: (lambda x: ember.fft.fftn(x, s=(3, 2), norm="ortho"),
                        [t(2, 3, dtype=C128)]),
    "fft_r2c": lambda: (lambda x: ember.fft.rfft2(x, norm="forward"), [t(2, 5)]),
    "fft_c2r": lambda: (lambda x: ember.fft.irfft(x, n=5), [t(2, 3, dtype=C128)]),
}
