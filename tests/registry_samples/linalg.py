"""Samples for the ember.linalg registry ops (issue: ember.linalg).

Factorizations whose factors are defined up to sign/phase are sampled through
gauge-invariant functions of them; Hermitian inputs are symmetrized inside the sample
so gradcheck's perturbations stay Hermitian.
"""
import ember

from ._util import t

L = ember.linalg

NON_DIFFERENTIABLE = set()
NO_GRADCHECK = {}


def _wc(*shape, seed=0):
    return t(*shape, seed=seed) + 3 * ember.eye(shape[-1], dtype=ember.float64)


def _sym(a):
    return (a + a.mT) / 2


def _svd_rec(a):
    u, s, vh = L.svd(a, full_matrices=False)
    return (u * s.unsqueeze(-2)) @ vh, s


def _eigh_inv(a):
    w, v = L.eigh(_sym(a))
    return w, v.abs()


def _eig_inv(a):
    w, v = L.eig(a)
    return w, v.abs()


SAMPLES = {
    "linalg_inv_ex": lambda: (lambda a: L.inv_ex(a).inverse, [_wc(2, 3, 3)]),
    "linalg_solve_ex": lambda: (lambda a, b: L.solve_ex(a, b).result, [_wc(3, 3), t(3, 2)]),
    "linalg_solve_triangular": lambda: (lambda a, b: L.solve_triangular(a, b, upper=True),
                                        [_wc(3, 3), t(3, 2)]),
    "linalg_det": lambda: (L.det, [_wc(2, 3, 3)]),
    "linalg_slogdet": lambda: (lambda a: L.slogdet(a).logabsdet, [_wc(3, 3)]),
    "linalg_pinv": lambda: (L.pinv, [t(4, 3)]),
    "linalg_lstsq": lambda: (lambda a, b: L.lstsq(a, b).solution, [t(5, 3), t(5, 2)]),
    "linalg_cholesky_ex": lambda: (lambda a: L.cholesky_ex(_sym(a) @ _sym(a).mT).L,
                                   [_wc(3, 3)]),
    "linalg_qr": lambda: (L.qr, [t(4, 3)]),
    "linalg_svd": lambda: (_svd_rec, [t(4, 3)]),
    "linalg_eigh": lambda: (_eigh_inv, [t(3, 3)]),
    "linalg_eig": lambda: (_eig_inv, [t(3, 3)]),
    "linalg_lu_factor_ex": lambda: (lambda a: L.lu_factor_ex(a).LU, [_wc(3, 3)]),
    "linalg_matrix_exp": lambda: (L.matrix_exp, [t(2, 3, 3)]),
    "linalg_vector_norm": lambda: (lambda x: L.vector_norm(x, 3, -1), [t(2, 3)]),
}
