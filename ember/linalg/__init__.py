"""ember.linalg: PyTorch's torch.linalg on NumPy's LAPACK (SciPy only for getrf).

Note: every function works on batches (leading dims) of float32/float64/complex64/
complex128 matrices. Decompositions and solvers are registry ops (`_solve`,
`_decomp`, `_norms`) whose backward formulas are PyTorch's, written in ember ops;
the rest are compositions (`_composite`). `_top_level` holds torch.det,
torch.svd, ... and the Tensor methods.
"""
from ..ops.matmul import matmul
from . import _top_level  # noqa: F401  (Tensor methods)
from ._common import LinAlgError
from ._composite import (
                      cross,
                      diagonal,
                      householder_product,
                      matrix_power,
                      multi_dot,
                      tensorinv,
                      tensorsolve,
                      vander,
                      vecdot,
)
from ._decomp import (
                      cholesky,
                      cholesky_ex,
                      eig,
                      eigh,
                      eigvals,
                      eigvalsh,
                      lu,
                      lu_factor,
                      lu_factor_ex,
                      lu_solve,
                      matrix_exp,
                      qr,
                      svd,
                      svdvals,
)
from ._norms import cond, matrix_norm, matrix_rank, norm, vector_norm
from ._solve import (
                      det,
                      inv,
                      inv_ex,
                      lstsq,
                      pinv,
                      slogdet,
                      solve,
                      solve_ex,
                      solve_triangular,
)
from ._lapack_raw import ldl_factor, ldl_factor_ex, ldl_solve

__all__ = [
                      "LinAlgError",
                      "cholesky",
                      "cholesky_ex",
                      "cond",
                      "cross",
                      "det",
                      "diagonal",
                      "eig",
                      "eigh",
                      "eigvals",
                      "eigvalsh",
                      "householder_product",
                      "ldl_factor",
                      "ldl_factor_ex",
                      "ldl_solve",
                      "inv",
                      "inv_ex",
                      "lstsq",
                      "lu",
                      "lu_factor",
                      "lu_factor_ex",
                      "lu_solve",
                      "matmul",
                      "matrix_exp",
                      "matrix_norm",
                      "matrix_power",
                      "matrix_rank",
                      "multi_dot",
                      "norm",
                      "pinv",
                      "qr",
                      "slogdet",
                      "solve",
                      "solve_ex",
                      "solve_triangular",
                      "svd",
                      "svdvals",
                      "tensorinv",
                      "tensorsolve",
                      "vander",
                      "vecdot",
                      "vector_norm",
]
