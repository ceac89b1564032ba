"""Devices. The cpu backend runs NumPy kernels; other device types are named by
backends registered later (cuda through CuPy, privateuse1 by users)."""
import builtins


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            if type < 0:
                raise RuntimeError(f"device(): Device index must not be negative, got {type}")
            type, index = "cuda", type          # a bare index names the accelerator
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or device, got {type!r}")
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError("device(): argument 'index' (position 2) must be int, not "
                                f"{_type_name(index)}")
            if index < 0:
                raise RuntimeError(f"device(): Device index must not be negative, got {index}")
            if ":" in type:
                raise RuntimeError("device(): type (string) must not include an index because "
                                   f"index was passed explicitly: {type}")
        if ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _KNOWN:
            raise RuntimeError(
                f"Expected one of {', '.join(sorted(_KNOWN))} device type at start of device "
                f"string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def _type_name(x):
    return builtins.type(x).__name__


class DeviceUnavailableError(RuntimeError, AssertionError):
    """A device with no ember backend. A RuntimeError with ember's message, and also an
    AssertionError because PyTorch's CPU builds raise "Torch not compiled with CUDA
    enabled" as one, and user code catches it that way."""


_KNOWN = {"cpu", "cuda", "meta", "privateuse1", "mps", "xla"}
CUSTOM = set()      # device types of registered PrivateUse1 backends (ember/_privateuse1.py)
CPU = device("cpu")


def as_device(d):
    if d is None:
        return CPU
    if isinstance(d, device):
        return d
    if isinstance(d, int):
        return device("cuda", d)
    return device(d)


def check_supported(d):
    """ember's only built-in backend is NumPy on the cpu."""
    d = as_device(d)
    if d.type not in ("cpu", "meta") and d.type not in CUSTOM:
        raise DeviceUnavailableError(
            f"ember: device '{d}' is not available (no backend registered for '{d.type}'; "
            "ember runs on cpu)")
    return d
