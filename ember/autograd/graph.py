"""The autograd graph: Nodes, saved tensors with version snapshots, leaf accumulators.

Note: an OpNode is recorded by `record` when an op runs with grad mode on and an
input requires grad. It keeps only the arguments its op asked to save (`op.save`),
the version of each saved tensor, and each tensor input's shape and dtype (so the
engine can sum a broadcast gradient back and cast it to the input's dtype, as
PyTorch's engine does). A saved output is kept as a detached alias; unpacking it
re-attaches this node as its grad_fn, which is what double backward needs.
"""
import itertools
import os
import traceback
import weakref

from .._dispatch import STATE
from .._tensor import Tensor, _alias


class Node:
    """A backward function. `next_functions[i]` is where input i's gradient goes."""
    _anomaly_trace = None
    next_functions = ()
    _pre_hooks = None        # output_nr -> [hook(grad) -> grad|None]
    _hooks = None            # [hook(grad_inputs, grad_outputs)]
    _node_prehooks = None    # [hook(grad_outputs)]
    _retain_hooks = None     # output_nr -> retain_grad hook (runs after the tensor hooks)
    _any_hooks = False       # set with any of the four above: the engine reads one flag
    _metadata = None
    _input_meta = None       # (shapes, dtypes) of the inputs, to validate returned grads
    _skip_undefined = True   # all incoming grads None -> outputs None, without running
    _user_grads = False      # grads come from user code: copy before storing in .grad

    def __init__(self):
        # a C-level counter: bumping a class attribute would flush CPython's type cache
        self._sequence_nr = next(_SEQ)
        if _ANOMALY.enabled:
            self._anomaly_trace = _forward_trace()

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    num_outputs = 1

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def __call__(self, *grads):
        return self.apply(list(grads))

    def apply(self, grads):
        raise NotImplementedError

    def release(self):
        pass

    def _sequence(self):
        return self._sequence_nr

    def register_hook(self, fn):
        from .._tensor import _RemovableHandle
        if self._hooks is None:
            self._hooks = []
        self._any_hooks = True
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        from .._tensor import _RemovableHandle
        if self._node_prehooks is None:
            self._node_prehooks = []
        self._any_hooks = True
        self._node_prehooks.append(fn)
        return _RemovableHandle(self._node_prehooks, fn)

    def _add_tensor_prehook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._any_hooks = True
        self._pre_hooks.setdefault(output_nr, []).append(fn)
        return _RemovableHandleList(self._pre_hooks[output_nr], fn)


_SEQ = itertools.count(1)
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _forward_trace():
    """The user's stack at node creation, without ember's own frames at the end."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PKG):
        frames.pop()
    return "".join(traceback.format_list(frames))


def retain_grad(t):
    """Keep a non-leaf's gradient in `.grad`; the hook runs after the tensor's other hooks."""
    if not t._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None or t._retains_grad:
        return
    t._retains_grad = True
    ref = weakref.ref(t)

    def _retain(g):
        v = ref()
        if v is not None:
            v.grad = g.clone() if v.grad is None else v.grad + g
    fn = t._grad_fn
    if fn._retain_hooks is None:
        fn._retain_hooks = {}
    fn._any_hooks = True
    fn._retain_hooks[t._output_nr] = _retain


class _RemovableHandleList:
    def __init__(self, lst, fn):
        self.lst, self.fn = lst, fn

    def remove(self):
        if self.fn in self.lst:
            self.lst.remove(self.fn)


class _Anomaly:
    def __init__(self):
        # instance attributes: record reads `enabled` per op, and on CPython 3.11 a read
        # that misses the instance and finds a class attribute costs ~35 ns more
        self.enabled = False
        self.check_nan = True


_ANOMALY = _Anomaly()

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


class SavedTensor:
    """A saved tensor plus its version at save time (checked at unpack)."""
    __slots__ = ("t", "version", "is_output", "src")

    def __init__(self, t, is_output=False, src=None):
        if t._inference:
            raise RuntimeError(_INFERENCE_SAVED)
        self.t = t
        self.version = t._storage.version
        self.is_output = is_output
        self.src = src      # for outputs: a weakref to the output itself (saved_output)

    def unpack(self, node, output_nr=0):
        t = self.t
        if t._storage.version != self.version:
            raise RuntimeError(_modified_msg(t, self.version, node if self.is_output else
                                             t._grad_fn, output_nr if self.is_output else
                                             t._output_nr))
        if self.is_output:
            if STATE.modes:
                src = self.src() if self.src is not None else None
                o = _alias_op(src if src is not None and src._data.shape == t._data.shape
                              and src._data.strides == t._data.strides else t)
            else:
                o = _alias(t, t._data)
            o._grad_fn, o._output_nr, o._rg = node, output_nr, True
            return o
        return t


def saved_output(o):
    """SavedTensor for an op's output: a plain alias (no reference cycle through the
    node) plus a weakref to the output, so that under a mode the unpacked value is the
    `alias` registry op applied to a tensor a recording has seen."""
    return SavedTensor(_alias(o, o._data), True, _wref(o))


_wref = weakref.ref


def _alias_op(t):
    """alias(t) through dispatch, recording no history (the node's is attached after)."""
    from ..overrides import ALIAS
    prev, STATE.grad_enabled = STATE.grad_enabled, False
    try:
        return ALIAS(t)
    finally:
        STATE.grad_enabled = prev


class _FreedSaved(SavedTensor):
    """Stands in for a saved tensor after backward released it."""
    __slots__ = ()

    def __init__(self):
        pass

    def unpack(self, node, output_nr=0):
        raise RuntimeError(_FREED)


FREED = _FreedSaved()

_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead "
    "of `torch.inference_mode()`.")

