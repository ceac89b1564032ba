"""ExportedProgram.run_decompositions: composites replaced by their decompositions.

Why: export's graph keeps composite ops (linear, batch_norm, ...) as captured; consumers
that only know primitives (code generators, other runtimes) ask for the decomposed form.
The graph is re-run on its placeholders' fake values (symbolic sizes included) under
make_fx's recorder with the registry's decompositions (ember._decomp); sizes the
decompositions compute from symbolic dims come back as SymInts and are turned into
`sym_size` / size-expression nodes, so a dynamic program stays dynamic.
"""
import re

from .._tensor import Tensor
from .._symbolic import SymInt, sym_expr
from ..fx import Graph, GraphModule, Interpreter
from ..fx.node import map_aggregate

__all__ = ["decompose_graph_module"]


def _sym_nodes(graph, phs, vals):
    """A function SymInt -> graph node computing it from the placeholders' sizes."""
    from .._dynamo.output_graph import sym_size, sym_eval
    from ._serialize import _sym_fn
    where = {}
    for ph, v in zip(phs, vals):
        for d, s in enumerate(v.shape):
            if type(s) is not int:
                where.setdefault(str(sym_expr(s)), (ph, d))
    cache = {}

    def node_for(s):
        text = str(sym_expr(s))
        if text in cache:
            return cache[text]
        first = next(n for n in graph.nodes if n.op != "placeholder")
        with graph.inserting_before(first):
            if text in where:
                ph, d = where[text]
                n = graph.call_function(sym_size, (ph, d))
            else:
                names = sorted(set(re.findall(r"\bs\d+\b", text)))
                missing = [x for x in names if x not in where]
                if missing:
                    raise NotImplementedError(f"run_decompositions: size {text} uses "
                                              f"{missing}, which no input size names")
                atoms = [node_for_name(x) for x in names]
                n = graph.call_function(sym_eval, (_sym_fn(names, text), *atoms))
        cache[text] = n
        return n

    def node_for_name(name):
        if name not in cache:
            ph, d = where[name]
            first = next(n for n in graph.nodes if n.op != "placeholder")
            with graph.inserting_before(first):
                cache[name] = graph.call_function(sym_size, (ph, d))
        return cache[name]
    return node_for


def decompose_graph_module(gm, decomp_table=None):
    """A new GraphModule computing the same as `gm` with its composites decomposed
    (`decomp_table` None: every op with a decomposition, down to primitives)."""
    from .._decomp import decomposition_table
    from .._subclasses.fake_tensor import FakeTensorMode
    from ..fx.experimental.proxy_tensor import _Recorder
    phs0 = [n for n in gm.graph.nodes if n.op == "placeholder"]
    vals = [n.meta.get("val") for n in phs0]
    if any(not isinstance(v, Tensor) for v in vals):
        raise NotImplementedError("run_decompositions: a placeholder without a fake value "
                                  "(a loaded program: decompose before saving)")
    table = dict(decomposition_table) if decomp_table is None else dict(decomp_table)
    graph = Graph()
    rec = _Recorder(graph, table, lambda t: t)
    phs = []
    for old, v in zip(phs0, vals):
        ph = graph.placeholder(old.name)
        ph.meta["val"] = v
        rec.bind(v, ph)
        phs.append(ph)
    with FakeTensorMode(allow_non_fake_inputs=True), rec:
        out = Interpreter(gm).run(*vals)
    graph.output(rec.to_arg(tuple(out) if isinstance(out, (list, tuple)) else (out,)))
    if rec.constants:
        raise NotImplementedError(f"run_decompositions: the decomposition read tensors "
                                  f"that are not graph inputs ({sorted(rec.constants)})")
    node_for = _sym_nodes(graph, phs, vals)
    for n in list(graph.nodes):
        if n.op != "call_function":
            continue
        n.args = map_aggregate(n.args, lambda a: node_for(a) if isinstance(a, SymInt) else a)
        n.kwargs = map_aggregate(n.kwargs,
                                 lambda a: node_for(a) if isinstance(a, SymInt) else a)
    return GraphModule({}, graph)
