"""torch.types: the type aliases PyTorch code annotates with (Number, _size, Device, ...)."""
import builtins
import os
from typing import IO, Any, Sequence, Union  # noqa: F401

from ._device import device as _device
from ._dtype import dtype as _dtype
from ._tensor import Size, Tensor

__all__ = ["Device", "FileLike", "Number", "Storage"]

_bool = builtins.bool
_int = builtins.int
_float = builtins.float
_complex = builtins.complex
_str = builtins.str
_bytes = builtins.bytes
_layout = str        # ember spells layouts as strings ("torch.strided")
_qscheme = str
_dispatchkey = Union[str, Any]

SymInt = _int        # ember has no symbolic shapes at runtime; sizes are ints
SymFloat = _float
SymBool = _bool
IntLikeType = Union[_int, SymInt]
FloatLikeType = Union[_float, SymFloat]
BoolLikeType = Union[_bool, SymBool]
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType = Union[SymInt, SymFloat, SymBool]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]], None]
_TensorOrTensorsOrGradEdge = Union[Tensor, Sequence[Tensor], Any]
_size = Union[Size, list[_int], tuple[_int, ...]]
_symsize = Union[Size, Sequence[Union[_int, SymInt]]]
_Number = (_bool, _int, _float)
Number = Union[_int, _float, _bool]
_dtype = _dtype
_device = _device
Device = Union[_device, _str, _int, None]
FileLike = Union[_str, os.PathLike, IO[_bytes]]


class Storage:
    """Typing stand-in for torch.types.Storage (ember tensors own NumPy buffers)."""
    _cdata: _int
    device: _device
    dtype: _dtype
