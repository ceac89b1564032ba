"""Executing bytecode for real: the instruction at a graph break, and the rest of a frame
that runs eagerly (cache limit reached, an exception in flight).

Note: a graph break hands the runtime the frame state (locals, value stack) as real
objects; this interpreter runs CPython 3.11's instructions on them, so the breaking
instruction (a call with side effects, a branch on a tensor's value) happens exactly as
in eager Python. Calls of Python functions go back through ember.compile's runtime, so a
function called at a break is itself compiled (PyTorch compiles such frames too)."""
import dis
import operator

from .operators import _NB_OPS, _BINARY, _COMPARE
from .symbolic_convert import _instructions

__all__ = ["NULL_OBJ", "step", "run_rest", "Returned"]


class _NullObj:
    def __repr__(self):
        return "NULL"


NULL_OBJ = _NullObj()


class Returned(Exception):
    def __init__(self, value):
        self.value = value


class _Frame:
    __slots__ = ("code", "L", "S", "C", "G", "B", "ip", "ins", "index_of", "kw_names",
                 "caller")

    def __init__(self, code, L, S, C, G, caller):
        self.code, self.L, self.S, self.C, self.G = code, L, S, C, G
        b = G.get("__builtins__", __builtins__)
        self.B = b if isinstance(b, dict) else b.__dict__
        self.ins, self.index_of = _instructions(code)
        self.kw_names = None
        self.caller = caller


def step(code, offset, L, S, C, G, caller):
    """Runs the instruction at `offset`; returns the offset of the next one (raises
    Returned when the frame returns)."""
    f = _Frame(code, L, S, C, G, caller)
    f.ip = f.index_of[offset]
    try:
        _exec(f)
    except Returned:
        raise
    except BaseException as e:         # noqa: BLE001 - handled as CPython would
        off = _handle(f, e)
        # the handler runs for real; capture resumes once it has finished (POP_EXCEPT)
        f.ip = f.index_of[off]
        return _run_handler(f)
    return f.ins[f.ip].offset


def _run_handler(f):
    while f.L.get("$exc_stack"):
        try:
            _exec(f)
        except Returned:
            raise
        except BaseException as e:     # noqa: BLE001
            f.ip = f.index_of[_handle(f, e)]
    f.L.pop("$exc_stack", None)
    return f.ins[f.ip].offset


def run_rest(code, offset, L, S, C, G, caller):
    """Runs the frame from `offset` to its return; returns the value."""
    f = _Frame(code, L, S, C, G, caller)
    f.ip = f.index_of[offset]
    return _run(f)


def _run(f):
    while True:
        try:
            _exec(f)
        except Returned as r:
            return r.value
        except BaseException as e:     # noqa: BLE001
            off = _handle(f, e)
            f.ip = f.index_of[off]


def _handle(f, exc):
    """Jumps to the handler of the exception table entry covering the failed instruction,
    or re-raises."""
    off = f.ins[f.ip - 1].offset if f.ip else 0
    for start, end, target, depth, lasti in _exception_table(f.code):
        if start <= off < end:
            del f.S[depth:]
            if lasti:
                f.S.append(off)
            f.S.append(exc)
            f.L["$exc_stack"] = f.L.get("$exc_stack", []) + [exc]
            return target
    raise exc


_TABLES = {}


def _exception_table(code):
    t = _TABLES.get(code)
    if t is None:
        t = [(e.start, e.end, e.target, e.depth, e.lasti)
             for e in dis._parse_exception_table(code)]
        _TABLES[code] = t
    return t


def _exec(f):
    ins = f.ins[f.ip]
    f.ip += 1
    _OPS[ins.opname](f, ins)


def _jump(f, offset):
    f.ip = f.index_of[offset]


def _call(f, fn, args, kwargs):
    if fn is super and not args:           # zero-argument super() of this frame
        args = [_cell(f, "__class__").cell_contents, f.L[f.code.co_varnames[0]]]
    return f.caller(fn, args, kwargs)


def _op_call(f, ins):
    argc = ins.arg
    S = f.S
    args = S[len(S) - argc:] if argc else []
    del S[len(S) - argc:]
    a = S.pop()
    b = S.pop()
    if b is NULL_OBJ:
        fn = a
    else:
        fn, args = b, [a, *args]
    kw = {}
    if f.kw_names:
        names = f.kw_names
        f.kw_names = None
        vals = args[len(args) - len(names):]
        args = args[:len(args) - len(names)]
        kw = dict(zip(names, vals))
    S.append(_call(f, fn, args, kw))


