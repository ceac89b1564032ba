"""Functionalization of a captured graph: in-place and view ops become pure ops.

Why: AOT autograd, the partitioner and code generation reason about values, not memory.
A captured graph writes into its inputs (`copy_` into a parameter, a BatchNorm buffer, a
slice of an input) and reads tensors through views of mutated storage. This pass rewrites
it so that every node computes a fresh value from values:
  - a view op stays a node, but remembers its base and the chain of view ops from the
    storage's root (a placeholder or any non-view node);
  - `copy_(dst, src)` computes dst's new value (cast + broadcast of src), then the root's
    new value by scattering it back through the view chain (slice -> slice_scatter,
    select -> select_scatter, diagonal -> diagonal_scatter, as_strided ->
    as_strided_scatter, view/squeeze -> view to the base's sizes, permute -> inverse
    permute, unsqueeze -> squeeze, split/unbind items -> slice/select_scatter);
  - a later read of a view of mutated storage regenerates the view from the root's new
    value;
  - mutated placeholders' final values are extra outputs after the user's outputs, and
    the caller copies them back (`FunctionalizedGraph.mutated_inputs`).
This is PyTorch's functionalization (torch._subclasses.functional_tensor) done as a
graph pass, since ember's captured graphs hold registry ops only.
"""
import copy
import logging
import operator

from ..fx import Graph, GraphModule, Interpreter
from ..fx.node import Node, map_arg
from ..ops._registry import OpDef, REGISTRY

__all__ = ["functionalize_graph", "FunctionalizedGraph"]

log = logging.getLogger(__name__)


def _op(name):
    return REGISTRY[name]


def _sizes(t):
    """t's sizes as a list (a graph function: works on symbolic sizes too)."""
    return list(t.shape)


def _inverse_perm(dims, ndim):
    """The permutation undoing permute(dims) (a graph function)."""
    inv = [0] * ndim
    for i, d in enumerate(dims):
        inv[d % ndim] = i
    return inv


class FunctionalizedGraph:
    """The pure graph plus what the runtime needs to apply the original's effects.

    gm: outputs are the user outputs, then the final values of mutated placeholders
    (`mutated_inputs`: their indices, in that order), then the bases of outputs that are
    views (`num_base_outputs` of them).
    output_aliases: per user output, None (a graph output), ("input", i, chain) when the
    original returned placeholder i itself (chain == []) or a view of it, or ("base", k,
    chain) when it returned a view of another value, the k-th base output. chain holds the
    view ops as (op, constant args): the runtime rebuilds those views (after copying
    mutations back) on the caller's tensor or on the base, with autograd, so aliasing and
    in-place use of returned views behave as eager. The graph's slot for such an output
    is None.
    """

    def __init__(self, gm, num_user_outputs, mutated_inputs, output_aliases,
                 num_base_outputs=0):
        self.gm = gm
        self.num_user_outputs = num_user_outputs
        self.mutated_inputs = mutated_inputs
        self.output_aliases = output_aliases
        self.num_base_outputs = num_base_outputs
        # a tensor requiring grad was written under no_grad and read again: autograd must
        # keep seeing the original tensor with the new data, which a functional graph
        # cannot say; the runtime then runs the captured graph as it is
        self.hidden_mutation_read = False


class _Storage:
    __slots__ = ("root", "value", "version", "hidden")

    def __init__(self, root, value):
        self.root, self.value, self.version = root, value, 0
        self.hidden = False     # written under no_grad while its root requires grad


