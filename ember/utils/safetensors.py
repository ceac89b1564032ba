"""safetensors read/write for ember state_dicts, through the `safetensors` package.

The package's NumPy helpers (safetensors.numpy) know no bfloat16 on load, so this
module calls its `serialize`/`deserialize` core directly with ember's dtype table
(ml_dtypes gives NumPy a bfloat16). Install with `pip install ember[files]`.
"""
import os

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, wrap

__all__ = ["save", "save_file", "load", "load_file"]

# ember dtype <-> safetensors dtype tag (complex128 has no tag in the format)
_TAGS = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
         "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
         "bool": "BOOL", "complex64": "C64"}
_DTYPES = {v: getattr(D, k) for k, v in _TAGS.items()}


def _package():
    try:
        import safetensors
    except ImportError as e:
        raise ImportError("ember.utils.safetensors needs the `safetensors` package: "
                          "pip install safetensors (or ember[files])") from e
    return safetensors


def _specs(tensors):
    """TensorSpec per name over contiguous little-endian arrays (kept alive by the caller)."""
    st = _package()
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of name -> Tensor, got {type(tensors).__name__}")
    arrays, specs = [], {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"safetensors keys must be str, got {type(name).__name__}")
        if not isinstance(t, Tensor):
            raise TypeError(f"Key `{name}` is invalid, expected ember.Tensor but received "
                            f"{type(t).__name__}")
        tag = _TAGS.get(t.dtype.name)
        if tag is None:
            raise ValueError(f"safetensors cannot store dtype {t.dtype} (tensor `{name}`)")
        t._check_materialized("safetensors.save")
        a = t._data if t._data.flags.c_contiguous else np.ascontiguousarray(t._data)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        arrays.append(a)
        specs[name] = st.TensorSpec(dtype=a.dtype.name,
                                    shape=a.shape, data_ptr=a.ctypes.data, data_len=a.nbytes)
    return specs, arrays


def save(tensors, metadata=None):
    """safetensors.torch.save: the file's bytes for a dict of tensors."""
    specs, arrays = _specs(tensors)
    out = bytes(_package().serialize(specs, metadata=metadata))
    del arrays
    return out


def save_file(tensors, filename, metadata=None):
    """safetensors.torch.save_file, written atomically (temporary file, then os.replace)."""
    import tempfile
    specs, arrays = _specs(tensors)
    path = os.fspath(filename)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    os.close(fd)
    try:
        _package().serialize_file(specs, tmp, metadata=metadata)
        from ..serialization import _file_mode
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        del arrays


def load(data):
    """safetensors.torch.load: a dict of ember tensors from a file's bytes."""
    out = {}
    for name, v in _package().deserialize(data):
        dt = _DTYPES.get(v["dtype"])
        if dt is None:
            raise ValueError(f"ember has no dtype for safetensors dtype {v['dtype']} "
                             f"(tensor `{name}`)")
        arr = np.frombuffer(v["data"], dtype=dt.np).reshape(v["shape"])
        out[name] = wrap(arr, dt)
    return out


def load_file(filename, device="cpu"):
    """safetensors.torch.load_file: a dict of ember tensors from a file."""
    from .._device import check_supported
    check_supported(device)
    with open(filename, "rb") as f:
        return load(f.read())
