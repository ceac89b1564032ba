"""PyTorch's operator schema language: parse once, read as data.

Note: an op's schema (`"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)
-> Tensor"`) is its contract for everything that reads ops without running them:
keyword binding, capture, export, functionalization. The parser follows
`torch/csrc/jit/frontend/function_schema_parser.cpp` closely enough to read every
schema PyTorch registers: types (`Tensor?`, `Tensor[]`, `int[2]`, `SymInt`,
`Scalar`, `ScalarType?`, ...), alias annotations (`(a)`, `(a!)`, `(a -> *)`,
`(a|b)`), defaults, the `*` that starts keyword-only arguments, and named or
unnamed returns. The objects mirror `torch._C.FunctionSchema` / `Argument` /
`_AliasInfo` attribute names, so dispatch modes written for PyTorch read them as is.
"""
import re

__all__ = ["AliasInfo", "Argument", "FunctionSchema", "SchemaType", "parse_schema"]

_TOKEN = re.compile(r"""
    \s*(?:
      (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<num>[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)j?)
    | (?P<arrow>->)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)?)
    | (?P<punct>[()\[\],=?!*.|&])
    )""", re.VERBOSE)


class AliasInfo:
    """An alias annotation: `(a)` reads set a, `(a!)` writes it, `(a -> *)` lets the
    result join the wildcard set (list elements that alias the input)."""

    def __init__(self, before_set, after_set=None, is_write=False):
        after_set = before_set if after_set is None else after_set
        self._order = (tuple(before_set), tuple(after_set))     # as written, for str()
        self.before_set = frozenset(before_set)
        self.after_set = frozenset(after_set)
        self.is_write = is_write

    def __eq__(self, other):
        return isinstance(other, AliasInfo) and (self.before_set, self.after_set,
                                                  self.is_write) == \
            (other.before_set, other.after_set, other.is_write)

    def __hash__(self):
        return hash((self.before_set, self.after_set, self.is_write))

    def __str__(self):
        s = "|".join(self._order[0])
        if self.is_write:
            s += "!"
        if self.after_set != self.before_set:
            s += " -> " + "|".join(self._order[1])
        return f"({s})"

    __repr__ = __str__


class SchemaType:
    """An argument's type: a base name (`Tensor`, `int`, `SymInt`, `Scalar`, ...),
    list-ness with an optional fixed length `N`, and optional-ness. `optional_elem`
    marks `Tensor?[]` (a list of optional elements)."""

    def __init__(self, base, is_list=False, N=None, optional=False, optional_elem=False):
        self.base = base
        self.alias_on_list = False     # `t[](a)` rather than `t(a)[]`
        self.is_list = is_list
        self.N = N
        self.optional = optional
        self.optional_elem = optional_elem

    def __eq__(self, other):
        return isinstance(other, SchemaType) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def render(self, alias=None):
        on_list = alias is not None and self.is_list and self.alias_on_list
        s = self.base + (str(alias) if alias is not None and not on_list else "")
        if self.optional_elem:
            s += "?"
        if self.is_list:
            s += f"[{self.N}]" if self.N is not None else "[]"
            if on_list:
                s += str(alias)
        if self.optional:
            s += "?"
        return s

    def __str__(self):
        return self.render()

    __repr__ = __str__


class Argument:
    """One argument or return. `default_value` is a Python value (`None`, ints,
    floats, bools, strings, lists; enum names such as `Mean` or `contiguous_format`
    stay strings); `has_default_value()` tells a default of None from none."""

    def __init__(self, name, type, default=..., kwarg_only=False, alias_info=None,
                 default_text=None):
        self.name = name
        self._default_text = default_text
        self.type = type
        self.N = type.N
        self._default = default
        self.kwarg_only = kwarg_only
        self.alias_info = alias_info
        self.is_out = False

    def has_default_value(self):
        return self._default is not ...

    @property
    def default_value(self):
        return None if self._default is ... else self._default

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self):
        s = self.type.render(self.alias_info)
        if self.name:
            s += " " + self.name
        if self.has_default_value():
            s += "=" + (self._default_text or _render_default(self._default, self.type))
        return s

    __repr__ = __str__


