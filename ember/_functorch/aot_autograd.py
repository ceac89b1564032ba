"""AOT autograd (torch._functorch.aot_autograd): compile forward and backward ahead of time.

Why: a compiler that sees only the forward cannot fuse or schedule the backward, and eager
autograd keeps every intermediate alive. Here a captured graph is
  1. functionalized (_functionalize.py): pure ops, mutated inputs as extra outputs;
  2. traced with autograd on fake tensors (no data) under a recording dispatch mode: the
     forward ops, then `ember.autograd.grad` with one tangent per differentiable output,
     whose registry vjps (ember ops) are recorded too -> one joint forward+backward graph;
  3. split by a partitioner (partitioners.py) into a forward graph returning the values
     to save and a backward graph reading them;
  4. compiled by the caller's fw/bw compilers and run as ONE autograd node
     (`CompiledFunction`, an `ember.autograd.Function`) whose backward runs the compiled
     backward graph. Its backward is itself not differentiable: double backward raises
     PyTorch's error.
The runtime wrapper then copies mutated inputs' new values back into the caller's tensors
(parameters, BatchNorm buffers, inputs) and rebuilds outputs that alias inputs.
Without autograd (grad disabled, or no input requires grad) only step 1 runs.

Note: the joint graph is traced for the inputs' concrete sizes and Python scalar values,
and retraced (cached per signature) when they change: the captured graph stays symbolic,
the AOT graphs are specialized, so no size or scalar a backward formula reads as a Python
number can go stale.
"""
import copy
import logging
import operator
import re

from .. import _random
from .._dispatch import STATE
from .._logging import getArtifactLogger
from .._symbolic import ShapeEnv, SymInt, _Poly
from .._tensor import Tensor, wrap_meta
from ..autograd.function import Function
from ..fx import Graph, GraphModule
from ..fx.experimental.proxy_tensor import _Recorder, make_fx
from ..fx.node import map_aggregate
from ..fx.passes.graph_signature import graph_signature
from ._functionalize import functionalize_graph
from .partitioners import default_partition, min_cut_rematerialization_partition
from .pytree import tree_flatten, tree_unflatten

__all__ = ["aot_function", "aot_module", "aot_module_simplified", "make_boxed_func",
           "make_boxed_compiler", "default_partition", "min_cut_rematerialization_partition",
           "aot_joint_graph"]

log = logging.getLogger(__name__)
_graphs_log = getArtifactLogger(__name__, "aot_graphs")
_joint_log = getArtifactLogger(__name__, "aot_joint_graph")

DOUBLE_BACKWARD_ERROR = ("torch.compile with aot_autograd does not currently support double "
                         "backward")


# ------------------------------------------------------------------ boxed calling convention

def make_boxed_func(f):
    """`f(*args)` as a boxed function `g(args_list)` (PyTorch's convention, which lets a
    compiled graph free its inputs early)."""
    def g(args):
        return f(*args)
    g._boxed_call = True
    return g


def make_boxed_compiler(compiler):
    def boxed(gm, example_inputs):
        return make_boxed_func(compiler(gm, example_inputs))
    return boxed


def _call(compiled, args):
    if getattr(compiled, "_boxed_call", False):
        return compiled(list(args))
    return compiled(*args)


# ------------------------------------------------------------------ the joint graph

def _leaf_fake(fake_mode, t):
    """A fresh fake leaf with t's metadata (a fake of a real tensor, or a copy of a fake)."""
    if not t._fake:
        return fake_mode.from_tensor(t)
    f = wrap_meta(tuple(t.shape), t._dtype, device=t.device, fake=True)
    f._mstrides = getattr(t, "_mstrides", None) or f._mstrides
    f._rg = t._rg
    return f


