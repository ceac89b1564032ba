"""Symbolic sizes for fake tensors: `SymInt`, an int with an expression over named
size symbols (PyTorch's torch.SymInt with a hint), and the `ShapeEnv` that names
the symbols and records the guards the program's shape decisions relied on.

Note: a small polynomial type rather than sympy (not a dependency; importing it
costs ~0.5 s; shapes need only +, -, * exactly and //, % by constants, where a
polynomial with integer coefficients is a canonical form, so `s0*3 == 3*s0` and
`(s0 + 2) - 2 == s0` compare structurally without a solver). `SymInt` subclasses
`int` with the symbols' example values ("hints"): NumPy and any code that needs a
concrete int gets the hint, metas written with Python arithmetic carry the
expression. A comparison that neither the expressions nor the symbols' range
(every symbol is >= 2) decide (`s0 == 5`) is answered from the hints and recorded
as a guard in the ShapeEnv, as PyTorch's backed SymInts do. Sizes 0 and 1 are
never made symbolic (PyTorch's 0/1 specialization). Data-dependent sizes (unbacked
symbols) are not supported: ops whose output shape depends on values raise.
"""
import operator

__all__ = ["SymInt", "ShapeEnv", "sym_expr"]


class ShapeEnv:
    """Names size symbols (s0, s1, ...) with their hints; collects guards."""

    def __init__(self):
        self.hints = {}        # symbol name -> example value
        self.guards = []       # (expression text, op, other text, outcome)

    def create_symbol(self, hint):
        """A symbol for a size; sizes with equal hints share one (PyTorch's duck
        shaping: inputs that agree in the example stay compatible)."""
        hint = int(hint)
        name = next((k for k, v in self.hints.items() if v == hint), None)
        if name is None:
            name = f"s{len(self.hints)}"
            self.hints[name] = hint
        return SymInt(_Poly({(name,): 1}), hint, self)

    def create_int_symbol(self, value):
        """A symbol for a Python int input (any value, no size range): i0, i1, ..."""
        name = f"i{sum(1 for k in self.hints if k.startswith('i'))}"
        self.hints[name] = int(value)
        return SymInt(_Poly({(name,): 1}), int(value), self)


