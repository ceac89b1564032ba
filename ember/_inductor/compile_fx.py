"""compile_fx_inner: a pure prim graph -> a callable running generated C + extern calls.

Why this shape (torch._inductor.compile_fx's names): the "inductor" backend hands each
forward/backward graph here. Decomposition turns composites into prims, the scheduler
lowers and fuses them, codegen writes one C file, the disk cache builds or loads it, and
the runtime below runs the steps: ctypes calls into the groups, eager kernels for extern
nodes. No C compiler -> one warning and the graph runs op by op on the eager kernels.
"""
import logging
import os
import warnings

from .._logging import getArtifactLogger
from .._symbolic import SymInt
from .._tensor import Tensor
from . import autotune, codecache, config, cpp_builder, cpp_wrapper, native, quant_lowering
from .codegen_c import prelude
from .decompose import decompose_graph
from .ir import Buffer
from .lowering import StaleMeta
from .scheduler import GroupStep, Scheduler
from .wrapper import generate_wrapper, python_gen

__all__ = ["compile_fx_inner", "CompiledGraph"]

log = logging.getLogger(__name__)
output_code_log = getArtifactLogger(__name__, "output_code")
_warned = set()
_THREADS = [None]     # the OpenMP thread count last set (libgomp's setting is per process)


def _after_fork_in_child():
    _THREADS[0] = None    # native.threads() is 1 there; set it again


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _warn_once(key, msg):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def compile_fx_inner(gm, example_inputs, **kwargs):
    """Compile `gm` (an ember.fx.GraphModule of registry ops) to a callable returning a
    tuple, as the graph's forward does."""
    if any(n.op == "placeholder" and "val" not in n.meta for n in gm.graph.nodes):
        _fill_metas(gm, example_inputs)
    gm = quant_lowering.fuse_int8(gm)      # dq -> linear/conv -> q chains to int8 kernels
    pgm = decompose_graph(gm)
    try:
        sched = Scheduler(pgm).run()
    except StaleMeta as e:
        log.warning("ember inductor: %s; this graph runs on the eager kernels", e)
        return gm.forward
    sched.sym_src = _sym_sources(sched.inputs)
    out = next(n for n in pgm.graph.nodes if n.op == "output")
    cw = _cpp_wrapper(sched, out)
    groups = [s.group for s in sched.steps if isinstance(s, GroupStep)]
    if not groups and cw is None:
        return CompiledGraph(pgm, sched, None, "")
    head = prelude(_simd()) + "\n"
    try:
        tune = config.max_autotune or config.max_autotune_pointwise
        choices = autotune.tune_groups(head, groups) if tune else {}
    except cpp_builder.CompilerNotFound as e:
        _warn_once("nocc", f"ember inductor: {e}; the compiled graph runs on the eager "
                           "kernels (correct results, no speed-up)")
        return gm.forward
    code = head + "\n".join(autotune.apply(g.source(), g.name, choices[g.name])
                            if g.name in choices else g.source() for g in groups)
    if choices:
        output_code_log.debug("max-autotune chose %s", choices)
    if cw is not None:
        code += "\n" + cw.source
    output_code_log.debug("Output code (%d kernels in %d C functions):\n%s",
                          sched.kernel_count, len(groups), code)
    try:
        lib, key = codecache.load(code)
    except cpp_builder.CompilerNotFound as e:
        _warn_once("nocc", f"ember inductor: {e}; the compiled graph runs on the eager "
                           "kernels (correct results, no speed-up)")
        return gm.forward
    except (cpp_builder.CompileError, OSError) as e:    # OSError: cache dir not writable
        if not config.fallback_on_error:
            raise
        _warn_once(("cc", str(e)[:200]), f"ember inductor: {e}\nfalling back to eager")
        return gm.forward
    return CompiledGraph(pgm, sched, lib, key, cw, dict(choices, **(cw.choices if cw else {})))


