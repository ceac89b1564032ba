"""compile_fx_inner: a pure prim graph -> a callable running generated C + extern calls.

Why this shape (torch._inductor.compile_fx's names): the "inductor" backend hands each
forward/backward graph here. Decomposition turns composites into prims, the scheduler
lowers and fuses them, codegen writes one C file, the disk cache builds or loads it, and
the runtime below runs the steps: ctypes calls into the groups, eager kernels for extern
nodes. No C compiler -> one warning and the graph runs op by op on the eager kernels.
"""
import ctypes
import logging
import warnings

import numpy as np

from .._logging import getArtifactLogger
from .._symbolic import SymInt
from .._tensor import Tensor, wrap
from . import codecache, config, cpp_builder
from .codegen_c import prelude
from .decompose import decompose_graph
from .ir import Buffer, Scalar
from .scheduler import GroupStep, Runtime, Scheduler

__all__ = ["compile_fx_inner", "CompiledGraph"]

log = logging.getLogger(__name__)
output_code_log = getArtifactLogger(__name__, "output_code")
_warned = set()
_THREADS = [None]     # the OpenMP thread count last set (libgomp's setting is per process)


def _warn_once(key, msg):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def compile_fx_inner(gm, example_inputs, **kwargs):
    """Compile `gm` (an ember.fx.GraphModule of registry ops) to a callable returning a
    tuple, as the graph's forward does."""
    pgm = decompose_graph(gm)
    sched = Scheduler(pgm).run()
    groups = [s.group for s in sched.steps if isinstance(s, GroupStep)]
    if not groups:
        return CompiledGraph(pgm, sched, None, "")
    code = prelude(_simd()) + "\n" + "\n".join(g.source() for g in groups)
    output_code_log.debug("Output code (%d kernels in %d C functions):\n%s",
                          sched.kernel_count, len(groups), code)
    try:
        lib, key = codecache.load(code)
    except cpp_builder.CompilerNotFound as e:
        _warn_once("nocc", f"ember inductor: {e}; the compiled graph runs on the eager "
                           "kernels (correct results, no speed-up)")
        return gm.forward
    except cpp_builder.CompileError as e:
        if not config.fallback_on_error:
            raise
        _warn_once(("cc", str(e)[:200]), f"ember inductor: {e}\nfalling back to eager")
        return gm.forward
    return CompiledGraph(pgm, sched, lib, key)


def _simd():
    try:
        return cpp_builder.has_libmvec()
    except cpp_builder.CompilerNotFound:
        return False


def _eval(n, syms):
    if isinstance(n, SymInt):
        return eval(str(n.node), {"__builtins__": {}}, syms)   # noqa: S307 (our own text)
    return int(n)


class _Group:
    """A loaded group function with what the runtime needs to call it."""

    def __init__(self, g, lib):
        self.fn = getattr(lib, g.name)
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.fn.restype = None
        self.bufs = [b.name for b in g.bufs]
        self.ints = g.ints
        self.floats = g.floats
        self.outputs = [(b.name, b.shape, b.dtype) for b in g.outputs]


