"""The schema of every registry op, in PyTorch's syntax, keyed by registry name.

Note: each string describes the op's actual positional tuple (what its kernel, meta
and vjp receive), in order; names, defaults and `*` follow aten's schema for the
overload the op implements wherever the layouts agree. `register(..., schema=...)`
takes precedence; ops registered without one get theirs here. One ember op often
serves both of aten's Tensor and Scalar overloads (add.Tensor / add.Scalar): the
schema names the Tensor overload. Ops that differ from aten on purpose are listed,
with the reason, in tests/test_schema.py.
"""

_T = "Tensor"


def _unary(name, arg="self"):
    return f"{name}(Tensor {arg}) -> Tensor"


def _binary(name, overload=""):
    return f"{name}{'.' + overload if overload else ''}(Tensor self, Tensor other) -> Tensor"


SCHEMAS = {}

for _n in ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "angle", "bitwise_not",
           "ceil", "conj_physical", "cos", "cosh", "digamma", "erf", "erfc", "erfinv", "exp",
           "exp2", "expm1", "floor", "frac", "i0", "isfinite", "isinf", "isnan", "lgamma", "log",
           "log10", "log1p", "log2", "logical_not", "neg", "reciprocal", "relu", "rsqrt", "sgn",
           "sigmoid", "sign", "signbit", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh",
           "trunc", "mish", "silu", "hardsigmoid", "hardswish", "log_sigmoid",
           "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
           "special_entr", "special_erfcx", "special_i0e", "special_i1", "special_i1e",
           "special_log_ndtr", "special_modified_bessel_i0", "special_modified_bessel_i1",
           "special_modified_bessel_k0", "special_modified_bessel_k1", "special_ndtr",
           "special_ndtri"):
    SCHEMAS[_n] = _unary(_n)
for _n in ("special_airy_ai", "special_scaled_modified_bessel_k0",
           "special_scaled_modified_bessel_k1", "special_spherical_bessel_j0"):
    SCHEMAS[_n] = _unary(_n, "x")
# the in-place methods' twins compute out of place (the method commits with copy_)
for _n in ("acosh_", "asinh_", "atanh_"):
    SCHEMAS[_n] = _unary(_n)

for _n in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "copysign", "eq", "ne", "lt", "le", "gt", "ge", "fmod", "mul",
           "remainder", "xlogy"):
    SCHEMAS[_n] = _binary(_n, "Tensor")
for _n in ("atan2", "fmax", "fmin", "gcd", "lcm", "hypot", "igamma", "igammac", "logaddexp",
           "logaddexp2", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
           "nextafter", "floor_divide", "special_xlog1py", "special_zeta"):
    SCHEMAS[_n] = _binary(_n)

