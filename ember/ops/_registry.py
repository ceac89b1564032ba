"""The op registry: every operator is one `OpDef`, declared once.

Note: an OpDef holds everything a feature needs to know about an op:
  name, kernels[backend] (arrays in, arrays out), meta (shapes/dtypes, and the
  place for PyTorch-style argument checks), vjp (backward in ember ops), decomp
  (composites only), tags, amp_policy, and which arguments autograd must save.
`args` is always the op's full positional argument tuple, in PyTorch's order;
tensors may also sit inside a list argument (cat, stack).

Eager execution runs the kernel first; only when NumPy rejects the input do we run
the meta function, which raises PyTorch's exception with the op's name. A kernel
whose NumPy call would silently accept bad input checks it itself (or sets
`check=True` so that the meta runs first).
"""
from functools import cached_property

import numpy as np

from .. import _dtype as D
from .._dispatch import STATE
from .._determinism import MODE as DETERMINISM, check_op as check_deterministic
from .._tensor import Tensor, wrap, wrap_view, wrap_meta
from . import _meta_layout as _layout

REGISTRY = {}
_ndarray = np.ndarray

# The tag vocabulary (DESIGN §4). Features select ops by tag, never by private lists.
TAGS = {
    "pointwise": "elementwise over broadcast inputs; output shape is the broadcast shape",
    "reduction": "reduces over dims (sum, max, var, argmax, all, ...)",
    "view": "output aliases the input's storage (a NumPy view)",
    "factory": "makes a tensor from sizes/values, with no tensor input",
    "random": "draws from the random generator",
    "inplace": "writes into its first argument",
    "gather": "reads elements selected by an index tensor",
    "scatter": "writes elements at positions given by indices or a region",
    "linalg": "the matrix product family (matmul, mm, bmm, mv, dot)",
    "fft": "a discrete Fourier transform primitive (pocketfft kernels)",
    "shape": "copies while rearranging shape (cat, stack, reshape's copy)",
    "copy": "copies its input (clone, casts, contiguous, copy_)",
    "dynamic_output_shape": "output shape depends on the input's values (no shape meta)",
    "nondeterministic": "accumulates by index: PyTorch's use_deterministic_algorithms list",
    "composite": "has a decomposition into primitive ops (`decomp`)",
    "prim": "a primitive: no decomposition; compilers lower it (ember/_prims.py lists the set)",
}
# autocast policies, as PyTorch's AutocastCPU kernels: lower_precision casts floating
# inputs to the autocast dtype, fp32 to float32, promote to their widest type.
AMP_POLICIES = ("lower_precision", "fp32", "promote", "none")


class OpName(str):
    """An op's registry name: a str (what existing code compares and prints), and
    callable like PyTorch's `OpOverload.name()`: "aten::add.Tensor"
    ("quantized_decomposed::quantize_per_tensor" for an op in another namespace)."""

    def __call__(self):
        op = getattr(self, "_op", None)
        if op is None or op._schema_text is None:
            return "aten::" + self
        s = op._schema
        return op.namespace + "::" + s.name + ("." + s.overload_name if s.overload_name else "")


class OpOverloadPacket:
    """All registry ops whose schema has one base name (`aten.max`): its overloads
    are attributes (`.default`, `.dim`), as PyTorch's `OpOverloadPacket`."""

    _capture_static_attrs = True    # overloads never change: capture resolves them

    def __init__(self, name, overloads, namespace="aten"):
        self.__name__ = name
        self.namespace = namespace
        self._qualified_op_name = namespace + "::" + name
        self._overloads = dict(overloads)
        for k, op in overloads.items():
            setattr(self, k, op)

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")

    def __call__(self, /, *args, **kwargs):
        """aten.max(x) or aten.max(x, 0): the first overload (default first) whose schema
        binds the arguments; ember's ops take Tensors and numbers alike, so arity and
        keywords decide."""
        ops = sorted(self._overloads.items(), key=lambda kv: kv[0] != "default")
        errors = []
        for _, op in ops:
            if op._schema_text is None:
                return op(*args, **kwargs)
            try:
                bound = op._schema.bind(self.__name__, args, kwargs)
            except TypeError as e:
                errors.append(f"  {op._schema}: {e}")
                continue
            return op(*bound)
        raise TypeError(f"{self}: no overload matches the arguments:\n"
                        + "\n".join(errors))

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self):
        return f"{self.namespace}.{self.__name__}"


