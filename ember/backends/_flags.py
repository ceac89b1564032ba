"""`flags(...)`: the context manager PyTorch's backend modules offer to set flags briefly."""
import contextlib


@contextlib.contextmanager
def set_flags(module, **values):
    old = {k: getattr(module, k) for k, v in values.items() if v is not None}
    for k, v in values.items():
        if v is not None:
            setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)