def _op_call_ex(f, ins):
    S = f.S
    kw = S.pop() if ins.arg & 1 else {}
    args = S.pop()
    fn = S.pop()
    if S and S[-1] is NULL_OBJ:
        S.pop()
    S.append(_call(f, fn, list(args), dict(kw)))


def _load_global(f, ins):
    if ins.arg & 1:
        f.S.append(NULL_OBJ)
    name = ins.argval
    if name in f.G:
        f.S.append(f.G[name])
    elif name in f.B:
        f.S.append(f.B[name])
    else:
        raise NameError(f"name '{name}' is not defined")


def _load_fast(f, ins):
    try:
        f.S.append(f.L[ins.argval])
    except KeyError:
        raise UnboundLocalError(f"cannot access local variable '{ins.argval}' where it is "
                                "not associated with a value") from None


def _cell(f, name):
    return f.C[name] if name in f.C else f.L[name]


def _load_deref(f, ins):
    f.S.append(_cell(f, ins.argval).cell_contents)


def _store_deref(f, ins):
    _cell(f, ins.argval).cell_contents = f.S.pop()


def _make_cell(f, ins):
    import types
    name = ins.argval
    cur = f.L.get(name)
    if not isinstance(cur, types.CellType):
        f.L[name] = types.CellType() if name not in f.L else types.CellType(cur)


def _pop_jump(when):
    def op(f, ins):
        if bool(f.S.pop()) == when:
            _jump(f, ins.argval)
    return op


def _pop_jump_none(when):
    def op(f, ins):
        if (f.S.pop() is None) == when:
            _jump(f, ins.argval)
    return op


def _jump_or_pop(when):
    def op(f, ins):
        if bool(f.S[-1]) == when:
            _jump(f, ins.argval)
        else:
            f.S.pop()
    return op


def _for_iter(f, ins):
    try:
        f.S.append(next(f.S[-1]))
    except StopIteration:
        f.S.pop()
        _jump(f, ins.argval)


def _binary(f, ins):
    b = f.S.pop()
    a = f.S.pop()
    f.S.append(_BINARY[_NB_OPS[ins.arg]](a, b))


def _compare(f, ins):
    b = f.S.pop()
    a = f.S.pop()
    f.S.append(_COMPARE[ins.argval](a, b))


def _make_function(f, ins):
    import types
    S = f.S
    code = S.pop()
    closure = S.pop() if ins.arg & 0x08 else None
    ann = S.pop() if ins.arg & 0x04 else None
    kwd = S.pop() if ins.arg & 0x02 else None
    defaults = S.pop() if ins.arg & 0x01 else None
    fn = types.FunctionType(code, f.G, code.co_name, defaults, closure)
    if kwd:
        fn.__kwdefaults__ = kwd
    if ann:
        fn.__annotations__ = dict(zip(ann[::2], ann[1::2])) if isinstance(ann, tuple) else ann
    fn.__qualname__ = code.co_qualname
    S.append(fn)


def _before_with(f, ins):
    ctx = f.S.pop()
    f.S.append(type(ctx).__exit__.__get__(ctx))
    f.S.append(type(ctx).__enter__(ctx))


def _unpack_seq(f, ins):
    items = list(f.S.pop())
    if len(items) != ins.arg:
        raise ValueError(f"too many values to unpack (expected {ins.arg})"
                         if len(items) > ins.arg else
                         f"not enough values to unpack (expected {ins.arg}, got {len(items)})")
    f.S.extend(reversed(items))


def _unpack_ex(f, ins):
    items = list(f.S.pop())
    before, after = ins.arg & 0xFF, ins.arg >> 8
    mid = items[before:len(items) - after]
    f.S.extend(reversed(items[len(items) - after:]))
    f.S.append(mid)
    f.S.extend(reversed(items[:before]))


def _import_name(f, ins):
    fromlist = f.S.pop()
    level = f.S.pop()
    f.S.append(__import__(ins.argval, f.G, None, fromlist, level))


def _format_value(f, ins):
    spec = f.S.pop() if ins.arg & 0x04 else ""
    v = f.S.pop()
    v = {0: v, 1: str(v), 2: repr(v), 3: ascii(v)}[ins.arg & 0x03]
    f.S.append(format(v, spec))


