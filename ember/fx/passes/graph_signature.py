"""graph_signature(graph): a graph as comparable tuples, for telling whether two captures of
one program (the second with every symbolic size's example value moved) are the same graph.

Why one place: ember.compile's capture and AOT autograd both prove that a graph with symbolic
sizes does not depend on the sizes' example values this way; a constant, a node's output
sizes or a size expression that differs means some code read a size as a plain number."""
from ..._symbolic import SymInt
from ..._tensor import Tensor

__all__ = ["graph_signature"]


def graph_signature(graph):
    index = {n: i for i, n in enumerate(graph.nodes)}

    def arg(a):
        if isinstance(a, (list, tuple)):
            return (type(a).__name__, tuple(arg(x) for x in a))
        if a.__class__.__name__ == "Node" and a in index:
            return ("node", index[a])
        if isinstance(a, SymInt):
            return ("sym", str(a))
        if hasattr(a, "_sym_expr"):
            return ("sym_eval", a._sym_expr)
        if callable(a):
            return ("fn", getattr(a, "__code__", None) or id(a))
        return ("const", repr(a))

    def shape(n):
        v = n.meta.get("val")
        return tuple(str(d) for d in v.shape) if isinstance(v, Tensor) else None

    return [(n.op, id(n.target) if n.op == "call_function" else str(n.target), arg(n.args),
             tuple(sorted((k, arg(v)) for k, v in n.kwargs.items())), shape(n))
            for n in graph.nodes if n.op != "output"]