_PACKETS = {}    # (namespace, schema base name) -> OpOverloadPacket; rebuilt as the registry grows
_PACKETS_FOR = [0]


def _packet(name, namespace="aten"):
    if _PACKETS_FOR[0] != len(REGISTRY):
        _PACKETS.clear()
        _PACKETS_FOR[0] = len(REGISTRY)
        groups = {}
        for op in REGISTRY.values():
            base, ov = (op._schema.name, op._schema.overload_name or "default") \
                if op._schema_text is not None else (str(op.name), "default")
            groups.setdefault((op.namespace, base), {})[ov] = op
        for (ns, base), ovs in groups.items():
            _PACKETS[ns, base] = OpOverloadPacket(base, ovs, ns)
    return _PACKETS[namespace, name]


def namespace_getattr(namespace):
    """A PEP 562 module `__getattr__` for an op namespace module (`ember.ops.onednn`,
    `ember.ops.quantized_decomposed`): `module.<name>` is that op's overload packet."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return _packet(name, namespace)
        except KeyError:
            raise AttributeError(
                f"'_OpNamespace' '{namespace}' object has no attribute '{name}'") from None
    return __getattr__


class OpDef:
    def __init__(self, name, kernel=None, *, meta=None, vjp=None, decomp=None, tags=(),
                 amp_policy="none", save=None, save_out=False, check=False, view=False,
                 nondiff_outputs=(), differentiable=True, schema=None, namespace="aten"):
        self.name = OpName(name)
        self.namespace = namespace    # the torch.ops namespace: "aten", "quantized_decomposed"
        self.name._op = self
        self._schema_text = schema    # PyTorch's schema syntax, parsed on first use
        self.kernels = {}
        if kernel is not None:
            self.kernels["cpu"] = kernel
        self.meta = meta
        self.vjp = vjp
        self.decomp = decomp
        self.tags = _check_tags(name, tags, view, decomp)
        if amp_policy not in AMP_POLICIES:
            raise ValueError(f"op '{name}': amp_policy must be one of {AMP_POLICIES}, not "
                             f"{amp_policy!r}")
        self.amp_policy = amp_policy
        self.save = save              # arg indices to keep for backward; None = all tensors
        self.save_out = save_out      # vjp reads ctx.out
        self.check = check            # run meta before the kernel (for argument checks)
        self.view = view
        self.nondiff_outputs = frozenset(nondiff_outputs)
        self.differentiable = differentiable and vjp is not False
        # only `nondeterministic` ops read the determinism flag (ember/_determinism.py)
        self.nondeterministic = "nondeterministic" in self.tags
        self.execute = self._execute_checked if self.nondeterministic else self._execute

    # in-place variants: does the gradient w.r.t. input 0 read input 0? (see inplace())
    self_grad_uses_self = True
    # autograd's per-op caches, filled by graph.record / record_binary on first use
    _node_cls = None         # the op's OpNode subclass (AddBackward0, ...)
    _nosave_args = None      # (extra, [None, None, *extra], needs table) for ops saving nothing
    # fake outputs' strides (_meta_layout.py): None picks by tag; "contiguous", "k"
    # (the inputs' order='K' layout) or "probe" (the kernel on tiny stand-ins) override
    meta_layout = None

    def __repr__(self):
        return f"ember.ops.{self.name}"

    def __call__(self, /, *args, **kwargs):
        if kwargs or len(args) != self._nparams:
            args = self._bind(args, kwargs)
        from .._dispatch import dispatch
        return dispatch(self, args)

    def _bind(self, args, kwargs):
        """op(x, other=y, alpha=2): keywords go to their place in the positional tuple,
        omitted arguments take their schema defaults."""
        if self._schema_text is None:
            if not kwargs:
                return args
            raise TypeError(f"{self.name}(): this op declares no schema, so it takes "
                            "positional arguments only")
        return self._schema.bind(self._schema.name, args, kwargs)

    @cached_property
    def _nparams(self):
        """How many arguments the schema declares (a shorter call fills in defaults)."""
        return -1 if self._schema_text is None else len(self._schema.arguments)

    @property
    def _schema(self):
        """The parsed FunctionSchema (parsed once, on first use; never on dispatch)."""
        s = self.__dict__.get("_parsed_schema")
        if s is None:
            if self._schema_text is None:
                raise NotImplementedError(f"op '{self.name}' declares no schema")
            from ._schema import parse_schema
            s = self._parsed_schema = parse_schema(self._schema_text)
        return s

    def overload_name(self):
        return self.name

    # PyTorch's OpOverload surface, for dispatch modes written against it. __name__
    # stays the registry name: __torch_function__ handlers receive the same object and
    # compare it with PyTorch's public function names ("add", "mul").
    @property
    def __name__(self):
        return str(self.name)

    @property
    def _overloadname(self):
        return self._schema.overload_name or "default"

    @property
    def _opname(self):
        return self._schema.name

    @property
    def overloadpacket(self):
        return _packet(self._schema.name if self._schema_text is not None else str(self.name),
                       self.namespace)

    @property
    def default(self):
        """The packet's default overload (`op.default` reads as `aten.op.default`)."""
        return self.overloadpacket.default

    # -- eager execution ----------------------------------------------------
    def _execute(self, args):
        out = self.run_kernel(args)
        if STATE.grad_enabled and self.vjp is not None and _needs_grad(args):
            _record(self, args, out)
        return out

    def _execute_checked(self, args):
        if DETERMINISM.enabled:
            check_deterministic(self, args)
        return self._execute(args)

    def run_kernel(self, args):
        backend = "cpu"
        uargs = []
        first = None
        for a in args:
            if isinstance(a, Tensor):
                if first is None:
                    first = a
                    backend = a._backend
                elif a._backend != "cpu" and a._backend in ANY_POSITION:
                    backend = a._backend    # e.g. a 2:4 sparse weight in linear(x, w)
                uargs.append(a._data)
            elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
                if first is None:
                    first = a[0]
                    backend = first._backend
                uargs.append([x._data if isinstance(x, Tensor) else x for x in a])
            else:
                uargs.append(a)
        if backend != "cpu":
            return _backend_kernel(self, backend, args)
        if self.check and self.meta is not None:
            self.meta(*args)
        try:
            res = self.kernels["cpu"](*uargs)
        except (ValueError, IndexError, TypeError, np.exceptions.AxisError) as e:
            if self.meta is not None:
                self.meta(*args)    # raises PyTorch's error if the input is bad
            # an argument of the wrong Python type stays a TypeError, as in PyTorch
            raise (TypeError if isinstance(e, TypeError) else RuntimeError)(
                f"{self.name}: {e}") from e
        if res.__class__ is _ndarray and not self.view:     # one fresh output: the common case
            return wrap(res)
        return self.wrap_outputs(res, first)

    def wrap_outputs(self, res, first):
        if self.view:
            if isinstance(res, (list, tuple)):
                outs = tuple(wrap_view(r, first) for r in res)
                for o in outs:
                    o._multi_view = True
                return outs
            return wrap_view(res, first)
        if isinstance(res, tuple):
            return tuple(wrap(r) for r in res)
        return wrap(res)