class CompiledGraph:
    """Runs the scheduled steps; falls back to the graph's forward when autograd must
    record (an input requires grad with grad mode on): training goes through AOT."""

    def __init__(self, gm, sched, lib, key):
        self.gm, self.key, self.lib = gm, key, lib
        self.kernel_count = sched.kernel_count
        self.inputs = sched.inputs
        self.attrs = sched.attrs
        self.steps = []
        for s in sched.steps:
            self.steps.append(_Group(s.group, lib) if isinstance(s, GroupStep) else s)
        out = next(n for n in gm.graph.nodes if n.op == "output")
        self.out_node = out
        self.env = sched.env
        self.sym_src = []
        seen = set()
        for k, v in enumerate(self.inputs):
            if isinstance(v, Buffer):
                for d, n in enumerate(v.shape):
                    if isinstance(n, SymInt) and len(n.node.terms) == 1:
                        (m, c), = n.node.terms.items()
                        if c == 1 and len(m) == 1 and m[0] not in seen:
                            seen.add(m[0])
                            self.sym_src.append((m[0], k, d))
            elif isinstance(v, SymInt) and len(v.node.terms) == 1:
                (m, c), = v.node.terms.items()
                if c == 1 and len(m) == 1 and m[0] not in seen:
                    seen.add(m[0])
                    self.sym_src.append((m[0], k, None))

    def _threads(self):
        """OpenMP threads follow ember.set_num_threads (or config.cpp.threads)."""
        import ember
        n = config.cpp.threads or ember.get_num_threads()
        if n != _THREADS[0] and self.lib is not None:
            self.lib.em_set_threads(int(n))
            _THREADS[0] = n

    def __call__(self, *inputs):
        from .._dispatch import STATE
        self._threads()
        if STATE.grad_enabled and any(isinstance(t, Tensor) and t.requires_grad
                                      for t in inputs):
            return self.gm.forward(*inputs)
        syms, arrays, tensors, rt = {}, {}, {}, {}
        for name, k, d in self.sym_src:
            syms[name] = int(inputs[k]) if d is None else inputs[k]._data.shape[d]
        for v, x in zip(self.inputs, inputs):
            if isinstance(v, Buffer):
                self._bind(v, x, arrays, tensors)
            elif isinstance(v, Scalar):
                rt[v.name] = x
        for b, name in self.attrs:
            if b is not None:
                t = _getattr(self.gm, name)
                if STATE.grad_enabled and t.requires_grad:
                    return self.gm.forward(*inputs)
                self._bind(b, t, arrays, tensors)
        for s in self.steps:
            if isinstance(s, _Group):
                self._run_group(s, syms, arrays, rt)
            else:
                self._run_extern(s, syms, arrays, tensors, rt)
        return tuple(self._value(a, syms, arrays, tensors, rt) for a in self.out_node.args[0])

    @staticmethod
    def _bind(b, t, arrays, tensors):
        arr = t._data
        if not b.dynamic_strides and not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        arrays[b.name] = arr
        tensors[b.name] = t

    def _run_group(self, g, syms, arrays, rt):
        for name, shape, dt in g.outputs:
            arrays[name] = np.empty(tuple(_eval(n, syms) for n in shape), dt.np)
        ptrs = (ctypes.c_void_p * max(len(g.bufs), 1))(
            *[arrays[n].__array_interface__["data"][0] for n in g.bufs])
        ints = []
        for key in g.ints:
            if key[0] == "sym":
                ints.append(syms[key[1]])
            elif key[0] == "stride":
                a = arrays[key[1].name]
                ints.append(a.strides[key[2]] // a.itemsize)
            else:
                ints.append(int(rt[key[1].name]))
        iarr = (ctypes.c_int64 * max(len(ints), 1))(*ints)
        farr = (ctypes.c_double * max(len(g.floats), 1))(*[float(rt[s.name])
                                                           for s in g.floats])
        g.fn(ptrs, iarr, farr)

    def _value(self, a, syms, arrays, tensors, rt):
        if isinstance(a, (list, tuple)):
            return type(a)(self._value(x, syms, arrays, tensors, rt) for x in a)
        if not hasattr(a, "op"):
            return _eval(a, syms) if isinstance(a, SymInt) else a
        v = self.env[a]
        if isinstance(v, (tuple, list)):
            return type(v)(self._plain(x, syms, arrays, tensors, rt) for x in v)
        return self._plain(v, syms, arrays, tensors, rt, a)

    def _plain(self, v, syms, arrays, tensors, rt, node=None):
        if isinstance(v, Buffer) or (hasattr(v, "buffer") and v.buffer is not None):
            b = v if isinstance(v, Buffer) else v.buffer
            t = tensors.get(b.name)
            if t is None:
                t = tensors[b.name] = wrap(arrays[b.name], b.dtype)
            return t
        if isinstance(v, Runtime):
            return rt[v.node]
        if isinstance(v, Scalar):
            return rt[v.name]
        if isinstance(v, SymInt):
            return _eval(v, syms)
        return v

    def _run_extern(self, s, syms, arrays, tensors, rt):
        n = s.node
        args = self._value(n.args, syms, arrays, tensors, rt)
        kwargs = {k: self._value(v, syms, arrays, tensors, rt) for k, v in n.kwargs.items()}
        out = n.target(*args, **kwargs)
        o = s.outputs
        if isinstance(o, Buffer):
            self._bind(o, out, arrays, tensors)
        elif isinstance(o, tuple):
            for b, t in zip(o, out):
                self._bind(b, t, arrays, tensors)
        else:
            rt[o.node] = out


def _getattr(mod, target):
    for part in target.split("."):
        mod = getattr(mod, part)
    return mod
