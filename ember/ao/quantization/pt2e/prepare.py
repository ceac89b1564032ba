"""Observer insertion from quantization annotations (prepare_pt2e's core).

Note: an annotation names *edges* (producer node, consumer node) and *outputs*. Edges
and outputs that must share quantization parameters are grouped with union-find:
explicitly through SharedQuantizationSpec, implicitly when an input edge's spec equals
the producer's output spec (same tensor, same parameters) and the annotation allows
implicit sharing. One observer (or FakeQuantize, for QAT) is made per group, and
each is inserted once, as a call_module `activation_post_process_<n>` right after the
value it watches; consumers of that value then read the observer's output.
"""
from dataclasses import asdict

import ember
from ....fx import GraphModule, Node
from ..fake_quantize import FakeQuantizeBase, FixedQParamsFakeQuantize
from ..observer import FixedQParamsObserver, ObserverBase, _PartialWrapper
from ..quantizer.quantizer import (DerivedQuantizationSpec, FixedQParamsQuantizationSpec,
                                   Q_ANNOTATION_KEY, QuantizationSpec,
                                   SharedQuantizationSpec)

__all__ = ["prepare", "DerivedObserverOrFakeQuantize", "is_activation_post_process"]


class DerivedObserverOrFakeQuantize(ObserverBase):
    """Observes nothing; its qparams come from other observers through
    `derive_qparams_fn` (a bias's scale = activation scale * weight scale)."""

    def __init__(self, dtype, obs_or_fqs, derive_qparams_fn, quant_min=None, quant_max=None,
                 qscheme=None, ch_axis=None):
        super().__init__(dtype)
        self.obs_or_fqs = obs_or_fqs
        self.derive_qparams_fn = derive_qparams_fn
        self.quant_min, self.quant_max = quant_min, quant_max
        self.qscheme = ember.per_tensor_affine if qscheme is None else qscheme
        self.ch_axis = ch_axis

    def forward(self, x):
        return x

    def calculate_qparams(self):
        return self.derive_qparams_fn(self.obs_or_fqs)


def is_activation_post_process(module):
    return isinstance(module, (ObserverBase, FakeQuantizeBase))


def _create_obs_or_fq(qspec, obs_or_fq_map, is_qat):
    if qspec is None:
        return None
    if isinstance(qspec, SharedQuantizationSpec):
        if qspec.edge_or_node not in obs_or_fq_map:
            raise AssertionError("please make sure only refer to edge or node that has "
                                 f"observer/fake_quant inserted: '{qspec.edge_or_node}' "
                                 f"not in\n{list(obs_or_fq_map)}")
        return obs_or_fq_map[qspec.edge_or_node]
    if isinstance(qspec, DerivedQuantizationSpec):
        return DerivedObserverOrFakeQuantize(
            qspec.dtype, [obs_or_fq_map[k] for k in qspec.derived_from],
            qspec.derive_qparams_fn, qspec.quant_min, qspec.quant_max, qspec.qscheme,
            qspec.ch_axis)
    if isinstance(qspec, FixedQParamsQuantizationSpec):
        kwargs = asdict(qspec)
        ctr = FixedQParamsObserver.with_args(**kwargs)
        return FixedQParamsFakeQuantize.with_args(observer=ctr)() if is_qat else ctr()
    if not isinstance(qspec, QuantizationSpec):
        raise AssertionError(f"Expected QuantizationSpec got: {qspec}")
    kwargs = {f: getattr(qspec, f) for f in ("dtype", "quant_min", "quant_max", "qscheme",
                                              "ch_axis", "is_dynamic")}
    ctr = qspec.observer_or_fake_quant_ctr
    cls = ctr.p.func if isinstance(ctr, _PartialWrapper) else ctr
    if "PerChannel" not in cls.__name__:
        kwargs.pop("ch_axis")
    return ctr.with_args(**kwargs)()


class _Groups:
    """Union-find over edges and outputs (PyTorch's sharing rules)."""

    def __init__(self, qspecs):
        self.qspecs = qspecs
        self.parent = {k: k for k in qspecs}

    def root(self, k):
        p = self.parent[k]
        if p == k:
            return k
        r = self.root(p)
        self.parent[k] = r
        return r

    def union(self, parent, child):
        rp, rc = self.root(parent), self.root(child)
        spec = self.qspecs[rp]
        if isinstance(spec, SharedQuantizationSpec) and spec.edge_or_node == rc:
            self.parent[rp] = rc
        else:
            self.parent[rc] = rp

    def unwrap(self, qspec):
        while isinstance(qspec, SharedQuantizationSpec):
            qspec = self.qspecs[self.root(qspec.edge_or_node)]
        return qspec

    def share_if_shared(self, child, qspec):
        if isinstance(qspec, SharedQuantizationSpec):
            self.union(qspec.edge_or_node, child)


