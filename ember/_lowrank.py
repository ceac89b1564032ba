"""torch.svd_lowrank / torch.pca_lowrank: randomized low-rank SVD (Halko et al. 2009).

Why: PyTorch's algorithm (torch/_lowrank.py) step for step in ember ops -- a Gaussian
range finder with `niter` power iterations, QR after each product, then an exact SVD of the
small projected matrix -- so the factors are differentiable and batched like PyTorch's.
Random draws come from ember's generator, so factors match PyTorch's only up to the
randomness (singular values agree when A's rank <= q).
"""


def _approximate_basis(A, q, niter, M):
    from . import randn
    from .linalg import qr
    R = randn(A.shape[-1], q, dtype=A.dtype)
    X = A @ R if M is None else A @ R - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q
        Q = qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A ~= U diag(S) V^H, U: (*, m, q), S: (*, q), V: (*, n, q)."""
    from .linalg import svd
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:                                         # work on the tall orientation
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """svd_lowrank of A minus its column means (center=True); q defaults to min(6, m, n)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)