def _modified_msg(t, version, fn, output_nr):
    which = f", which is output {output_nr} of {forward_name(fn)}," if fn is not None else ""
    hint = ("Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!" if _ANOMALY.enabled else
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True).")
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{_type_str(t)} {list(t.shape)}]{which} is at version "
            f"{t._storage.version}; expected version {version} instead. {hint}")


def forward_name(node):
    """'MulBackward0' -> 'Mul': how torch names a node in in-place error messages."""
    n = node.name().rsplit("::", 1)[-1]
    i = n.rfind("Backward")
    return n[:i] if i > 0 else n


def _type_str(t):
    return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
            "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor",
            "int64": "torch.LongTensor", "int32": "torch.IntTensor",
            "bool": "torch.BoolTensor", "complex64": "torch.ComplexFloatTensor",
            "complex128": "torch.ComplexDoubleTensor"}.get(t.dtype.name, str(t.dtype))


_NO_EDGE = (None, 0)


def _release(saved):
    if isinstance(saved, SavedTensor):
        return FREED
    if isinstance(saved, list):
        return [FREED if isinstance(x, SavedTensor) else x for x in saved]
    return saved


class OpNode(Node):
    """Backward of a registry op: calls op.vjp(ctx, *grads) with the node as its ctx.

    Note: the node is its own ctx (one object per recorded op): the vjp reads
    `ctx.args` (the saved arguments, unpacked), `ctx.out` (saved outputs),
    `ctx.needs_input_grad`, `ctx.shapes` and `ctx.dtypes` from the node's fields. There
    is no __init__: `record` / `record_binary` build nodes with object.__new__ and set
    the fields inline, because this runs for every op that records history."""
    _args = needs_input_grad = shapes = dtypes = None
    _out = ()                # nothing saved of the outputs (save_out ops set SavedTensors)
    out_meta = ()            # multi-output nodes: [(shape, dtype)] per output, to give a
                             # missing output gradient as zeros (one output: a None grad
                             # means all are None and the node is skipped)

    @property
    def ctx(self):
        return self

    @property
    def node(self):
        return self

    def name(self):
        return _node_name(self.op.name)

    @property
    def args(self):
        if self._args is None:
            raise RuntimeError(_FREED)
        return [a.unpack(self) if isinstance(a, SavedTensor) else
                ([x.unpack(self) if isinstance(x, SavedTensor) else x for x in a]
                 if isinstance(a, list) else a)
                for a in self._args]

    @property
    def out(self):
        out = self._out
        if out is None:
            raise RuntimeError(_FREED)
        if isinstance(out, tuple):
            return tuple(None if s is None else s.unpack(self, i) for i, s in enumerate(out))
        return out.unpack(self)

    @property
    def _input_meta(self):
        return self.shapes, self.dtypes

    def apply(self, grads):
        if self.num_outputs == 1:
            if grads[0] is None:        # no gradient in means none out
                return [None] * len(self.next_functions)
        elif any(g is None for g in grads):
            grads = [g if g is not None else _materialize(self, i) for i, g in enumerate(grads)]
        res = self.op.vjp(self, *grads)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        return _flatten_grads(res, self.needs_input_grad)

    def release(self):
        """Free the saved tensors (not the other arguments): a node that saved none can
        run again, as in torch. An argument list with nothing saved (it may be shared
        per op, see record_binary) is kept as it is."""
        args = self._args
        if args is not None:
            for a in args:
                if a.__class__ is SavedTensor or a.__class__ is list:
                    self._args = [_release(a) for a in args]
                    break
        out = self._out
        if out.__class__ is SavedTensor:
            self._out = FREED
        elif out.__class__ is tuple and out:
            self._out = tuple(_release(o) for o in out)

    @property
    def _saved_tensors(self):
        return tuple(a.t for a in (self._args or ()) if isinstance(a, SavedTensor)
                     and a is not FREED)


