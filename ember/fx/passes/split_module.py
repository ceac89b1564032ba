"""`split_module(m, root_m, split_callback)`: cut a GraphModule into submodules
`submod_<k>`, one per partition id the callback gives each node, and a top-level graph
that calls them in dependency order (torch.fx.passes.split_module).

Note: a value defined in one partition and read in another becomes an output of the
first and an input of the second; a partition returning several values is unpacked with
getitem in the top-level graph. Partitions are ordered by their dependencies (ties in
order of first appearance); a cycle between partitions is an error, as in PyTorch.
"""
import operator

from ..graph import Graph
from ..graph_module import GraphModule
from ..node import map_arg

__all__ = ["split_module"]


class Partition:
    def __init__(self, name):
        self.name = name
        self.submod_name = f"submod_{name}"
        self.node_names = []
        self.inputs = {}          # original node name -> None (ordered set)
        self.outputs = {}
        self.dependencies = {}    # partition names this one reads from
        self.dependents = {}
        self.graph = Graph()
        self.environment = {}     # original node -> node in self.graph
        self.targets = {}         # attribute path -> object (for get_attr/call_module)

    def __repr__(self):
        return (f"name: {self.name},\n nodes: {self.node_names},\n inputs: "
                f"{list(self.inputs)},\n outputs: {list(self.outputs)},\n partitions "
                f"depended on: {list(self.dependencies)},\n partition dependents: "
                f"{list(self.dependents)}")


def _fetch(root, target):
    obj = root
    for atom in target.split("."):
        if not hasattr(obj, atom):
            raise AttributeError(f"Operator target {target} not found!")
        obj = getattr(obj, atom)
    return obj


def split_module(m, root_m, split_callback, qualname_map=None, keep_original_order=False,
                 keep_original_node_name=False):
    """Returns a GraphModule whose graph calls one GraphModule per partition."""
    partitions = {}
    orig_nodes = {}
    part_of = {}                   # node name -> partition name

    def record_use(def_node, use_node):
        def_part = part_of.get(def_node.name)
        use_part = part_of.get(use_node.name) if use_node is not None else None
        if def_part != use_part:
            if def_part is not None:
                partitions[def_part].outputs.setdefault(def_node.name)
            if use_part is not None:
                partitions[use_part].inputs.setdefault(def_node.name)
                if def_part is not None:
                    partitions[def_part].dependents.setdefault(use_part)
                    partitions[use_part].dependencies.setdefault(def_part)

    for node in m.graph.nodes:
        orig_nodes[node.name] = node
        if node.op in ("placeholder", "get_attr", "output"):
            continue           # inputs and attributes live in the top-level graph
        pid = str(split_callback(node))
        part = partitions.get(pid)
        if part is None:
            part = partitions[pid] = Partition(pid)
        part.node_names.append(node.name)
        part_of[node.name] = pid

    for node in m.graph.nodes:
        if node.op == "output":
            map_arg(node.args[0], lambda n: record_use(n, None))
        elif node.op not in ("placeholder", "get_attr"):
            map_arg(node.args, lambda n, u=node: record_use(n, u))
            map_arg(node.kwargs, lambda n, u=node: record_use(n, u))

    # partitions in dependency order; ties keep first appearance
    order, pending = [], list(partitions)
    done = set()
    while pending:
        ready = [p for p in pending if all(d in done for d in partitions[p].dependencies)]
        if not ready:
            raise RuntimeError("cycle exists between partitions!")
        order.append(ready[0])
        done.add(ready[0])
        pending.remove(ready[0])

    for pid in order:
        part = partitions[pid]
        for name in part.inputs:
            ph = part.graph.placeholder(name)
            ph.meta = dict(orig_nodes[name].meta)
            part.environment[orig_nodes[name]] = ph

    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        part = partitions[part_of[node.name]]
        env = part.environment
        args = map_arg(node.args, lambda n: env[n])
        kwargs = map_arg(node.kwargs, lambda n: env[n])
        target = node.target
        if node.op in ("get_attr", "call_module"):
            obj = _fetch(root_m, target)
            # the submodule holds the attribute under a flat name
            flat = target.replace(".", "_")
            part.targets[flat] = obj
            if qualname_map is not None:
                qualname_map[f"{part.submod_name}.{flat}"] = target
            target = flat
        name = node.name if keep_original_node_name else None
        new = part.graph.create_node(node.op, target, args, kwargs, name=name,
                                     type_expr=node.type)
        new.meta = dict(node.meta)
        env[node] = new

    base = Graph()
    base_env = {}
    submods = {}
    for node in m.graph.nodes:
        if node.op == "placeholder":
            ph = base.placeholder(node.target, type_expr=node.type,
                                  **({"default_value": node.args[0]} if node.args else {}))
            ph.meta = dict(node.meta)
            base_env[node.name] = ph
        elif node.op == "get_attr":
            ga = base.get_attr(node.target, type_expr=node.type)
            ga.meta = dict(node.meta)
            base_env[node.name] = ga
            submods[node.target] = _fetch(m, node.target)
    for pid in order:
        part = partitions[pid]
        outs = tuple(part.environment[orig_nodes[n]] for n in part.outputs)
        part.graph.output(outs[0] if len(outs) == 1 else outs)
        submods[part.submod_name] = GraphModule(part.targets, part.graph)
        call = base.call_module(part.submod_name,
                                tuple(base_env[n] for n in part.inputs))
        if len(outs) > 1:
            for i, n in enumerate(part.outputs):
                base_env[n] = base.call_function(operator.getitem, (call, i))
                base_env[n].meta = dict(orig_nodes[n].meta)
        elif len(outs) == 1:
            base_env[next(iter(part.outputs))] = call
    out = [n for n in m.graph.nodes if n.op == "output"][0]
    base.output(map_arg(out.args[0], lambda n: base_env[n.name]))
    return GraphModule(submods, base)
