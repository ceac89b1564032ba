"""Minimal pytrees (tuple/list/dict/namedtuple) for in_dims/out_dims matching."""


def _is_node(x):
    return isinstance(x, (tuple, list, dict))


def tree_flatten(tree):
    """(leaves, spec): spec rebuilds the tree from leaves with tree_unflatten."""
    leaves = []

    def go(x):
        if isinstance(x, dict):
            keys = list(x.keys())
            return ("dict", keys, [go(x[k]) for k in keys])
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return ("namedtuple", type(x), [go(v) for v in x])
        if isinstance(x, (tuple, list)):
            return (type(x).__name__, None, [go(v) for v in x])
        leaves.append(x)
        return None
    return leaves, go(tree)


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def go(s):
        if s is None:
            return next(it)
        kind, extra, kids = s
        vals = [go(k) for k in kids]
        if kind == "dict":
            return dict(zip(extra, vals))
        if kind == "namedtuple":
            return extra(*vals)
        return tuple(vals) if kind == "tuple" else list(vals)
    return go(spec)


def spec_str(spec):
    if spec is None:
        return "*"
    kind, extra, kids = spec
    inner = ", ".join(spec_str(k) for k in kids)
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {spec_str(v)}" for k, v in zip(extra, kids)) + "}"
    return f"({inner},)" if kind in ("tuple", "namedtuple") else f"[{inner}]"


def broadcast_prefix(prefix, tree, name):
    """Expand `prefix` (an int/None leaf or a tree matching the top of `tree`) to one value
    per leaf of `tree`; ValueError when the structures do not match."""
    out = []

    def go(p, t):
        if not _is_node(p):
            n = len(tree_flatten(t)[0])
            out.extend([p] * n)
            return
        if isinstance(p, dict) != isinstance(t, dict) or not _is_node(t) or \
                len(p) != len(t) or (isinstance(p, dict) and set(p) != set(t)):
            raise ValueError(name)
        if isinstance(p, dict):
            for k in t:
                go(p[k], t[k])
        else:
            for a, b in zip(p, t):
                go(a, b)
    go(prefix, tree)
    return out
