"""Sources: where a value the capture read lives in the frame, as a Python expression.

Note: guards and the code that rebuilds a frame's state after a graph are generated
Python; a source renders itself as an expression over the frame's locals `L`, the value
stack `S`, the function's globals `G` and its closure cells `C`."""


class Source:
    __slots__ = ()

    def expr(self):
        raise NotImplementedError

    def __repr__(self):
        return self.expr()

    def __eq__(self, other):
        return type(self) is type(other) and self.expr() == other.expr()

    def __hash__(self):
        return hash(self.expr())

    def name(self):
        return self.expr()


class LocalSource(Source):
    __slots__ = ("local",)

    def __init__(self, local):
        self.local = local

    def expr(self):
        return f"L[{self.local!r}]"


class StackSource(Source):
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def expr(self):
        return f"S[{self.index}]"


class GlobalSource(Source):
    __slots__ = ("gname",)

    def __init__(self, gname):
        self.gname = gname

    def expr(self):
        return f"G[{self.gname!r}]"


class ClosureSource(Source):
    __slots__ = ("cname",)

    def __init__(self, cname):
        self.cname = cname

    def expr(self):
        return f"C[{self.cname!r}].cell_contents"


class ConstSource(Source):
    """A value the capture holds itself (a builtin, a module named by import)."""
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def expr(self):
        return f"K[{self.key!r}]"


class AttrSource(Source):
    __slots__ = ("base", "attr")

    def __init__(self, base, attr):
        self.base, self.attr = base, attr

    def expr(self):
        if self.attr.isidentifier():
            return f"{self.base.expr()}.{self.attr}"
        return f"getattr({self.base.expr()}, {self.attr!r})"


class DictAttrSource(Source):
    """An entry of an object's dict reached without `getattr` (module parameters,
    buffers, submodules: faster than nn.Module.__getattr__ in guards)."""
    __slots__ = ("base", "dict_name", "key")

    def __init__(self, base, dict_name, key):
        self.base, self.dict_name, self.key = base, dict_name, key

    def expr(self):
        return f"{self.base.expr()}.{self.dict_name}[{self.key!r}]"


class ItemSource(Source):
    __slots__ = ("base", "index")

    def __init__(self, base, index):
        self.base, self.index = base, index

    def expr(self):
        return f"{self.base.expr()}[{self.index!r}]"


class ResumeItemSource(Source):
    """Item k still ahead of a for loop's iterator at a graph break."""
    __slots__ = ("base", "k")

    def __init__(self, base, k):
        self.base, self.k = base, k

    def expr(self):
        b = self.base.expr()
        return f"{b}.items[{b}.pos + {self.k}]"


class TypeSource(Source):
    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def expr(self):
        return f"type({self.base.expr()})"


def is_local(source):
    """Whether a source starts at the frame (locals/stack) rather than globals."""
    while source is not None:
        if isinstance(source, (LocalSource, StackSource)):
            return True
        source = getattr(source, "base", None)
    return False
