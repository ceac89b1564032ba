"""Decompositions into primitives (issue 8, point 3; DESIGN §4).

For every op with a `decomp`: the decomposition gives the kernel's values and, under
autograd, the kernel vjp's gradients on the op's registry sample; run recursively
(`ember._decomp.decompose`) it reaches only ops tagged `prim`. The coverage test keeps the
non-prim ops that still lack a decomposition in one explicit table, so adding an op
without either fails, and the remaining work stays visible.
"""
import numpy as np
import pytest

import ember
import ember._decomp as decomp_mod
import ember._prims as prims_mod
from ember.ops import REGISTRY
from ember.utils._python_dispatch import TorchDispatchMode

from registry_samples import SAMPLES

COMPOSITES = sorted(n for n, op in REGISTRY.items() if op.decomp is not None)

# Non-prim ops without a decomposition yet. The issue stays open until this is empty.
REMAINING = set()     # every non-prim op has a decomposition
# composites whose decomposition still runs one of the REMAINING ops (recursion stops there)
REACHES_REMAINING = {}


class _Record(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args))
        return func(*args)


def _op_call(name):
    """(op, args): the op's call in its registry sample's dispatch trace."""
    fn, inputs = SAMPLES[name]()
    with _Record() as rec:
        fn(*inputs)
    return next((f, a) for f, a in rec.calls if f.name == name)


def _flat(out):
    if isinstance(out, ember.Tensor):
        return [out]
    return [x for o in out for x in _flat(o)]


def _tol(dtype):
    return {ember.float64: 1e-10, ember.complex128: 1e-10, ember.float32: 1e-5,
            ember.complex64: 1e-5}.get(dtype, 1e-2 if dtype.is_floating_point else 0)


def _leaf_args(args):
    """Fresh float64 leaves requiring grad in place of the floating tensor arguments."""
    leaves = []

    def conv(a):
        if isinstance(a, ember.Tensor) and (a.dtype.is_floating_point or a.dtype.is_complex):
            x = a.detach().clone().requires_grad_(True)
            leaves.append(x)
            return x
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], ember.Tensor):
            return type(a)(conv(x) for x in a)
        return a
    return tuple(conv(a) for a in args), leaves


@pytest.mark.parametrize("name", COMPOSITES)
def test_decomposition_values_and_grads(name):
    op, args = _op_call(name)
    with ember.no_grad():
        want, got = _flat(op(*args)), _flat(op.decomp(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape), (g, w)
        tol = _tol(w.dtype)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=tol, atol=tol)
    if op.vjp is None or "random" in op.tags:
        return
    a1, l1 = _leaf_args(args)
    a2, l2 = _leaf_args(args)
    if not l1:
        return
    o1 = [o for o in _flat(op(*a1)) if o.dtype.is_floating_point or o.dtype.is_complex]
    o2 = [o for o in _flat(op.decomp(*a2)) if o.dtype.is_floating_point or o.dtype.is_complex]
    o1 = [(i, o) for i, o in enumerate(o1) if o.requires_grad]
    if not o1:
        return
    rng = np.random.default_rng(0)
    cots = [ember.from_numpy(rng.standard_normal(tuple(o.shape)).astype(o.dtype.np))
            for _, o in o1]
    g1 = ember.autograd.grad([o for _, o in o1], l1, cots, allow_unused=True)
    g2 = ember.autograd.grad([o2[i] for i, _ in o1], l2, cots, allow_unused=True)
    for x, y in zip(g1, g2):
        if x is None:         # the kernel declares no gradient here (BCE's target)
            continue
        if y is None:
            assert not x.abs().sum().item(), "the kernel's vjp gives a gradient, the decomp none"
            continue
        np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", COMPOSITES)
def test_decomposition_reaches_only_prims(name):
    op, args = _op_call(name)
    with decomp_mod.DecomposeMode() as mode:
        out = op(*args)
    ran = {f.name for f in mode.dispatched}
    assert ran, "the decomposition ran no op"
    assert all(f.name in REGISTRY for f in mode.dispatched)
    not_prim = {n for n in ran if not prims_mod.is_prim(n)}
    assert not_prim == REACHES_REMAINING.get(name, set()), not_prim
    assert not_prim <= REMAINING
    for g, w in zip(_flat(out), _flat(op(*args))):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-9)


def test_every_op_is_a_prim_or_decomposes_or_is_listed():
    """Coverage: the non-prim ops without a decomposition are exactly REMAINING."""
    missing = {n for n, op in REGISTRY.items() if "prim" not in op.tags and op.decomp is None}
    assert missing - REMAINING == set(), "new ops need a `prim` tag or a decomp="
    assert (REMAINING & set(REGISTRY)) - missing == set(), \
        "these now decompose (or are prims): drop them"
    print(f"{len(missing)} non-prim ops still without a decomposition")


def test_prim_and_composite_are_exclusive():
    both = [n for n, op in REGISTRY.items() if "prim" in op.tags and op.decomp is not None]
    assert both == []


def test_prims_namespace_reads_the_registry():
    assert prims_mod.add is REGISTRY["add"] and prims_mod.is_prim("cat")
    assert set(prims_mod.prims()) == {n for n, op in REGISTRY.items() if "prim" in op.tags}
    assert "add" in dir(prims_mod)
    with pytest.raises(AttributeError, match="not a primitive"):
        prims_mod.softmax
    with pytest.raises(AttributeError):
        prims_mod.no_such_op
    assert prims_mod.is_extern("matmul") and prims_mod.is_extern("fft_c2c")
    assert not prims_mod.is_extern("add") and not prims_mod.is_extern("softmax")


def test_decomposition_table_and_get_decompositions():
    table = decomp_mod.decomposition_table
    assert len(table) == len(COMPOSITES)
    sm = REGISTRY["softmax"]
    assert table[sm] is sm.decomp and table["softmax"] is sm.decomp and sm in table
    assert REGISTRY["add"] not in table
    with pytest.raises(KeyError):
        table["add"]
    got = decomp_mod.get_decompositions([sm, "gelu", "add", ember.ops.aten.max])
    assert set(got) == {sm, REGISTRY["gelu"]} | (
        {REGISTRY["max"]} if REGISTRY["max"].decomp is not None else set())
    with pytest.raises(NotImplementedError, match="no op named"):
        decomp_mod.get_decompositions(["nope"])


def test_decompose_runs_only_prims_and_matches():
    x = ember.randn(4, 5, dtype=ember.float64)
    y = decomp_mod.decompose("log_softmax", (x, 1, None))
    np.testing.assert_allclose(y.numpy(), ember.log_softmax(x, 1).numpy(), rtol=1e-12)
    # only the listed decompositions apply: gelu stays whole
    only = decomp_mod.get_decompositions(["softmax"])
    with decomp_mod.DecomposeMode(only) as mode:
        ember.softmax(ember.nn.functional.gelu(x), 1)
    names = {f.name for f in mode.dispatched}
    assert "gelu" in names and "softmax" not in names and "exp" in names