class _Functionalizer:
    def __init__(self, gm):
        self.gm = gm
        self.graph = Graph()
        self.env = {}          # old node -> new node (non-tensor values, roots)
        self.alias = {}        # old tensor node -> (storage, chain of (op, old args))
        self.cache = {}        # old view node -> (new node, storage version)
        self.placeholders = []
        self.grad_mode = True       # as the graph starts when autograd matters
        self.hidden_read = False

    # ------------------------------------------------------------------ values
    def value(self, old):
        """The new-graph node holding old's current value (regenerating stale views)."""
        hit = self.alias.get(old)
        if hit is None:
            return self.env[old]
        storage, chain = hit
        if storage.hidden and self.grad_mode:
            self.hidden_read = True
        if not chain:
            return storage.value
        c = self.cache.get(old)
        if c is not None and c[1] == storage.version:
            return c[0]
        node = storage.value
        for op, args in chain:
            node = self._emit_view(op, node, args)
        self.cache[old] = (node, storage.version)
        return node

    def arg(self, a):
        return map_arg(a, self.value)

    def _emit_view(self, op, base, args):
        if op is operator.getitem:
            return self.graph.call_function(operator.getitem, (base,) + tuple(args))
        return self.graph.call_function(op, (base,) + tuple(self.arg(a) for a in args))

    def _copy_meta(self, old, new):
        new.meta.update({k: v for k, v in old.meta.items() if k in ("val", "source")})

    # ------------------------------------------------------------------ the pass
    def run(self):
        out_node = None
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                ph = self.graph.placeholder(n.name)
                self._copy_meta(n, ph)
                self.placeholders.append(n)
                self.env[n] = ph
                if _is_tensor_val(n):
                    self.alias[n] = (_Storage(n, ph), [])
            elif n.op == "get_attr":
                new = self.graph.get_attr(n.target)
                self._copy_meta(n, new)
                self.env[n] = new
                if _is_tensor_val(n):
                    self.alias[n] = (_Storage(n, new), [])
            elif n.op == "output":
                out_node = n
            elif n.op == "call_function":
                self.call(n)
            else:
                raise NotImplementedError(f"functionalize: node op {n.op!r} ({n.name}) is not "
                                          "supported; captured graphs hold call_function nodes")
        return self.finish(out_node)

    def call(self, n):
        t = n.target
        if getattr(t, "__name__", "") == "set_grad_enabled" and n.args and \
                isinstance(n.args[0], bool):
            self.grad_mode = n.args[0]
        if isinstance(t, OpDef) and "inplace" in t.tags:
            if t.name != "copy_":
                raise NotImplementedError(
                    f"functionalize: in-place op '{t.name}' has no functional form here "
                    "(only copy_ is functionalized; registry in-place samplers and ops "
                    "already commit through copy_)")
            return self.copy_(n)
        if isinstance(t, OpDef) and "view" in t.tags and n.args and isinstance(n.args[0], Node) \
                and n.args[0] in self.alias and not n.kwargs:
            storage, chain = self.alias[n.args[0]]
            new = self._emit_view(t, self.value(n.args[0]), n.args[1:])
            self._copy_meta(n, new)
            self.alias[n] = (storage, chain + [(t, tuple(n.args[1:]))])
            self.cache[n] = (new, storage.version)
            return
        if t is operator.getitem and isinstance(n.args[0], Node) and n.args[0] in self.alias:
            storage, chain = self.alias[n.args[0]]      # an item of split/unbind
            new = self.graph.call_function(operator.getitem, (self.value(n.args[0]), n.args[1]))
            self._copy_meta(n, new)
            self.alias[n] = (storage, chain + [(operator.getitem, (n.args[1],))])
            self.cache[n] = (new, storage.version)
            return
        new = self.graph.call_function(t, self.arg(n.args), self.arg(n.kwargs))
        self._copy_meta(n, new)
        self.env[n] = new
        if _is_tensor_val(n):
            self.alias[n] = (_Storage(n, new), [])

    def copy_(self, n):
        dst, src = n.args[0], n.args[1]
        storage, chain = self.alias[dst]
        dval, sval = n.args[0].meta.get("val"), src.meta.get("val") if isinstance(src, Node) \
            else None
        if not isinstance(src, Node):            # a Python number: filled at dst's sizes
            new = self.graph.call_function(_op("full"), (self._size_of(dst), src, dval.dtype))
        else:
            new = self.value(src)
            if sval is None or sval.dtype != dval.dtype:
                new = self.graph.call_function(_op("_to_copy"), (new,), {"dtype": dval.dtype})
        if isinstance(src, Node) and (sval is None or tuple(sval.shape) != tuple(dval.shape)):
            new = self.graph.call_function(_op("expand"), (new, self._size_of(dst)))
        # scatter the new value back through the view chain, innermost view first
        bases = [storage.value]
        for op, args in chain[:-1]:
            bases.append(self._emit_view(op, bases[-1], args))
        for (op, args), base in zip(reversed(chain), reversed(bases)):
            new = self._scatter(op, base, new, args)
        storage.value = new
        storage.version += 1
        root_val = storage.root.meta.get("val")
        if not self.grad_mode and getattr(root_val, "requires_grad", False):
            storage.hidden = True
        self.alias[n] = (storage, chain)           # copy_ returns dst itself

    def _scatter(self, op, base, src, args):
        g = self.graph
        a = tuple(self.arg(x) for x in args)
        name = getattr(op, "name", None)
        if name == "slice":
            return g.call_function(_op("slice_scatter"), (base, src) + a)
        if name == "select":
            return g.call_function(_op("select_scatter"), (base, src) + a)
        if name == "diagonal":
            return g.call_function(_op("diagonal_scatter"), (base, src) + a)
        if name == "as_strided":
            return g.call_function(_op("as_strided_scatter"), (base, src) + a)
        if name in ("view", "squeeze"):
            return g.call_function(_op("view"), (src, self._size_of(base, new=True)))
        if name == "unsqueeze":
            return g.call_function(_op("squeeze"), (src, [a[0]]))
        if name == "permute":
            return g.call_function(_op("permute"), (src, _inverse_perm(a[0], len(a[0]))))
        if name in ("detach", "alias"):
            return src
        if name == "view_as_real":
            return g.call_function(_op("view_as_complex"), (src,))
        if name == "view_as_complex":
            return g.call_function(_op("view_as_real"), (src,))
        if op is operator.getitem:
            parent = base.meta.get("_split")
            raise NotImplementedError(
                f"functionalize: in-place write into an item of a multi-output view "
                f"({parent or 'split/unbind'}) is not supported")
        raise NotImplementedError(
            f"functionalize: in-place write through view op '{name}' has no inverse "
            "(PyTorch refuses writes into expanded/unfolded views too)")

    def _size_of(self, n, new=False):
        """n's sizes: a constant when static, else a `_sizes` node (symbolic sizes)."""
        val = n.meta.get("val")
        if val is not None and all(type(d) is int for d in val.shape):
            return tuple(val.shape)
        return self.graph.call_function(_sizes, (n if new else self.value(n),))

    def finish(self, out_node):
        outs = out_node.args[0]
        flat = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        aliases, new_outs, bases = [], [], {}
        for o in flat:
            alias = self._output_alias(o, bases)
            aliases.append(alias)
            new_outs.append(None if alias is not None else self.arg(o))
        mutated = []
        for i, ph in enumerate(self.placeholders):
            hit = self.alias.get(ph)
            if hit is not None and hit[0].version:
                mutated.append(i)
                new_outs.append(hit[0].value)
        new_outs.extend(storage.value for storage in bases.values())
        self.graph.output(tuple(new_outs))
        gm = GraphModule(self.gm, self.graph, "FunctionalizedGraph")
        _fill_vals(gm)
        _constant_sizes(gm)
        fg = FunctionalizedGraph(gm, len(flat), mutated, aliases, len(bases))
        fg.hidden_mutation_read = self.hidden_read
        return fg

    def _output_alias(self, o, bases):
        if not isinstance(o, Node):
            return None
        hit = self.alias.get(o)
        if hit is None:
            return None
        storage, chain = hit
        flat_args = []
        for _, args in chain:
            map_arg(args, flat_args.append)
        if flat_args:               # a view whose arguments are graph values (sizes)
            return None
        if storage.root.op == "placeholder":
            return ("input", self.placeholders.index(storage.root), list(chain))
        if not chain:
            return None
        bases.setdefault(id(storage), storage)
        return ("base", list(bases).index(id(storage)), list(chain))