def _raise(f, ins):
    S = f.S
    if ins.arg == 0:
        raise f.L.get("$exc_stack", [RuntimeError("No active exception to reraise")])[-1]
    cause = S.pop() if ins.arg == 2 else None
    exc = S.pop()
    if isinstance(exc, type):
        exc = exc()
    if ins.arg == 2:
        raise exc from cause
    raise exc


def _push_exc_info(f, ins):
    exc = f.S.pop()
    f.S.append(None)
    f.S.append(exc)


def _pop_except(f, ins):
    f.S.pop()
    st = f.L.get("$exc_stack")
    if st:
        st.pop()


def _check_exc_match(f, ins):
    typ = f.S.pop()
    f.S.append(isinstance(f.S[-1], typ))


def _reraise(f, ins):
    exc = f.S.pop()
    if ins.arg:
        f.S.pop()
    raise exc


def _with_except_start(f, ins):
    exc = f.S[-1]
    exit_fn = f.S[-4]
    f.S.append(exit_fn(type(exc), exc, exc.__traceback__))


def _ret(f, ins):
    raise Returned(f.S.pop())


def _set(fn):
    return fn


def _swap(f, ins):
    f.S[-1], f.S[-ins.arg] = f.S[-ins.arg], f.S[-1]


def _store_subscr(f, ins):
    key = f.S.pop()
    obj = f.S.pop()
    val = f.S.pop()
    obj[key] = val


def _delete_subscr(f, ins):
    key = f.S.pop()
    obj = f.S.pop()
    del obj[key]


def _store_attr(f, ins):
    obj = f.S.pop()
    val = f.S.pop()
    setattr(obj, ins.argval, val)


def _load_method(f, ins):
    obj = f.S.pop()
    f.S.append(NULL_OBJ)
    f.S.append(getattr(obj, ins.argval))


def _build_map(f, ins):
    kv = f.S[len(f.S) - 2 * ins.arg:] if ins.arg else []
    del f.S[len(f.S) - 2 * ins.arg:]
    f.S.append({kv[i]: kv[i + 1] for i in range(0, len(kv), 2)})


def _build_const_key_map(f, ins):
    keys = f.S.pop()
    vals = f.S[len(f.S) - ins.arg:]
    del f.S[len(f.S) - ins.arg:]
    f.S.append(dict(zip(keys, vals)))


def _popn(f, n):
    if not n:
        return []
    out = f.S[len(f.S) - n:]
    del f.S[len(f.S) - n:]
    return out


