"""export(): a sound full-graph capture through ember.compile's machinery.

Why: one capture for compile and export (DESIGN §7). The program is captured with
`ember._dynamo.compile(..., fullgraph=True)`; the backend receives the GraphModule of
registry ops with its example inputs. That graph is functionalized (ember._functorch's
pass: buffer updates such as BatchNorm's running stats become values), its placeholders
are classified by identity against the module's parameters and buffers and the user's
inputs, and reordered and renamed as torch.export does (p_*, b_*, c_*, user names).
The capture runs the graph once on the example inputs to learn the output nesting; the
module's state, the inputs and the random generator are restored afterwards.
"""
import inspect
import keyword
import re

from .. import nn
from .._tensor import Tensor
from .._dynamo import exc
from ..fx import Graph, GraphModule
from ._dynamic_shapes import apply_dynamic_shapes, INT_OO
from ._program import (ExportedProgram, ExportGraphSignature, InputKind, OutputKind,
                       InputSpec, OutputSpec, TensorArgument, ConstantArgument, ValueRange)
from ._tree import tree_flatten

__all__ = ["export", "capture"]

_MARK_ATTRS = ("_dynamo_dynamic_indices", "_dynamo_marked", "_dynamo_constraints")
_COND_HINT = ("export needs one graph for all inputs: rewrite the data-dependent branch "
              "with ember.cond(pred, true_fn, false_fn, operands), which captures both "
              "branches")


def _functionalize(gm):
    """The one functionalization step (ember._functorch): (pure gm, mutated placeholder
    indices, per-user-output alias info, number of user outputs)."""
    from .._functorch._functionalize import functionalize_graph
    fg = functionalize_graph(gm)
    return fg


def _snapshot(module, leaves):
    from .. import get_rng_state
    saved = []
    if module is not None:
        for t in list(module.parameters()) + list(module.buffers()):
            saved.append((t, t.detach().clone()))
    for x in leaves:
        if isinstance(x, Tensor):
            saved.append((x, x.detach().clone()))
    marks = [(x, {a: getattr(x, a) for a in _MARK_ATTRS if hasattr(x, a)})
             for x in leaves if isinstance(x, Tensor)]
    return saved, marks, get_rng_state()


def _restore(snap):
    from .. import no_grad, set_rng_state
    saved, marks, rng = snap
    with no_grad():
        for t, v in saved:
            if t._data is not v._data:
                t.copy_(v)
    for x, attrs in marks:
        for a in _MARK_ATTRS:
            if a in attrs:
                setattr(x, a, attrs[a])
            elif hasattr(x, a):
                delattr(x, a)
    set_rng_state(rng)