def _flatten_grads(res, needs):
    flat = []
    for r, n in zip(res, needs):
        if isinstance(n, tuple):
            r = r if r is not None else (None,) * len(n)
            flat.extend(g if need else None for g, need in zip(r, n))
        elif n is not None:
            flat.append(r if n else None)
    return flat


_NAMES = {}
_NODE_CLASSES = {}


def _node_class(opname):
    """One OpNode subclass per op, named like torch's (type(y.grad_fn).__name__)."""
    cls = _NODE_CLASSES.get(opname)
    if cls is None:
        cls = _NODE_CLASSES[opname] = type(_node_name(opname), (OpNode,), {})
    return cls


def _node_name(opname):
    n = _NAMES.get(opname)
    if n is None:
        base = opname.rstrip("_")
        n = "".join(p[:1].upper() + p[1:] for p in base.split("_")) + "Backward0"
        _NAMES[opname] = n
    return n


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into `.grad`.

    Note: the leaf holds its accumulator strongly and the accumulator holds the
    leaf weakly (no reference cycle), so a leaf gets one accumulator for life.
    """

    def __init__(self, variable):
        super().__init__()
        # PyTorch's AccumulateGrad has the highest priority (sequence_nr UINT64_MAX): a
        # leaf's gradient is stored, and its hooks (DDP's bucket all-reduce) run, as soon
        # as it is ready, not after the rest of backward
        self._sequence_nr = (1 << 64) - 1
        self._variable = weakref.ref(variable)

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads):
        return []


def gradient_edge(t):
    fn = t._grad_fn
    if fn is not None:
        if t._base is not None and t._view_version != t._storage.version:
            from ..ops.copy import regenerate_view
            fn = regenerate_view(t)
        return (fn, t._output_nr)
    acc = t._accum
    if acc is None:
        acc = t._accum = AccumulateGrad(t)
    return (acc, 0)


def record(op, args, out):
    """Attach an OpNode for `op` to its outputs (called by OpDef.execute): edges to the
    inputs' nodes, the arguments the vjp reads (`op.save`), the inputs' shapes and dtypes
    (the engine sums a broadcast gradient back and casts it, as PyTorch's engine does)."""
    cls = op._node_cls
    if cls is None:
        cls = op._node_cls = _node_class(op.name)
    node = _new(cls)                        # Node.__init__, inlined: this is hot
    node._sequence_nr = _next(_SEQ)
    if _ANOMALY.enabled:
        node._anomaly_trace = _forward_trace()
    node.op = op
    edges = []
    needs = []
    shapes = []
    dtypes = []
    saved = []
    save = op.save
    i = 0
    for a in args:
        if isinstance(a, Tensor):
            rg = a._rg
            if rg:
                fn = a._grad_fn
                if fn is None:
                    e = a._accum
                    edges.append((e, 0) if e is not None else gradient_edge(a))
                else:
                    edges.append(gradient_edge(a) if a._base is not None else
                                 (fn, a._output_nr))
            else:
                edges.append(_NO_EDGE)
            needs.append(rg)
            shapes.append(a._data.shape)
            dtypes.append(a._dtype)
            saved.append(SavedTensor(a) if save is None or (save and i in save) else None)
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            n = []
            for x in a:
                edges.append(gradient_edge(x) if x._rg else _NO_EDGE)
                n.append(x._rg)
                shapes.append(x._data.shape)
                dtypes.append(x._dtype)
            needs.append(tuple(n))
            saved.append([SavedTensor(x) for x in a] if save is None or i in save else None)
        else:
            needs.append(None)
            saved.append(a)
        i += 1
    node.next_functions = tuple(edges)
    node._args = saved
    node.needs_input_grad = tuple(needs)
    node.shapes = shapes
    node.dtypes = dtypes
    nondiff = op.nondiff_outputs
    if out.__class__ is not tuple:
        if op.save_out:
            node._out = saved_output(out)
        if out._dtype._kind >= 2 and not (nondiff and 0 in nondiff):
            _attach(out, node, 0)
        return node
    node.num_outputs = len(out)
    if op.save_out:
        node._out = tuple(saved_output(o) for o in out)
    meta = []
    for i, o in enumerate(out):
        d = o._dtype
        meta.append((o._data.shape, d))
        if d._kind >= 2 and not (nondiff and i in nondiff):
            _attach(o, node, i)
    node.out_meta = meta
    return node


def _attach(o, node, i):
    """Output `i` of `node`: it requires grad, and a view notes its storage's version."""
    o._grad_fn = node
    o._output_nr = i
    o._rg = True
    if o._base is not None:
        o._view_version = o._storage.version


def zeros_like_meta(shape, dtype):
    from ..ops.creation import zeros
    return zeros(shape, dtype=dtype)


def _materialize(node, i):
    shape, dtype = node.out_meta[i]
    return zeros_like_meta(shape, dtype)


def record_binary(op, a, b, extra, out):
    """`record` for the pointwise fast path: two tensors of one dtype, one output.

    Note: this runs for every binary op on a tensor that requires grad, so it is
    `record` unrolled: the node is its own ctx (OpNode), built without an
    __init__ frame, leaf edges are read inline, and the node class and, for ops that
    save nothing, the argument list and needs_input_grad tuples are cached per op
    (OpDef._node_cls, OpDef._nosave_args)."""
    cls = op._node_cls
    if cls is None:
        cls = op._node_cls = _node_class(op.name)
    node = _new(cls)
    node._sequence_nr = _next(_SEQ)
    if _ANOMALY.enabled:
        node._anomaly_trace = _forward_trace()
    node.op = op
    ga = a._rg
    gb = b._rg
    if ga:
        fn = a._grad_fn
        if fn is None:
            ea = a._accum
            ea = (ea, 0) if ea is not None else gradient_edge(a)
        else:
            ea = gradient_edge(a) if a._base is not None else (fn, a._output_nr)
    else:
        ea = _NO_EDGE
    if gb:
        fn = b._grad_fn
        if fn is None:
            eb = b._accum
            eb = (eb, 0) if eb is not None else gradient_edge(b)
        else:
            eb = gradient_edge(b) if b._base is not None else (fn, b._output_nr)
    else:
        eb = _NO_EDGE
    node.next_functions = (ea, eb)
    save = op.save
    if save is not None and not save:   # nothing saved: shared per op (release copies)
        c = op._nosave_args
        if c is None or c[0] is not extra:
            n = len(extra)
            c = op._nosave_args = (extra, [None, None, *extra],
                                   [[(x, y) + (None,) * n for y in (False, True)]
                                    for x in (False, True)])
        node._args = c[1]
        node.needs_input_grad = c[2][ga][gb]
    else:
        node._args = [SavedTensor(a) if save is None or 0 in save else None,
                      SavedTensor(b) if save is None or 1 in save else None, *extra]
        node.needs_input_grad = (ga, gb) + (None,) * len(extra)
    node.shapes = (a._data.shape, b._data.shape)
    d = out._dtype
    node.dtypes = (a._dtype, b._dtype)
    if op.save_out:
        node._out = saved_output(out)
    # no out_meta: with one output, a None grad means all are None and the node is skipped
    if d._kind >= 2:
        out._grad_fn = node
        out._rg = True
    return node


_new = object.__new__
_next = next
