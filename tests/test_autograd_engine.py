"""The backward engine, hooks, grad modes, in-place/view rules: ember vs torch scenarios."""

import pytest

from oracle import torch
from scenarios import Scenarios, outcome
import ember


SCENARIOS = Scenarios()
scenario = SCENARIOS


def leaf(L, *vals):
    return L.tensor(list(vals), requires_grad=True)


# ------------------------------------------------------------------ backward / grad

@scenario
def accumulate_and_retain(L):
    x = leaf(L, 1., 2., 3.)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


@scenario
def backward_twice_error(L):
    x = leaf(L, 1., 2.)
    y = (x * x).sum()
    y.backward()
    y.backward()


@scenario
def backward_twice_nothing_saved(L):
    x = leaf(L, 1., 2.)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    return x.grad


@scenario
def non_scalar_needs_grad(L):
    x = leaf(L, 1., 2.)
    (x * 2).backward()


@scenario
def complex_scalar_needs_grad(L):
    x = leaf(L, 1., 2.)
    (x * 1j).sum().backward()


@scenario
def element_0_no_grad(L):
    L.tensor([1., 2.]).sum().backward()


@scenario
def grad_output_shape_mismatch(L):
    x = leaf(L, 1., 2.)
    (x * 2).backward(L.ones(3))


@scenario
def grad_output_complex_mismatch(L):
    x = leaf(L, 1., 2.)
    L.autograd.grad(x * 2, x, L.ones(2, dtype=L.complex64))


@scenario
def explicit_gradient(L):
    x = leaf(L, 1., 2.)
    (x * x).backward(L.tensor([1., 10.]))
    return x.grad


@scenario
def backward_function_multiple_roots(L):
    x = leaf(L, 1., 2.)
    L.autograd.backward([(x * x).sum(), x * 3], [None, L.tensor([1., 2.])])
    return x.grad


@scenario
def backward_count_mismatch(L):
    x = leaf(L, 1., 2.)
    L.autograd.backward([x.sum(), x.sum()], [L.tensor(1.)])


