"""ember.linalg: PyTorch's torch.linalg on NumPy's LAPACK (SciPy only for getrf).

Note: every function works on batches (leading dims) of float32/float64/complex64/
complex128 matrices. Decompositions and solvers are registry ops (`_solve`,
`_decomp`, `_norms`) whose backward formulas are PyTorch's, written in ember ops;
the rest are compositions (`_composite`). `_top_level` holds torch.det,
torch.svd, ... and the Tensor methods.
"""
from ..ops.matmul import matmul
from ._common import LinAlgError
from ._solve import inv, inv_ex, solve, solve_ex, solve_triangular, det, slogdet, pinv, lstsq
from ._decomp import (cholesky, cholesky_ex, qr, svd, svdvals, eig, eigvals, eigh, eigvalsh,
                      lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp)
from ._norms import norm, vector_norm, matrix_norm, cond, matrix_rank
from ._composite import (matrix_power, cross, multi_dot, vecdot, householder_product,
                         tensorinv, tensorsolve, diagonal, vander)
from . import _top_level  # noqa: F401  (Tensor methods)

__all__ = ["LinAlgError", "matmul", "inv", "inv_ex", "solve", "solve_ex", "solve_triangular",
           "det", "slogdet", "pinv", "lstsq", "cholesky", "cholesky_ex", "qr", "svd",
           "svdvals", "eig", "eigvals", "eigh", "eigvalsh", "lu", "lu_factor", "lu_factor_ex",
           "lu_solve", "matrix_exp", "norm", "vector_norm", "matrix_norm", "cond",
           "matrix_rank", "matrix_power", "cross", "multi_dot", "vecdot",
           "householder_product", "tensorinv", "tensorsolve", "diagonal", "vander"]
