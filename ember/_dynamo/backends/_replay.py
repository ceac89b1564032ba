"""Straight-line replay of a captured graph on the eager kernels, for the "eager" backend.

Why not `gm.forward`: its generated code calls each op as `ember.ops.aten.add.Tensor(x, 1)`,
which binds the arguments against the schema on every call; the capture recorded the exact
argument tuple each op was dispatched with, so replay hands that tuple to `dispatch`, the
path eager itself took (same kernels, same autograd, a few microseconds less per op)."""
from ...ops._registry import OpDef
from ..._dispatch import dispatch

__all__ = ["replay_function"]


def replay_function(gm):
    """A Python function equal to `gm.forward`, calling registry ops through dispatch."""
    consts, lines, names = {}, [], {}

    def const(obj):
        k = f"k{len(consts)}"
        consts[k] = obj
        return k

    def arg(a):
        if hasattr(a, "op") and a in names:
            return names[a]
        if isinstance(a, (list, tuple)):
            inner = ", ".join(arg(x) for x in a)
            if type(a) is list:
                return f"[{inner}]"
            return f"({inner},)" if a else "()"
        if a is None or type(a) in (bool, int, str):
            return repr(a)
        return const(a)

    params = []
    for i, n in enumerate(gm.graph.nodes):
        v = names[n] = f"v{i}"
        if n.op == "placeholder":
            params.append(v)
        elif n.op == "call_function":
            call_args = ", ".join(arg(a) for a in n.args)
            if isinstance(n.target, OpDef) and not n.kwargs:
                tup = f"({call_args},)" if n.args else "()"
                lines.append(f"{v} = D({const(n.target)}, {tup})")
            else:
                kw = "".join(f", {k}={arg(x)}" for k, x in n.kwargs.items())
                sep = ", " if call_args and kw else ""
                lines.append(f"{v} = {const(n.target)}({call_args}{sep}{kw.lstrip(', ')})")
        elif n.op == "output":
            lines.append(f"return {arg(n.args[0])}")
        else:
            return gm.forward       # call_module / get_attr: not produced by the capture
    src = f"def replay({', '.join(params)}):\n    " + "\n    ".join(lines or ["pass"]) + "\n"
    ns = dict(consts, D=dispatch)
    exec(compile(src, "<ember replay>", "exec"), ns)
    fn = ns["replay"]
    fn.source = src
    return fn