def _check_tags(name, tags, view, decomp):
    """The op's tags: `view`/`composite` follow from view=/decomp=; unknown tags are refused."""
    if isinstance(tags, str):
        raise TypeError(f"op '{name}': tags must be a sequence of tag names, not a str")
    tags = frozenset(tags) | ({"view"} if view else frozenset()) | \
        ({"composite"} if decomp is not None else frozenset())
    unknown = sorted(tags - TAGS.keys())
    if unknown:
        raise ValueError(f"op '{name}': unknown tags {unknown}; known tags: {sorted(TAGS)}")
    if "composite" in tags and decomp is None:
        raise ValueError(f"op '{name}': tag 'composite' needs a decomp=")
    return tags


def _record(op, args, out):
    global _record
    from ..autograd.graph import record
    _record = record
    record(op, args, out)


def _needs_grad(args):
    for a in args:
        if isinstance(a, Tensor):
            if a._rg:
                return True
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor) and x._rg:
                    return True
    return False


def _backend_kernel(op, backend, args):
    k = op.kernels.get(backend)
    if k is None:
        k = BACKENDS.get(backend)
        if k is None:
            raise NotImplementedError(f"{backend}: no kernel for op '{op.name}'")
        return k(op, args)
    return k(*args)


BACKENDS = {}     # backend name -> fallback runner(op, args), e.g. 'meta'
# backends that take the call from any tensor position, not only the first (PyTorch picks
# the highest dispatch key of all inputs): dense @ sparse-semi-structured
ANY_POSITION = set()


