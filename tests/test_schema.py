"""Op schemas (ember/ops/_schema.py; each registration's schema=): the parser reads PyTorch's syntax,
every registry op declares a schema that describes its real positional tuple, the
schema agrees with aten's where PyTorch has the op (differences listed with a reason),
keyword arguments bind through it, and the OpOverload surface reads like PyTorch's."""
import re
import subprocess
import sys

import pytest

import ember
from ember.ops import REGISTRY
from ember.ops._schema import parse_schema

from registry_samples import SAMPLES
from ember.utils._python_dispatch import TorchDispatchMode


# ------------------------------------------------------------------ the parser

def test_parser_reads_pytorchs_syntax():
    s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert (s.name, s.overload_name) == ("add", "Tensor")
    assert [a.name for a in s.arguments] == ["self", "other", "alpha"]
    assert [a.kwarg_only for a in s.arguments] == [False, False, True]
    assert s.arguments[2].default_value == 1 and not s.arguments[0].has_default_value()
    assert [str(a.type) for a in s.arguments] == ["Tensor", "Tensor", "Scalar"]
    assert not s.is_mutable and len(s.returns) == 1 and s.returns[0].name == ""

    s = parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    a0 = s.arguments[0].alias_info
    assert a0.is_write and a0.before_set == {"a"} and s.is_mutable
    assert s.returns[0].alias_info.is_write and s.arguments[1].alias_info is None

    s = parse_schema("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) "
                     "-> Tensor(a)[]")
    ai = s.arguments[0].alias_info
    assert ai.before_set == {"a"} and ai.after_set == {"*"} and not ai.is_write
    assert s.returns[0].type.is_list and s.returns[0].alias_info.before_set == {"a"}

    s = parse_schema("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                     "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor")
    assert s.arguments[1].type.N == 2 and s.arguments[1].type.is_list
    assert s.arguments[2].default_value == [] and s.arguments[3].default_value == [0, 0]
    assert s.arguments[5].default_value is False

    s = parse_schema('f(Tensor? w, Tensor[] ts, Tensor?[] idx, SymInt n, ScalarType? dtype=None, '
                     'Layout? layout=None, Device? device=None, bool b=True, float eps=1e-05, '
                     'str mode="mean", Dimname d, Generator? g=None, int[1]? dim=None, '
                     'MemoryFormat? mf=contiguous_format, float[]? r=None) '
                     '-> (Tensor values, Tensor indices)')
    t = {a.name: a.type for a in s.arguments}
    assert t["w"].optional and t["w"].base == "Tensor" and not t["w"].is_list
    assert t["ts"].is_list and not t["ts"].optional
    assert t["idx"].is_list and t["idx"].optional_elem and not t["idx"].optional
    assert t["n"].base == "SymInt" and t["dtype"].optional and t["layout"].base == "Layout"
    assert t["device"].base == "Device" and t["d"].base == "Dimname" and t["g"].optional
    assert t["dim"].is_list and t["dim"].N == 1 and t["dim"].optional
    d = {a.name: a.default_value for a in s.arguments}
    assert d["eps"] == 1e-05 and d["mode"] == "mean" and d["mf"] == "contiguous_format"
    assert d["b"] is True and d["dtype"] is None and d["r"] is None
    assert [r.name for r in s.returns] == ["values", "indices"]
    assert str(s).startswith("f(Tensor? w, Tensor[] ts, Tensor?[] idx")
    assert parse_schema("f(Tensor a) -> ()").returns == []


@pytest.mark.parametrize("bad", ["add(Tensor self", "add(Tensor self) ->", "add(Tensor(a self) "
                                 "-> Tensor", "add(Tensor x, Tensor x) -> Tensor", "(x) -> y"])
def test_parser_refuses_malformed_schemas(bad):
    with pytest.raises(ValueError, match="schema"):
        parse_schema(bad)


def test_parser_round_trips_every_aten_schema():
    torch = pytest.importorskip("torch")
    n = 0
    for sch in torch._C._jit_get_all_schemas():
        text = str(sch)
        # TorchScript builtins with varargs or tuple types are not operator schemas
        if not text.startswith("aten::") or "..." in text or "((" in text or "(str, tVal)" \
                in text or "(int, tVal)" in text or ", tVal)[]" in text:
            continue
        assert str(parse_schema(text)) == text[len("aten::"):], text
        n += 1
    assert n > 2000


# ------------------------------------------------------------------ every op

def test_every_op_declares_a_schema():
    missing = sorted(n for n, op in REGISTRY.items() if op._schema_text is None)
    assert missing == [], "ops without a schema (pass schema= to register)"
    for name, op in REGISTRY.items():
        s = op._schema
        assert s is op._schema, "parsed once"
        names = [a.name for a in s.arguments]
        assert len(set(names)) == len(names), name


# Ops whose schema describes an ember layout that aten does not have (no such overload).
EMBER_ONLY = {
    "accumulate_grad_": "AccumulateGrad's write of .grad as an op (the engine picks `how`)",
    "arange": "arange.start_step_n: the public function resolves end into a count n and dtype",
    "prod": "prod.dim_IntList: one op reduces any set of dims (aten has prod and prod.dim_int)",
    "unique": "one op for _unique2/unique_dim: sorted/inverse/counts flags and optional dim",
    "_sparse_segment_sum": "the duplicate-summing scatter behind coalesce and to_dense",
    "convolution_backward_weight": "convolution_backward's grad_weight alone (aten's op returns "
                                   "all three grads under an output_mask)",
}

# Ops whose schema differs from aten's overload of the same name, and why.
DIFFERS = {
    "_embedding_bag": "padding_idx=None means none (aten uses -1)",
    "_sparse_mm": "takes the COO tensor's components (indices, values, rows), not the tensor",
    "_log_softmax_backward_data": "no input_dtype: the gradient keeps grad_output's dtype",
    "_softmax_backward_data": "no input_dtype: the gradient keeps grad_output's dtype",
    "acosh_": "the in-place method's twin: computes out of place, the method commits with copy_",
    "asinh_": "the in-place method's twin: computes out of place, the method commits with copy_",
    "atanh_": "the in-place method's twin: computes out of place, the method commits with copy_",
    "amax": "dims arrive normalized: a sorted tuple of dims, None for all",
    "amin": "dims arrive normalized: a sorted tuple of dims, None for all",
    "as_strided": "storage_offset counts from the input's first element and defaults to 0",
    "as_strided_scatter": "storage_offset counts from the input's first element, default 0",
    "batch_norm": "no cudnn_enabled argument",
    "layer_norm": "no cudnn_enable argument",
    "contiguous": "always a copy (callers skip it for contiguous input); no memory_format",
    "div": "div.Tensor carries rounding_mode=None, so div and div_rounding share a layout",
    "expand": "no `implicit` flag",
    "index": "the indexed dims travel with the index tensors (basic indexing is split off)",
    "index_put": "the indexed dims travel with the index tensors",
    "lift_fresh_copy": "takes the constant's array value, not a Tensor",
    "linalg_lstsq": "returns (solution, rank, singular_values); residuals are computed by "
                    "linalg.lstsq",
    "linalg_svd": "no driver argument (LAPACK gesdd through NumPy)",
    "nan_to_num": "nan arrives resolved (the public function maps None to 0.0)",
    "normal": "takes the output dtype (resolved by the public function)",
    "polygamma": "(self, n): ember's pointwise ops take their tensor first",
    "round": "one op for round and round.decimals: decimals=None means round()",
    "scatter": "one op for scatter.src and scatter.reduce: reduce=None means no reduction",
    "sort": "stable is the last argument (aten's sort.stable puts it first)",
}
# factories get their dtype resolved (default dtype, int64) by the public function
for _n in ("empty", "eye", "full", "linspace", "logspace", "normal_size", "rand", "randint",
           "randn", "randperm", "tril_indices", "triu_indices"):
    DIFFERS[_n] = "dtype is required: the public function resolves the default dtype"

# aten's factory/copy options that ember has no use for (a single CPU layout/device)
_ATEN_ONLY_KWARGS = {"layout", "device", "pin_memory", "memory_format", "non_blocking"}


def _aten_overload(torch, s, namespace="aten"):
    if namespace == "quantized_decomposed":
        import torch.ao.quantization.fx._decomposed  # noqa: F401  (defines the namespace)
    packet = getattr(getattr(torch.ops, namespace), s.name, None)
    if packet is None:
        return None
    try:
        return getattr(packet, s.overload_name or "default")
    except AttributeError:
        return None


def _contract(s, drop=()):
    args = [(a.name, a.kwarg_only, a.has_default_value(), a.default_value,
             None if a.alias_info is None else (a.alias_info.is_write, "*" in a.alias_info.after_set))
            for a in s.arguments if not (a.kwarg_only and a.name in drop)]
    rets = [None if r.alias_info is None else r.alias_info.is_write for r in s.returns]
    return args, rets


def _differences(op, torch):
    ov = _aten_overload(torch, op._schema, op.namespace)
    if ov is None:
        return None
    aten = parse_schema(str(ov._schema))
    mine = op._schema
    drop = _ATEN_ONLY_KWARGS - {a.name for a in mine.arguments}
    return _contract(mine) != _contract(aten, drop)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_schema_matches_aten(name):
    torch = pytest.importorskip("torch")
    op = REGISTRY[name]
    differs = _differences(op, torch)
    if differs is None:
        assert name in EMBER_ONLY, f"aten has no {op.name()}: fix the schema or list it"
    elif differs:
        assert name in DIFFERS, f"{op._schema} differs from aten's schema: fix or list it"
    else:
        assert name not in DIFFERS and name not in EMBER_ONLY, "listed but matches aten"


def test_lists_name_registered_ops():
    assert set(EMBER_ONLY) | set(DIFFERS) <= set(REGISTRY)


# ------------------------------------------------------------------ the real layout

def _fits(value, arg):
    """Does a positional value fit the declared argument? (A Tensor argument may also
    take a Python number: one ember op serves aten's Tensor and Scalar overloads.)"""
    t = arg.type
    if value is None:
        return t.optional or (arg.has_default_value() and arg.default_value is None)
    if isinstance(value, ember.Tensor):
        return t.base == "Tensor" and not t.is_list or t.base == "Any"
    if isinstance(value, (list, tuple)):
        return t.is_list
    if t.base == "Tensor" and not t.is_list:
        return isinstance(value, (bool, int, float, complex))
    return not t.is_list or (t.N is not None and isinstance(value, int))


class _CheckLayout(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.problems = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args)
        s = func._schema
        params = s.arguments
        if len(args) > len(params) or any(not a.has_default_value()
                                           for a in params[len(args):]):
            self.problems.append(f"{func.name}: {len(args)} args for {s}")
        for v, a in zip(args, params):
            if not _fits(v, a):
                self.problems.append(f"{func.name}: {a.name}={type(v).__name__} for {s}")
        if not (len(s.returns) == 1 and s.returns[0].type.is_list):
            n = len(out) if isinstance(out, (tuple, list)) else 1
            if n != len(s.returns):
                self.problems.append(f"{func.name}: {n} outputs for {s}")
        return out


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_schema_describes_the_positional_tuple(name):
    """Each op's sample runs through a mode that checks every dispatched call's
    arguments (count, Tensor/list/scalar kinds) and outputs against the schema."""
    fn, inputs = SAMPLES[name]()
    for x in inputs:             # as tests/test_registry.py: autograd runs too
        if x.dtype.is_floating_point or x.dtype.is_complex:
            x.requires_grad_(True)
    mode = _CheckLayout()
    with mode:
        fn(*inputs)
    assert mode.problems == []


# ------------------------------------------------------------------ keyword binding

def test_keywords_bind_to_the_positional_tuple():
    torch = pytest.importorskip("torch")
    add, x, y = REGISTRY["add"], ember.arange(3.0), ember.ones(3)
    got = add(x, other=y, alpha=2)
    want = torch.ops.aten.add.Tensor(torch.arange(3.0), other=torch.ones(3), alpha=2)
    assert got.tolist() == want.tolist()
    assert add(x, y).tolist() == (x + y).tolist()             # alpha from its default
    assert REGISTRY["sum"](x, dim=(0,), keepdim=True).tolist() == [3.0]
    v, i = REGISTRY["max_dim"](ember.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
    assert v.tolist() == [5.0, 7.0] and i.tolist() == [1, 0]
    out = REGISTRY["copy_"](ember.zeros(3), src=y)
    assert out.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("call, message", [
    (lambda op, x: op(x, other=x, foo=1), "add() got an unexpected keyword argument 'foo'"),
    (lambda op, x: op(x, x, self=x), "add() got multiple values for argument 'self'"),
    (lambda op, x: op(x), "add() missing 1 required argument: 'other'"),
    (lambda op, x: op(alpha=2), "add() missing 2 required arguments: 'self', 'other'"),
    (lambda op, x: op(x, x, 1, 2), "add() takes at most 3 arguments (4 given)"),
])
def test_bad_keywords_raise_type_error(call, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        call(REGISTRY["add"], ember.ones(2))


# ------------------------------------------------------------------ OpOverload surface

def test_opoverload_surface():
    torch = pytest.importorskip("torch")
    add = REGISTRY["add"]
    ref = torch.ops.aten.add.Tensor
    assert add.name() == ref.name() == "aten::add.Tensor"
    assert add._overloadname == ref._overloadname == "Tensor"
    assert add.overloadpacket.__name__ == ref.overloadpacket.__name__ == "add"
    assert add.overloadpacket.Tensor is add and "Tensor" in add.overloadpacket.overloads()
    assert str(add._schema) == str(ref._schema)[len("aten::"):]
    assert add.name == "add" and add.__name__ == "add"         # the registry name stays
    assert "pointwise" in add.tags
    mx, mx_dim = REGISTRY["max"], REGISTRY["max_dim"]
    assert mx_dim.name() == "aten::max.dim" and mx_dim.overloadpacket is mx.overloadpacket
    assert mx_dim.default is mx and mx.overloadpacket.dim is mx_dim
    assert mx._overloadname == "default" and mx.name() == "aten::max"
    copy_ = REGISTRY["copy_"]
    assert copy_._schema.is_mutable and copy_._schema.arguments[0].alias_info.is_write
    assert copy_._schema.returns[0].alias_info.is_write
    assert not add._schema.is_mutable
    view = REGISTRY["view"]._schema
    assert view.arguments[0].alias_info.before_set == {"a"}
    assert not view.arguments[0].alias_info.is_write


def test_dispatch_never_parses_schemas():
    """Schemas are parsed on first use (binding, a mode reading _schema), never by the
    dispatch fast path."""
    code = ("import ember\nfrom ember.ops import REGISTRY\n"
            "a = ember.ones(3, requires_grad=True)\n"
            "(a + a * 2).exp().sum().backward()\nember.ones(2, 2).matmul(ember.ones(2))\n"
            "print(sum('_parsed_schema' in op.__dict__ for op in REGISTRY.values()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


def test_aten_namespace():
    """`torch.ops.aten.<op>.<overload>` after `import ember as torch`."""
    aten = ember.ops.aten
    assert aten.add.Tensor is REGISTRY["add"] and aten.mm.default is REGISTRY["mm"]
    assert aten.max.dim is REGISTRY["max_dim"] and aten.max.default is REGISTRY["max"]
    assert sorted(aten.max.overloads()) == ["default", "dim"]
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func is aten.mm.default)
            return func(*args, **(kwargs or {}))
    a, b = ember.ones(2, 3), ember.ones(3, 2)
    with Log():
        a.mm(b)
    assert seen == [True]
    with pytest.raises(AttributeError, match="has no overload name 'foo'"):
        aten.add.foo
    with pytest.raises(AttributeError, match="no attribute 'not_an_op'"):
        aten.not_an_op


def test_packet_call_picks_the_overload_that_binds():
    torch = pytest.importorskip("torch")
    aten, x = ember.ops.aten, ember.tensor([[1.0, 5.0], [7.0, 2.0]])
    tx = torch.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert aten.max(x).item() == torch.ops.aten.max(tx).item()
    v, i = aten.max(x, 1)
    tv, ti = torch.ops.aten.max(tx, 1)
    assert v.tolist() == tv.tolist() and i.tolist() == ti.tolist()
    assert aten.max(x, dim=0, keepdim=True)[0].tolist() == [[7.0, 5.0]]
    with pytest.raises(TypeError, match="no overload matches"):
        aten.max(x, 1, True, 4)