class _Poly:
    """sum(coeff * prod(atoms)): a dict {sorted tuple of atom names: int coeff}.
    Atoms are symbols or opaque floor-div/mod terms (their text names them)."""

    __slots__ = ("terms",)

    def __init__(self, terms):
        self.terms = {m: c for m, c in terms.items() if c}

    @staticmethod
    def const(c):
        return _Poly({(): c})

    def constant(self):
        """The value if the polynomial is a constant, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            return self.terms[()]
        return None

    def lower_bound(self):
        """The least value when every symbol is >= 2 (sizes 0 and 1 are never
        symbols), if every non-constant term has a positive coefficient and only
        symbols (no floor-division atoms); else None."""
        low = 0
        for m, c in self.terms.items():
            if not m:
                low += c
            elif c < 0 or any(a.startswith(("(", "i")) for a in m):
                return None          # floor-div atoms and Python-int symbols: no range
            else:
                low += c * 2 ** len(m)
        return low

    def __add__(self, o):
        t = dict(self.terms)
        for m, c in o.terms.items():
            t[m] = t.get(m, 0) + c
        return _Poly(t)

    def scale(self, k):
        return _Poly({m: c * k for m, c in self.terms.items()})

    def __mul__(self, o):
        t = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return _Poly(t)

    def key(self):
        return tuple(sorted(self.terms.items()))

    def __str__(self):
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda mc: (-len(mc[0]), mc[0])):
            body = "*".join(m)
            if not m:
                parts.append(str(c))
            elif c == 1:
                parts.append(body)
            elif c == -1:
                parts.append("-" + body)
            else:
                parts.append(f"{c}*{body}")
        return " + ".join(parts).replace("+ -", "- ")


def _poly(x):
    return x.node if isinstance(x, SymInt) else _Poly.const(operator.index(x))


class SymInt(int):
    """A size: an int (the hint) that carries its symbolic expression `node`."""

    def __new__(cls, node, hint, env):
        c = node.constant()
        if c is not None:
            return int(c)          # constant expressions are plain ints
        self = super().__new__(cls, hint)
        self.node, self.env = node, env
        return self

    @property
    def hint(self):
        return int(self)

    def __repr__(self):
        return str(self.node)

    __str__ = __repr__

    def _make(self, node, hint):
        return SymInt(node, hint, self.env)

    # -- exact arithmetic
    def __add__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return self._make(self.node + _poly(o), int(self) + int(o))

    __radd__ = __add__

    def __sub__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return self._make(self.node + _poly(o).scale(-1), int(self) - int(o))

    def __rsub__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return self._make(_poly(o) + self.node.scale(-1), int(o) - int(self))

    def __mul__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return self._make(self.node * _poly(o), int(self) * int(o))

    __rmul__ = __mul__

    def __neg__(self):
        return self._make(self.node.scale(-1), -int(self))

    def __pos__(self):
        return self

    # -- floor division and modulo: exact when the divisor divides every
    # coefficient, else an opaque atom named by its text
    def __floordiv__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return _divmod(self, o, "//")

    def __rfloordiv__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return _divmod(o, self, "//")

    def __mod__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return _divmod(self, o, "%")

    def __rmod__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return _divmod(o, self, "%")

    def __truediv__(self, o):
        return int(self) / o       # a float: concretizes, as PyTorch's sym_float does

    # -- comparisons: decided by the expressions when they can, else by the hints
    # (recorded as a guard)
    def _cmp(self, o, op, sym):
        if not isinstance(o, int):
            return NotImplemented
        d = self.node + _poly(o).scale(-1)
        diff = d.constant()
        if diff is not None:
            return op(diff, 0)
        low = d.lower_bound()
        if low is not None:         # decided by the ranges: every symbol >= 2
            if low > 0:
                return op(1, 0)
            if low == 0 and op in (operator.ge, operator.lt):
                return op(0, 0)
        out = op(int(self), int(o))
        self.env.guards.append((str(self.node), sym, str(o), out))
        return out

    def __eq__(self, o):
        return self._cmp(o, operator.eq, "==")

    def __ne__(self, o):
        return self._cmp(o, operator.ne, "!=")

    def __lt__(self, o):
        return self._cmp(o, operator.lt, "<")

    def __le__(self, o):
        return self._cmp(o, operator.le, "<=")

    def __gt__(self, o):
        return self._cmp(o, operator.gt, ">")

    def __ge__(self, o):
        return self._cmp(o, operator.ge, ">=")

    def __hash__(self):
        return int.__hash__(self)

    def __bool__(self):
        return self != 0


def _divmod(a, b, how):
    """a // b or a % b with at least one SymInt."""
    ha, hb = int(a), int(b)
    val = ha // hb if how == "//" else ha % hb
    env = (a if isinstance(a, SymInt) else b).env
    if not isinstance(b, SymInt):
        pa = _poly(a)
        if b == 1:
            return a if how == "//" else 0
        if all(c % b == 0 for c in pa.terms.values()):
            return SymInt(_Poly({m: c // b for m, c in pa.terms.items()}), val, env) \
                if how == "//" else 0
    if isinstance(b, SymInt) and len(b.node.terms) == 1:    # by a monomial c*m
        (mb, cb), = b.node.terms.items()
        q = {}
        for m, c in _poly(a).terms.items():
            rest = list(m)
            for atom in mb:
                if atom not in rest:
                    break
                rest.remove(atom)
            else:
                if c % cb == 0:
                    q[tuple(rest)] = c // cb
                    continue
            break
        else:
            return SymInt(_Poly(q), val, env) if how == "//" else 0
    name = f"(({_text(a)}){how}{_text(b)})"
    return SymInt(_Poly({(name,): 1}), val, env)


def _text(x):
    return str(x.node) if isinstance(x, SymInt) else str(x)


def sym_expr(x):
    """The text of a size: its expression for a SymInt, the number otherwise."""
    return str(x.node) if isinstance(x, SymInt) else str(int(x))


def is_symbolic(shape):
    return any(isinstance(s, SymInt) for s in shape)


def sym_strides(shape, hint_strides):
    """Strides in terms of the symbolic sizes, for a dense layout (a permutation of
    C order: what contiguous tensors, their transposes and pointwise results have).
    A non-dense view (a slice with gaps) keeps its hint strides: its strides would
    need the base's sizes, which the view does not carry."""
    hints = tuple(int(n) for n in shape)
    order = sorted(range(len(shape)), key=lambda i: (hint_strides[i], hints[i] != 1))
    acc, sym, dense = 1, [0] * len(shape), True
    hacc = 1
    for i in order:
        if hints[i] != 1 and hint_strides[i] != hacc:
            dense = False
            break
        sym[i] = acc
        acc = acc * shape[i]
        hacc *= hints[i]
    if not dense:
        return tuple(hint_strides)
    return tuple(sym)
