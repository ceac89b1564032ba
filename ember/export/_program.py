"""ExportedProgram and its graph signature (torch.export's classes and field names).

Why: an exported graph is a pure function of (parameters, buffers, constants, user
inputs) returning (mutated buffers' new values, user outputs). The signature says which
placeholder is which, so `module()` can feed the state in and write buffer updates back,
and a loaded program can run without the model's Python code.
"""
import enum
from dataclasses import dataclass
from typing import Any, Optional

from .. import nn
from .._tensor import Tensor
from ._tree import tree_flatten, tree_unflatten

__all__ = ["ExportedProgram", "ExportGraphSignature", "InputKind", "OutputKind", "InputSpec",
           "OutputSpec", "TensorArgument", "ConstantArgument", "SymIntArgument", "ValueRange"]


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()


@dataclass
class TensorArgument:
    name: str


@dataclass
class SymIntArgument:
    name: str


@dataclass
class ConstantArgument:
    name: str
    value: Any


@dataclass
class InputSpec:
    kind: InputKind
    arg: Any
    target: Optional[str]
    persistent: Optional[bool] = None


@dataclass
class OutputSpec:
    kind: OutputKind
    arg: Any
    target: Optional[str]


class ExportGraphSignature:
    """Which graph input/output is a parameter, buffer, constant, user value or mutation."""

    def __init__(self, input_specs, output_specs):
        self.input_specs = list(input_specs)
        self.output_specs = list(output_specs)

    def _ins(self, kind):
        return tuple(s for s in self.input_specs if s.kind == kind)

    @property
    def parameters(self):
        return tuple(s.target for s in self._ins(InputKind.PARAMETER))

    @property
    def buffers(self):
        return tuple(s.target for s in self._ins(InputKind.BUFFER))

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self._ins(InputKind.BUFFER) if s.persistent is False)

    @property
    def lifted_tensor_constants(self):
        return tuple(s.target for s in self._ins(InputKind.CONSTANT_TENSOR))

    @property
    def user_inputs(self):
        return tuple(getattr(s.arg, "value", None) if isinstance(s.arg, ConstantArgument)
                     else s.arg.name for s in self._ins(InputKind.USER_INPUT))

    @property
    def user_outputs(self):
        return tuple(getattr(s.arg, "value", None) if isinstance(s.arg, ConstantArgument)
                     else s.arg.name for s in self.output_specs
                     if s.kind == OutputKind.USER_OUTPUT)

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self._ins(InputKind.PARAMETER)}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self._ins(InputKind.BUFFER)}

    @property
    def inputs_to_lifted_tensor_constants(self):
        return {s.arg.name: s.target for s in self._ins(InputKind.CONSTANT_TENSOR)}

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind == OutputKind.BUFFER_MUTATION}

    @property
    def user_inputs_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind == OutputKind.USER_INPUT_MUTATION}

    def __str__(self):
        lines = ["", "# inputs"]
        for s in self.input_specs:
            name = getattr(s.arg, "name", "")
            line = f"{name}: {s.kind.name}"
            if s.target is not None:
                line += f" target='{s.target}'"
            if s.persistent is not None:
                line += f" persistent={s.persistent}"
            lines.append(line)
        lines += ["", "# outputs"]
        for s in self.output_specs:
            line = f"{getattr(s.arg, 'name', '')}: {s.kind.name}"
            if s.target is not None:
                line += f" target='{s.target}'"
            lines.append(line)
        return "\n".join(lines) + "\n"

    __repr__ = __str__


