"""The backend registry (torch._dynamo.backends.registry): names for compiler functions.

Why: `ember.compile(model, backend="eager")` and `ember._dynamo.list_backends()` need one
place that knows every backend by name, including ones other packages provide (through
the "ember_dynamo_backends" entry-point group, as PyTorch's "torch_dynamo_backends"). The
built-in backends live in their own modules and register themselves on first lookup, so
importing the registry stays cheap.
"""
import functools
import logging

from .. import exc as _exc

log = logging.getLogger(__name__)

__all__ = ["register_backend", "lookup_backend", "list_backends", "register_debug_backend",
           "register_experimental_backend", "InvalidBackend"]

_BACKENDS = {}          # name -> importlib.metadata.EntryPoint, or None once registered
_COMPILER_FNS = {}      # name -> compiler function
ENTRY_POINT_GROUP = "ember_dynamo_backends"


if hasattr(_exc, "InvalidBackend"):
    # the capture's exception module owns it: `except ember._dynamo.exc.InvalidBackend` works
    InvalidBackend = _exc.InvalidBackend
else:
    class InvalidBackend(_exc.TorchDynamoException):
        """An unknown backend name (torch._dynamo.exc.InvalidBackend), listing valid ones."""

        def __init__(self, name):
            valid = ", ".join(list_backends(exclude_tags=()))
            super().__init__(
                f"Invalid backend: {name!r}, see `ember._dynamo.list_backends()` for "
                f"available backends. Valid backends: {valid}")


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register `compiler_fn` under `name` (default: its __name__); a decorator with or
    without arguments. `tags` ("debug", "experimental") hide it from list_backends()."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    if not callable(compiler_fn):
        raise AssertionError(f"compiler_fn must be callable, got {type(compiler_fn)}")
    name = name or compiler_fn.__name__
    if name in _COMPILER_FNS:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name] = None
    _COMPILER_FNS[name] = compiler_fn
    compiler_fn._tags = tuple(tags)
    return compiler_fn


register_debug_backend = functools.partial(register_backend, tags=("debug",))
register_experimental_backend = functools.partial(register_backend, tags=("experimental",))


def lookup_backend(compiler_fn):
    """The compiler function for a backend name; a callable is returned as it is."""
    if isinstance(compiler_fn, str):
        name = compiler_fn
        if name not in _BACKENDS:
            _lazy_import()
        if name not in _BACKENDS:
            raise InvalidBackend(name)
        if name not in _COMPILER_FNS:
            register_backend(compiler_fn=_BACKENDS[name].load(), name=name)
        return _COMPILER_FNS[name]
    if not callable(compiler_fn):
        raise TypeError(f"backend must be a string or a callable, got "
                        f"{type(compiler_fn).__name__}")
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")):
    """Names `ember.compile(..., backend=name)` accepts, sorted, without those tagged with
    any of `exclude_tags` (PyTorch hides "eager" and "aot_eager" this way: they are debug
    backends)."""
    _lazy_import()
    exclude = set(exclude_tags or ())
    return sorted(name for name in _BACKENDS
                  if name not in _COMPILER_FNS
                  or not exclude.intersection(_COMPILER_FNS[name]._tags))


@functools.cache
def _lazy_import():
    from . import _pending, debugging  # noqa: F401  (they register on import)
    _discover_entrypoint_backends()


@functools.cache
def _discover_entrypoint_backends():
    from importlib.metadata import entry_points
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _BACKENDS.setdefault(ep.name, ep)
