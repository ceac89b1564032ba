"""ember.fft: torch.fft (PyTorch 1.7, NumPy-compatible), on pocketfft.

Note: every function is a composition, as in ATen's native/SpectralOps.cpp: promote
the input (integers to the default float, to complex where the transform needs it),
resize it to n / s (trim with narrow, pad with zeros), then run one of the three
primitives in ember/fft/_ops.py. `norm` maps to ATen's scale per direction: for a
forward transform None/'backward' is no scaling, 'forward' is 1/n; for an inverse
one the other way round; 'ortho' is 1/sqrt(n) both ways.
"""
from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ..ops._elementwise import type_name, write_out
from ._ops import FFT_C2C, FFT_R2C, FFT_C2R, NORM_NONE, NORM_SQRT, NORM_N

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn",
           "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


# --------------------------------------------------------------------- arguments

def _norm(norm, forward):
    """ATen's norm_from_string: the scale of a forward or inverse transform."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_N
    if norm == "forward":
        return NORM_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_SQRT
    if not isinstance(norm, str):
        raise TypeError(f"argument 'norm' must be str, not {type(norm).__name__}")
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


# PyTorch's AutocastCPU fp32 list names these public functions (not hfft2/hfftn/ihfft2/
# ihfftn): under autocast their half inputs become float32 before the dtype check
# below, which runs ahead of the primitives' own amp_policy.
_AUTOCAST_FP32 = {"fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
                  "irfft2", "rfftn", "irfftn", "hfft", "ihfft"}


def _autocast_cpu():
    from ..amp.autocast_mode import is_autocast_enabled
    return is_autocast_enabled("cpu")


def _promote(x, fname, require_complex=False):
    """ATen's promote_tensor_fft: integers -> default float; half types are refused."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    if d.is_complex:
        return x
    target = d if d.is_floating_point else D.get_default_dtype()
    if target in (D.float16, D.bfloat16) and fname in _AUTOCAST_FP32 and _autocast_cpu():
        target = D.float32
    if target not in (D.float32, D.float64):
        raise RuntimeError(f"Unsupported dtype {type_name(target)}")
    if require_complex:
        target = target.to_complex()
    return x if target is d else x.to(target)


def _dim1(x, dim, fname):
    ndim = x._data.ndim
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim, fname)


def _n_points(n, fname="fft"):
    if not isinstance(n, int) or isinstance(n, bool):
        if not hasattr(n, "__index__"):
            raise TypeError(f"{fname}(): argument 'n' must be int, not {type(n).__name__}")
        n = n.__index__()
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _resize(x, dims, sizes):
    """ATen's resize_fft_input: trim (narrow) or zero-pad each dim to its size."""
    for d, n in zip(dims, sizes):
        cur = x.shape[d]
        if cur > n:
            x = x.narrow(d, 0, n)
        elif cur < n:
            from ..ops.shape import cat
            pad = list(x.shape)
            pad[d] = n - cur
            x = cat([x, x.new_zeros(pad)], d)
    return x


