"""Unlifting an ExportedProgram into a GraphModule with get_attr weights."""
from .. import nn
from ..fx import Graph, GraphModule


def _input_target(spec, kinds):
    if spec.kind == kinds.PARAMETER or spec.kind == kinds.BUFFER:
        return spec.target
    if spec.kind == kinds.CONSTANT_TENSOR:
        return spec.target
    return None


def unlift_exported_program(ep, root=None):
    """A GraphModule computing ep's user outputs, with parameters, buffers and
    constants as get_attr nodes (the tensors are shared with `root`, else with ep)."""
    from ..export._program import InputKind, OutputKind, TensorArgument
    sig = ep.graph_signature
    holder = nn.Module()
    gm_src = ep.graph_module
    graph = Graph()
    env = {}
    placeholders = [n for n in gm_src.graph.nodes if n.op == "placeholder"]
    for node, spec in zip(placeholders, sig.input_specs):
        target = _input_target(spec, InputKind)
        if target is None:
            env[node] = graph.placeholder(node.name)
        else:
            from ..ao.quantization.pt2e.utils import set_attr_value
            value = _lookup(root, target) if root is not None else None
            if value is None:
                value = ep.state_dict.get(target, ep.constants.get(target))
            set_attr_value(holder, target, value)
            env[node] = graph.get_attr(target)
        env[node].meta.update(node.meta)
        if target is not None:
            env[node].meta["val"] = _lookup(holder, target)
    outputs = None
    for node in gm_src.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = node.args[0]
            break
        env[node] = graph.node_copy(node, lambda n: env[n])
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    user = []
    for out, spec in zip(outputs, sig.output_specs):
        if spec.kind == OutputKind.USER_OUTPUT:
            user.append(env[out] if isinstance(spec.arg, TensorArgument) else spec.arg.value)
        elif spec.kind != OutputKind.TOKEN:
            raise NotImplementedError(
                f"capture_pre_autograd_graph: the graph mutates '{spec.target}' "
                f"({spec.kind.name}); unlifting mutations is not supported")
    graph.output(user[0] if len(user) == 1 else tuple(user))
    return GraphModule(holder, graph)


def _lookup(mod, target):
    obj = mod
    for part in target.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def capture_pre_autograd_graph(f, args, kwargs=None, dynamic_shapes=None):
    """Capture `f(*args, **kwargs)` as a GraphModule for prepare_pt2e/prepare_qat_pt2e
    (PyTorch 2.1's torch._export.capture_pre_autograd_graph)."""
    from ..export import export
    if not isinstance(f, nn.Module):
        raise TypeError("capture_pre_autograd_graph: expected an nn.Module, got "
                        f"{type(f).__name__}")
    modes = {m: m.training for m in f.modules()}
    was_training = f.training
    f.eval()
    try:
        ep = export(f, tuple(args), kwargs, dynamic_shapes=dynamic_shapes)
    finally:
        for m, mode in modes.items():
            m.training = mode
    gm = unlift_exported_program(ep, root=f)
    if was_training:
        from ..ao.quantization.pt2e.export_utils import _set_batch_norm_training
        _set_batch_norm_training(gm, True)
    return gm
