"""repr(tensor) in PyTorch's format."""
import numpy as np


def tensor_repr(t):
    suffix = []
    if t._backend == "meta":
        body = "..."
        suffix.append(f"size={tuple(t.shape)}")
    else:
        data = t._data
        if t.dtype.name == "bfloat16":
            data = data.astype(np.float32)
        body = np.array2string(data, separator=", ", prefix="tensor(")
    if t.dtype.name not in ("float32", "int64", "bool", "complex64") or t._data.size == 0:
        suffix.append(f"dtype=torch.{t.dtype.name}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffix.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"
