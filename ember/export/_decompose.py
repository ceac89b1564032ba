"""ExportedProgram.run_decompositions: composites replaced by their decompositions.

Why: export's graph keeps composite ops (linear, batch_norm, ...) as captured; consumers
that only know primitives (code generators, other runtimes) ask for the decomposed form.
The graph is re-traced with ember's make_fx on fake tensors, with the registry's
decompositions (ember._decomp) applied, so the result again holds registry ops only.
"""
from .._tensor import Tensor

__all__ = ["decompose_graph_module"]


def decompose_graph_module(gm, decomp_table=None):
    """A new GraphModule computing the same as `gm` with its composites decomposed
    (`decomp_table` None: every op with a decomposition, down to primitives)."""
    from .._decomp import decomposition_table
    from ..fx.experimental.proxy_tensor import make_fx
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    vals = [n.meta.get("val") for n in phs]
    if any(not isinstance(v, Tensor) for v in vals):
        raise NotImplementedError("run_decompositions: a placeholder without a fake value "
                                  "(a loaded program: decompose before saving)")
    if any(type(s) is not int for v in vals for s in v.shape):
        raise NotImplementedError("run_decompositions on a program with dynamic dims: ember's "
                                  "make_fx has no symbolic tracing yet; export without "
                                  "dynamic_shapes to decompose")
    table = dict(decomposition_table) if decomp_table is None else dict(decomp_table)
    new = make_fx(lambda *a: gm(*a), decomposition_table=table, tracing_mode="fake")(*vals)
    for old, n in zip(phs, [n for n in new.graph.nodes if n.op == "placeholder"]):
        n.name = old.name
        n.target = old.name
    new.recompile()
    return new