def _shape_and_dims(x, s, dim, fname):
    """ATen's canonicalize_fft_shape_and_dim_args: (sizes, dims) of an n-d transform."""
    ndim = x._data.ndim
    dims = None
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if ndim == 0 and dims:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = [_wrap_dim(d, ndim, fname) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, sizes = list(range(ndim)), list(x.shape)
    else:
        sizes = [x.shape[d] for d in dims]
    for n in sizes:
        _n_points(n, fname)
    return sizes, dims


def _c2r_shape_and_dims(x, s, dim, fname):
    """The hermitian variant: the last dim's output size defaults to 2*(m-1) and its
    input is resized to last//2 + 1."""
    sizes, dims = _shape_and_dims(x, s, dim, fname)
    if not sizes:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or list(s)[-1] == -1:
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = sizes[-1]
    _n_points(last)
    sizes[-1] = last // 2 + 1
    return sizes, dims, last


def _out(res, out, fname, want_complex):
    if out is None:
        return res
    if isinstance(out, Tensor) and out.dtype.is_complex != want_complex:
        kind = "complex" if want_complex else "floating point"
        raise RuntimeError(f"{fname} expects a {kind} output tensor, but got "
                           f"{type_name(out.dtype)}")
    return write_out(out, res, fname)


def _c2c(x, dims, norm, forward):
    return dispatch(FFT_C2C, (x, tuple(dims), norm, forward))


def _r2c(x, dims, norm, onesided):
    return dispatch(FFT_R2C, (x, tuple(dims), norm, onesided))


def _c2r(x, dims, norm, last_dim_size):
    return dispatch(FFT_C2R, (x, tuple(dims), norm, last_dim_size))


# ---------------------------------------------------------------------- 1-d

def _fft_c2c(fname, x, n, dim, norm, forward):
    d = _dim1(x, dim, fname)
    n = _n_points(x.shape[d] if n is None else n, fname)
    return _c2c(_resize(x, [d], [n]), [d], _norm(norm, forward), forward)


def _fft_r2c(fname, x, n, dim, norm, forward, onesided):
    if isinstance(x, Tensor) and x.is_complex():
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{type_name(x.dtype)}")
    x = _promote(x, fname)
    d = _dim1(x, dim, fname)
    n = _n_points(x.shape[d] if n is None else n, fname)
    res = _r2c(_resize(x, [d], [n]), [d], _norm(norm, forward), onesided)
    return res if forward else res.conj()


def _fft_c2r(fname, x, n, dim, norm, forward):
    x = _promote(x, fname, require_complex=True)
    d = _dim1(x, dim, fname)
    n = _n_points(2 * (x.shape[d] - 1) if n is None else n, fname)
    x = _resize(x, [d], [n // 2 + 1])
    if forward:
        x = x.conj()
    return _c2r(x, [d], _norm(norm, forward), n)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform."""
    if isinstance(input, Tensor) and input.is_complex():
        res = _fft_c2c("fft", input, n, dim, norm, True)
    else:
        res = _fft_r2c("fft", input, n, dim, norm, True, False)
    return _out(res, out, "fft", True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional inverse discrete Fourier transform."""
    if isinstance(input, Tensor) and input.is_complex():
        res = _fft_c2c("ifft", input, n, dim, norm, False)
    else:
        res = _fft_r2c("ifft", input, n, dim, norm, False, False)
    return _out(res, out, "ifft", True)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """FFT of real input: the n//2 + 1 non-negative frequencies."""
    return _out(_fft_r2c("rfft", input, n, dim, norm, True, True), out, "rfft", True)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of rfft: real output of length n (default 2*(m-1))."""
    return _out(_fft_c2r("irfft", input, n, dim, norm, False), out, "irfft", False)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """FFT of a Hermitian-symmetric signal given by its first half: real output."""
    return _out(_fft_c2r("hfft", input, n, dim, norm, True), out, "hfft", False)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of hfft: the n//2 + 1 non-negative frequencies of a real signal."""
    return _out(_fft_r2c("ihfft", input, n, dim, norm, False, True), out, "ihfft", True)


# ---------------------------------------------------------------------- n-d

def _fftn(fname, x, s, dim, norm, forward):
    x = _promote(x, fname, require_complex=True)
    sizes, dims = _shape_and_dims(x, s, dim, fname)
    return _c2c(_resize(x, dims, sizes), dims, _norm(norm, forward), forward)


def _rfftn(fname, x, s, dim, norm):
    if isinstance(x, Tensor) and x.is_complex():
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{type_name(x.dtype)}")
    x = _promote(x, fname)
    sizes, dims = _shape_and_dims(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    return _r2c(_resize(x, dims, sizes), dims, _norm(norm, True), True)


def _irfftn(fname, x, s, dim, norm):
    x = _promote(x, fname, require_complex=True)
    sizes, dims, last = _c2r_shape_and_dims(x, s, dim, fname)
    return _c2r(_resize(x, dims, sizes), dims, _norm(norm, False), last)


def _hfftn(fname, x, s, dim, norm):
    x = _promote(x, fname, require_complex=True)
    sizes, dims, last = _c2r_shape_and_dims(x, s, dim, fname)
    x = _resize(x, dims, sizes)
    mode = _norm(norm, True)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return _c2r(x.conj(), dims[-1:], mode, last)


def _ihfftn(fname, x, s, dim, norm):
    x = _promote(x, fname)          # complex input: fft_r2c's meta refuses it
    sizes, dims = _shape_and_dims(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    mode = _norm(norm, False)
    res = _r2c(_resize(x, dims, sizes), dims[-1:], mode, True).conj()
    if len(dims) > 1:
        res = _c2c(res, dims[:-1], mode, False)
    return res


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional discrete Fourier transform (all dims by default)."""
    return _out(_fftn("fftn", input, s, dim, norm, True), out, "fftn", True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional inverse discrete Fourier transform."""
    return _out(_fftn("ifftn", input, s, dim, norm, False), out, "ifftn", True)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT of real input (the last transformed dim is one-sided)."""
    return _out(_rfftn("rfftn", input, s, dim, norm), out, "rfftn", True)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of rfftn."""
    return _out(_irfftn("irfftn", input, s, dim, norm), out, "irfftn", False)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional FFT of a Hermitian-symmetric signal: real output."""
    return _out(_hfftn("hfftn", input, s, dim, norm), out, "hfftn", False)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of hfftn."""
    return _out(_ihfftn("ihfftn", input, s, dim, norm), out, "ihfftn", True)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_fftn("fft2", input, s, dim, norm, True), out, "fft2", True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_fftn("ifft2", input, s, dim, norm, False), out, "ifft2", True)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_rfftn("rfft2", input, s, dim, norm), out, "rfft2", True)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_irfftn("irfft2", input, s, dim, norm), out, "irfft2", False)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_hfftn("hfft2", input, s, dim, norm), out, "hfft2", False)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_ihfftn("ihfft2", input, s, dim, norm), out, "ihfft2", True)