SCHEMAS.update({
    # ---------------------------------------------------------------- pointwise
    "add": "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub": "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "div": "div.Tensor(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor",
    "div_rounding": "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "pow": "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "heaviside": "heaviside(Tensor self, Tensor values) -> Tensor",
    "clamp": "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "where": "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "lerp": "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
    "addcmul": "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    "addcdiv": "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    "round": "round.decimals(Tensor self, *, int? decimals=None) -> Tensor",
    "nan_to_num": "nan_to_num(Tensor self, float nan=0., float? posinf=None, "
                  "float? neginf=None) -> Tensor",
    "logit": "logit(Tensor self, float? eps=None) -> Tensor",
    "polygamma": "polygamma(Tensor self, int n) -> Tensor",
    "elu": "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
    "gelu": 'gelu(Tensor self, *, str approximate="none") -> Tensor',
    "leaky_relu": "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "hardtanh": "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "softplus": "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    "threshold": "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
    "hardshrink": "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    "softshrink": "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    "threshold_backward": "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) "
                          "-> Tensor",
    "complex": "complex(Tensor real, Tensor imag) -> Tensor",
    "polar": "polar(Tensor abs, Tensor angle) -> Tensor",
    "prelu": "prelu(Tensor self, Tensor weight) -> Tensor",
    "glu": "glu(Tensor self, int dim=-1) -> Tensor",
    # ---------------------------------------------------------------- reductions
    "sum": "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
           "ScalarType? dtype=None) -> Tensor",
    "mean": "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) "
            "-> Tensor",
    "prod": "prod.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
            "ScalarType? dtype=None) -> Tensor",
    "nansum": "nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor",
    "max": "max(Tensor self) -> Tensor",
    "min": "min(Tensor self) -> Tensor",
    "max_dim": "max.dim(Tensor self, int dim, bool keepdim=False) -> "
               "(Tensor values, Tensor indices)",
    "min_dim": "min.dim(Tensor self, int dim, bool keepdim=False) -> "
               "(Tensor values, Tensor indices)",
    "amax": "amax(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
    "amin": "amin(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
    "argmax": "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "argmin": "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "all": "all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
    "any": "any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
    "var": "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False) -> Tensor",
    "std": "std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False) -> Tensor",
    "logsumexp": "logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
    "norm": "norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, "
            "ScalarType? dtype) -> Tensor",
    "count_nonzero": "count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
    "median": "median(Tensor self) -> Tensor",
    "nanmedian": "nanmedian(Tensor self) -> Tensor",
    "median_dim": "median.dim(Tensor self, int dim, bool keepdim=False) -> "
                  "(Tensor values, Tensor indices)",
    "nanmedian_dim": "nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> "
                     "(Tensor values, Tensor indices)",
    "mode": "mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "kthvalue": "kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
                "(Tensor values, Tensor indices)",
    "sort": "sort.stable(Tensor self, int dim=-1, bool descending=False, *, bool? stable) -> "
            "(Tensor values, Tensor indices)",
    "topk": "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
            "(Tensor values, Tensor indices)",
    "cumsum": "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
    "cumprod": "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
    "cummax": "cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
    "cummin": "cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
    "logcumsumexp": "logcumsumexp(Tensor self, int dim) -> Tensor",
    "trace": "trace(Tensor self) -> Tensor",
    "sum_to_size": "sum_to_size(Tensor self, SymInt[] size) -> Tensor",
    "softmax": "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "log_softmax": "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "_softmax_backward_data": "_softmax_backward_data(Tensor grad_output, Tensor output, "
                              "int dim) -> Tensor",
    "_log_softmax_backward_data": "_log_softmax_backward_data(Tensor grad_output, "
                                  "Tensor output, int dim) -> Tensor",
    # ---------------------------------------------------------------- views & shape
    "alias": "alias(Tensor(a) self) -> Tensor(a)",
    "view": "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "_reshape_copy": "_reshape_copy(Tensor self, SymInt[] size) -> Tensor",
    "as_strided": "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
                  "SymInt storage_offset=0) -> Tensor(a)",
    "as_strided_scatter": "as_strided_scatter(Tensor self, Tensor src, SymInt[] size, "
                          "SymInt[] stride, SymInt storage_offset=0) -> Tensor",
    "expand": "expand(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "permute": "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "squeeze": "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
    "unsqueeze": "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
    "slice": "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
             "SymInt step=1) -> Tensor(a)",
    "slice_scatter": "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, "
                     "SymInt? end=None, SymInt step=1) -> Tensor",
    "select": "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
    "select_scatter": "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
    "split_with_sizes": "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, "
                        "int dim=0) -> Tensor(a)[]",
    "unbind": "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "diagonal": "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
    "diagonal_scatter": "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, "
                        "int dim2=1) -> Tensor",
    "unfold": "unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
    "unfold_backward": "unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, "
                       "int step) -> Tensor",
    "view_as_real": "view_as_real(Tensor(a) self) -> Tensor(a)",
    "view_as_complex": "view_as_complex(Tensor(a) self) -> Tensor(a)",
    "cat": "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "stack": "stack(Tensor[] tensors, int dim=0) -> Tensor",
    "flip": "flip(Tensor self, int[] dims) -> Tensor",
    "roll": "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
    "repeat": "repeat(Tensor self, SymInt[] repeats) -> Tensor",
    "repeat_interleave": "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) "
                         "-> Tensor",
    "tril": "tril(Tensor self, SymInt diagonal=0) -> Tensor",
    "triu": "triu(Tensor self, SymInt diagonal=0) -> Tensor",
    "constant_pad_nd": "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
    # ---------------------------------------------------------------- copies
    "clone": "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "contiguous": "contiguous(Tensor self) -> Tensor",
    "_to_copy": "_to_copy(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "copy_": "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "fill": "fill.Tensor(Tensor self, Tensor value) -> Tensor",
    # ---------------------------------------------------------------- factories
    "full": "full(SymInt[] size, Scalar fill_value, *, ScalarType dtype) -> Tensor",
    "empty": "empty.memory_format(SymInt[] size, *, ScalarType dtype) -> Tensor",
    "arange": "arange.start_step_n(Scalar start, Scalar step, int n, ScalarType dtype) -> Tensor",
    "linspace": "linspace(Scalar start, Scalar end, int steps, *, ScalarType dtype) "
                "-> Tensor",
    "logspace": "logspace(Scalar start, Scalar end, int steps, float base=10., *, "
                "ScalarType dtype) -> Tensor",
    "eye": "eye.m(SymInt n, SymInt m, *, ScalarType dtype) -> Tensor",
    "tril_indices": "tril_indices(int row, int col, int offset=0, *, ScalarType dtype) "
                    "-> Tensor",
    "triu_indices": "triu_indices(int row, int col, int offset=0, *, ScalarType dtype) "
                    "-> Tensor",
    # ---------------------------------------------------------------- random
    "rand": "rand.generator(SymInt[] size, *, Generator? generator, ScalarType dtype) "
            "-> Tensor",
    "randn": "randn.generator(SymInt[] size, *, Generator? generator, ScalarType dtype) "
             "-> Tensor",
    "randint": "randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, "
               "Generator? generator, ScalarType dtype) -> Tensor",
    "randperm": "randperm.generator(SymInt n, *, Generator? generator, ScalarType dtype) "
                "-> Tensor",
    "normal": "normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None, "
              "ScalarType dtype) -> Tensor",
    "normal_size": "normal.float_float(float mean, float std, SymInt[] size, *, "
                   "Generator? generator=None, ScalarType dtype) -> Tensor",
    "normal_functional": "normal_functional(Tensor self, float mean=0., float std=1., *, "
                         "Generator? generator=None) -> Tensor",
    "uniform": "uniform(Tensor self, float from=0., float to=1., *, Generator? generator=None) "
               "-> Tensor",
    "random": "random.from(Tensor self, int from, int to, *, Generator? generator=None) "
              "-> Tensor",
    "exponential": "exponential(Tensor self, float lambd=1., *, Generator? generator=None) "
                   "-> Tensor",
    "geometric": "geometric(Tensor self, float p, *, Generator? generator=None) -> Tensor",
    "log_normal": "log_normal(Tensor self, float mean=1., float std=2., *, "
                  "Generator? generator=None) -> Tensor",
    "cauchy": "cauchy(Tensor self, float median=0., float sigma=1., *, "
              "Generator? generator=None) -> Tensor",
    "bernoulli": "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
    "bernoulli_p": "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
    "bernoulli_tensor": "bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) "
                        "-> Tensor",
    "multinomial": "multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, "
                   "Generator? generator=None) -> Tensor",
    # ---------------------------------------------------------------- indexing
    "index": "index.Tensor(Tensor self, Tensor?[] indices, int[] dims) -> Tensor",
    "index_put": "index_put(Tensor self, Tensor?[] indices, int[] dims, Tensor values, "
                 "bool accumulate=False) -> Tensor",
    "gather": "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
    "scatter": "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, "
               "str? reduce=None) -> Tensor",
    "scatter_add": "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
    "scatter_reduce": "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, "
                      "str reduce, *, bool include_self=True) -> Tensor",
    "index_select": "index_select(Tensor self, int dim, Tensor index) -> Tensor",
    "index_add": "index_add(Tensor self, int dim, Tensor index, Tensor source, *, "
                 "Scalar alpha=1) -> Tensor",
    "index_copy": "index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
    "index_fill": "index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) "
                  "-> Tensor",
    "index_reduce": "index_reduce(Tensor self, int dim, Tensor index, Tensor source, "
                    "str reduce, *, bool include_self=True) -> Tensor",
    "masked_fill": "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
    "masked_select": "masked_select(Tensor self, Tensor mask) -> Tensor",
    "masked_scatter": "masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
    "nonzero": "nonzero(Tensor self) -> Tensor",
    "nonzero_numpy": "nonzero_numpy(Tensor self) -> Tensor[]",
    "searchsorted": "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                    "bool out_int32=False, bool right=False, str? side=None, "
                    "Tensor? sorter=None) -> Tensor",
    "bincount": "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
    "histc": "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
    "histogram": "histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, "
                 "Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)",
    "unique": "unique(Tensor self, bool sorted=True, bool return_inverse=False, "
              "bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)",
    "unique_consecutive": "unique_consecutive(Tensor self, bool return_inverse=False, "
                          "bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)",
    "embedding": "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                 "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    "embedding_dense_backward": "embedding_dense_backward(Tensor grad_output, Tensor indices, "
                                "SymInt num_weights, SymInt padding_idx, "
                                "bool scale_grad_by_freq) -> Tensor",
    "_embedding_bag": "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, "
                      "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
                      "Tensor? per_sample_weights=None, bool include_last_offset=False, "
                      "int? padding_idx=None) -> (Tensor, Tensor, Tensor, Tensor)",
    # ---------------------------------------------------------------- linear algebra
    "mm": "mm(Tensor self, Tensor mat2) -> Tensor",
    "bmm": "bmm(Tensor self, Tensor mat2) -> Tensor",
    "mv": "mv(Tensor self, Tensor vec) -> Tensor",
    "dot": "dot(Tensor self, Tensor tensor) -> Tensor",
    "matmul": "matmul(Tensor self, Tensor other) -> Tensor",
    "addmm": "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
             "-> Tensor",
    "addmv": "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) "
             "-> Tensor",
    "addbmm": "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
              "Scalar alpha=1) -> Tensor",
    "baddbmm": "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
               "Scalar alpha=1) -> Tensor",
    "addr": "addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) "
            "-> Tensor",
    "linear": "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "cdist": "_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
    "linalg_cholesky_ex": "linalg_cholesky_ex(Tensor self, *, bool upper=False, "
                          "bool check_errors=False) -> (Tensor L, Tensor info)",
    "linalg_det": "linalg_det(Tensor A) -> Tensor",
    "linalg_eig": "linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
    "linalg_eigh": 'linalg_eigh(Tensor self, str UPLO="L") -> '
                   "(Tensor eigenvalues, Tensor eigenvectors)",
    "linalg_inv_ex": "linalg_inv_ex(Tensor A, *, bool check_errors=False) -> "
                     "(Tensor inverse, Tensor info)",
    "linalg_lstsq": "linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, "
                    "str? driver=None) -> (Tensor solution, Tensor rank, Tensor singular_values)",
    "linalg_lu_factor_ex": "linalg_lu_factor_ex(Tensor A, *, bool pivot=True, "
                           "bool check_errors=False) -> (Tensor LU, Tensor pivots, Tensor info)",
    "linalg_matrix_exp": "linalg_matrix_exp(Tensor self) -> Tensor",
    "linalg_pinv": "linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, "
                   "Tensor? rtol=None, bool hermitian=False) -> Tensor",
    "linalg_qr": 'linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)',
    "linalg_slogdet": "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
    "linalg_solve_ex": "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, "
                       "bool check_errors=False) -> (Tensor result, Tensor info)",
    "linalg_solve_triangular": "linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, "
                               "bool left=True, bool unitriangular=False) -> Tensor",
    "linalg_svd": "linalg_svd(Tensor A, bool full_matrices=True) -> "
                  "(Tensor U, Tensor S, Tensor Vh)",
    "linalg_vector_norm": "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, "
                          "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "fft_c2c": "_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
    "fft_r2c": "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
    "fft_c2r": "_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) "
               "-> Tensor",
    # ---------------------------------------------------------------- nn
    "convolution": "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
                   "SymInt[] padding, SymInt[] dilation, bool transposed, "
                   "SymInt[] output_padding, SymInt groups) -> Tensor",
    "im2col": "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
              "int[2] stride) -> Tensor",
    "col2im": "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
              "int[2] padding, int[2] stride) -> Tensor",
    "batch_norm": "batch_norm(Tensor input, Tensor? weight, Tensor? bias, "
                  "Tensor? running_mean, Tensor? running_var, bool training, float momentum, "
                  "float eps) -> Tensor",
    "layer_norm": "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                  "Tensor? bias=None, float eps=1e-05) -> Tensor",
    "grid_sampler": "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, "
                    "int padding_mode, bool align_corners) -> Tensor",
    "max_pool2d_with_indices": "max_pool2d_with_indices(Tensor self, int[2] kernel_size, "
                               "int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
                               "bool ceil_mode=False) -> (Tensor, Tensor)",
    "max_pool3d_with_indices": "max_pool3d_with_indices(Tensor self, int[3] kernel_size, "
                               "int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
                               "bool ceil_mode=False) -> (Tensor, Tensor)",
    "max_pool3d": "max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], "
                  "int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor",
    "avg_pool2d": "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                  "int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                  "int? divisor_override=None) -> Tensor",
    "avg_pool3d": "avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], "
                  "int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                  "int? divisor_override=None) -> Tensor",
    "_adaptive_avg_pool2d": "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "_adaptive_avg_pool3d": "_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
    "adaptive_max_pool2d": "adaptive_max_pool2d(Tensor self, int[2] output_size) -> "
                           "(Tensor, Tensor)",
    "adaptive_max_pool3d": "adaptive_max_pool3d(Tensor self, int[3] output_size) -> "
                           "(Tensor, Tensor)",
    "max_unpool2d": "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor",
    "max_unpool3d": "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, "
                    "int[3] stride, int[3] padding) -> Tensor",
    "reflection_pad1d": "reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
    "reflection_pad2d": "reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
    "reflection_pad3d": "reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
    "replication_pad1d": "replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor",
    "replication_pad2d": "replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor",
    "replication_pad3d": "replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor",
    # losses (reduction is aten's enum: 0 none, 1 mean, 2 sum)
    "l1_loss": "l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "mse_loss": "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "huber_loss": "huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) "
                  "-> Tensor",
    "smooth_l1_loss": "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, "
                      "float beta=1.) -> Tensor",
    "soft_margin_loss": "soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "binary_cross_entropy": "binary_cross_entropy(Tensor self, Tensor target, "
                            "Tensor? weight=None, int reduction=1) -> Tensor",
    "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits(Tensor self, "
                                        "Tensor target, Tensor? weight=None, "
                                        "Tensor? pos_weight=None, int reduction=1) -> Tensor",
    "kl_div": "kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) "
              "-> Tensor",
    "poisson_nll_loss": "poisson_nll_loss(Tensor input, Tensor target, bool log_input, "
                        "bool full, float eps, int reduction) -> Tensor",
    "margin_ranking_loss": "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, "
                           "float margin=0., int reduction=1) -> Tensor",
    "hinge_embedding_loss": "hinge_embedding_loss(Tensor self, Tensor target, float margin=1., "
                            "int reduction=1) -> Tensor",
    "cosine_embedding_loss": "cosine_embedding_loss(Tensor input1, Tensor input2, "
                             "Tensor target, float margin=0., int reduction=1) -> Tensor",
    "triplet_margin_loss": "triplet_margin_loss(Tensor anchor, Tensor positive, "
                           "Tensor negative, float margin=1., float p=2., float eps=1e-06, "
                           "bool swap=False, int reduction=1) -> Tensor",
    "multi_margin_loss": "multi_margin_loss(Tensor self, Tensor target, Scalar p=1, "
                         "Scalar margin=1, Tensor? weight=None, int reduction=1) -> Tensor",
    "multilabel_margin_loss": "multilabel_margin_loss(Tensor self, Tensor target, "
                              "int reduction=1) -> Tensor",
    "nll_loss": "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
                "SymInt ignore_index=-100) -> Tensor",
    "cross_entropy_loss": "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, "
                          "int reduction=1, SymInt ignore_index=-100, "
                          "float label_smoothing=0.) -> Tensor",
    "_ctc_loss": "_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, "
                 "int[] target_lengths, int blank=0, bool zero_infinity=False) -> "
                 "(Tensor, Tensor)",
    "_ctc_loss_backward": "_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, "
                          "int[] input_lengths, int[] target_lengths, "
                          "Tensor neg_log_likelihood, Tensor log_alpha, int blank, "
                          "bool zero_infinity=False) -> Tensor",
    # ---------------------------------------------------------------- effects (ops/effects.py)
    "accumulate_grad_": "accumulate_grad_(Tensor(a!) variable, Tensor new_grad, str how) "
                        "-> Tensor",
    "detach": "detach(Tensor(a) self) -> Tensor(a)",
    "set_": "set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)",
    "resize_": "resize_(Tensor(a!) self, SymInt[] size) -> Tensor(a!)",
    "lift_fresh_copy": "lift_fresh_copy(Any value) -> Tensor",
    "_amp_foreach_non_finite_check_and_unscale_": "_amp_foreach_non_finite_check_and_unscale_("
                                                   "Tensor(a!)[] self, Tensor(b!) found_inf, "
                                                   "Tensor inv_scale) -> ()",
    "_amp_update_scale_": "_amp_update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, "
                          "Tensor found_inf, float scale_growth_factor, "
                          "float scale_backoff_factor, int growth_interval) -> Tensor(a!)",
})
