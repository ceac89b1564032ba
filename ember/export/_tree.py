"""Flattening of export's inputs and outputs to leaves, with a JSON-able spec.

Why: an exported graph takes and returns flat lists of tensors; the spec rebuilds the
user's nesting (tuples, lists, dicts) around them, and is saved with the program, so a
process without the model's code still gets `(out, (h, c))` back from an LSTM.
"""

__all__ = ["tree_flatten", "tree_unflatten"]


def tree_flatten(obj):
    """(leaves, spec): spec is {"tuple"|"list": [specs]}, {"dict": [[key, spec]]} or
    {"leaf": None}; keys of dicts must be str or int (JSON)."""
    leaves = []

    def go(o):
        if isinstance(o, tuple) and not hasattr(o, "_fields"):
            return {"tuple": [go(x) for x in o]}
        if isinstance(o, tuple):          # a namedtuple keeps its field names
            return {"namedtuple": [type(o).__name__, list(o._fields), [go(x) for x in o]]}
        if isinstance(o, list):
            return {"list": [go(x) for x in o]}
        if isinstance(o, dict):
            return {"dict": [[k, go(v)] for k, v in o.items()]}
        leaves.append(o)
        return {"leaf": None}

    return leaves, go(obj)


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def go(s):
        if "leaf" in s:
            return next(it)
        if "tuple" in s:
            return tuple(go(x) for x in s["tuple"])
        if "list" in s:
            return [go(x) for x in s["list"]]
        if "dict" in s:
            return {k: go(v) for k, v in s["dict"]}
        if "namedtuple" in s:
            import collections
            name, fields, items = s["namedtuple"]
            return collections.namedtuple(name, fields)(*[go(x) for x in items])
        raise ValueError(f"export: unknown tree spec {s!r}")

    return go(spec)


def num_leaves(spec):
    if "leaf" in spec:
        return 1
    for k in ("tuple", "list"):
        if k in spec:
            return sum(num_leaves(x) for x in spec[k])
    if "dict" in spec:
        return sum(num_leaves(v) for _, v in spec["dict"])
    return sum(num_leaves(x) for x in spec["namedtuple"][2])
