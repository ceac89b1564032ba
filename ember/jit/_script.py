"""ember.jit.trace / script: TorchScript's surface on ember's full-graph capture.

Why: 1.x programs deploy through torch.jit (trace or script, .save, torch.jit.load).
ember has one capture (ember._dynamo, fullgraph) and one saved format (ember.export's
zip), so a ScriptModule here is an ExportedProgram with TorchScript's methods: `.graph`
and `.code` show the captured graph, `.save` writes the export archive, `jit.load` reads
it in a process without the model's code. trace specializes on the example inputs'
shapes except the leading (batch) dim, which stays dynamic when the program allows it.
script captures on the first call (ember has no TorchScript compiler for the Python
source): what the capture cannot put in one graph — Python branching on tensor values,
calls into other libraries — raises an error naming the construct and the line.
"""
from .. import nn
from .._tensor import Tensor
from .._dynamo.exc import UserError

__all__ = ["ScriptModule", "ScriptFunction", "trace", "script", "load", "freeze",
           "optimize_for_inference", "trace_module"]


def _capture(obj, args, kwargs, what, dynamic_batch):
    from ..export._trace import capture
    from ..export._dynamic_shapes import Dim
    module = obj if isinstance(obj, nn.Module) else None
    if dynamic_batch:
        specs = [({0: Dim("batch", min=2)} if isinstance(a, Tensor) and a.dim() and
                  a.shape[0] >= 2 else None) for a in args]
        if any(specs):
            try:
                return capture(obj, args, kwargs, dynamic_shapes=specs + [None] * len(kwargs),
                               module=module, what=what)
            except UserError as e:
                if "Constraints violated" not in str(e) and "one symbol" not in str(e):
                    raise RuntimeError(str(e)) from e
    try:
        return capture(obj, args, kwargs, module=module, what=what)
    except UserError as e:
        raise RuntimeError(str(e)) from e


class ScriptModule(nn.Module):
    """A captured program: call it, read .graph/.code, .save() it, jit.load() it."""

    def __init__(self, ep, name="ScriptModule", training=False):
        super().__init__()
        object.__setattr__(self, "_ep", ep)
        self._mod = ep.module()
        self.original_name = name
        self.train(training)

    @property
    def graph(self):
        return self._ep.graph

    @property
    def inlined_graph(self):
        return self._ep.graph

    @property
    def code(self):
        return self._ep.graph_module.code

    @property
    def exported_program(self):
        return self._ep

    def forward(self, *args, **kwargs):
        return self._mod(*args, **kwargs)

    def save(self, f, _extra_files=None):
        from ..export import save
        save(self._ep, f, extra_files=_extra_files)

    def state_dict(self, *args, **kwargs):
        return self._mod.state_dict(*args, **kwargs)

    def parameters(self, recurse=True):
        return self._mod.parameters(recurse)

    def named_parameters(self, *args, **kwargs):
        return self._mod.named_parameters(*args, **kwargs)

    def buffers(self, recurse=True):
        return self._mod.buffers(recurse)


