"""Tensor's methods: one declared table, installed on the class in one place.

Why: a reader looking for `Tensor.sum` or `Tensor.__add__` finds it here, by family, as in
PyTorch's method variants of `native_functions.yaml` (`variants: function, method`), instead
of in setattr calls spread over twenty modules. Each op module makes its methods next to its
ops (a module-level `METHODS` dict: name -> function or property, usually the same function
as `ember.<name>`); this table declares which module provides every method, and `install()`
puts them on `Tensor` once, at `import ember`. A method a module makes but the table does not
declare (or one declared twice, or declared and missing) fails `install()` loudly.
Methods that need no op (metadata, autograd, conversions) are defined in `_tensor.py`'s
class body.
"""
from . import _legacy, _numpy_protocol, _quantized_methods, functional, sparse
from ._tensor import Tensor
from .linalg import _lapack_raw, _top_level as linalg
from .ops import (activation, as_strided, complex, copy, creation, histogram, index_ops,
                  indexing, mask, matmul, misc, pointwise, pointwise_math, random, rearrange,
                  reduction, scan, shape, sorting, vector_norm)

# (family, providing module, method names); the module's METHODS holds the functions
TABLE = (
    # ------------------------------------------------------------ pointwise arithmetic
    ("arithmetic", pointwise, """
        add add_ sub sub_ subtract subtract_ mul mul_ multiply multiply_ div div_ divide divide_
        true_divide true_divide_ floor_divide floor_divide_ remainder remainder_ pow pow_
        neg neg_ negative negative_ abs abs_ absolute absolute_ square square_ reciprocal
        reciprocal_ sign sign_ sgn sgn_ maximum maximum_ minimum minimum_
        conj conj_physical conj_physical_ resolve_conj is_conj
    """),
    ("Python operators", pointwise, """
        __add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__
        __truediv__ __rtruediv__ __itruediv__ __rdiv__ __floordiv__ __rfloordiv__ __ifloordiv__
        __mod__ __rmod__ __imod__ __pow__ __rpow__ __ipow__ __neg__ __pos__ __abs__ __invert__
        __and__ __rand__ __iand__ __or__ __ror__ __ior__ __xor__ __rxor__ __ixor__
        __eq__ __ne__ __lt__ __le__ __gt__ __ge__
    """),
    ("comparison and logic", pointwise, """
        eq eq_ ne ne_ not_equal not_equal_ lt lt_ less less_ le le_ less_equal less_equal_
        gt gt_ greater greater_ ge ge_ greater_equal greater_equal_ isnan isnan_
        logical_not logical_not_ logical_and logical_and_ logical_or logical_or_
        logical_xor logical_xor_ bitwise_not bitwise_not_ bitwise_and bitwise_and_
        bitwise_or bitwise_or_ bitwise_xor bitwise_xor_
    """),
    ("unary math", pointwise, """
        exp exp_ log log_ sqrt sqrt_ sin sin_ cos cos_ tanh tanh_ sigmoid sigmoid_ relu relu_
        floor floor_
    """),
    ("unary math", pointwise_math, """
        acos acos_ arccos arccos_ asin asin_ arcsin arcsin_ atan atan_ arctan arctan_
        acosh acosh_ arccosh arccosh_ asinh asinh_ arcsinh arcsinh_ atanh atanh_ arctanh
        arctanh_ cosh cosh_ sinh sinh_ tan tan_ exp2 exp2_ expm1 expm1_ log10 log10_ log2 log2_
        log1p log1p_ rsqrt rsqrt_ sinc sinc_ erf erf_ erfc erfc_ erfinv erfinv_ lgamma lgamma_
        digamma digamma_ polygamma polygamma_ mvlgamma mvlgamma_ i0 i0_ logit logit_
        ceil ceil_ trunc trunc_ fix fix_ frac frac_ round round_ nan_to_num nan_to_num_
        deg2rad deg2rad_ rad2deg rad2deg_ positive
    """),
    ("classification", pointwise_math, """
        isinf isfinite isposinf isneginf isreal signbit isclose allclose equal
    """),
    ("binary and ternary math", pointwise_math, """
        atan2 atan2_ arctan2 arctan2_ fmod fmod_ hypot hypot_ fmax fmin copysign copysign_
        logaddexp logaddexp2 xlogy xlogy_ nextafter nextafter_ heaviside heaviside_ gcd gcd_
        lcm lcm_ igamma igamma_ igammac igammac_ float_power float_power_ ldexp ldexp_
        lerp lerp_ addcmul addcmul_ addcdiv addcdiv_
    """),
    ("shifts", pointwise_math, """
        bitwise_left_shift bitwise_left_shift_ bitwise_right_shift bitwise_right_shift_
        __lshift__ __rlshift__ __ilshift__ __rshift__ __rrshift__ __irshift__
    """),
    ("activations and clamping", activation, """
        softmax log_softmax clamp clamp_ clip clip_ clamp_min clamp_min_ clamp_max clamp_max_
    """),
    ("complex", complex, """
        real imag angle resolve_neg is_neg
    """),
    # ------------------------------------------------------------------- reductions
    ("reductions", reduction, """
        sum nansum mean nanmean prod max min amax amin aminmax argmax argmin all any var std
        logsumexp count_nonzero sum_to_size
    """),
    ("norms", vector_norm, """
        norm dist
    """),
    ("scans", scan, """
        cumsum cumsum_ cumprod cumprod_ cummax cummin logcumsumexp
    """),
    ("sorting and selection", sorting, """
        sort argsort msort topk kthvalue median nanmedian mode quantile nanquantile unique
        unique_consecutive
    """),
    ("histograms", histogram, """
        bincount histc histogram
    """),
    # ----------------------------------------------------------------------- matmul
    ("matrix products", matmul, """
        matmul __matmul__ __rmatmul__ mm bmm mv dot vdot inner outer ger addmm addmm_ addmv addmv_
        addbmm addbmm_ baddbmm baddbmm_ addr addr_
    """),
    ("linear algebra", linalg, """
        det logdet slogdet inverse cholesky cholesky_solve cholesky_inverse qr orgqr svd
        pinverse matrix_power matrix_exp triangular_solve cross lu lu_solve
    """),
    ("LAPACK-style", _lapack_raw, """
        geqrf ormqr
    """),
    # ------------------------------------------------------------ views and layout
    ("views", shape, """
        view view_as reshape reshape_as expand expand_as permute transpose swapaxes swapdims
        t T mT mH H adjoint squeeze unsqueeze flatten unflatten select narrow split
        split_with_sizes chunk tensor_split unbind diagonal unfold movedim moveaxis
        diagonal_scatter slice_scatter select_scatter
    """),
    ("strided views", as_strided, """
        as_strided
    """),
    ("in-place views", misc, """
        squeeze_ unsqueeze_ transpose_ swapaxes_ swapdims_ t_ as_strided_
    """),
    ("rearrangement", rearrange, """
        repeat tile repeat_interleave flip fliplr flipud roll rot90 tril tril_ triu triu_ diag
        diag_embed diagflat hsplit vsplit dsplit broadcast_to
    """),
    # --------------------------------------------------------------------- indexing
    ("indexing", indexing, """
        __getitem__ __setitem__ index_put index_put_ gather scatter scatter_ scatter_add
        scatter_add_ index_select index_add index_add_ index_fill index_fill_ take
    """),
    ("index ops", index_ops, """
        put put_ take_along_dim index_copy index_copy_ index_reduce index_reduce_
        scatter_reduce scatter_reduce_ narrow_copy kron trace
    """),
    ("masks", mask, """
        where masked_fill masked_fill_ masked_select masked_scatter masked_scatter_ nonzero
        nonzero_static argwhere
    """),
    # ------------------------------------------------------- copies, casts, creation
    ("copies and casts", copy, """
        clone contiguous copy_ to type type_as float double half bfloat16 long int short char
        byte bool cfloat cdouble cpu cuda pin_memory resize_ resize_as_ apply_ map_
    """),
    ("new tensors", creation, """
        new_tensor new_zeros new_ones new_empty new_empty_strided new_full
    """),
    ("random", random, """
        uniform_ normal_ random_ bernoulli bernoulli_ exponential_ geometric_ log_normal_
        cauchy_ multinomial
    """),
    ("misc", misc, """
        fill_ zero_ fill_diagonal_ diff ravel isin cov corrcoef frexp renorm renorm_
    """),
    ("signal", functional, """
        stft istft
    """),
    ("sparse", sparse, """
        to_sparse to_sparse_coo to_sparse_csr to_dense sparse_dim dense_dim
    """),
    # ----------------------------------------------------- legacy and interop
    ("legacy and device queries", _legacy, """
        new is_nonzero is_same_size is_pinned is_shared is_distributed is_quantized is_nested
        is_xpu is_mps is_xla is_ipu is_hpu is_mtia is_maia is_vulkan is_mkldnn
    """),
    ("quantization (QuantizedTensor overrides them)", _quantized_methods, """
        dequantize int_repr q_scale q_zero_point q_per_channel_scales q_per_channel_zero_points
        q_per_channel_axis qscheme
    """),
    ("NumPy protocol", _numpy_protocol, """
        __array__ __array_ufunc__ __array_function__
    """),
)


def _lookup(module, name):
    made = getattr(module, "METHODS", None)
    return made[name] if made is not None else getattr(module, name)


def declared():
    """{method name: (family, module)} from TABLE; a name declared twice is an error."""
    out = {}
    for family, module, names in TABLE:
        for name in names.split():
            if name in out:
                raise RuntimeError(f"Tensor method table: '{name}' is declared twice "
                                   f"({out[name][0]!r} and {family!r})")
            out[name] = (family, module)
    return out


def install():
    """Put every declared method on Tensor; refuse methods a module makes undeclared."""
    table = declared()
    for name, (_, module) in table.items():
        setattr(Tensor, name, _lookup(module, name))
    for module in {m for _, m, _ in TABLE}:
        extra = [n for n in getattr(module, "METHODS", ()) if n not in table]
        if extra:
            raise RuntimeError(f"{module.__name__} makes Tensor methods that "
                               f"ember/_tensor_methods.py does not declare: {extra}")


ADDED = set()      # names add_methods put on Tensor after import


def add_methods(methods):
    """Methods made at run time (a renamed privateuse1 backend's `x.<name>()`)."""
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
        ADDED.add(name)