class _FillVals(Interpreter):
    def run_node(self, n):
        out = super().run_node(n)
        if n.op != "output" and "val" not in n.meta:
            n.meta["val"] = out
        return out


def _fill_vals(gm):
    """meta["val"] (a fake) for the nodes this pass made, as the captured graph has for
    its own: compilers read shapes and dtypes from it. Runs the graph on the placeholders'
    fakes, restoring the grad mode and the random generator it may touch."""
    vals = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
    if any(v is None for v in vals):
        return
    from .. import _random
    from .._dispatch import STATE
    from .._subclasses.fake_tensor import FakeTensorMode
    rng = copy.deepcopy(_random.default_generator.__dict__)
    grad = STATE.grad_enabled
    try:
        with FakeTensorMode(allow_non_fake_inputs=True):
            _FillVals(gm).run(*vals)
    except Exception as e:      # metadata only: the graph itself is complete
        log.debug("functionalize: no fake values for new nodes (%s)", e)
    finally:
        STATE.grad_enabled = grad
        _random.default_generator.__dict__.update(rng)


def _constant_sizes(gm):
    """`_sizes(t)` nodes of tensors whose sizes are static become constants."""
    changed = False
    for n in list(gm.graph.nodes):
        if n.op != "call_function" or n.target is not _sizes:
            continue
        val = n.args[0].meta.get("val")
        if val is None or not all(type(d) is int for d in val.shape):
            continue
        const = tuple(val.shape)
        for user in list(n.users):
            user.args = tuple(const if a is n else a for a in user.args)
        if not n.users:
            gm.graph.erase_node(n)
            changed = True
    if changed:
        gm.recompile()


def _is_tensor_val(n):
    from .._tensor import Tensor
    return isinstance(n.meta.get("val"), Tensor)


def functionalize_graph(gm):
    """A FunctionalizedGraph for the captured GraphModule `gm` (which is left as it is)."""
    return _Functionalizer(gm).run()
