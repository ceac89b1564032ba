"""The unpickler behind ember.load(weights_only=True): an opcode-level interpreter, as
PyTorch's torch/_weights_only_unpickler.py is, not a pickle.Unpickler subclass.

Why its own interpreter: pickle.Unpickler runs BUILD, SETITEMS, APPENDS and friends on
whatever object is on the stack (`inst.__setstate__`, `setattr(inst, ...)`,
`obj[k] = v`, `obj.extend(...)`), and find_class is the only hook. Once an allowed
global (a class such as torch.Size, or a function) is on the stack, BUILD could set
attributes on that class for the whole process. Here every opcode that mutates an
object checks the object first, exactly where PyTorch's unpickler does:

- GLOBAL / STACK_GLOBAL: only allow-listed names (modules sys/os/posix/nt refused first);
- NEWOBJ: only allow-listed classes; REDUCE: only allow-listed callables;
- BUILD: only on instances of allow-listed classes (never on classes, functions or
  modules), OrderedDict (its `_metadata`), or Parameter;
- SETITEM(S): only dict / OrderedDict / Counter; APPEND(S): only list; ADDITEMS: only set.

Anything else (INST, OBJ, NEWOBJ_EX, EXT1/2/4, text PERSID, out-of-band buffers...) is an
"Unsupported operand". Beyond PyTorch's opcode set this reads the data-only opcodes
of protocols 3-5 (bytes, short strings, FRAME, MEMOIZE, frozenset), because ember.save
accepts pickle_protocol up to 5; STACK_GLOBAL goes through the same allowlist as GLOBAL.
Errors are pickle.UnpicklingError (ember.load adds PyTorch's "Weights only load
failed" text around them)."""
import struct
import types
from collections import Counter, OrderedDict
from pickle import UnpicklingError, decode_long

__all__ = ["Unpickler", "BLOCKED_MODULES", "StackUnderflow", "MemoMiss"]


class StackUnderflow(UnpicklingError, IndexError):
    """An opcode found too few items: an UnpicklingError (as pickle raises) that is also
    the IndexError PyTorch's unpickler raises here ("pop from empty list")."""


class MemoMiss(UnpicklingError, KeyError):
    """GET of a memo slot never PUT: also the KeyError PyTorch's unpickler raises."""

    __str__ = Exception.__str__

BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_CHUNK = 1 << 20
_NAME_MAPPING = None


def _compat_name(module, name):
    """Python 2 names in protocol-2 pickles -> Python 3 (as torch._utils' mappings)."""
    global _NAME_MAPPING
    if _NAME_MAPPING is None:
        import _compat_pickle
        _NAME_MAPPING = (_compat_pickle.NAME_MAPPING, _compat_pickle.IMPORT_MAPPING)
    names, imports = _NAME_MAPPING
    if (module, name) in names:
        return names[(module, name)]
    return imports.get(module, module), name


def unsupported_global_message(full_path):
    """PyTorch's WeightsUnpickler text for a global outside the allowlist."""
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest[:1] == "." else "builtins" + rest
    return (f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
            f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist "
            "this global if you trust this class/function.")