def run_meta(op, args, like=None):
    """Run `op` without data: outputs are meta tensors of the right shape, dtype,
    device and strides.

    Note: the op's meta runs first, so bad arguments raise PyTorch's errors; its
    `(shape, dtype)` (or a tuple of them) gives the outputs, and their strides are
    the ones ember's real kernel would produce (`_meta_layout.py`: NumPy's order='K'
    for pointwise ops, C-contiguous for the rest). View ops run their kernel on a
    probe with the input's strides over untouched zero pages, so views get the
    strides and storage offset of the real view. An op without a meta raises: a
    kernel run on zeros would give silently wrong shapes. Ops whose output shape
    depends on the data (tag `dynamic_output_shape`) raise too.
    `like` (a meta tensor) gives the outputs' device and fake flag when no input has.
    """
    tensors = tensor_args(args)
    for t in tensors:
        if t._backend == "meta":
            like = t
            break
    if "dynamic_output_shape" in op.tags:
        raise RuntimeError(f"{op.name}: the output shape depends on the data, which meta and "
                           "fake tensors do not have")
    if op.meta is None:
        raise NotImplementedError(f"fake: no meta for op '{op.name}'")
    m = op.meta(*args)
    if op.view:
        outs = _run_view_meta(op, args, tensors)
        if any(t._sym_shape is not None for t in tensors):    # sizes: the meta's symbols
            shapes = _meta_outputs(m)
            for t, (s, _) in zip(outs if isinstance(outs, tuple) else (outs,), shapes or ()):
                if tuple(int(n) for n in s) == t._data.shape and \
                        any(type(n) is not int for n in s):
                    t._sym_shape = tuple(s)
        return outs
    outs = _meta_outputs(m)
    if outs is None:
        raise TypeError(f"{op.name}: its meta returned {m!r}, not (shape, dtype) or a "
                        "tuple of them")
    res = []
    for s, d in outs:
        t = wrap_meta(s, d, like)
        res.append(t)
    for i, t in enumerate(res):
        t._mstrides = _layout.output_strides(op, args, i, tuple(t._data.shape), tensors)
    return res[0] if len(res) == 1 and not isinstance(outs, list) else tuple(res)


def _run_view_meta(op, args, tensors):
    """A view op on meta inputs: its kernel on a probe of the input's geometry."""
    src = tensors[0]
    probe, base = _layout.view_probe(src)
    uargs = [probe if a is src else a._data if isinstance(a, Tensor) else a for a in args]
    res = op.kernels["cpu"](*uargs)
    outs = op.wrap_outputs(res, src)
    for t in outs if isinstance(outs, tuple) else (outs,):
        arr = t._data
        t._mstrides, t._moffset = _layout.probe_geometry(arr, base)
        t._data = np.broadcast_to(np.zeros((), arr.dtype), arr.shape)
    return outs


def _meta_outputs(m):
    """[(shape, dtype)] from a meta function's result (a tuple for multi-output
    ops, possibly empty), or None when it returned nothing usable."""
    if _is_shape_dtype(m):
        return ((tuple(m[0]), m[1]),)
    if isinstance(m, (tuple, list)) and all(_is_shape_dtype(x) for x in m):
        return [(tuple(s), d) for s, d in m]
    return None


def _is_shape_dtype(m):
    return (isinstance(m, (tuple, list)) and len(m) == 2 and isinstance(m[1], D.dtype)
            and isinstance(m[0], (tuple, list))
            and all(isinstance(s, (int, np.integer)) for s in m[0]))


BACKENDS["meta"] = run_meta


def register(name, kernel=None, **kw):
    if name in REGISTRY:
        raise RuntimeError(f"op '{name}' registered twice")
    op = OpDef(name, kernel, **kw)
    REGISTRY[name] = op
    return op


def get(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise NotImplementedError(f"ember: no op named '{name}' in the registry") from None


def export(names, *fns):
    """Lists an op family's public functions in its `__all__` (`names`), which
    `import ember` star-imports: each becomes `ember.<fn.__name__>`."""
    names.extend(f.__name__ for f in fns)


# ---------------------------------------------------------------------------
# argument helpers shared by the op families

def tensor_args(args):
    """The tensors among args, flattening list arguments (the order vjps use)."""
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, Tensor))
    return out


def np_dtype(d):
    return None if d is None else d.np


_PY_DTYPES = {float: "float64", int: "int64", bool: "bool", complex: "complex128"}


def check_dtype_arg(d, opname):
    """dtype= as PyTorch's parser takes it: an ember dtype or a Python number type."""
    if isinstance(d, type) and d in _PY_DTYPES:
        return getattr(D, _PY_DTYPES[d])
    if d is not None and not isinstance(d, D.dtype):
        raise TypeError(f"{opname}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")
    return d