class ScriptFunction(ScriptModule):
    pass


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Runs `func` on the example inputs and records its ops as one graph."""
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("ember.jit.trace: example_inputs (a tensor or tuple of tensors) "
                           "or example_kwarg_inputs is required")
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    args = tuple(example_inputs or ())
    kwargs = dict(example_kwarg_inputs or {})
    ep = _capture(func, args, kwargs, "ember.jit.trace", dynamic_batch=True)
    name = type(func).__name__ if isinstance(func, nn.Module) else getattr(
        func, "__name__", "traced")
    cls = ScriptModule if isinstance(func, nn.Module) else ScriptFunction
    return cls(ep, name, getattr(func, "training", False))


def trace_module(mod, inputs, **kwargs):
    return trace(mod, inputs.get("forward"), **kwargs)


def _remote_call_break(e):
    from .._dynamo.exc import RemoteCallBreak
    while e is not None:
        if isinstance(e, RemoteCallBreak):
            return True
        e = e.__cause__
    return False


class _LazyScript:
    """jit.script(obj): captured (fullgraph) on the first call, with its arguments."""

    def __init__(self, obj):
        self._obj = obj
        self._scripted = None

    def __call__(self, *args, **kwargs):
        if self._scripted is None:
            try:
                ep = _capture(self._obj, args, kwargs, "ember.jit.script", dynamic_batch=True)
            except RuntimeError as e:
                if not _remote_call_break(e):
                    raise
                # RPC inside a scripted function (issue 14): the remote calls run for real
                # at graph breaks, the code around them is compiled
                from .. import compile as _compile
                self._scripted = _compile(self._obj, backend="eager")
                return self._scripted(*args, **kwargs)
            self._scripted = ScriptModule(ep, getattr(self._obj, "__name__",
                                                      type(self._obj).__name__),
                                          getattr(self._obj, "training", False))
        return self._scripted(*args, **kwargs)

    def _need(self, what):
        if self._scripted is None:
            raise RuntimeError(f"ember.jit.script: {what} exists once the scripted program "
                               "has been called (ember captures it on the first call's "
                               "inputs)")
        return self._scripted

    @property
    def graph(self):
        return self._need(".graph").graph

    @property
    def code(self):
        return self._need(".code").code

    def save(self, f, _extra_files=None):
        self._need(".save()").save(f, _extra_files)

    def __getattr__(self, name):
        return getattr(self.__dict__["_obj"], name)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """A scripted module or function (captured whole; see the module docstring)."""
    if isinstance(obj, (ScriptModule, _LazyScript)):
        return obj
    if isinstance(obj, type):
        raise RuntimeError(f"ember.jit.script: scripting a class ({obj.__name__}) is not "
                           "supported; script an instance or a function")
    if example_inputs:
        first = example_inputs[0]
        ep = _capture(obj, tuple(first), {}, "ember.jit.script", dynamic_batch=True)
        return ScriptModule(ep, getattr(obj, "__name__", type(obj).__name__),
                            getattr(obj, "training", False))
    if not callable(obj):
        raise RuntimeError(f"ember.jit.script: expected a function or nn.Module, got "
                           f"{type(obj).__name__}")
    return _LazyScript(obj)


def load(f, map_location=None, _extra_files=None):
    """Reads a program written by ScriptModule.save (no model code needed)."""
    from ..export import load as export_load
    ep = export_load(f, extra_files=_extra_files)
    return ScriptModule(ep, "RecursiveScriptModule")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """A copy of the scripted module whose state is detached from the original and no
    longer requires grad (ember's graph already takes the state as inputs, so the graph
    itself is unchanged: no constant folding)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    from ..export._program import ExportedProgram
    ep = mod._ep
    state = {k: v.detach().clone() for k, v in ep.state_dict.items()}
    consts = {k: v.detach().clone() for k, v in ep.constants.items()}
    frozen_ep = ExportedProgram(ep.graph_module, ep.graph_signature, state,
                                ep.range_constraints, consts, in_spec=ep._in_spec,
                                out_spec=ep._out_spec, input_shapes=ep._input_shapes)
    return ScriptModule(frozen_ep, mod.original_name, False)


class _InductorGraph:
    """The program's graph compiled by the inductor backend on the first call's inputs
    (the backend specializes and guards itself); .graph/.code stay the captured ones."""

    def __init__(self, gm):
        self.gm = gm
        self.graph = gm.graph
        self._fn = None

    @property
    def code(self):
        return self.gm.code

    def print_readable(self, print_output=True):
        return self.gm.print_readable(print_output)

    def __call__(self, *args):
        if self._fn is None:
            from .._dynamo.backends.registry import lookup_backend
            self._fn = lookup_backend("inductor")(self.gm, list(args))
        return self._fn(*args)


def optimize_for_inference(mod, other_methods=None):
    """freeze, then the graph compiled by the compiler backend (inductor: fused C kernels)
    on the first call."""
    frozen = freeze(mod)
    from ..export._program import ExportedProgram
    ep = frozen._ep
    fast = ExportedProgram(_InductorGraph(ep.graph_module), ep.graph_signature, ep.state_dict,
                           ep.range_constraints, ep.constants, in_spec=ep._in_spec,
                           out_spec=ep._out_spec, input_shapes=ep._input_shapes)
    return ScriptModule(fast, frozen.original_name, False)