# ------------------------------------------------------------- helper functions

def _freq_dtype(dtype, fname):
    d = D.get_default_dtype() if dtype is None else dtype
    if not isinstance(d, D.dtype):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not "
                        f"{type(d).__name__}")
    if d.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{type_name(d)}\'')
    if not d.is_floating_point:
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    return d


def _finish(res, out, requires_grad, fname):
    if out is not None:
        res = write_out(out, res, fname)
    if requires_grad:
        res.requires_grad_(True)
    return res


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """Sample frequencies of an n-point FFT: [0, 1, ..., -(n//2), ..., -1] / (d*n)."""
    from ..ops.creation import arange
    from ..ops.shape import cat
    dt = _freq_dtype(dtype, "fftfreq")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    pos = arange((n + 1) // 2, dtype=dt, device=device)
    neg = arange(-(n // 2), 0, dtype=dt, device=device)
    res = cat([pos, neg]) * (1.0 / (n * d)) if n else pos
    return _finish(res, out, requires_grad, "fftfreq")


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """Sample frequencies of an n-point rfft: [0, 1, ..., n//2] / (d*n)."""
    from ..ops.creation import arange
    dt = _freq_dtype(dtype, "rfftfreq")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    res = arange(n // 2 + 1, dtype=dt, device=device)
    res = res * (1.0 / (n * d)) if n else res[:0]
    return _finish(res, out, requires_grad, "rfftfreq")


def _shift(x, dim, up, fname):
    from ..ops.rearrange import roll
    ndim = x._data.ndim
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [_wrap_dim(d, ndim, fname)
                for d in ([dim] if isinstance(dim, int) else dim)]
    if not dims:
        raise RuntimeError("`shifts` required")     # roll with no dims, as in PyTorch
    return roll(x, [(x.shape[d] + up) // 2 for d in dims], dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the center (roll by n//2 along dim)."""
    return _shift(input, dim, 0, "fftshift")


def ifftshift(input, dim=None):
    """Inverse of fftshift (roll by (n+1)//2)."""
    return _shift(input, dim, 1, "ifftshift")
