"""`replace_pattern(gm, pattern, replacement)`: find every non-overlapping occurrence of
`pattern`'s graph in `gm` and splice in `replacement`'s graph (torch.fx's
subgraph_rewriter).

Note: matching walks backwards from the pattern's outputs: a pattern placeholder matches
any node (the same node each time it recurs), any other node matches a graph node with
the same opcode and target whose arguments match in turn; literals must be equal. A
match whose interior nodes are read outside it is rejected, since removing them would
break those readers. The replacement is inserted before the first reader of the match's
outputs (or where the match ended), so every node still follows its inputs.
"""
from typing import NamedTuple

from .graph import Graph
from .graph_module import GraphModule, _copy_attr
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Node          # the pattern's (first) output node, as torch.fx reports it
    nodes_map: dict       # pattern node -> graph node


def _graph_of(obj):
    if isinstance(obj, GraphModule):
        return obj.graph, obj
    if isinstance(obj, Graph):
        return obj, None
    from ._symbolic_trace import symbolic_trace
    gm = symbolic_trace(obj)
    return gm.graph, gm


def _outputs(graph):
    out = [n for n in graph.nodes if n.op == "output"][0]
    res = out.args[0]
    return list(res) if isinstance(res, (tuple, list)) else [res]


class _Matcher:
    def __init__(self, pattern, taken):
        self.pattern = pattern
        self.taken = taken        # graph nodes already in an earlier match

    def match_node(self, pn, gn, m):
        if pn in m:
            return m[pn] is gn
        if pn.op == "placeholder":
            if not isinstance(gn, Node):
                return False
            m[pn] = gn
            return True
        if not isinstance(gn, Node) or gn in self.taken or gn.op != pn.op \
                or gn.target != pn.target or len(gn.args) != len(pn.args) \
                or set(gn.kwargs) != set(pn.kwargs):
            return False
        m[pn] = gn
        ok = all(self.match_arg(a, b, m) for a, b in zip(pn.args, gn.args)) and \
            all(self.match_arg(pn.kwargs[k], gn.kwargs[k], m) for k in pn.kwargs)
        if not ok:
            del m[pn]
        return ok

    def match_arg(self, pa, ga, m):
        if isinstance(pa, Node):
            if not isinstance(ga, Node):
                return False
            snapshot = dict(m)
            if self.match_node(pa, ga, m):
                return True
            m.clear()
            m.update(snapshot)
            return False
        if isinstance(pa, (tuple, list)):
            return type(pa) is type(ga) and len(pa) == len(ga) and \
                all(self.match_arg(a, b, m) for a, b in zip(pa, ga))
        if isinstance(pa, dict):
            return isinstance(ga, dict) and pa.keys() == ga.keys() and \
                all(self.match_arg(pa[k], ga[k], m) for k in pa)
        return not isinstance(ga, Node) and type(pa) is type(ga) and pa == ga


def _self_contained(m, pattern_outputs):
    """Interior matched nodes may only be read by other matched nodes."""
    inside = {g for p, g in m.items() if p.op != "placeholder"}
    outs = {m[p] for p in pattern_outputs}
    for g in inside:
        if g in outs:
            continue
        if any(u not in inside for u in g.users):
            return False
    return True


def _find_matches(graph, pattern):
    outputs = _outputs(pattern)
    if not all(isinstance(o, Node) for o in outputs):
        raise ValueError("replace_pattern: the pattern must return only traced values")
    taken = set()
    matches = []
    matcher = _Matcher(pattern, taken)
    candidates = [n for n in graph.nodes if n.op not in ("placeholder", "output")]

    def search(i, m):
        if i == len(outputs):
            return dict(m) if _self_contained(m, outputs) else None
        po = outputs[i]
        if po in m:
            return search(i + 1, m)
        for gn in candidates:
            trial = dict(m)
            if matcher.match_node(po, gn, trial):
                found = search(i + 1, trial)
                if found is not None:
                    return found
        return None

    while True:
        found = search(0, {})
        if found is None:
            break
        matches.append(Match(anchor=outputs[0], nodes_map=found))
        taken.update(g for p, g in found.items() if p.op != "placeholder")
    return matches


def replace_pattern(gm, pattern, replacement):
    """Replace each match of `pattern` in `gm` by `replacement`; returns the matches.
    `pattern`/`replacement` are callables (symbolically traced), Graphs or
    GraphModules with the same inputs (in order) and outputs."""
    graph = gm.graph
    pgraph, _ = _graph_of(pattern)
    rgraph, rmod = _graph_of(replacement)
    pgraph.eliminate_dead_code()
    rgraph.eliminate_dead_code()
    p_in = [n for n in pgraph.nodes if n.op == "placeholder"]
    r_in = [n for n in rgraph.nodes if n.op == "placeholder"]
    if len(p_in) != len(r_in):
        raise ValueError(f"replace_pattern: the pattern takes {len(p_in)} inputs but the "
                         f"replacement takes {len(r_in)}")
    p_out = _outputs(pgraph)
    matches = _find_matches(graph, pgraph)
    replaced = {}       # an earlier match's output -> the node that replaced it
    for match in matches:
        order = {n: i for i, n in enumerate(graph.nodes)}
        m = {p: replaced.get(g, g) for p, g in match.nodes_map.items()}
        outs = [m[p] for p in p_out]
        matched = sorted((g for p, g in m.items() if p.op != "placeholder"),
                         key=order.__getitem__)
        readers = [u for o in outs for u in o.users if u not in matched]
        anchor = min(readers, key=order.__getitem__) if readers else matched[-1].next
        val_map = {r: m[p] for r, p in zip(r_in, p_in) if p in m}
        for r, p in zip(r_in, p_in):
            if p not in m:
                raise ValueError(f"replace_pattern: pattern input {p.name} is unused")
        with graph.inserting_before(anchor):
            res = graph.graph_copy(rgraph, val_map)
        res = list(res) if isinstance(res, (tuple, list)) else [res]
        if len(res) != len(outs):
            raise ValueError(f"replace_pattern: the pattern returns {len(outs)} values but "
                             f"the replacement returns {len(res)}")
        for old, new in zip(outs, res):
            old.replace_all_uses_with(new)
            replaced[old] = new
        for g in reversed(matched):
            graph.erase_node(g)
        if rmod is not None:
            for n in rgraph.nodes:
                if n.op in ("get_attr", "call_module") and not _has_path(gm, n.target):
                    _copy_attr(rmod, gm, n.target)
    gm.recompile()
    return matches


def _has_path(mod, target):
    for atom in target.split("."):
        if not hasattr(mod, atom):
            return False
        mod = getattr(mod, atom)
    return True
