"""Deterministic-algorithms mode: torch.use_deterministic_algorithms and friends.

Note: the mode is process-wide (PyTorch keeps it in the global at::Context, not per
thread). Only ops tagged `nondeterministic` in the registry read it: their OpDef takes
a checked execute path (`OpDef._execute_checked`), every other op pays nothing.

Which ops are tagged, and why: the scatter paths where several indices may hit one
slot -- index_add, index_copy, index_put (accumulate=True), index_reduce, scatter,
scatter_add, scatter_reduce (tests/test_determinism.py keeps the list). On a parallel
backend the order of those writes (atomics) changes from run to run, and so do the
floating-point sums and which duplicate write wins. ember's cpu kernels are NumPy
calls that run sequentially in index order (`np.add.at`), and PyTorch's cpu kernels
for the same ops are deterministic as well: with the mode on, PyTorch (CPU) raises
for none of them, so neither does ember. The check therefore fires only for a tagged
op running on a backend outside `DETERMINISTIC_BACKENDS` (a GPU or user backend whose
kernel may run multi-threaded). A kernel that is nondeterministic on cpu too (PyTorch's
put_ without accumulate; ember has no put_ yet) calls `alert_not_deterministic(name)`
itself, as PyTorch's kernels do. PyTorch 2's fill of uninitialized memory
(torch.utils.deterministic.fill_uninitialized_memory) is not part of 1.7 and not here.
"""
import builtins
import warnings

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_deterministic", "is_deterministic"]


class _Mode:
    """The global flags (a plain object: visible from every thread)."""
    enabled = False
    warn_only = False


MODE = _Mode()

# backends whose kernels for `nondeterministic`-tagged ops run sequentially (NumPy)
DETERMINISTIC_BACKENDS = frozenset({"cpu", "meta"})


def _check_bool(value, name, fn="_set_deterministic_algorithms"):
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ops without a deterministic implementation raise (or warn, with warn_only)."""
    _check_bool(mode, "mode (position 1)")
    _check_bool(warn_only, "warn_only")
    MODE.enabled = mode
    MODE.warn_only = warn_only


def are_deterministic_algorithms_enabled():
    return MODE.enabled


def is_deterministic_algorithms_warn_only_enabled():
    return MODE.warn_only


def set_deterministic_debug_mode(debug_mode):
    """0/'default': off; 1/'warn': warn only; 2/'error': raise."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")


def get_deterministic_debug_mode():
    if not MODE.enabled:
        return 0
    return 1 if MODE.warn_only else 2


def set_deterministic(d):
    """PyTorch 1.7's name for use_deterministic_algorithms (deprecated since 1.8)."""
    warnings.warn("torch.set_deterministic is deprecated and will be removed in a future "
                  "release. Please use torch.use_deterministic_algorithms instead",
                  stacklevel=2)
    _check_bool(d, "d", "set_deterministic")
    use_deterministic_algorithms(d)


def is_deterministic():
    """PyTorch 1.7's name for are_deterministic_algorithms_enabled (deprecated since 1.8)."""
    warnings.warn("torch.is_deterministic is deprecated and will be removed in a future "
                  "release. Please use torch.are_deterministic_algorithms_enabled instead",
                  stacklevel=2)
    return MODE.enabled


def alert_not_deterministic(caller):
    """PyTorch's Context::alertNotDeterministic: raise (or warn) when the mode is on."""
    if not MODE.enabled:
        return
    if MODE.warn_only:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can "
                      "file an issue at https://github.com/pytorch/pytorch/issues to help us "
                      "prioritize adding deterministic support for this operation.",
                      stacklevel=4)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off "
                       "determinism just for this operation, or you can use the "
                       "'warn_only=True' option, if that's acceptable for your application. "
                       "You can also file an issue at https://github.com/pytorch/pytorch/issues "
                       "to help us prioritize adding deterministic support for this operation.")


def check_op(op, args):
    """Called (mode on) before a `nondeterministic`-tagged op runs: alert unless its
    backend's kernel is sequential."""
    from ._tensor import Tensor
    backend = "cpu"
    for a in args:
        if isinstance(a, Tensor):
            backend = a._backend
            break
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            backend = a[0]._backend
            break
    if backend not in DETERMINISTIC_BACKENDS:
        alert_not_deterministic(f"{op.name}_{backend}")