_OPS = {
    "NOP": lambda f, i: None, "RESUME": lambda f, i: None, "PRECALL": lambda f, i: None,
    "COPY_FREE_VARS": lambda f, i: None, "EXTENDED_ARG": lambda f, i: None,
    "CACHE": lambda f, i: None, "MAKE_CELL": _make_cell,
    "POP_TOP": lambda f, i: f.S.pop(), "PUSH_NULL": lambda f, i: f.S.append(NULL_OBJ),
    "COPY": lambda f, i: f.S.append(f.S[-i.arg]), "SWAP": _swap,
    "LOAD_CONST": lambda f, i: f.S.append(i.argval), "LOAD_FAST": _load_fast,
    "STORE_FAST": lambda f, i: f.L.__setitem__(i.argval, f.S.pop()),
    "DELETE_FAST": lambda f, i: f.L.pop(i.argval),
    "LOAD_GLOBAL": _load_global, "STORE_GLOBAL": lambda f, i: f.G.__setitem__(i.argval,
                                                                                 f.S.pop()),
    "DELETE_GLOBAL": lambda f, i: f.G.pop(i.argval),
    "LOAD_DEREF": _load_deref, "LOAD_CLASSDEREF": _load_deref, "STORE_DEREF": _store_deref,
    "LOAD_CLOSURE": lambda f, i: f.S.append(_cell(f, i.argval)),
    "LOAD_ATTR": lambda f, i: f.S.append(getattr(f.S.pop(), i.argval)),
    "LOAD_METHOD": _load_method, "STORE_ATTR": _store_attr,
    "DELETE_ATTR": lambda f, i: delattr(f.S.pop(), i.argval),
    "KW_NAMES": lambda f, i: setattr(f, "kw_names", f.code.co_consts[i.arg]),
    "CALL": _op_call, "CALL_FUNCTION_EX": _op_call_ex,
    "BINARY_OP": _binary, "COMPARE_OP": _compare,
    "IS_OP": lambda f, i: f.S.append((f.S.pop() is f.S.pop()) != bool(i.arg)),
    "CONTAINS_OP": lambda f, i: f.S.append((f.S.pop(-2) in f.S.pop()) != bool(i.arg)),
    "UNARY_NEGATIVE": lambda f, i: f.S.append(-f.S.pop()),
    "UNARY_POSITIVE": lambda f, i: f.S.append(+f.S.pop()),
    "UNARY_INVERT": lambda f, i: f.S.append(~f.S.pop()),
    "UNARY_NOT": lambda f, i: f.S.append(not f.S.pop()),
    "BINARY_SUBSCR": lambda f, i: f.S.append(operator.getitem(f.S.pop(-2), f.S.pop())),
    "STORE_SUBSCR": _store_subscr, "DELETE_SUBSCR": _delete_subscr,
    "BUILD_TUPLE": lambda f, i: f.S.append(tuple(_popn(f, i.arg))),
    "BUILD_LIST": lambda f, i: f.S.append(_popn(f, i.arg)),
    "BUILD_SET": lambda f, i: f.S.append(set(_popn(f, i.arg))),
    "BUILD_MAP": _build_map, "BUILD_CONST_KEY_MAP": _build_const_key_map,
    "BUILD_SLICE": lambda f, i: f.S.append(slice(*_popn(f, i.arg))),
    "BUILD_STRING": lambda f, i: f.S.append("".join(_popn(f, i.arg))),
    "FORMAT_VALUE": _format_value,
    "LIST_APPEND": lambda f, i: f.S[-i.arg - 1].append(f.S.pop()),
    "SET_ADD": lambda f, i: f.S[-i.arg - 1].add(f.S.pop()),
    "MAP_ADD": lambda f, i: f.S[-i.arg - 2].__setitem__(*[f.S.pop(-2), f.S.pop()]),
    "LIST_EXTEND": lambda f, i: f.S[-i.arg - 1].extend(f.S.pop()),
    "SET_UPDATE": lambda f, i: f.S[-i.arg - 1].update(f.S.pop()),
    "DICT_UPDATE": lambda f, i: f.S[-i.arg - 1].update(f.S.pop()),
    "DICT_MERGE": lambda f, i: f.S[-i.arg - 1].update(f.S.pop()),
    "LIST_TO_TUPLE": lambda f, i: f.S.append(tuple(f.S.pop())),
    "UNPACK_SEQUENCE": _unpack_seq, "UNPACK_EX": _unpack_ex,
    "GET_ITER": lambda f, i: f.S.append(iter(f.S.pop())), "FOR_ITER": _for_iter,
    "POP_JUMP_FORWARD_IF_FALSE": _pop_jump(False), "POP_JUMP_FORWARD_IF_TRUE": _pop_jump(True),
    "POP_JUMP_BACKWARD_IF_FALSE": _pop_jump(False),
    "POP_JUMP_BACKWARD_IF_TRUE": _pop_jump(True),
    "POP_JUMP_FORWARD_IF_NONE": _pop_jump_none(True),
    "POP_JUMP_FORWARD_IF_NOT_NONE": _pop_jump_none(False),
    "POP_JUMP_BACKWARD_IF_NONE": _pop_jump_none(True),
    "POP_JUMP_BACKWARD_IF_NOT_NONE": _pop_jump_none(False),
    "JUMP_IF_FALSE_OR_POP": _jump_or_pop(False), "JUMP_IF_TRUE_OR_POP": _jump_or_pop(True),
    "JUMP_FORWARD": lambda f, i: _jump(f, i.argval),
    "JUMP_BACKWARD": lambda f, i: _jump(f, i.argval),
    "JUMP_BACKWARD_NO_INTERRUPT": lambda f, i: _jump(f, i.argval),
    "RETURN_VALUE": _ret, "MAKE_FUNCTION": _make_function, "BEFORE_WITH": _before_with,
    "LOAD_ASSERTION_ERROR": lambda f, i: f.S.append(AssertionError),
    "RAISE_VARARGS": _raise, "IMPORT_NAME": _import_name,
    "IMPORT_FROM": lambda f, i: f.S.append(getattr(f.S[-1], i.argval)),
    "PUSH_EXC_INFO": _push_exc_info, "POP_EXCEPT": _pop_except,
    "CHECK_EXC_MATCH": _check_exc_match, "RERAISE": _reraise,
    "WITH_EXCEPT_START": _with_except_start,
    "GET_LEN": lambda f, i: f.S.append(len(f.S[-1])),
}