class FunctionSchema:
    """`name.overload(arguments) -> returns`, as data."""

    def __init__(self, name, overload_name, arguments, returns, paren_returns=None):
        self.name = name
        self._paren_returns = paren_returns
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns
        self._index = {a.name: i for i, a in enumerate(arguments)}
        # out= variants: the written keyword-only Tensor arguments
        for a in arguments:
            a.is_out = a.kwarg_only and a.is_write

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def _is_view_op(self):
        return any(a.alias_info is not None and not a.is_write for a in self.arguments)

    def __str__(self):
        name = self.name + ("." + self.overload_name if self.overload_name else "")
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        rets = [str(r) for r in self.returns]
        paren = self._paren_returns
        if paren is None:
            paren = len(rets) != 1 or bool(self.returns[0].name)
        ret = f"({', '.join(rets)})" if paren else rets[0]
        return f"{name}({', '.join(args)}) -> {ret}"

    def __repr__(self):
        return f"FunctionSchema({str(self)!r})"

    def bind(self, opname, args, kwargs):
        """The positional tuple for `op(*args, **kwargs)`, with Python's TypeError
        texts for unknown, duplicate and missing arguments."""
        params = self.arguments
        if len(args) > len(params):
            raise TypeError(f"{opname}() takes at most {len(params)} argument"
                            f"{'' if len(params) == 1 else 's'} ({len(args)} given)")
        out = list(args) + [_MISSING] * (len(params) - len(args))
        for k, v in kwargs.items():
            i = self._index.get(k)
            if i is None:
                raise TypeError(f"{opname}() got an unexpected keyword argument '{k}'")
            if i < len(args):
                raise TypeError(f"{opname}() got multiple values for argument '{k}'")
            out[i] = v
        missing = []
        for i, a in enumerate(params):
            if out[i] is _MISSING:
                if a.has_default_value():
                    out[i] = _copy_default(a.default_value)
                else:
                    missing.append(a.name)
        if missing:
            names = ", ".join(f"'{m}'" for m in missing)
            raise TypeError(f"{opname}() missing {len(missing)} required argument"
                            f"{'' if len(missing) == 1 else 's'}: {names}")
        return tuple(out)


_MISSING = object()


def _copy_default(v):
    return list(v) if isinstance(v, list) else v


def _render_default(v, t):
    if isinstance(v, str) and t.base == "str":
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_render_default(x, t) for x in v) + "]"
    return str(v)


# ------------------------------------------------------------------ the parser

