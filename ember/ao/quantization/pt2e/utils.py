"""Graph helpers shared by the pt2e passes and the quantizers.

Why one place: every pass asks the same questions of a captured graph (is this node
a convolution? which tensor does this get_attr hold?) and folds BatchNorm the same
way; the answers come from the op registry (a node's target is its OpDef, whose
`__name__` is the registry name), never from a private op list per pass.
"""
import operator

import ember
from ....fx import Node

__all__ = ["op_name", "is_op", "is_conv", "is_linear", "get_attr_value", "set_attr_value",
           "fold_bn_weights", "fuse_conv_bn_", "new_attr_name", "QUANTIZE_OPS",
           "DEQUANTIZE_OPS"]


def _qd():
    return ember.ops.quantized_decomposed


def QUANTIZE_OPS():
    q = _qd()
    return (q.quantize_per_tensor.default, q.quantize_per_tensor.tensor,
            q.quantize_per_channel.default)


def DEQUANTIZE_OPS():
    q = _qd()
    return (q.dequantize_per_tensor.default, q.dequantize_per_tensor.tensor,
            q.dequantize_per_channel.default)


def op_name(node):
    """The registry name of a call_function node's op ("convolution", "relu", ...)."""
    if not isinstance(node, Node) or node.op != "call_function":
        return None
    if node.target is operator.getitem:
        return "getitem"
    return getattr(node.target, "__name__", None)


def is_op(node, *names):
    return op_name(node) in names


def is_conv(node, transposed=False):
    """aten.convolution (ember's capture keeps conv1d/2d/3d as this one op)."""
    return is_op(node, "convolution") and bool(node.args[6]) == transposed


def is_linear(node):
    return is_op(node, "linear")


def get_attr_value(gm, target):
    """The tensor a get_attr node names ("layer1.0.conv1.weight")."""
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def set_attr_value(gm, target, value):
    """Install `value` under a dotted name, making the submodules on the way."""
    *path, leaf = target.split(".")
    mod = gm
    for part in path:
        if not hasattr(mod, part):
            mod.add_module(part, ember.nn.Module())
        mod = getattr(mod, part)
    if isinstance(value, ember.nn.Parameter):
        mod.register_parameter(leaf, value)
    elif isinstance(value, ember.Tensor):
        if leaf in mod._parameters:
            del mod._parameters[leaf]
        mod.register_buffer(leaf, value)
    else:
        setattr(mod, leaf, value)


def new_attr_name(gm, prefix):
    """`prefix` + the first free integer suffix among gm's attributes."""
    i = 0
    while hasattr(gm, f"{prefix}{i}"):
        i += 1
    return f"{prefix}{i}"


def add_attr_node(gm, prefix, value, before):
    """A get_attr node, inserted before `before`, reading `value` installed on gm under a
    fresh `prefix<k>` name (meta["val"] set): how passes add constants to a graph."""
    name = new_attr_name(gm, prefix)
    set_attr_value(gm, name, value)
    with gm.graph.inserting_before(before):
        node = gm.graph.get_attr(name)
    node.meta["val"] = value
    return node


def fold_bn_weights(w, b, rm, rv, eps, gamma, beta, transposed=False):
    """Conv weights with an eval-mode BatchNorm folded in:
    w' = w * gamma / sqrt(rv + eps) (per output channel), b' = (b - rm) * that + beta."""
    with ember.no_grad():
        inv_std = ember.rsqrt(rv + eps)
        g = ember.ones_like(rm) if gamma is None else gamma
        factor = g * inv_std
        shape = [1] * w.dim()
        shape[1 if transposed else 0] = -1
        new_w = w * factor.reshape(shape)
        b = ember.zeros_like(rm) if b is None else b
        be = ember.zeros_like(rm) if beta is None else beta
        new_b = (b - rm) * factor + be
    return new_w.to(w.dtype), new_b.to(w.dtype)


def _attr_or_none(gm, node):
    if node is None:
        return None
    if not isinstance(node, Node) or node.op != "get_attr":
        raise NotImplementedError(f"conv-bn folding: expected a get_attr, got {node}")
    return get_attr_value(gm, node.target)


def fuse_conv_bn_(gm):
    """Fold every eval-mode conv -> batch_norm pair into the conv's weight and bias
    (prepare_pt2e does this before annotation, as PyTorch's _fuse_conv_bn_)."""
    graph = gm.graph
    for bn in list(graph.nodes):
        if not is_op(bn, "batch_norm") or bool(bn.args[5]):
            continue
        conv = bn.args[0]
        if not (is_op(conv, "convolution") and len(conv.users) == 1):
            continue
        w_node, b_node = conv.args[1], conv.args[2]
        if not (isinstance(w_node, Node) and w_node.op == "get_attr"):
            continue
        w = get_attr_value(gm, w_node.target)
        b = _attr_or_none(gm, b_node)
        gamma, beta, rm, rv = (_attr_or_none(gm, a) for a in bn.args[1:5])
        new_w, new_b = fold_bn_weights(w, b, rm, rv, bn.args[7], gamma, beta,
                                       transposed=bool(conv.args[6]))
        set_attr_value(gm, w_node.target, ember.nn.Parameter(new_w, w.requires_grad))
        if b_node is None:
            bias_name = w_node.target.rsplit(".", 1)[0] + ".bias" \
                if "." in w_node.target else new_attr_name(gm, "_folded_bias_")
            set_attr_value(gm, bias_name, ember.nn.Parameter(new_b, w.requires_grad))
            with graph.inserting_before(conv):
                b_node = graph.get_attr(bias_name)
            b_node.meta["val"] = new_b
            args = list(conv.args)
            args[2] = b_node
            conv.args = tuple(args)
        else:
            set_attr_value(gm, b_node.target, ember.nn.Parameter(new_b, w.requires_grad))
        bn.replace_all_uses_with(conv)
        graph.erase_node(bn)
    graph.eliminate_dead_code()
    gm.recompile()
    return gm