_SAME_ATTRS = ("dtype", "is_dynamic", "quant_min", "quant_max", "qscheme", "ch_axis",
               "scale", "zero_point")


def _same(a, b, attr):
    return (hasattr(a, attr) and hasattr(b, attr) and getattr(a, attr) == getattr(b, attr)) \
        or (not hasattr(a, attr) and not hasattr(b, attr))


def _edge_or_node_to_qspec(gm):
    out = {}
    for n in gm.graph.nodes:
        qa = n.meta.get(Q_ANNOTATION_KEY)
        if qa is None:
            continue
        for inp, qspec in qa.input_qspec_map.items():
            out[(inp, n)] = qspec
        if qa.output_qspec is not None:
            out[n] = qa.output_qspec
    return out


def _group_ids(qspecs):
    groups = _Groups(qspecs)
    for key, qspec in qspecs.items():
        if isinstance(key, Node):
            groups.share_if_shared(key, qspec)
            continue
        arg, n = key
        if n.meta[Q_ANNOTATION_KEY].allow_implicit_sharing:
            root_spec = groups.unwrap(qspec)
            others = [(arg, u) for u in arg.users if u is not n] + [arg]
            for other in others:
                if other not in qspecs:
                    continue
                spec = groups.unwrap(qspecs[other])
                if spec is not None and all(_same(spec, root_spec, a) for a in _SAME_ATTRS):
                    groups.union(other, key)
        groups.share_if_shared(key, qspec)
    ids, out = {}, {}
    for key in groups.parent:
        r = groups.root(key)
        ids.setdefault(r, len(ids))
        out[key] = ids[r]
    return out


def _obs_or_fq_map(qspecs, group_ids, is_qat):
    out, by_group = {}, {}
    for key, qspec in qspecs.items():
        gid = group_ids[key]
        if gid not in by_group:
            by_group[gid] = _create_obs_or_fq(qspec, out, is_qat)
        out[key] = by_group[gid]
    return out


def _is_obs_node(node, modules):
    return (isinstance(node, Node) and node.op == "call_module"
            and is_activation_post_process(modules.get(node.target)))


def _insert_obs(gm, modules, node, obs):
    name = "activation_post_process_"
    i = 0
    while hasattr(gm, f"{name}{i}"):
        i += 1
    target = f"{name}{i}"
    gm.add_module(target, obs)
    modules[target] = obs
    with gm.graph.inserting_after(node):
        new = gm.graph.call_module(target, (node,))
    if "val" in node.meta:
        new.meta["val"] = node.meta["val"]
    return new


def _input_arg(gm, modules, node, arg, obs_map):
    if isinstance(arg, (list, tuple)):
        return type(arg)(_input_arg(gm, modules, node, a, obs_map) for a in arg)
    if not isinstance(arg, Node):
        return arg
    original = arg
    while _is_obs_node(original, modules):
        original = original.args[0]
    obs = obs_map.get((original, node))
    if obs is None:
        return arg
    if obs_map.get(original) is obs:
        return arg
    for user in arg.users:
        if _is_obs_node(user, modules) and modules[user.target] is obs:
            return user
    return _insert_obs(gm, modules, arg, obs)


def _is_tensor_output(node):
    return isinstance(node.meta.get("val"), ember.Tensor)


def prepare(gm, is_qat, obs_or_fq_callback=None):
    """Insert observers (PTQ) or fake quantizers (QAT) as the annotations say."""
    nodes = list(gm.graph.nodes)
    qspecs = _edge_or_node_to_qspec(gm)
    obs_map = _obs_or_fq_map(qspecs, _group_ids(qspecs), is_qat)
    if obs_or_fq_callback:
        obs_or_fq_callback(gm, obs_map)
    modules = dict(gm.named_modules(remove_duplicate=False))
    for node in nodes:
        if Q_ANNOTATION_KEY not in node.meta:
            continue
        node.args = tuple(_input_arg(gm, modules, node, a, obs_map) for a in node.args)
        for k, v in node.kwargs.items():
            if isinstance(v, Node):
                raise AssertionError(f"Kwarg '{k}' contained type {type(v)} which is not "
                                     "supported for annotation.")
        if node not in obs_map or obs_map[node] is None or not _is_tensor_output(node):
            continue
        obs_node = _insert_obs(gm, modules, node, obs_map[node])
        for user in list(node.users):
            if user is not obs_node:
                user.replace_input_with(node, obs_node)
    gm.recompile()
    return GraphModule(gm, gm.graph)