def _cpp_wrapper(sched, out):
    """The one-C-function wrapper when config.cpp_wrapper asks for it and the graph allows
    it; else None, with the reason logged (the graph keeps the Python wrapper)."""
    if not config.cpp_wrapper:
        return None
    try:
        return cpp_wrapper.CppWrapper(sched, out, config.cpu_graphs)
    except cpp_builder.CompilerNotFound:
        return None          # (max-autotune's matmul timing): the load below warns
    except cpp_wrapper.Unsupported as e:
        output_code_log.debug("cpp_wrapper: %s; this graph keeps the Python wrapper", e)
        log.info("ember inductor cpp_wrapper: %s; this graph keeps the Python wrapper", e)
        return None


def _fill_metas(gm, example_inputs):
    """node.meta["val"] from a fake run on the example inputs, for graphs built by hand
    (the capture always records them); without them every node stays an extern call."""
    from ..fx.passes.fake_tensor_prop import FakeTensorProp
    try:
        FakeTensorProp(gm).propagate(*example_inputs)
    except Exception as e:       # noqa: BLE001  (no metas: the graph runs as extern calls)
        log.debug("inductor: fake propagation failed (%s); nodes stay extern", e)


def _simd():
    try:
        return cpp_builder.has_libmvec()
    except cpp_builder.CompilerNotFound:
        return False


def _sym_sources(inputs):
    """(symbol, input index, dim or None): where each size symbol's value is read."""
    out, seen = [], set()
    for k, v in enumerate(inputs):
        sizes = [(d, n) for d, n in enumerate(v.shape)] if isinstance(v, Buffer) else \
            [(None, v)] if isinstance(v, SymInt) else []
        for d, n in sizes:
            if isinstance(n, SymInt) and len(n.node.terms) == 1:
                (m, c), = n.node.terms.items()
                if c == 1 and len(m) == 1 and m[0] not in seen:
                    seen.add(m[0])
                    out.append((m[0], k, d))
    return out


class CompiledGraph:
    """Calls the generated Python wrapper (wrapper.py); falls back to the graph's forward
    when autograd must record (an input requires grad with grad mode on): training graphs
    reach the C code through AOT autograd, whose forward/backward graphs need no autograd."""

    def __init__(self, gm, sched, lib, key, cw=None, autotuned=None):
        self.gm, self.key, self.lib = gm, key, lib
        self.autotuned = autotuned or {}    # max-autotune: group/matmul -> chosen variant
        self._nthreads = config.cpp.threads      # as set when compiling (options=)
        self.kernel_count = sched.kernel_count
        self.cpp_wrapper = cw is not None
        out = next(n for n in gm.graph.nodes if n.op == "output")
        if cw is None:
            self.wrapper_code, self._call = generate_wrapper(sched, lib, out)
        else:
            self.wrapper_code, self._call = cw.python(lib, lambda: python_gen(sched, out))
        output_code_log.debug("Output wrapper:\n%s", self.wrapper_code)
        self._attr_tensors = [name for b, name in sched.attrs if b is not None]
        self._grad_at_entry, self._grad_on_inside = _grad_modes(gm)

    def _threads(self):
        """OpenMP threads follow ember.set_num_threads (or config.cpp.threads)."""
        n = 1 if native.FORKED[0] else self._nthreads or native.threads()
        if n != _THREADS[0] and self.lib is not None:
            self.lib.em_set_threads(int(n))
            _THREADS[0] = n

    def __call__(self, *inputs):
        from .._dispatch import STATE
        if self._grad_on_inside or (self._grad_at_entry and STATE.grad_enabled):
            if any(isinstance(t, Tensor) and t._rg for t in inputs) or any(
                    _getattr(self.gm, a).requires_grad for a in self._attr_tensors):
                return self.gm.forward(*inputs)
        self._threads()
        return self._call(inputs, self.gm, _getattr)


def _grad_modes(gm):
    """(some op runs in the caller's grad mode, some op runs after set_grad_enabled(True)):
    autograd may have to record only then (a graph that starts with no_grad never does)."""
    from .._dynamo.output_graph import ctx_enter, ctx_exit, set_grad_enabled
    mode, at_entry, on_inside = None, False, False
    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target in (ctx_enter, ctx_exit):
            continue      # a context manager's enter/exit computes no tensor
        if n.target is set_grad_enabled:
            mode = bool(n.args[0])
        elif mode is None:
            at_entry = True
        elif mode:
            on_inside = True
    return at_entry, on_inside


def _getattr(mod, target):
    for part in target.split("."):
        mod = getattr(mod, part)
    return mod