class _SymRecorder(_Recorder):
    """The recording mode, plus sizes: a SymInt argument becomes the node computing it
    (`sym_size(primal, dim)` or a primal int itself; `sym_eval` for expressions), as in
    the captured graph, so the joint graph holds no example size."""

    def __init__(self, graph, decompositions):
        super().__init__(graph, decompositions, lambda t: t)
        self.sym_source = {}        # symbol name -> (placeholder, dim or None)
        self.sym_nodes = {}         # expression text -> node
        self.last_placeholder = None

    def add_placeholder(self, ph, val):
        self.last_placeholder = ph
        if isinstance(val, SymInt):
            self.sym_source.setdefault(str(val), (ph, None))
        elif isinstance(val, Tensor):
            for d, n in enumerate(val.shape):
                if isinstance(n, SymInt) and len(n.node.terms) == 1 and \
                        next(iter(n.node.terms.values())) == 1 and \
                        len(next(iter(n.node.terms))) == 1:
                    self.sym_source.setdefault(str(n), (ph, d))

    def to_arg(self, a):
        return map_aggregate(a, self._leaf)

    def _leaf(self, x):
        if isinstance(x, Tensor):
            return self.node_of(x)
        if isinstance(x, SymInt):
            return self.sym_node(x)
        return x

    def sym_node(self, s):
        from .._dynamo.output_graph import sym_eval
        key = str(s)
        n = self.sym_nodes.get(key)
        if n is not None:
            return n
        if key in self.sym_source:
            n = self._atom(key)
        else:
            names = sorted(k for k in self.sym_source if re.search(rf"\b{k}\b", key))
            unknown = set(re.findall(r"\b[si]\d+\b", key)) - set(names)
            if unknown:
                raise NotImplementedError(f"aot_autograd: size expression {key} uses "
                                          f"{sorted(unknown)}, which no input provides")
            fn = eval(f"lambda {', '.join(names)}: {key}")       # noqa: S307 (our text)
            fn._sym_expr = key
            n = self.graph.call_function(sym_eval, (fn, *[self._atom(k) for k in names]))
        n.meta["val"] = s
        self.sym_nodes[key] = n
        return n

    def _atom(self, name):
        from .._dynamo.output_graph import sym_size
        n = self.sym_nodes.get(name)
        if n is not None:
            return n
        ph, d = self.sym_source[name]
        if d is None:
            n = ph
        else:
            with self.graph.inserting_after(self.last_placeholder):
                n = self.graph.call_function(sym_size, (ph, d))
            n.meta["val"] = ph.meta["val"].shape[d]
        self.sym_nodes[name] = n
        return n


