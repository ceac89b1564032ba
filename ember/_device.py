"""Devices. The cpu backend runs NumPy kernels; other device types are named by
backends registered later (cuda through CuPy, privateuse1 by users)."""


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or device, got {type!r}")
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


_KNOWN = {"cpu", "cuda", "meta", "privateuse1", "mps", "xla"}
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
    if d.type not in ("cpu", "meta"):
        raise RuntimeError(
            f"ember: device '{d}' is not available (no backend registered for '{d.type}'; "
            "ember runs on cpu)")
    return d
