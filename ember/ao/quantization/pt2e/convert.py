"""Observers -> quantize/dequantize ops (convert_pt2e's core).

Why this graph shape: it is PyTorch 2.1's reference representation, which backends
pattern-match (ember's int8 lowering reads it): each observed value x becomes
quantize_per_tensor(x, scale, zp, qmin, qmax, dtype) -> dequantize_per_tensor(...),
scale/zero_point as Python literals; per-channel weights use (de)quantize_per_channel
with scales/zero points held as attributes (`_scale_<n>`, `_zero_point_<n>`). With
fold_quantize the weight's quantize op is evaluated once and the int8 result is stored
as `_frozen_param<n>` (the float weight is dropped), so only dequantize_per_channel
stays in the graph. A dequantize with several consumers is duplicated per consumer,
so each consumer sees its own dq -> op pattern.
"""
import ember
from ....fx import Node
from ..observer import NoopObserver, PlaceholderObserver, ReuseInputObserver, _is_per_channel
from .prepare import is_activation_post_process
from .utils import DEQUANTIZE_OPS, QUANTIZE_OPS, add_attr_node, get_attr_value

__all__ = ["convert_observers_to_qdq", "duplicate_dq", "fold_quantize", "remove_unused_attrs"]


def _underlying_dtype(dtype):
    table = {ember.qint8: ember.int8, ember.quint8: ember.uint8, ember.qint32: ember.int32}
    return table.get(dtype, dtype)


def _quantizable(dtype):
    return _underlying_dtype(dtype) in (ember.int8, ember.uint8, ember.int16, ember.int32)


def _dq_kwargs(input_node):
    val = input_node.meta.get("val") if isinstance(input_node, Node) else None
    if isinstance(val, ember.Tensor) and val.dtype != ember.float32:
        return {"out_dtype": val.dtype}
    return {}


def _replace_static(gm, node, obs):
    q = ember.ops.quantized_decomposed
    graph = gm.graph
    scale, zero_point = obs.calculate_qparams()
    dtype = _underlying_dtype(obs.dtype)
    x = node.args[0]
    if _is_per_channel(obs.qscheme):
        s_node = add_attr_node(gm, "_scale_", scale, node)
        z_node = add_attr_node(gm, "_zero_point_", zero_point, node)
        qargs = (s_node, z_node, int(obs.ch_axis), obs.quant_min, obs.quant_max, dtype)
        qop, dqop = q.quantize_per_channel.default, q.dequantize_per_channel.default
    else:
        qargs = (float(scale), int(zero_point), obs.quant_min, obs.quant_max, dtype)
        qop, dqop = q.quantize_per_tensor.default, q.dequantize_per_tensor.default
    with graph.inserting_before(node):
        qn = graph.call_function(qop, (x,) + qargs)
        dqn = graph.call_function(dqop, (qn,) + qargs, _dq_kwargs(x))
    if isinstance(x, Node) and "val" in x.meta:
        dqn.meta["val"] = x.meta["val"]
    node.replace_all_uses_with(dqn)
    graph.erase_node(node)


def _replace_dynamic(gm, node, obs):
    import operator
    q = ember.ops.quantized_decomposed
    graph = gm.graph
    dtype = _underlying_dtype(obs.dtype)
    if dtype not in (ember.uint8, ember.int8):
        raise AssertionError("only uint8 and int8 are supported in reference flow for "
                             "dynamic quantization right now")
    qscheme = getattr(obs, "qscheme", ember.per_tensor_affine)
    eps = getattr(obs, "eps", float(ember.finfo(ember.float32).eps))
    eps = float(eps.reshape(-1)[0]) if isinstance(eps, ember.Tensor) else eps
    choose = q.choose_qparams_symmetric.tensor if qscheme == ember.per_tensor_symmetric \
        else q.choose_qparams.tensor
    x = node.args[0]
    with graph.inserting_before(node):
        ch = graph.call_function(choose, (x, obs.quant_min, obs.quant_max, eps, dtype))
        s = graph.call_function(operator.getitem, (ch, 0))
        z = graph.call_function(operator.getitem, (ch, 1))
        qargs = (s, z, obs.quant_min, obs.quant_max, dtype)
        qn = graph.call_function(q.quantize_per_tensor.tensor, (x,) + qargs)
        dqn = graph.call_function(q.dequantize_per_tensor.tensor, (qn,) + qargs,
                                  _dq_kwargs(x))
    node.replace_all_uses_with(dqn)
    graph.erase_node(node)


