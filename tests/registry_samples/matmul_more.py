"""Samples for the fused matmul family (addmm, addmv, addr, addbmm, baddbmm) and the
complex constructors (complex, polar, angle); einsum, tensordot, vdot, inner, outer and
chain_matmul are compositions of registered ops and need no entry of their own."""
import ember

from ._util import C128, t

SAMPLES = {
    "addmm": lambda: (lambda i, a, b: ember.addmm(i, a, b, beta=0.5, alpha=2),
                      [t(3), t(2, 4), t(4, 3, seed=1)]),
    "addmv": lambda: (lambda i, m, v: ember.addmv(i, m, v, alpha=-1), [t(2), t(2, 3), t(3)]),
    "addr": lambda: (lambda i, a, b: ember.addr(i, a, b, beta=2), [t(2, 3), t(2), t(3, seed=1)]),
    "addbmm": lambda: (lambda i, a, b: ember.addbmm(i, a, b), [t(2, 4), t(3, 2, 3),
                                                              t(3, 3, 4, seed=1)]),
    "baddbmm": lambda: (lambda i, a, b: i.baddbmm(a, b, beta=0.5, alpha=0.5),
                        [t(1, 4), t(3, 2, 3), t(3, 3, 4, seed=1)]),
    "complex": lambda: (ember.complex, [t(2, 3), t(3, seed=1)]),
    "polar": lambda: (ember.polar, [t(2, 3, kind="pos"), t(2, 3, seed=1)]),
    "angle": lambda: (ember.angle, [t(2, 3, dtype=C128)]),
}