def aot_joint_graph(fn, args, decompositions=None, symbolic=False):
    """Trace `fn(*args)` (tensors in `args` real or fake) with autograd on fakes.

    Returns (joint GraphModule, num_fwd_outputs, diff_outputs) or None when nothing needs
    a gradient. Joint placeholders: `primals_<i>` per tensor in `args`, then
    `tangents_<j>` per differentiable output (indices in diff_outputs); its output tuple
    holds fn's flat outputs, then one gradient (or None) per primal.
    symbolic: `args` are fakes with symbolic sizes (and SymInt ints, which become primals
    too); sizes reaching ops are recorded as graph values instead of numbers.
    """
    from .._subclasses.fake_tensor import FakeTensorMode
    from ..autograd import grad as autograd_grad
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    graph = Graph()
    rec = _SymRecorder(graph, decompositions) if symbolic else \
        _Recorder(graph, decompositions, lambda t: t)
    call_args, primals = [], []
    for a in args:
        if isinstance(a, Tensor) or (symbolic and isinstance(a, SymInt)):
            f = _leaf_fake(fake_mode, a) if isinstance(a, Tensor) else a
            ph = graph.placeholder(f"primals_{len(primals) + 1}")
            ph.meta["val"] = f
            if isinstance(f, Tensor):
                rec.bind(f, ph)
            if symbolic:
                rec.add_placeholder(ph, f)
            primals.append(f)
            call_args.append(f)
        else:
            call_args.append(a)
    rng = copy.deepcopy(_random.default_generator.__dict__)
    grad_mode = STATE.grad_enabled
    try:
        with fake_mode, rec:
            outs = fn(*call_args)
            flat = list(outs) if isinstance(outs, (tuple, list)) else [outs]
            diff = [i for i, o in enumerate(flat) if isinstance(o, Tensor) and o.requires_grad]
            wrt = [p for p in primals if isinstance(p, Tensor) and p.requires_grad]
            if not diff or not wrt:
                return None
            first = next((n for n in graph.nodes if n.op != "placeholder"), None)
            tangents = []
            for j, i in enumerate(diff):
                o = flat[i]
                t = wrap_meta(tuple(o.shape), o._dtype, device=o.device, fake=True)
                with graph.inserting_before(first):
                    ph = graph.placeholder(f"tangents_{j + 1}")
                ph.meta["val"] = t
                rec.bind(t, ph)
                tangents.append(t)
            STATE.grad_enabled = True
            # one tangent per distinct output tensor (an output returned twice gets the
            # sum): the engine takes each output once
            uniq = {}
            for i, t in zip(diff, tangents):
                o, ts = uniq.setdefault(id(flat[i]), (flat[i], []))
                ts.append(t)
            seeds = [ts[0] if len(ts) == 1 else sum(ts[1:], ts[0]) for _, ts in uniq.values()]
            grads = autograd_grad([o for o, _ in uniq.values()], wrt, grad_outputs=seeds,
                                  allow_unused=True)
    finally:
        STATE.grad_enabled = grad_mode
        _random.default_generator.__dict__.update(rng)
    it = iter(grads)
    all_grads = [next(it) if isinstance(p, Tensor) and p.requires_grad else None
                 for p in primals]
    graph.output(tuple(rec.to_arg(tuple(flat))) + tuple(rec.to_arg(tuple(all_grads))))
    for name, t in rec.constants.items():
        if t._fake:
            raise NotImplementedError(
                f"aot_autograd: the joint trace met a fake tensor of shape {list(t.shape)} "
                f"that no recorded op produced ({name}); something made it outside dispatch")
    gm = GraphModule(dict(rec.constants, **_attrs(fn)), graph, "JointGraph")
    return gm, len(flat), diff


def _attrs(fn):
    """get_attr targets the traced GraphModule reads (e.g. a Generator constant)."""
    if isinstance(fn, GraphModule):
        return {n.target: _getattr(fn, n.target) for n in fn.graph.nodes if n.op == "get_attr"}
    return {}


def _getattr(m, target):
    for part in target.split("."):
        m = getattr(m, part)
    return m


# ------------------------------------------------------------------ the autograd node

def _make_compiled_function(fw, bw, num_outs, diff):
    """The Function class running compiled forward `fw` and backward `bw` as one node."""
    diff_set = set(diff)

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx, *primals):
            res = _call(fw, primals)
            outs, saved = res[:num_outs], res[num_outs:]
            tensors = [s for s in saved if isinstance(s, Tensor)]
            ctx.save_for_backward(*tensors)
            ctx._nontensor = [None if isinstance(s, Tensor) else s for s in saved]
            nondiff = [o for i, o in enumerate(outs) if i not in diff_set and
                       isinstance(o, Tensor)]
            if nondiff:
                ctx.mark_non_differentiable(*nondiff)
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grad_outs):
            it = iter(ctx.saved_tensors)
            saved = [next(it) if s is None else s for s in ctx._nontensor]
            tangents = [grad_outs[i] for i in diff]
            if STATE.grad_enabled:
                # create_graph=True: the gradients get a node whose backward refuses
                grads = CompiledFunctionBackward.apply(bw, *saved, *tangents)
            else:
                grads = _call(bw, saved + tangents)
            return tuple(grads)

    return CompiledFunction


class CompiledFunctionBackward(Function):
    """The compiled backward as a node, so that differentiating it raises PyTorch's error."""

    @staticmethod
    def forward(ctx, bw, *args):
        return tuple(_call(bw, args))

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(DOUBLE_BACKWARD_ERROR)


# ------------------------------------------------------------------ aot_module_simplified

def _final_grad_mode(gm):
    """The grad mode the captured graph leaves behind (its last set_grad_enabled), or None."""
    from .._dynamo.output_graph import set_grad_enabled
    mode = None
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is set_grad_enabled:
            mode = n.args[0]
    return mode