class _Parser:
    def __init__(self, text):
        self.text = text
        self.toks = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError(f"schema {self.text!r}: unexpected character at {pos}: "
                                 f"{text[pos:pos + 10]!r}")
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def error(self, what):
        got = self.toks[self.i][1] if self.i < len(self.toks) else "end of schema"
        raise ValueError(f"schema {self.text!r}: expected {what}, got {got!r}")

    def peek(self, value=None, kind=None):
        if self.i >= len(self.toks):
            return False
        k, v = self.toks[self.i]
        return (value is None or v == value) and (kind is None or k == kind)

    def take(self, value=None, kind=None):
        if value is None and kind is None and self.i < len(self.toks):
            self.i += 1
            return self.toks[self.i - 1][1]
        if not self.peek(value, kind):
            self.error(value or kind)
        v = self.toks[self.i][1]
        self.i += 1
        return v

    def accept(self, value):
        if self.peek(value):
            self.i += 1
            return True
        return False

    def schema(self):
        name = self.take(kind="name")
        overload = ""
        if self.accept("."):
            overload = self.take(kind="name")
        self.take("(")
        args, kwarg_only = [], False
        while not self.peek(")"):
            if args or kwarg_only:
                self.take(",")
            if self.accept("*"):
                kwarg_only = True
                continue
            args.append(self.argument(kwarg_only, True))
        self.take(")")
        self.take("->")
        returns = []
        paren = self.peek("(")
        if self.accept("("):
            while not self.peek(")"):
                if returns:
                    self.take(",")
                returns.append(self.argument(False, False))
            self.take(")")
        else:
            returns.append(self.argument(False, False))
        if self.i != len(self.toks):
            self.error("end of schema")
        names = [a.name for a in args]
        if len(set(names)) != len(names):
            raise ValueError(f"schema {self.text!r}: duplicate argument names")
        return FunctionSchema(name, overload, args, returns, paren)

    def alias(self):
        before = [self.alias_set_name()]
        while self.accept("|"):
            before.append(self.alias_set_name())
        is_write = self.accept("!")
        after = None
        if self.accept("->"):
            after = [self.alias_set_name()]
            while self.accept("|"):
                after.append(self.alias_set_name())
        self.take(")")
        return AliasInfo(before, after, is_write)

    def alias_set_name(self):
        if self.accept("*"):
            return "*"
        return self.take(kind="name")

    def type(self):
        base = self.take(kind="name")
        while self.peek(".") and self.i + 1 < len(self.toks) and \
                self.toks[self.i + 1][0] == "name":      # __torch__.torch.classes.X
            self.take(".")
            base += "." + self.take(kind="name")
        if base in ("Tuple", "Dict", "Future", "Union", "Optional", "List", "RRef",
                    "Await") and (self.peek("(") or self.peek("[")):
            opening = self.take()
            parts = [self.type()[0]]
            while self.accept(","):
                parts.append(self.type()[0])
            self.take("]" if opening == "[" else ")")
            close = "]" if opening == "[" else ")"
            base = f"{base}{opening}{', '.join(str(p) for p in parts)}{close}"
        alias = None
        if self.accept("("):
            alias = self.alias()
        t = SchemaType(base)
        if self.peek("?") and self.i + 1 < len(self.toks) and self.toks[self.i + 1][1] == "[":
            self.take("?")
            t.optional_elem = True
        if self.accept("["):
            t.is_list = True
            if not self.peek("]"):
                t.N = int(self.take(kind="num"))
            self.take("]")
            if self.accept("("):       # Tensor[](a!): the list itself is aliased
                alias = self.alias()
                t.alias_on_list = True
        if self.accept("?"):
            t.optional = True
        return t, alias

    def argument(self, kwarg_only, is_arg):
        t, alias = self.type()
        name = ""
        if self.peek(kind="name"):
            name = self.take(kind="name")
        default, text = ..., None
        if is_arg and self.accept("="):
            start = self.i
            default = self.default(t)
            text = self.source(start, self.i)
        return Argument(name, t, default, kwarg_only, alias, text)

    def source(self, start, end):
        """The default's text as written (so str(schema) round-trips exactly)."""
        return "".join(v if v != "," else ", " for _, v in self.toks[start:end])

    def default(self, t):
        v = self.value()
        if t.is_list and t.N is not None and not isinstance(v, list) and v is not None:
            v = [v] * t.N        # int[2] padding=0 means [0, 0]
        return v

    def value(self):
        if self.accept("["):
            items = []
            while not self.peek("]"):
                if items:
                    self.take(",")
                items.append(self.value())
            self.take("]")
            return items
        if self.peek(kind="str"):
            s = self.take(kind="str")
            return s[1:-1].encode().decode("unicode_escape")
        if self.peek(kind="num"):
            s = self.take(kind="num")
            if s.endswith("j"):
                return complex(s)
            return float(s) if any(c in s for c in ".eE") else int(s)
        word = self.take(kind="name")
        return {"True": True, "False": False, "None": None}.get(word, word)


_CACHE = {}


def parse_schema(text):
    """A FunctionSchema from PyTorch's schema syntax (`aten::` prefixes are dropped)."""
    s = _CACHE.get(text)
    if s is None:
        s = _Parser(text).schema()
        if "::" in s.name:
            s.name = s.name.split("::", 1)[1]
        _CACHE[text] = s
    return s
