"""NumPy-side helpers shared by the linalg kernels: batch loops for the LAPACK calls
NumPy does not batch, LAPACK's `info` for failed matrices, and the matrix exponential.

Note: SciPy is imported lazily (only getrf, for LU factorizations and for LAPACK's
exact `info` of a singular matrix), so `import ember` never loads it.
"""
import numpy as np

LinAlgErrorNP = np.linalg.LinAlgError


def batch_iter(shape):
    """Every index of a batch shape (one empty index for an unbatched matrix)."""
    return np.ndindex(*shape) if shape else [()]


def getrf(m):
    """LAPACK getrf of one matrix through SciPy: (LU, 0-based pivots)."""
    import warnings

    from scipy.linalg import lu_factor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # SciPy warns on exactly singular factors
        return lu_factor(m, check_finite=False)


def lu_info(m):
    """getrf's info for one matrix: 1 + the index of its first zero pivot, else 0.

    Without SciPy the pivot cannot be named; a singular matrix then reports its
    order (still > 0, so every check that reads info fails it the same way).
    """
    try:
        lu, _ = getrf(m)
    except ImportError:
        return m.shape[-1] if np.linalg.matrix_rank(m) < m.shape[-1] else 0
    d = np.flatnonzero(np.diagonal(lu) == 0)
    return int(d[0]) + 1 if d.size else 0


def per_matrix(fn, a, out, info):
    """Apply fn to each matrix of a batch whose batched call failed; fills `out` and
    records getrf's info (NaN results) for the singular ones."""
    for idx in batch_iter(a.shape[:-2]):
        try:
            out[idx] = fn(a[idx], idx)
        except LinAlgErrorNP:
            info[idx] = lu_info(a[idx]) or a.shape[-1]
            out[idx] = np.nan


def cholesky_info(m):
    """potrf's info: the order of the first leading minor that is not positive-definite."""
    for k in range(1, m.shape[-1] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except LinAlgErrorNP:
            return k
    return 0


# --------------------------------------------------------------------- expm

# Higham (2005), "The scaling and squaring method for the matrix exponential
# revisited": the [13/13] Pade coefficients and the 1-norm bound they cover.
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def expm(a):
    """exp of a batch of square matrices by scaling and squaring with the [13/13]
    Pade approximant (the matrix products and the solve are NumPy's BLAS/LAPACK)."""
    n = a.shape[-1]
    if a.size == 0:
        return a.copy()
    norm = np.abs(a).sum(-2).max(-1)
    with np.errstate(divide="ignore"):
        s = np.maximum(0, np.ceil(np.log2(norm / _THETA13))).astype(np.int64)
    s = np.where(np.isfinite(norm), s, 0)
    a = a / (2.0 ** s)[..., None, None].astype(a.real.dtype)
    b = _PADE13
    eye = np.eye(n, dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
             + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for i in range(int(s.max(initial=0))):
        r = np.where((s > i)[..., None, None], r @ r, r)
    return r
