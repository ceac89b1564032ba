"""torch.special's orthogonal polynomials (Chebyshev T/U/V/W and shifted, Hermite H/He,
Laguerre L, Legendre P): P_n(x) for tensors x and n.

Why a module of its own: each is the three-term recurrence of aten's Math.h, vectorised over
elements with different n (n is truncated to an integer, n < 0 gives 0), plus the same
closed forms aten switches to (cos(n acos x) for |x| < 1 and larger n) and the same values
at x = +-1, so results match PyTorch's to rounding. Their outputs are non-differentiable,
as in PyTorch (no grad_fn).
"""
import numpy as np

from .ops._elementwise import INT_TO_FLOAT
from .ops.pointwise_math import register_math, expose, NOT_COMPLEX

NAMES = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p")

# (p0, p1, step(k, x, p_k, p_km1) -> p_{k+1}) of each family's recurrence
_REC = {
    "t": (lambda x: 1.0, lambda x: x, lambda k, x, a, b: 2 * x * a - b),
    "u": (lambda x: 1.0, lambda x: 2 * x, lambda k, x, a, b: 2 * x * a - b),
    "v": (lambda x: 1.0, lambda x: 2 * x - 1, lambda k, x, a, b: 2 * x * a - b),
    "w": (lambda x: 1.0, lambda x: 2 * x + 1, lambda k, x, a, b: 2 * x * a - b),
    "h": (lambda x: 1.0, lambda x: 2 * x, lambda k, x, a, b: 2 * x * a - 2 * k * b),
    "he": (lambda x: 1.0, lambda x: x, lambda k, x, a, b: x * a - k * b),
    "l": (lambda x: 1.0, lambda x: 1 - x,
          lambda k, x, a, b: ((2 * k + 1 - x) * a - k * b) / (k + 1)),
    "p": (lambda x: 1.0, lambda x: x,
          lambda k, x, a, b: ((2 * k + 1) * x * a - k * b) / (k + 1)),
}


def _recurrence(kind, x, n):
    p0, p1, step = _REC[kind]
    out = np.zeros_like(x)
    a_km1 = np.broadcast_to(np.asarray(p0(x), x.dtype), x.shape).copy()
    out = np.where(n == 0, a_km1, out)
    if n.size == 0 or n.max(initial=0) < 1:
        return out
    a_k = np.asarray(p1(x), x.dtype)
    out = np.where(n == 1, a_k, out)
    for k in range(1, int(n.max())):
        a_km1, a_k = a_k, np.asarray(step(k, x, a_k, a_km1), x.dtype)
        out = np.where(n == k + 1, a_k, out)
    return out


def _closed_form(kind, x, n):
    """aten's trig forms for |x| < 1 (T for n > 6, U/V/W for n > 8)."""
    t = np.arccos(x)
    if kind == "t":
        return np.cos(n * t)
    if kind == "u":
        s = np.sin(t)
        return np.where(s != 0, np.sin((n + 1) * t) / np.where(s != 0, s, 1),
                        (n + 1) * np.cos((n + 1) * t) / x)
    if kind == "v":
        c = np.cos(t / 2)
        return np.where(np.sin(t / 2) != 1, np.cos((n + 0.5) * t) / np.where(c != 0, c, 1),
                        np.where(n % 2 == 0, n + n + 1, -(n + n + 1)))
    s = np.sin(t / 2)
    return np.where(np.cos(t / 2) != 1, np.sin((n + 0.5) * t) / np.where(s != 0, s, 1),
                    np.where(x > 0, n + n + 1, np.where(n % 2 == 0, 1, -1)))


def _kernel(kind, shifted):
    def kernel(x, n):
        x = np.asarray(x)
        dt = x.dtype if x.dtype.kind == "f" else np.result_type(x, np.float32)
        x, n = np.broadcast_arrays(x.astype(dt), np.trunc(np.nan_to_num(
            np.asarray(n, np.float64), nan=-1, posinf=-1, neginf=-1)).astype(np.int64))
        if shifted:
            x = x + x - 1
        with np.errstate(all="ignore"):
            out = _recurrence(kind, x, np.maximum(n, -1))
            if kind in "tuvw":
                lim = 6 if kind == "t" else 8
                inside = (np.abs(x) < 1) & (n > lim)
                if inside.any():
                    out = np.where(inside, _closed_form(kind, x, n.astype(dt)), out)
                one = np.abs(x) == 1
                if one.any():
                    even = n % 2 == 0
                    pos = x > 0
                    edge = {"t": np.where(pos | even, 1, -1),
                            "u": np.where(pos | even, n + 1, -(n + 1)),
                            "v": np.where(pos, 1, np.where(even, n + n + 1, -(n + n + 1))),
                            "w": np.where(pos, n + n + 1, np.where(even, 1, -1))}[kind]
                    out = np.where(one, edge.astype(dt), out)
            elif kind == "p":
                one = np.abs(x) == 1
                out = np.where(one, np.where((x > 0) | (n % 2 == 0), 1, -1).astype(dt), out)
            elif kind == "l":
                out = np.where(x == 0, np.asarray(1, dt), out)
            out = np.where(n < 0, np.asarray(0, dt), out)
        return np.asarray(out, dt)
    return kernel


def install(module_globals):
    """Register the twelve ops and put ember.special.<name> into `module_globals`."""
    for name in NAMES:
        shifted = name.startswith("shifted_")
        kind = name.split("_")[-1]
        op = register_math("special_" + name, _kernel(kind, shifted), 2, INT_TO_FLOAT,
                           vjp=None, allowed=NOT_COMPLEX, tags=("pointwise", "prim"),
                           schema=f"special_{name}(Tensor x, Tensor n) -> Tensor")
        expose(op, name, method=False, inplace_method=False, module=module_globals)
