"""Samples for torch.special's orthogonal polynomials (ember/_special_polynomials.py)."""
import ember

from ._util import t, X

_NAMES = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
          "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
          "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
          "laguerre_polynomial_l", "legendre_polynomial_p")

# PyTorch's outputs carry no grad_fn (non-differentiable in derivatives.yaml)
NON_DIFFERENTIABLE = {"special_" + n for n in _NAMES}

SAMPLES = {"special_" + n: (lambda f: lambda: (f, [X(), t(3, kind="int", seed=2) * 2]))(
    getattr(ember.special, n)) for n in _NAMES}