class ValueRange:
    """[lower, upper] of a symbolic size; upper may be inf (torch's int_oo)."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def __eq__(self, other):
        return isinstance(other, ValueRange) and (self.lower, self.upper) == (other.lower,
                                                                              other.upper)

    def __repr__(self):
        hi = "int_oo" if self.upper == float("inf") else self.upper
        return f"VR[{self.lower}, {hi}]"


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _set_module_tensor(root, fqn, value, kind):
    *path, leaf = fqn.split(".")
    m = root
    for p in path:
        if p not in m._modules:
            m.add_module(p, nn.Module())
        m = m._modules[p]
    if kind == "parameter":
        m.register_parameter(leaf, value if isinstance(value, nn.Parameter)
                             else nn.Parameter(value, requires_grad=value.requires_grad))
    else:
        m.register_buffer(leaf, value, persistent=kind == "buffer")


def _get_module_tensor(root, fqn):
    *path, leaf = fqn.split(".")
    m = root
    for p in path:
        m = m._modules[p]
    return getattr(m, leaf)


class ExportedModule(nn.Module):
    """ExportedProgram.module(): the graph as a callable nn.Module holding the state.

    forward checks the inputs against the exported shapes and ranges, runs the graph,
    writes buffer (and user input) mutations back, and rebuilds the output nesting."""

    def __init__(self, ep):
        super().__init__()
        sig = ep.graph_signature
        for s in sig.input_specs:
            if s.kind == InputKind.PARAMETER:
                _set_module_tensor(self, s.target, ep.state_dict[s.target], "parameter")
            elif s.kind == InputKind.BUFFER:
                src = ep.state_dict if s.persistent is not False else ep.constants
                _set_module_tensor(self, s.target, src[s.target],
                                   "buffer" if s.persistent is not False else "np_buffer")
        object.__setattr__(self, "_ep", ep)
        self.graph_module = ep.graph_module

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def code(self):
        return self.graph_module.code

    def print_readable(self, print_output=True):
        return self.graph_module.print_readable(print_output)

    def forward(self, *args, **kwargs):
        ep = self._ep
        leaves = ep._flatten_user_inputs(args, kwargs)
        state = []
        for s in ep.graph_signature.input_specs:
            if s.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                state.append(_get_module_tensor(self, s.target))
            elif s.kind == InputKind.CONSTANT_TENSOR:
                state.append(ep.constants[s.target])
        return ep._run(state, leaves, lambda fqn: _get_module_tensor(self, fqn))


class ExportedProgram:
    """A sound full-graph capture: a functional graph of registry ops plus its signature,
    state, and the ranges its dynamic sizes may take."""

    def __init__(self, graph_module, graph_signature, state_dict, range_constraints,
                 constants=None, *, in_spec, out_spec, input_shapes, example_inputs=None):
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.constants = constants or {}
        self.range_constraints = range_constraints
        self.example_inputs = example_inputs
        self.module_call_graph = []
        self.verifiers = []
        self.dialect = "EMBER"
        self._in_spec = in_spec            # tree spec of (args, kwargs)
        self._out_spec = out_spec          # tree spec of the user outputs
        self._input_shapes = input_shapes  # per user input: None or (dtype name, [int|sym])

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def call_spec(self):
        return (self._in_spec, self._out_spec)

    def parameters(self):
        for name in self.graph_signature.parameters:
            yield self.state_dict[name]

    def named_parameters(self):
        for name in self.graph_signature.parameters:
            yield name, self.state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for s in self.graph_signature.input_specs:
            if s.kind == InputKind.BUFFER:
                src = self.state_dict if s.persistent is not False else self.constants
                yield s.target, src[s.target]

    def module(self):
        return ExportedModule(self)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        code = self.graph_module.print_readable(print_output=False)
        return (f"ExportedProgram:\n{code}\nGraph signature: {self.graph_signature}"
                f"Range constraints: {self.range_constraints}\n")

    __repr__ = __str__

    def run_decompositions(self, decomp_table=None):
        """A new ExportedProgram whose composite ops are decomposed (into primitives by
        default, or by `decomp_table`)."""
        from ._decompose import decompose_graph_module
        gm = decompose_graph_module(self.graph_module, decomp_table)
        out_node = next(n for n in gm.graph.nodes if n.op == "output")
        outs = list(out_node.args[0]) if isinstance(out_node.args[0], (list, tuple)) \
            else [out_node.args[0]]
        it = iter(outs)
        specs = [s if isinstance(s.arg, ConstantArgument) else
                 OutputSpec(s.kind, TensorArgument(next(it).name), s.target)
                 for s in self.graph_signature.output_specs]
        sig = ExportGraphSignature(self.graph_signature.input_specs, specs)
        return ExportedProgram(gm, sig, self.state_dict,
                               self.range_constraints, self.constants,
                               in_spec=self._in_spec, out_spec=self._out_spec,
                               input_shapes=self._input_shapes,
                               example_inputs=self.example_inputs)

    # -- running -------------------------------------------------------------------------

    def _flatten_user_inputs(self, args, kwargs):
        spec_args, spec_kwargs = self._in_spec["tuple"]
        keys = [k for k, _ in spec_kwargs["dict"]]
        if set(kwargs) != set(keys):
            raise TypeError(f"exported program: expected keyword arguments {keys}, got "
                            f"{sorted(kwargs)}")
        leaves, spec = tree_flatten((tuple(args), {k: kwargs[k] for k in keys}))
        if spec != self._in_spec:
            raise TypeError("exported program: the inputs' structure differs from the "
                            f"exported one: expected {self._in_spec}, got {spec}")
        self._check_inputs(leaves)
        return leaves

    def _check_inputs(self, leaves):
        bound = {}
        specs = [s for s in self.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
        for spec, leaf, shape in zip(specs, leaves, self._input_shapes):
            name = spec.arg.name
            if shape is None:
                if isinstance(spec.arg, ConstantArgument) and not _same(leaf, spec.arg.value):
                    raise AssertionError(f"Guard failed: {name} == {spec.arg.value!r} (the "
                                         f"exported constant), got {leaf!r}")
                continue
            dtype, sizes = shape
            if not isinstance(leaf, Tensor):
                raise AssertionError(f"Guard failed: {name} is a Tensor, got "
                                     f"{type(leaf).__name__}")
            if leaf.dim() != len(sizes):
                raise AssertionError(f"Guard failed: {name}.dim() == {len(sizes)} "
                                     f"(got {leaf.dim()})")
            if str(leaf.dtype).replace("torch.", "").replace("ember.", "") != dtype:
                raise AssertionError(f"Guard failed: {name}.dtype == {dtype} "
                                     f"(got {leaf.dtype})")
            for d, want in enumerate(sizes):
                got = leaf.shape[d]
                if isinstance(want, int):
                    if got != want:
                        raise AssertionError(f"Guard failed: {name}.size()[{d}] == {want} "
                                             f"(got {got})")
                    continue
                vr = self.range_constraints.get(want)
                if vr is not None and got < vr.lower:
                    raise AssertionError(f"Guard failed: {name}.size()[{d}] >= {vr.lower} "
                                         f"(got {got})")
                if vr is not None and got > vr.upper:
                    raise AssertionError(f"Guard failed: {name}.size()[{d}] <= {vr.upper} "
                                         f"(got {got})")
                if want in bound and bound[want][0] != got:
                    raise AssertionError(
                        f"Guard failed: {name}.size()[{d}] == {bound[want][1]} (got {got}): "
                        f"both are the dynamic size {want}")
                bound.setdefault(want, (got, f"{name}.size()[{d}]"))

    def _run(self, state, leaves, get_target):
        from .. import no_grad
        user = [x for x, s in zip(leaves, self._input_shapes) if s is not None]
        outs = self.graph_module(*state, *user)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        users = [s for s in self.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
        user_leaves = {s.arg.name: x for s, x in zip(users, leaves)
                       if isinstance(s.arg, TensorArgument)}
        it = iter(outs)
        result = []
        for spec in self.graph_signature.output_specs:
            if isinstance(spec.arg, ConstantArgument):
                result.append(spec.arg.value)
                continue
            val = next(it)
            if spec.kind == OutputKind.USER_OUTPUT:
                result.append(val)
                continue
            with no_grad():
                if spec.kind == OutputKind.BUFFER_MUTATION:
                    get_target(spec.target).copy_(val)
                elif spec.kind == OutputKind.USER_INPUT_MUTATION:
                    user_leaves[spec.target].copy_(val)
        return tree_unflatten(result, self._out_spec)
