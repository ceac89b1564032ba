"""Which profiler is running (read by the autograd engine and record_function) and the
module path nn.Module pushes while it runs (for with_modules)."""
import threading

ACTIVE = [None]      # innermost running profile object (process-wide, like PyTorch's)
_modules = threading.local()


def push(prof):
    prof._outer = ACTIVE[0]
    ACTIVE[0] = prof


def pop(prof):
    ACTIVE[0] = getattr(prof, "_outer", None)


def current():
    return ACTIVE[0]


def push_module(name):
    st = getattr(_modules, "stack", None)
    if st is None:
        st = _modules.stack = []
    st.append(name)


def pop_module():
    _modules.stack.pop()


def module_path():
    st = getattr(_modules, "stack", None)
    return ".".join(st) if st else None