class Unpickler:
    """Reads one pickle from `file` (read/readline). `resolve(module, name)` returns the
    allowed object for a global or raises UnpicklingError; `allowed_ids()` gives the ids of
    every allowed object (NEWOBJ/REDUCE/BUILD check identity, never `==`);
    `persistent_load(pid)` maps storage ids; `build_hooks` maps a type to the function
    that applies BUILD's state to an instance of it (ember's stand-ins for torch's C types)."""

    def __init__(self, file, resolve, allowed_ids, persistent_load, build_hooks=None,
                 encoding="utf-8"):
        self.read, self.readline = file.read, file.readline
        self.resolve, self.allowed_ids = resolve, allowed_ids
        self.persistent_load = persistent_load
        self.build_hooks = build_hooks or {}
        self.encoding = encoding
        self.memo = {}
        self.proto = -1
        self._ids = None

    # ------------------------------------------------------------------ helpers
    def _readn(self, n):
        if n <= _CHUNK:
            data = self.read(n)
        else:       # a length field can claim 2**64 bytes: allocate only what is there
            parts, left = [], n
            while left:
                part = self.read(min(left, _CHUNK))
                if not part:
                    break
                parts.append(part)
                left -= len(part)
            data = b"".join(parts)
        if len(data) != n:       # EOFError, as PyTorch's unpickler (its next read is empty)
            raise EOFError("pickle data was truncated")
        return data

    def _unpack(self, fmt):
        return struct.unpack(fmt, self._readn(struct.calcsize(fmt)))[0]

    def _pop(self):
        if not self.stack:
            raise StackUnderflow("unpickling stack underflow")
        return self.stack.pop()

    def _top(self):
        if not self.stack:
            raise StackUnderflow("unpickling stack underflow")
        return self.stack[-1]

    def _pop_mark(self):
        if not self.metastack:
            raise StackUnderflow("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _global(self, module, name):
        module, name = _compat_name(module, name)
        if module in BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {module}.{name} whose "
                                  f"module {module} is blocked.")
        self.stack.append(self.resolve(module, name))

    def _allowed(self, obj):
        if self._ids is None:           # once per load: the allowlist cannot change meanwhile
            self._ids = self.allowed_ids()
        return id(obj) in self._ids

    # ------------------------------------------------------------------ opcodes
    def _newobj(self, cls, args):
        from .nn.parameter import Parameter
        if cls is Parameter:
            return Parameter(*args)
        if not self._allowed(cls):
            raise UnpicklingError("Can only create new object for nn.Parameter or classes "
                                  f"allowlisted via `add_safe_globals` but got {cls}")
        return cls.__new__(cls, *args)

    def _reduce(self, args):
        func = self._top()
        if not self._allowed(func):
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise UnpicklingError(msg)
        if not isinstance(args, tuple):
            raise UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args)}")
        self.stack[-1] = func(*args)

    def _build(self, state):
        inst = self._top()
        kind = type(inst)
        if isinstance(inst, (type, types.ModuleType, types.FunctionType,
                             types.BuiltinFunctionType, types.MethodType)):
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {kind}")
        hook = self.build_hooks.get(kind)
        if hook is not None:
            hook(inst, state)
        elif kind is OrderedDict:
            inst.__dict__.update(state)
        elif self._allowed(kind):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {kind}")

    def _check_set_item_target(self, opcode):
        if type(self._top()) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")

    def load(self):
        """Runs the opcodes up to STOP and returns the object."""
        self.metastack, self.stack = [], []
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError("Ran out of input")
            if not isinstance(key, (bytes, bytearray)):     # a text-mode file, as torch
                raise AssertionError(f"Expected bytes, got {type(key).__name__}")
            fn = _OPS.get(key[0])
            if fn is None:
                raise UnpicklingError(f"Unsupported operand {key[0]}")
            if fn(self) is _STOP:
                return self._pop()


def _op(code):
    def register(fn):
        _OPS[code[0]] = fn
        return fn
    return register


_STOP = object()
_OPS = {}
# opcodes that push a constant or a fresh empty container
_OPS[0x88] = lambda u: u.stack.append(True)
_OPS[0x89] = lambda u: u.stack.append(False)
_OPS[ord(")")] = lambda u: u.stack.append(())
_OPS[ord("]")] = lambda u: u.stack.append([])
_OPS[ord("}")] = lambda u: u.stack.append({})
_OPS[0x8f] = lambda u: u.stack.append(set())


@_op(b"N")
def _none(u):
    u.stack.append(None)


@_op(b".")
def _stop(u):
    return _STOP


@_op(b"\x80")
def _proto(u):
    u.proto = u._readn(1)[0]


@_op(b"\x95")
def _frame(u):
    u._readn(8)          # frame length: framing is an optimisation, data follows inline


@_op(b"c")
def _global_op(u):
    module = u.readline()
    name = u.readline()
    if not module.endswith(b"\n") or not name.endswith(b"\n"):
        raise UnpicklingError("pickle data was truncated in a GLOBAL name")
    u._global(module[:-1].decode("utf-8"), name[:-1].decode("utf-8"))


@_op(b"\x93")
def _stack_global(u):
    name, module = u._pop(), u._pop()
    if type(name) is not str or type(module) is not str:
        raise UnpicklingError("STACK_GLOBAL requires str")
    u._global(module, name)


@_op(b"\x81")
def _newobj_op(u):
    args = u._pop()
    cls = u._pop()
    u.stack.append(u._newobj(cls, args))


@_op(b"R")
def _reduce_op(u):
    u._reduce(u._pop())


@_op(b"b")
def _build_op(u):
    u._build(u._pop())


def _top_of_type(u, kind, what):
    """The stack top that APPEND/APPENDS/ADDITEMS mutate, which must be exactly `kind`:
    a subclass could run code on append."""
    target = u._top()
    if type(target) is not kind:
        raise UnpicklingError(f"Can only {what}, but got {type(target)}")
    return target