def aot_module_simplified(mod, args, fw_compiler, bw_compiler=None,
                          partition_fn=min_cut_rematerialization_partition,
                          decompositions=None, keep_inference_input_mutations=False,
                          inference_compiler=None, **_ignored):
    """Compile a captured GraphModule (dynamo's calling convention: flat inputs, a tuple of
    outputs) with AOT autograd; returns `compiled(*inputs) -> tuple`."""
    bw_compiler = bw_compiler or fw_compiler
    inference_compiler = inference_compiler or fw_compiler
    fg = functionalize_graph(mod)
    vals = [n.meta.get("val") for n in fg.gm.graph.nodes if n.op == "placeholder"]
    final_mode = _final_grad_mode(mod)
    state = {"inference": None, "cache": {}}

    def needs_autograd(inputs):
        return STATE.grad_enabled and any(isinstance(a, Tensor) and a.requires_grad
                                          for a in inputs)

    def inference():
        if state["inference"] is None:
            state["inference"] = inference_compiler(fg.gm, list(vals))
        return state["inference"]

    state["symbolic"] = _has_symbols(vals)

    def training(inputs):
        if state["symbolic"]:
            # one graph for all sizes; Python floats (and static ints) specialize it
            key = ("symbolic",) + tuple(
                a.requires_grad if isinstance(a, Tensor) else
                None if isinstance(v, SymInt) else (type(a), a) for a, v in zip(inputs, vals))
            hit = state["cache"].get(key, _MISSING)
            if hit is _MISSING:
                try:
                    hit = _compile_symbolic(fg.gm, vals, inputs, fw_compiler, bw_compiler,
                                            partition_fn, decompositions)
                except Exception as e:      # noqa: BLE001 (the specialized path is exact)
                    log.debug("aot: symbolic joint trace failed (%s); specializing", e)
                    hit = _MISSING
                if hit is _MISSING:
                    state["symbolic"] = False
                else:
                    state["cache"][key] = hit
            if state["symbolic"]:
                return hit
        key = tuple((tuple(a.shape), a._dtype, a.requires_grad) if isinstance(a, Tensor)
                    else (type(a), a) for a in inputs)
        hit = state["cache"].get(key, _MISSING)
        if hit is _MISSING:
            hit = state["cache"][key] = _compile_training(
                fg.gm, inputs, fw_compiler, bw_compiler, partition_fn, decompositions)
            _evict(state["cache"])
        return hit

    def forward(*inputs):
        inputs = list(inputs)
        if (fg.mutated_inputs and _mutated_input_aliased(inputs, fg.mutated_inputs)) or (
                fg.hidden_mutation_read and needs_autograd(inputs)):
            # a mutated input shares memory with another input (the functional graph
            # would read the other one's old value), or a parameter written under no_grad
            # is read again (its gradient belongs to the parameter itself): the captured
            # graph, run as it is on the caller's tensors, behaves as eager does
            return tuple(mod.forward(*inputs))
        outs = None
        if needs_autograd(inputs):
            plan = training(inputs)
            if plan is not None:
                fn, primal_pos = plan
                outs = list(fn.apply(*[inputs[i] for i in primal_pos]))
        if outs is None:
            outs = list(_call(inference(), inputs))
        _apply_effects(fg, inputs, outs)
        if final_mode is not None:
            STATE.grad_enabled = final_mode
        return tuple(_user_outputs(fg, inputs, outs))

    forward._functionalized = fg
    forward._cache = state["cache"]
    return forward


def _mutated_input_aliased(inputs, mutated):
    storages = {id(inputs[i]._storage) for i in mutated if isinstance(inputs[i], Tensor)}
    hits = 0
    for a in inputs:
        if isinstance(a, Tensor) and id(a._storage) in storages:
            hits += 1
    return hits > len(storages)


def _evict(cache, limit=64):
    """Keep at most `limit` specializations (sizes that never come back are dropped)."""
    while len(cache) > limit:
        cache.pop(next(iter(cache)))


_MISSING = object()


