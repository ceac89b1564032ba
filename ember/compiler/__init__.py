"""ember.compiler: the user-facing controls of ember.compile (torch.compiler)."""
__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling",
           "allow_in_graph", "list_backends"]


def compile(*args, **kwargs):
    from .._dynamo import compile as _compile
    return _compile(*args, **kwargs)


def reset():
    """Clears every compiled graph held in memory (the on-disk cache stays)."""
    from .._dynamo import reset as _reset
    _reset()


def disable(fn=None, recursive=True, *, reason=None):
    from .._dynamo import disable as _disable
    return _disable(fn, recursive, reason=reason)


def is_compiling():
    """True while ember.compile is running compiled code or capturing."""
    from .._dynamo.runtime import is_compiling as _ic
    return _ic()


is_dynamo_compiling = is_compiling


def allow_in_graph(fn):
    from .._dynamo import allow_in_graph as _a
    return _a(fn)


def list_backends(exclude_tags=("debug", "experimental")):
    from .._dynamo import list_backends as _lb
    return _lb(exclude_tags)