@_op(b"a")
def _append(u):
    item = u._pop()
    _top_of_type(u, list, "append to lists").append(item)


@_op(b"e")
def _appends(u):
    items = u._pop_mark()
    _top_of_type(u, list, "extend lists").extend(items)


@_op(b"\x90")
def _additems(u):
    items = u._pop_mark()
    _top_of_type(u, set, "add items to sets").update(items)


@_op(b"\x91")
def _frozenset(u):
    items = u._pop_mark()           # (pops first: it switches u.stack)
    u.stack.append(frozenset(items))


@_op(b"s")
def _setitem(u):
    v = u._pop()
    k = u._pop()
    u._check_set_item_target("SETITEM")
    u.stack[-1][k] = v


@_op(b"u")
def _setitems(u):
    items = u._pop_mark()
    u._check_set_item_target("SETITEMS")
    if len(items) % 2:
        raise UnpicklingError("odd number of items for SETITEMS")
    for i in range(0, len(items), 2):
        u.stack[-1][items[i]] = items[i + 1]


@_op(b"(")
def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


@_op(b"0")
def _pop_op(u):
    if u.stack:
        u.stack.pop()
    else:
        u._pop_mark()


@_op(b"1")
def _pop_mark_op(u):
    u._pop_mark()


@_op(b"t")
def _tuple(u):
    items = u._pop_mark()           # (pops first: it switches u.stack)
    u.stack.append(tuple(items))


def _tuple_n(n):
    def fn(u):
        if len(u.stack) < n:
            raise StackUnderflow("unpickling stack underflow")
        items = tuple(u.stack[-n:])
        del u.stack[-n:]
        u.stack.append(items)
    return fn


_OPS[0x85], _OPS[0x86], _OPS[0x87] = _tuple_n(1), _tuple_n(2), _tuple_n(3)


@_op(b"J")
def _binint(u):
    u.stack.append(u._unpack("<i"))


@_op(b"K")
def _binint1(u):
    u.stack.append(u._readn(1)[0])


@_op(b"M")
def _binint2(u):
    u.stack.append(u._unpack("<H"))


@_op(b"G")
def _binfloat(u):
    u.stack.append(u._unpack(">d"))


@_op(b"\x8a")
def _long1(u):
    u.stack.append(decode_long(u._readn(u._readn(1)[0])))


@_op(b"\x8b")
def _long4(u):
    n = u._unpack("<i")
    if n < 0:
        raise UnpicklingError("LONG pickle has negative byte count")
    u.stack.append(decode_long(u._readn(n)))


def _text(u, n):
    return str(u._readn(n), "utf-8", "surrogatepass")


_OPS[ord("X")] = lambda u: u.stack.append(_text(u, u._unpack("<I")))
_OPS[0x8c] = lambda u: u.stack.append(_text(u, u._readn(1)[0]))
_OPS[0x8d] = lambda u: u.stack.append(_text(u, u._unpack("<Q")))
_OPS[ord("C")] = lambda u: u.stack.append(bytes(u._readn(u._readn(1)[0])))
_OPS[ord("B")] = lambda u: u.stack.append(bytes(u._readn(u._unpack("<I"))))
_OPS[0x8e] = lambda u: u.stack.append(bytes(u._readn(u._unpack("<Q"))))
_OPS[0x96] = lambda u: u.stack.append(bytearray(u._readn(u._unpack("<Q"))))


@_op(b"U")
def _short_binstring(u):
    data = u._readn(u._readn(1)[0])
    u.stack.append(data if u.encoding == "bytes" else data.decode(u.encoding, "strict"))


@_op(b"Q")
def _binpersid(u):
    pid = u._pop()
    if type(pid) is not tuple and type(pid) is not int:
        raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
    if type(pid) is tuple and pid:
        tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if tag != "storage":
            raise UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                  f"{type(pid[0])}")
    u.stack.append(u.persistent_load(pid))


def _get(u, idx):
    if idx not in u.memo:
        raise MemoMiss(f"Memo value not found at index {idx}")
    u.stack.append(u.memo[idx])


def _put(u, idx):
    u.memo[idx] = u._top()


_OPS[ord("h")] = lambda u: _get(u, u._readn(1)[0])
_OPS[ord("j")] = lambda u: _get(u, u._unpack("<I"))
_OPS[ord("q")] = lambda u: _put(u, u._readn(1)[0])
_OPS[ord("r")] = lambda u: _put(u, u._unpack("<I"))
_OPS[0x94] = lambda u: _put(u, len(u.memo))      # MEMOIZE