def _has_symbols(vals):
    return any(isinstance(v, SymInt) or (isinstance(v, Tensor) and
                                         any(isinstance(d, SymInt) for d in v.shape))
               for v in vals)


def _compile_symbolic(fgm, vals, inputs, fw_compiler, bw_compiler, partition_fn,
                      decompositions):
    """The joint graph traced once for all sizes: on the capture's symbolic fakes, and
    again with every size symbol's example value one larger. Equal graphs mean no size
    reached an op as a plain number; a difference returns _MISSING (the caller then
    specializes per size)."""
    args = [v if isinstance(v, (Tensor, SymInt)) else a for v, a in zip(vals, inputs)]
    shifted = _shift_sizes(args)
    if shifted is None:
        return _MISSING
    traced = aot_joint_graph(fgm, args, decompositions, symbolic=True)
    other = aot_joint_graph(fgm, shifted, decompositions, symbolic=True)
    if (traced is None) != (other is None):
        return _MISSING
    if traced is None:
        return None
    if graph_signature(traced[0].graph) != graph_signature(other[0].graph):
        log.debug("aot: the joint graph depends on example sizes; specializing")
        return _MISSING
    pos = [i for i, v in enumerate(vals) if isinstance(v, (Tensor, SymInt))]
    return _finish_training(traced, partition_fn, fw_compiler, bw_compiler, pos)


def _shift_sizes(args):
    """args with every size symbol's example value one larger (fresh fakes), or None for
    a layout this cannot shift (a non-contiguous fake)."""
    names = {}
    for a in args:
        for d in (a.shape if isinstance(a, Tensor) else (a,) if isinstance(a, SymInt) else ()):
            if isinstance(d, SymInt):
                for mono in d.node.terms:
                    for atom in mono:
                        if atom in d.env.hints:
                            names[atom] = d.env.hints[atom]
    env = ShapeEnv()
    syms = {k: SymInt(_Poly({(k,): 1}), h + 1, env) for k, h in names.items()}
    env.hints.update({k: h + 1 for k, h in names.items()})

    def size(d):
        return eval(str(d), {}, dict(syms)) if isinstance(d, SymInt) else d  # noqa: S307
    out = []
    for a in args:
        if isinstance(a, Tensor):
            if not a.is_contiguous():
                return None
            f = wrap_meta(tuple(size(d) for d in a.shape), a._dtype, device=a.device, fake=True)
            f._rg = a._rg
            out.append(f)
        else:
            out.append(size(a))
    return out


def _compile_training(fgm, inputs, fw_compiler, bw_compiler, partition_fn, decompositions):
    """Joint trace, partition and compile for one input signature; None when no output
    needs a gradient (the inference graph serves)."""
    traced = aot_joint_graph(fgm, inputs, decompositions)
    if traced is None:
        return None
    pos = [i for i, a in enumerate(inputs) if isinstance(a, Tensor)]
    return _finish_training(traced, partition_fn, fw_compiler, bw_compiler, pos)


def _finish_training(traced, partition_fn, fw_compiler, bw_compiler, primal_pos):
    joint, num_outs, diff = traced
    if _joint_log.isEnabledFor(logging.DEBUG):
        _joint_log.debug("TRACED JOINT GRAPH\n%s", joint.print_readable(print_output=False))
    fw_gm, bw_gm = partition_fn(joint, None, num_fwd_outputs=num_outs)
    if _graphs_log.isEnabledFor(logging.DEBUG):
        _graphs_log.debug("TRACED FORWARD GRAPH\n%s\nTRACED BACKWARD GRAPH\n%s",
                          fw_gm.print_readable(print_output=False),
                          bw_gm.print_readable(print_output=False))
    fw_in = [n.meta["val"] for n in fw_gm.graph.nodes if n.op == "placeholder"]
    bw_in = [n.meta["val"] for n in bw_gm.graph.nodes if n.op == "placeholder"]
    fw = fw_compiler(fw_gm, fw_in)
    bw = bw_compiler(bw_gm, bw_in)
    fn = _make_compiled_function(fw, bw, num_outs, diff)
    fn.fw_module, fn.bw_module, fn.joint_module = fw_gm, bw_gm, joint
    return fn, primal_pos