def _user_input_names(fn, args, kwargs):
    """Names of the flattened (args, kwargs) leaves, as torch.export names them."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []

    def walk(prefix, v):
        if isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(f"{prefix}_{i}", x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}_{k}", x)
        else:
            names.append(re.sub(r"\W", "_", prefix))

    for i, a in enumerate(args):
        p = params[i].name if i < len(params) and params[i].kind in (
            params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD) else f"args_{i}"
        walk(p, a)
    for k, v in kwargs.items():
        walk(k, v)
    return names


class _Captured(Exception):
    pass


def capture(fn, args, kwargs=None, *, dynamic_shapes=None, module=None, what="export"):
    """An ExportedProgram of `fn(*args, **kwargs)` (fn a Module or a function)."""
    from .. import no_grad, _dynamo
    from .._dynamo.output_graph import ConstraintViolationError
    kwargs = dict(kwargs or {})
    args = tuple(args)
    in_leaves, in_spec = tree_flatten((args, kwargs))
    forward = fn.forward if isinstance(fn, nn.Module) else fn
    snap = _snapshot(module, in_leaves)
    got = {}

    def backend(gm, example_inputs):
        got["gm"], got["ex"] = gm, list(example_inputs)

        def run(*a):
            outs = gm.forward(*a)
            got["outs"] = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            return outs
        return run

    from .._dynamo.runtime import _FRAME_STATE
    code = getattr(getattr(forward, "__func__", forward), "__code__", None)
    saved_state = _FRAME_STATE.pop(code, None)   # sizes seen by earlier compiles: not ours
    try:
        marks = apply_dynamic_shapes(forward, args, kwargs, dynamic_shapes)
        compiled = _dynamo.compile(fn, backend=backend, fullgraph=True, dynamic=None)
        with no_grad():
            result = compiled(*args, **kwargs)
    except exc.Unsupported as e:
        where = ""
        if e.user_stack:
            fs = e.user_stack[-1]
            where = f"\n  from user code at {fs.filename}:{fs.lineno} in {fs.name}" + (
                f"\n    {fs.line}" if fs.line else "")
        hint = _COND_HINT if "data-dependent" in e.msg else (
            f"{what} captures the whole program as one graph and cannot capture this")
        raise exc.UserError(f"{what}: {e.msg}{where}\n{hint}") from e
    except ConstraintViolationError as e:
        raise exc.UserError(str(e)) from e
    finally:
        _restore(snap)
        _FRAME_STATE.pop(code, None)
        if saved_state is not None:
            _FRAME_STATE[code] = saved_state
    if "gm" not in got:
        if isinstance(result, Tensor) or any(isinstance(x, Tensor)
                                             for x in tree_flatten(result)[0]):
            raise exc.UserError(f"{what}: the capture produced no graph")
        got["gm"], got["ex"], got["outs"] = None, [], []
    return _build(fn, forward, module, args, kwargs, in_leaves, in_spec, marks, got, result)


def _classify(module, in_leaves, ex, placeholders):
    """Per placeholder: (kind, target) by identity of its example tensor."""
    params, buffers, persistent = {}, {}, {}
    if module is not None:
        for name, p in module.named_parameters(remove_duplicate=False):
            params.setdefault(id(p), name)
        for mname, m in module.named_modules(remove_duplicate=False):
            for bname, b in m._buffers.items():
                if b is None:
                    continue
                fqn = f"{mname}.{bname}" if mname else bname
                buffers.setdefault(id(b), fqn)
                persistent.setdefault(fqn, bname not in m._non_persistent_buffers_set)
    user = {}
    for i, x in enumerate(in_leaves):
        if isinstance(x, Tensor):
            user.setdefault(id(x), i)
    out = []
    for n, t in zip(placeholders, ex):
        if id(t) in user:
            out.append((InputKind.USER_INPUT, user[id(t)]))
        elif id(t) in params:
            out.append((InputKind.PARAMETER, params[id(t)]))
        elif id(t) in buffers:
            out.append((InputKind.BUFFER, buffers[id(t)], persistent[buffers[id(t)]]))
        elif isinstance(t, Tensor):
            out.append((InputKind.CONSTANT_TENSOR, t))
        else:
            raise exc.UserError(f"export: graph input {n.meta.get('source', n.name)} is a "
                                f"{type(t).__name__}, not a tensor; ember exports Python "
                                "numbers as constants only")
    return out, persistent


def _inline_aliases(fg):
    """Outputs that alias an input or another value become explicit view nodes."""
    gm = fg.gm
    g = gm.graph
    out_node = next(n for n in g.nodes if n.op == "output")
    outs = list(out_node.args[0])
    phs = [n for n in g.nodes if n.op == "placeholder"]
    n_user = fg.num_user_outputs
    base0 = n_user + len(fg.mutated_inputs)
    user = outs[:n_user]
    for i, alias in enumerate(fg.output_aliases):
        if alias is None:
            continue
        kind, k, chain = alias
        cur = phs[k] if kind == "input" else outs[base0 + k]
        with g.inserting_before(out_node):
            for op, cargs in chain:
                cur = g.call_function(op, (cur, *cargs))
        user[i] = cur
    new = user + outs[n_user:base0]
    out_node.args = (tuple(new),)
    g.eliminate_dead_code()
    gm.recompile()
    return user, outs[n_user:base0]


def _sym_name(s):
    from .._symbolic import sym_expr
    return str(sym_expr(s))


def _build(fn, forward, module, args, kwargs, in_leaves, in_spec, marks, got, result):
    gm0 = got["gm"]
    names = _user_input_names(forward, args, kwargs)
    if gm0 is None:
        g0_ph, ex, fg = [], [], None
    else:
        g0_ph = [n for n in gm0.graph.nodes if n.op == "placeholder"]
        ex = got["ex"]
    kinds, persistent = _classify(module, in_leaves, ex, g0_ph)
    if gm0 is not None:
        fg = _functionalize(gm0)
        user_out_nodes, mut_nodes = _inline_aliases(fg)
        fgm = fg.gm
        ph = [n for n in fgm.graph.nodes if n.op == "placeholder"]
    else:
        user_out_nodes, mut_nodes, ph = [], [], []
    # the new graph: params, buffers, constants, then one placeholder per user tensor leaf
    g = Graph()
    env = {}
    input_specs = []
    state_dict, constants = {}, {}
    by_kind = {k: [] for k in InputKind}
    for n, k in zip(ph, kinds):
        by_kind[k[0]].append((n, k))
    n_const = 0
    ph_of = {}
    for n, k in by_kind[InputKind.PARAMETER] + by_kind[InputKind.BUFFER]:
        ph_of.setdefault(k[1], []).append(n)
    params = list(module.named_parameters()) if module is not None else []
    bufs = list(module.named_buffers()) if module is not None else []
    for fqn, p in params:
        node = g.placeholder("p_" + fqn.replace(".", "_"))
        for n in ph_of.get(fqn, []):
            env[n] = node
            node.meta.update(n.meta)
        input_specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(node.name), fqn))
        state_dict[fqn] = p
    for fqn, b in bufs:
        node = g.placeholder("b_" + fqn.replace(".", "_"))
        for n in ph_of.get(fqn, []):
            env[n] = node
            node.meta.update(n.meta)
        pers = persistent.get(fqn, True)
        input_specs.append(InputSpec(InputKind.BUFFER, TensorArgument(node.name), fqn, pers))
        (state_dict if pers else constants)[fqn] = b
    missing = [k[1] for _, k in by_kind[InputKind.PARAMETER] + by_kind[InputKind.BUFFER]
               if k[1] not in state_dict and k[1] not in constants]
    if missing:
        raise exc.UserError(f"export: the graph reads {missing}, which named_parameters()/"
                            "named_buffers() do not list")
    for n, k in by_kind[InputKind.CONSTANT_TENSOR]:
        target = _attr_path(n.meta.get("source") or "", module) or f"lifted_tensor_{n_const}"
        n_const += 1
        env[n] = g.placeholder("c_" + target.replace(".", "_"))
        env[n].meta.update(n.meta)
        input_specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(env[n].name),
                                     target))
        constants[target] = k[1].detach().clone()
    leaf_node = {}
    for n, k in by_kind[InputKind.USER_INPUT]:
        leaf_node.setdefault(k[1], []).append(n)
    input_shapes = []
    sym_dims = {}
    for i, leaf in enumerate(in_leaves):
        name = names[i] if i < len(names) else f"arg{i}"
        if not isinstance(leaf, Tensor):
            input_specs.append(InputSpec(InputKind.USER_INPUT, ConstantArgument(name, leaf),
                                         None))
            input_shapes.append(None)
            continue
        node = g.placeholder(name)
        if node.name != name and not keyword.iskeyword(name) and \
                all(n.name != name for n in g.nodes):
            node.name = node.target = name      # torch.export keeps `input` (a builtin)
        nodes = leaf_node.get(i, [])
        for n in nodes:
            env[n] = node
        if nodes:
            node.meta.update(nodes[0].meta)
        input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.name), None))
        val = node.meta.get("val")
        sizes = []
        for d in range(leaf.dim()):
            s = val.shape[d] if val is not None else leaf.shape[d]
            if type(s) is int:
                sizes.append(int(s))
            else:
                sym = _sym_name(s)
                sizes.append(sym)
                sym_dims.setdefault(sym, []).append((leaf, d))
        input_shapes.append((str(leaf.dtype).split(".")[-1], sizes))
    for t, d, dim, path in marks:
        if not any(t is x and d == dd for uses in sym_dims.values() for x, dd in uses):
            raise exc.UserError(
                f"Constraints violated ({dim.__name__})! You marked {dim.__name__} "
                f"(inputs{path}) as dynamic but the captured graph depends on its example "
                f"value {t.shape[d]} (the program computes with it as a Python number), so "
                "ember's capture specialized it to a constant. Use Dim.STATIC for it, or "
                "keep the size in tensor ops (x.shape[i] into ember ops, not int()/NumPy)")
    range_constraints = _ranges(marks, sym_dims)
    # body
    outputs = []
    if gm0 is not None:
        for n in fgm.graph.nodes:
            if n.op in ("placeholder", "output"):
                continue
            env[n] = g.node_copy(n, lambda a: env[a])
        outputs = [env[n] if hasattr(n, "op") else n for n in mut_nodes + user_out_nodes]
    output_specs = []
    for idx, n in zip(fg.mutated_inputs if fg else [], mut_nodes):
        k = kinds[idx]
        if k[0] == InputKind.BUFFER:
            output_specs.append(OutputSpec(OutputKind.BUFFER_MUTATION,
                                           TensorArgument(env[n].name), k[1]))
        elif k[0] == InputKind.USER_INPUT:
            output_specs.append(OutputSpec(OutputKind.USER_INPUT_MUTATION,
                                           TensorArgument(env[n].name),
                                           env[ph[idx]].name))
        else:
            raise exc.UserError(f"export: the program mutates {k[0].name.lower()} "
                                f"{k[1] if isinstance(k[1], str) else ''} in place; "
                                "export supports in-place updates of buffers and inputs only")
    out_leaves, out_spec = tree_flatten(result)
    graph_outs = list(got.get("outs", []))
    by_id = {id(t): i for i, t in enumerate(graph_outs)}
    user_outs = []
    for leaf in out_leaves:
        if isinstance(leaf, Tensor):
            if id(leaf) in by_id:
                node = outputs[len(mut_nodes) + by_id[id(leaf)]]
            else:
                raise exc.UserError(f"{'export'}: an output tensor of shape "
                                    f"{tuple(leaf.shape)} is not produced by the graph")
            user_outs.append(node)
            output_specs.append(OutputSpec(OutputKind.USER_OUTPUT,
                                           TensorArgument(node.name), None))
        else:
            output_specs.append(OutputSpec(OutputKind.USER_OUTPUT,
                                           ConstantArgument("", leaf), None))
    g.output(tuple(outputs[:len(mut_nodes)] + user_outs))
    gm = GraphModule(nn.Module(), g)
    sig = ExportGraphSignature(input_specs, output_specs)
    return ExportedProgram(gm, sig, state_dict, range_constraints, constants,
                           in_spec=in_spec, out_spec=out_spec, input_shapes=input_shapes,
                           example_inputs=(args, kwargs))


def _attr_path(src, module):
    """'a.b.table' for a capture source L['self']._modules['a']._modules['b'].table (the
    module's own tensor attribute), else None."""
    if module is None:
        return None
    m = re.fullmatch(r"L\['(\w+)'\]((?:\._modules\['\w+'\])*)\.(\w+)", src)
    try:
        first = next(iter(inspect.signature(type(module).forward).parameters))
    except (StopIteration, TypeError, ValueError):
        return None
    if m is None or m.group(1) != first:
        return None
    return ".".join(re.findall(r"_modules\['(\w+)'\]", m.group(2)) + [m.group(3)])


def _get(module, fqn):
    obj = module
    for p in fqn.split("."):
        obj = getattr(obj, p)
    return obj


def _ranges(marks, sym_dims):
    """{symbol: ValueRange} from the Dims given for the sizes the capture made symbolic."""
    by_tensor = {(id(t), d): dim for t, d, dim, _ in marks}
    out = {}
    for sym, uses in sym_dims.items():
        lo, hi, names = 2, INT_OO, set()
        for t, d in uses:
            dim = by_tensor.get((id(t), d))
            if dim is None:
                continue
            names.add(dim.__name__)
            lo, hi = max(lo, dim.min), min(hi, dim.max)
        if len(names) > 1:
            raise exc.UserError(
                f"export: dynamic sizes {sorted(names)} were captured as one symbol {sym} "
                "(their example sizes are equal and ember's capture shares a symbol between "
                "equal sizes); use one Dim for them, or give examples of different sizes")
        out[sym] = ValueRange(lo, hi)
    return out


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=True,
           preserve_module_call_signature=()):
    """Captures `mod(*args, **kwargs)` as one functional graph (torch.export.export)."""
    if not isinstance(mod, nn.Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise exc.UserError(f"Expecting `args` to be a tuple of example positional inputs, "
                            f"got {type(args)}")
    return capture(mod, args, kwargs, dynamic_shapes=dynamic_shapes, module=mod)
