"""ember.cond: PyTorch's structured control flow (torch.cond) for export and compile.

Why: a Python `if` on a tensor's value cannot be one graph: export and fullgraph compile
stop there and point to cond. `cond(pred, true_fn, false_fn, operands)` runs one branch
eagerly. Under capture both branches are traced (inlined through ember's capture, so their
guards and lifted parameters are the capture's own) and the result is selected with
`where(pred, true_out, false_out)`: one graph valid for either value of pred. Unlike
torch's cond node with two subgraphs, the captured graph computes both branches; the
branches must be pure (no in-place updates) and return tensors of the same shape and dtype,
as torch.cond requires.
"""
from ._tensor import Tensor

__all__ = ["cond"]


def _check(pred, operands):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"Tensor of shape {list(pred.shape)}")
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred!r}.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands!r}.")


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands)."""
    _check(pred, operands)
    if isinstance(pred, Tensor):
        pred = bool(pred.reshape(()).item())
    return (true_fn if pred else false_fn)(*operands)


def _select(pred, a, b, path="output"):
    """where(pred, a, b) over matching (nested) branch outputs (a graph function)."""
    from . import where
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) != len(b):
            raise RuntimeError(f"cond: true_fn and false_fn return {len(a)} and {len(b)} "
                               f"outputs; both branches must return the same structure")
        return type(a)(_select(pred, x, y, f"{path}[{i}]") for i, (x, y) in
                       enumerate(zip(a, b)))
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise RuntimeError(f"cond: branches must return tensors (or tuples of them); "
                           f"{path} is {type(a).__name__} / {type(b).__name__}")
    if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
        raise RuntimeError(f"cond: true_fn and false_fn must return tensors with the same "
                           f"metadata: {path} is {a.dtype}{list(a.shape)} in true_fn and "
                           f"{b.dtype}{list(b.shape)} in false_fn")
    if not isinstance(pred, Tensor):
        return a if pred else b
    return where(pred.reshape(()), a, b)


def _cond_captured(pred, true_fn, false_fn, operands=()):
    """What the capture inlines in place of cond (see the module docstring)."""
    _check(pred, operands)
    operands = tuple(operands)
    return _select(pred, true_fn(*operands), false_fn(*operands))


cond._ember_capture_as = _cond_captured