def _apply_effects(fg, inputs, outs):
    """Copy mutated inputs' new values into the caller's tensors, as eager did in place:
    with autograd when the new value has history, otherwise under no_grad (a parameter
    updated by an optimizer step, a running statistic)."""
    from ..autograd.grad_mode import no_grad
    for i, val in zip(fg.mutated_inputs, outs[fg.num_user_outputs:]):
        dst = inputs[i]
        if isinstance(val, Tensor) and val.requires_grad and STATE.grad_enabled:
            dst.copy_(val)
        else:
            with no_grad():
                dst.copy_(val)


def _user_outputs(fg, inputs, outs):
    res = outs[:fg.num_user_outputs]
    first_base = fg.num_user_outputs + len(fg.mutated_inputs)
    for k, alias in enumerate(fg.output_aliases):
        if alias is None:
            continue
        kind, i, chain = alias
        t = inputs[i] if kind == "input" else outs[first_base + i]
        for op, args in chain:
            t = operator.getitem(t, *args) if op is operator.getitem else op(t, *args)
        res[k] = t
    return res


# ------------------------------------------------------------------ aot_function

def aot_function(fn, fw_compiler, bw_compiler=None,
                 partition_fn=min_cut_rematerialization_partition, decompositions=None,
                 num_params_buffers=0, keep_inference_input_mutations=False,
                 inference_compiler=None, *, dynamic=False, **_ignored):
    """`fn` compiled with AOT autograd: its tensor arguments (positional; nested in
    tuples/lists/dicts too) are the graph's inputs, tensors it reads from elsewhere are
    constants. Traced on first call and again for new input sizes / non-tensor values."""
    cache = {}

    def returned(*args, **kwargs):
        flat, spec = tree_flatten((args, kwargs))
        key = (spec_key(spec), tuple((tuple(a.shape), a._dtype, a.requires_grad)
                                     if isinstance(a, Tensor) else (type(a), _hashable(a))
                                     for a in flat))
        hit = cache.get(key)
        if hit is None:
            tensors = [a for a in flat if isinstance(a, Tensor)]
            out_spec = []

            def flat_fn(*ts):
                it = iter(ts)
                full = [next(it) if isinstance(a, Tensor) else a for a in flat]
                a, kw = tree_unflatten(full, spec)
                out = fn(*a, **kw)
                leaves, ospec = tree_flatten(out)
                out_spec.append(ospec)
                return tuple(leaves)

            gm = make_fx(flat_fn, decompositions, tracing_mode="fake")(*tensors)
            compiled = aot_module_simplified(gm, tensors, fw_compiler, bw_compiler,
                                             partition_fn, None, keep_inference_input_mutations,
                                             inference_compiler)
            hit = cache[key] = (compiled, out_spec[0])
            _evict(cache)
        compiled, ospec = hit
        outs = compiled(*[a for a in flat if isinstance(a, Tensor)])
        return tree_unflatten(list(outs), ospec)

    return returned


def aot_module(mod, *args, **kwargs):
    """`mod` with its forward compiled by aot_function (arguments as aot_function's after
    `fn`): parameters and buffers are graph inputs, so gradients reach them and in-place
    buffer updates (BatchNorm statistics) land in the module's own tensors."""
    from ..func import functional_call
    from ..nn import Module

    def call(params, buffers, args, kwargs):
        return functional_call(mod, {**params, **buffers}, args, kwargs)
    compiled = aot_function(call, *args, **kwargs)

    class AOTModule(Module):
        def __init__(self):
            super().__init__()
            self.orig_module = mod

        def forward(self, *a, **kw):
            return compiled(dict(mod.named_parameters(remove_duplicate=False)),
                            dict(mod.named_buffers(remove_duplicate=False)), a, kw)
    return AOTModule()


def spec_key(spec):
    from .pytree import spec_str
    return spec_str(spec)


def _hashable(a):
    try:
        hash(a)
        return a
    except TypeError:
        return repr(a)