def _drop(gm, node):
    node.replace_all_uses_with(node.args[0])
    gm.graph.erase_node(node)


def convert_observers_to_qdq(gm):
    """Replace each observer / fake-quant call with its quantize -> dequantize pair."""
    modules = dict(gm.named_modules(remove_duplicate=False))
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not is_activation_post_process(
                modules.get(node.target)):
            continue
        obs = modules[node.target]
        if isinstance(obs, (PlaceholderObserver, NoopObserver, ReuseInputObserver)) \
                and not getattr(obs, "is_dynamic", False):
            _drop(gm, node)
        elif getattr(obs, "is_dynamic", False):
            _replace_dynamic(gm, node, obs)
        elif _quantizable(obs.dtype):
            _replace_static(gm, node, obs)
        else:
            _drop(gm, node)
    for name in list(modules):
        if name and "." not in name and is_activation_post_process(modules[name]):
            delattr(gm, name)
    return gm


def duplicate_dq(gm):
    """Give each consumer of a shared dequantize its own copy (dynamic quantization's
    choose_qparams -> q -> dq stays shared)."""
    graph = gm.graph
    dq_ops = DEQUANTIZE_OPS()
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in dq_ops or len(node.users) <= 1:
            continue
        q_node = node.args[0]
        if isinstance(q_node, Node) and q_node.target is \
                ember.ops.quantized_decomposed.quantize_per_tensor.tensor:
            continue
        for user in list(node.users)[1:]:
            with graph.inserting_after(node):
                copy = graph.call_function(node.target, node.args, dict(node.kwargs))
            copy.meta.update(node.meta)
            user.replace_input_with(node, copy)
    graph.eliminate_dead_code()
    gm.recompile()
    return gm


def _constant(node):
    """True when `node` depends only on attributes (no input, no module call)."""
    if isinstance(node, (list, tuple)):
        return all(_constant(a) for a in node)
    if not isinstance(node, Node):
        return True
    if node.op == "get_attr":
        return True
    if node.op != "call_function":
        return False
    return all(_constant(a) for a in node.args) and all(
        _constant(a) for a in node.kwargs.values())


def _evaluate(gm, node):
    if isinstance(node, (list, tuple)):
        return type(node)(_evaluate(gm, a) for a in node)
    if not isinstance(node, Node):
        return node
    if node.op == "get_attr":
        return get_attr_value(gm, node.target)
    args = _evaluate(gm, node.args)
    kwargs = {k: _evaluate(gm, v) for k, v in node.kwargs.items()}
    return node.target(*args, **kwargs)


def fold_quantize(gm):
    """Evaluate quantize ops on constant weights once; keep the integers as
    `_frozen_param<n>` attributes."""
    graph = gm.graph
    q_ops = QUANTIZE_OPS()
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in q_ops or not _constant(node):
            continue
        with ember.no_grad():
            value = _evaluate(gm, node).detach()
        attr = add_attr_node(gm, "_frozen_param", value, node)
        node.replace_all_uses_with(attr)
        graph.erase_node(node)
    graph.eliminate_dead_code()
    remove_unused_attrs(gm)
    gm.recompile()
    return gm


def remove_unused_attrs(gm):
    """Drop parameters and buffers no get_attr node reads any more (the float weights
    a folded quantize replaced), so a saved model holds only what runs."""
    used = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
    called = tuple(n.target + "." for n in gm.graph.nodes if n.op == "call_module")
    for name, _ in list(gm.named_parameters()) + list(gm.named_buffers()):
        if name in used or name.startswith(called):
            continue
        owner, _, leaf = name.rpartition(".")
        mod = gm.get_submodule(owner) if owner else gm
        if leaf in mod._parameters:
            del mod._parameters[leaf]
        elif leaf in mod._buffers:
            del mod._buffers[leaf]
    return gm