@scenario
def backward_inputs_leaf(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    m = a * b
    (m * m).sum().backward(inputs=[a])
    return a.grad, b.grad


@scenario
def backward_inputs_nonleaf(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    m = a * b
    (m * 2).sum().backward(inputs=[m])
    return m.grad, m.retains_grad, a.grad


@scenario
def backward_inputs_empty(L):
    a = leaf(L, 1.)
    (a * 2).sum().backward(inputs=[])


@scenario
def grad_basic(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    return L.autograd.grad((a * b).sum(), [a, b]), a.grad


@scenario
def grad_unused(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    L.autograd.grad((a * 2).sum(), [a, b])


@scenario
def grad_allow_unused_and_materialize(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    return (L.autograd.grad((a * 2).sum(), [a, b], allow_unused=True),
            L.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True))


@scenario
def grad_materialize_needs_allow_unused(L):
    a = leaf(L, 1., 2.)
    L.autograd.grad((a * 2).sum(), [a], materialize_grads=True, allow_unused=False)


@scenario
def grad_input_not_requiring_grad(L):
    a = leaf(L, 1., 2.)
    L.autograd.grad((a * 2).sum(), L.tensor([1.]))


@scenario
def grad_of_nonleaf_keeps_graph_below(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    m = a * b
    gm, = L.autograd.grad(m.exp().sum(), m)
    ga, = L.autograd.grad((m * m).sum(), a)
    return gm, ga


@scenario
def create_graph_double_backward(L):
    x = leaf(L, 0.5, 1.5)
    g, = L.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    g2, = L.autograd.grad(g.sum(), x, create_graph=True)
    g3, = L.autograd.grad(g2.sum(), x)
    return g, g2, g3


@scenario
def backward_create_graph_grad_has_graph(L):
    x = leaf(L, 0.5, 1.5)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    out = (g.requires_grad, g.grad_fn is not None)
    x.grad = None
    return out


@scenario
def grads_batched(L):
    x = leaf(L, 1., 2., 3.)
    y = x * x
    return L.autograd.grad(y, x, L.eye(3), is_grads_batched=True)


@scenario
def broadcast_and_promotion(L):
    a = L.tensor([[1., 2.]], requires_grad=True)
    b = L.tensor([[1.], [2.], [3.]], dtype=L.float64, requires_grad=True)
    (a * b).sum().backward()
    return a.grad, b.grad


@scenario
def noncontiguous_leaf_grad_layout(L):
    base = L.arange(6.).reshape(2, 3).t().detach().requires_grad_()
    (base * 2).sum().backward()
    return base.grad, base.grad.stride(), base.stride()


@scenario
def grad_is_not_user_tensor(L):
    x = leaf(L, 1., 2.)
    go = L.tensor([1., 1.])
    (x * 1).backward(go)
    x.grad.add_(5)
    return go


# ----------------------------------------------------------------------------- hooks

@scenario
def tensor_hooks_order(L):
    x = leaf(L, 1., 2.)
    h = x * 2
    calls = []
    h.register_hook(lambda g: calls.append("h1") or g * 10)
    h.retain_grad()
    h.register_hook(lambda g: calls.append("h2") or g + 1)
    x.register_hook(lambda g: calls.append("x") or g * 2)
    (h * h).sum().backward()
    return calls, h.grad, x.grad


@scenario
def leaf_hook_runs_for_grad(L):
    x = leaf(L, 1., 2.)
    calls = []
    x.register_hook(lambda g: calls.append("x") or g * 2)
    g, = L.autograd.grad((x * 3).sum(), x)
    return g, calls, x.grad


@scenario
def hook_remove(L):
    x = leaf(L, 1., 2.)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    (x * 3).sum().backward()
    return x.grad


@scenario
def hook_on_no_grad_tensor(L):
    L.tensor([1.]).register_hook(lambda g: g)


@scenario
def post_accumulate_grad_hook(L):
    w = leaf(L, 1., 2.)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad * 1))
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    return seen


@scenario
def post_accumulate_on_nonleaf(L):
    (leaf(L, 1.) * 2).register_post_accumulate_grad_hook(lambda p: None)


@scenario
def retain_grad_with_create_graph(L):
    x = leaf(L, 1., 2.)
    h = x * x
    h.retain_grad()
    (h * h).sum().backward(create_graph=True)
    out = h.grad, x.grad
    x.grad = None
    return out


@scenario
def retain_grad_no_rg(L):
    L.tensor([1.]).retain_grad()


@scenario
def node_api(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    z = a * b + a
    nf = [(type(n).__name__, nr) for n, nr in z.grad_fn.next_functions]
    nn = z.grad_fn.next_functions[0][0].next_functions[0][0].name()
    post, pre = [], []
    h1 = z.grad_fn.register_hook(lambda gi, go: post.append((gi[0] * 1, go[0] * 1)))
    h2 = z.grad_fn.register_prehook(lambda go: pre.append(1) or (go[0] * 2,))
    z.sum().backward(retain_graph=True)
    h1.remove()
    h2.remove()
    z.sum().backward()
    return z.grad_fn.name(), nf, nn, post, pre, a.grad, z.grad_fn.metadata


@scenario
def node_post_hook_replaces(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    z = a * b
    z.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 7, gi[1]))
    z.sum().backward()
    return a.grad, b.grad


@scenario
def node_post_hook_wrong_count(L):
    a, b = leaf(L, 1., 2.), leaf(L, 3., 4.)
    z = a * b

    def hook(gi, go):
        return (gi[0],)
    z.grad_fn.register_hook(hook)
    z.sum().backward()


@scenario
def node_prehook_wrong_count(L):
    a = leaf(L, 1., 2.)
    z = a * 2

    def hook(go):
        return (go[0], go[0])
    z.grad_fn.register_prehook(hook)
    z.sum().backward()


@scenario
def grad_fn_names(L):
    a = leaf(L, 1., 2., 3., 4.)
    return [t.grad_fn.name() for t in (a * 2, a + 1, a.exp(), a.sum(), a.view(2, 2),
                                       a.reshape(4), a.permute(0), a.expand(2, 4))]


# ----------------------------------------------------------------------- grad modes

@scenario
def no_grad_variants(L):
    a = leaf(L, 1., 2.)

    @L.no_grad
    def f(t):
        return t * 2

    @L.no_grad()
    def f2(t):
        return t * 2

    @L.enable_grad()
    def f3(t):
        return t * 2

    with L.no_grad():
        inner = f3(a).requires_grad, (a * 2).requires_grad
    return f(a).requires_grad, f2(a).requires_grad, inner, f.__name__


@scenario
def set_grad_enabled_forms(L):
    a = leaf(L, 1.)
    with L.set_grad_enabled(False):
        r1 = (a * 2).requires_grad
    r2 = L.is_grad_enabled()
    L.set_grad_enabled(False)
    r3 = (a * 2).requires_grad
    L.set_grad_enabled(True)

    @L.set_grad_enabled(False)
    def f(t):
        return t * 2
    return r1, r2, r3, f(a).requires_grad, L.is_grad_enabled()


@scenario
def no_grad_generator(L):
    a = leaf(L, 1.)

    @L.no_grad()
    def gen():
        yield (a * 2).requires_grad
        yield L.is_grad_enabled()
    return list(gen()), L.is_grad_enabled()


@scenario
def inference_mode_tensors(L):
    a = leaf(L, 1., 2.)
    with L.inference_mode():
        t = L.ones(2) * 3
        v = a.view(2)
        inside = (t.is_inference(), L.is_inference_mode_enabled(), t.requires_grad,
                  v.is_inference(), L.is_grad_enabled())
        with L.inference_mode(False):
            u = L.ones(2) * 2
            inner = (u.is_inference(), L.is_grad_enabled())
    return inside, inner, L.is_inference_mode_enabled(), a.is_inference()


@scenario
def inference_tensor_in_autograd(L):
    with L.inference_mode():
        t = L.ones(2) * 3
    (t * leaf(L, 1., 2.)).sum().backward()


@scenario
def inference_tensor_inplace_outside(L):
    with L.inference_mode():
        t = L.ones(2) * 3
    t.add_(1)


@scenario
def inference_tensor_requires_grad_outside(L):
    with L.inference_mode():
        t = L.ones(2) * 3
        t.requires_grad_()
    t.requires_grad_()


@scenario
def inference_mode_decorator(L):
    @L.inference_mode
    def f(u):
        return u * 2

    @L.inference_mode()
    def g(u):
        return u * 2
    a = leaf(L, 1.)
    return f(a).is_inference(), g(a).requires_grad


# ------------------------------------------------------------- in-place and versions

@scenario
def inplace_leaf(L):
    leaf(L, 1.).add_(1)


@scenario
def inplace_view_of_leaf(L):
    leaf(L, 1., 2.)[0].add_(1)


@scenario
def inplace_split_output(L):
    (leaf(L, 1., 2.) * 1).split(1)[0].mul_(2)


@scenario
def inplace_unbind_output(L):
    (leaf(L, 1., 2.) * 1).unbind(0)[1].mul_(2)


@scenario
def inplace_modified_saved_input(L):
    a = leaf(L, 1., 2.)
    h = a * 1
    c = h.sin()
    h.add_(1)
    c.sum().backward()


@scenario
def inplace_modified_saved_output(L):
    a = leaf(L, 1., 2.)
    c = (a * 1).exp()
    c.add_(1)
    c.sum().backward()


@scenario
def inplace_modified_leaf_under_no_grad(L):
    a = leaf(L, 1., 2.)
    c = a.sin()
    with L.no_grad():
        a.mul_(2)
    c.sum().backward()


@scenario
def inplace_grads(L):
    a = leaf(L, 1., 2.)
    h = a * 1
    h.mul_(a)
    h.add_(3)
    (h * h).sum().backward()
    return h.grad_fn.name(), a.grad


@scenario
def inplace_view_copyslices(L):
    p = leaf(L, 1., 2., 3., 4.)
    q = p * 1
    v = q[1:3]
    v.mul_(p[1:3])
    (q.view(2, 2) ** 2).sum().backward()
    return q.grad_fn.name(), v.grad_fn is not None, p.grad


@scenario
def inplace_transposed_view(L):
    p = leaf(L, 1., 2., 3., 4.)
    q = (p * 1).view(2, 2)
    q.t()[0].mul_(3)
    (q ** 2).sum().backward()
    return q, p.grad


@scenario
def inplace_view_other_views_see_it(L):
    p = leaf(L, 1., 2., 3., 4.)
    q = p * 1
    v1, v2 = q[:2], q[1:]
    v1.mul_(2)
    (v2 * v2).sum().backward()
    return p.grad


@scenario
def inplace_base_then_old_view(L):
    p = leaf(L, 1., 2., 3.)
    q = p * 1
    v = q[1:]
    q.mul_(p)
    (v * 1).sum().backward()
    return p.grad


@scenario
def inplace_view_of_noncontiguous_base(L):
    p = L.arange(6.).reshape(2, 3).t().detach().requires_grad_()
    q = p * 1                      # a transposed (dense, non-contiguous) result
    q[0].mul_(5)
    (q * q).sum().backward()
    return p.grad


def _complex_view_case(L, mode):
    z = L.tensor([1 + 2j, 3 - 1j, 0.5 + 0.5j], requires_grad=True)
    h = z * 1
    if mode == "regen":
        r = h.imag
        h.mul_(z)
        return L.autograd.grad((r * r).sum(), z)[0]
    {"real": lambda: h.real.mul_(2), "imag": lambda: h.imag.mul_(3),
     "as_real": lambda: L.view_as_real(h)[1:, 0].mul_(5)}[mode]()
    return L.autograd.grad((h * h.conj()).real.sum() + (h * 2j).real.sum(), z)[0]


for _mode in ("real", "imag", "as_real", "regen"):
    SCENARIOS[f"inplace_complex_{_mode}_view"] = \
        lambda L, m=_mode: _complex_view_case(L, m)


@scenario
def copy_into_view_of_plain_tensor(L):
    x = leaf(L, 1., 2.)
    buf = L.zeros(4)
    buf[1:3].copy_(x * 3)
    (buf * buf).sum().backward()
    return buf.requires_grad, x.grad


@scenario
def version_counters(L):
    c = L.tensor([1., 2.])
    d = c.detach()
    d.add_(1)
    shared = (c._version, d._version)
    e = c.data
    e.add_(1)
    return shared, (c._version, e._version), c


@scenario
def detach_then_inplace_breaks_backward(L):
    a = leaf(L, 1., 2.)
    c = a.exp()
    c.detach().add_(1)
    c.sum().backward()


@scenario
def data_inplace_does_not_break_backward(L):
    a = leaf(L, 1., 2.)
    c = a.exp()
    c.data.add_(1)
    c.sum().backward()
    return a.grad


# ember names split's node after split_with_sizes (the shape ops' choice), torch says Split
_XFAIL = {"inplace_split_output"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason="split's node is named SplitWithSizes, torch says Split"))
    if n in _XFAIL else n for n in SCENARIOS])
def test_matches_torch(name):
    fn = SCENARIOS[name]
    assert outcome(fn, ember) == outcome(fn, torch)


def test_backward_does_not_run_unneeded_nodes():
    """autograd.grad stops at the wanted edges: nodes beyond them keep their saved tensors."""
    a = ember.tensor([1., 2.], requires_grad=True)
    m = a.exp()
    calls = []
    m.grad_fn.register_prehook(lambda g: calls.append(1))
    ember.autograd.grad((m * 2).sum(), m)
    assert calls == []
    m.sum().backward()
    assert calls == [1]


def test_grad_of_the_same_output_twice_sums_as_torch():
    x = ember.randn(3, requires_grad=True)
    y = x * 2
    (g,) = ember.autograd.grad([y, y], [x], [ember.ones(3), ember.full((3,), 3.0)])
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ty = tx * 2
    (tg,) = torch.autograd.grad([ty, ty], [tx], [torch.ones(3), torch.full((3,), 3.0)])
    assert g.tolist() == tg.tolist()
