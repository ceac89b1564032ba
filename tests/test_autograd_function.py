"""Custom autograd.Function: each scenario runs in ember and torch and must agree."""
import pytest

from oracle import torch
from scenarios import Scenarios, outcome
import ember


SCENARIOS = Scenarios()
scenario = SCENARIOS


def _sq(L):
    class Sq(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g * ctx.k, None
    return Sq


@scenario
def basic(L):
    x = L.tensor([1., 2., 3.], requires_grad=True)
    y = _sq(L).apply(x, 3)
    y.sum().backward()
    return y, x.grad, y.grad_fn.name(), type(y.grad_fn).__name__, y.grad_fn.needs_input_grad


@scenario
def double_backward(L):
    x = L.tensor([1., 2., 3.], requires_grad=True)
    g, = L.autograd.grad(_sq(L).apply(x, 2).sum(), x, create_graph=True)
    g2, = L.autograd.grad((g * g).sum(), x)
    return g, g2


@scenario
def next_functions(L):
    x = L.tensor([1., 2.], requires_grad=True)
    y = _sq(L).apply(x * 2, 1)
    return [(f.name() if f is not None else None, nr) for f, nr in y.grad_fn.next_functions]


@scenario
def backward_returns_none(L):
    class NoneB(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return None
    x = L.tensor([1., 2.], requires_grad=True)
    NoneB.apply(x).sum().backward()
    return x.grad, L.autograd.grad(NoneB.apply(x).sum(), x, allow_unused=True)


@scenario
def too_few_grads(L):
    class Few(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            return x * n

        @staticmethod
        def backward(ctx, g):
            return g
    Few.apply(L.tensor([1.], requires_grad=True), 2).sum().backward()


@scenario
def extra_none_grads_ok(L):
    class More(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            return x * n

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None
    x = L.tensor([1.], requires_grad=True)
    More.apply(x, 2).sum().backward()
    return x.grad


@scenario
def extra_grad_not_none(L):
    class More(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            return x * n

        @staticmethod
        def backward(ctx, g):
            return g, g
    More.apply(L.tensor([1.], requires_grad=True), 2).sum().backward()


@scenario
def bad_grad_shape(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()
    Bad.apply(L.tensor([[1., 2.]], requires_grad=True)).sum().backward()


@scenario
def broadcastable_grad_is_reduced(L):
    class Wide(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.expand(3, 2)
    x = L.tensor([1., 2.], requires_grad=True)
    Wide.apply(x).sum().backward()
    return x.grad


@scenario
def grad_dtype_cast(L):
    class D(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.double()
    x = L.tensor([1., 2.], requires_grad=True)
    D.apply(x).sum().backward()
    return x.grad


@scenario
def save_non_tensor(L):
    class Sv(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x
    Sv.apply(L.tensor([1.], requires_grad=True))


def _saver(L):
    class Sv(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x
    return Sv


@scenario
def saved_modified_inplace(L):
    a = L.tensor([1., 2.], requires_grad=True)
    h = a * 1
    y = _saver(L).apply(h)
    h.add_(1)
    y.sum().backward()


@scenario
def saved_freed(L):
    a = L.tensor([1., 2.], requires_grad=True)
    y = _saver(L).apply(a * 1)
    y.sum().backward()
    return y.grad_fn.saved_tensors


@scenario
def saved_retained(L):
    a = L.tensor([1., 2.], requires_grad=True)
    y = _saver(L).apply(a * 1)
    y.sum().backward(retain_graph=True)
    return y.grad_fn.saved_tensors


@scenario
def saved_output_double_backward(L):
    class Exp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y
    x = L.tensor([0.5, 1.], requires_grad=True)
    g, = L.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    return g, L.autograd.grad(g.sum(), x)


@scenario
def mark_non_differentiable(L):
    class Sort(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = (x * 0).long()
            out = x * 2
            ctx.mark_non_differentiable(idx)
            return out, idx, x.clone()

        @staticmethod
        def backward(ctx, g, gi, gc):
            return g * 2 + gc
    x = L.tensor([1., 2.], requires_grad=True)
    out, idx, c = Sort.apply(x)
    (out.sum() + c.sum()).backward()
    return out.requires_grad, idx.requires_grad, idx.grad_fn is None, x.grad


@scenario
def mark_non_differentiable_float(L):
    class ND(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb
    x = L.tensor([1., 2.], requires_grad=True)
    a, b = ND.apply(x)
    a.sum().backward()
    return b.requires_grad, x.grad


@scenario
def materialize_grads_default(L):
    class Two(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3
    x = L.tensor([1., 2.], requires_grad=True)
    a, b = Two.apply(x)
    a.sum().backward()
    return x.grad


@scenario
def set_materialize_grads_false(L):
    class Two(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 if g2 is None else g1 + g2
    x = L.tensor([1., 2.], requires_grad=True)
    Two.apply(x)[0].sum().backward()
    return x.grad


@scenario
def setup_context_style(L):
    class Mul(L.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x
    a = L.tensor([1., 2.], requires_grad=True)
    b = L.tensor([3., 5.], requires_grad=True)
    Mul.apply(a, b).sum().backward()
    return a.grad, b.grad


def _dirty(L):
    class Dbl(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Dbl


@scenario
def mark_dirty(L):
    a = L.tensor([1., 2., 3.], requires_grad=True)
    h = a * 1
    r = _dirty(L).apply(h)
    (r * r).sum().backward()
    return r is h, h._version, r.grad_fn.name(), a.grad


@scenario
def mark_dirty_view(L):
    a = L.tensor([1., 2., 3., 4.], requires_grad=True)
    h = a * 1
    _dirty(L).apply(h[1:3])
    (h * h).sum().backward()
    return h, a.grad


@scenario
def mark_dirty_leaf(L):
    _dirty(L).apply(L.tensor([1.], requires_grad=True))


@scenario
def dirty_not_returned(L):
    class D(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g
    D.apply(L.tensor([1.], requires_grad=True) * 1)


def _ident(L):
    class Idf(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5
    return Idf


@scenario
def input_returned_as_is(L):
    a = L.tensor([1., 2.], requires_grad=True)
    y = _ident(L).apply(a)
    y.sum().backward()
    b = L.tensor([1., 2.])
    z = _ident(L).apply(b)
    return y is a, y.grad_fn.name(), a.grad, z is b, z.requires_grad


@scenario
def inplace_on_returned_input(L):
    y = _ident(L).apply(L.tensor([1., 2.], requires_grad=True))
    y.mul_(2)


@scenario
def once_differentiable(L):
    from_mod = L.autograd.function.once_differentiable

    class OD(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        @from_mod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.exp()
    a = L.tensor([1., 2.], requires_grad=True)
    g1, = L.autograd.grad(OD.apply(a).sum(), a)
    go = L.ones(2, requires_grad=True)
    g, = L.autograd.grad(OD.apply(a), a, go, create_graph=True)
    g.sum().backward()


@scenario
def non_tensor_outputs(L):
    class NT(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5, "s"

        @staticmethod
        def backward(ctx, g, a, b):
            return g * 3
    x = L.tensor([1.], requires_grad=True)
    y, n, s = NT.apply(x)
    y.sum().backward()
    return n, s, x.grad


@scenario
def vjp_instead_of_backward(L):
    class V(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 3
    x = L.tensor([1.], requires_grad=True)
    V.apply(x).sum().backward()
    return x.grad


@scenario
def both_vjp_and_backward(L):
    class V(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3
    V.apply(L.tensor([1.], requires_grad=True)).sum().backward()


@scenario
def no_backward_defined(L):
    class V(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
    V.apply(L.tensor([1.], requires_grad=True)).sum().backward()


@scenario
def no_grad_apply(L):
    with L.no_grad():
        y = _sq(L).apply(L.tensor([1.], requires_grad=True), 2)
    return y.requires_grad, y.grad_fn is None


@scenario
def no_input_requires_grad(L):
    y = _sq(L).apply(L.tensor([1., 2.]), 2)
    return y, y.grad_fn is None


@scenario
def kwargs_go_to_forward(L):
    class K(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=1.0):
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g * 2, None
    x = L.tensor([1.], requires_grad=True)
    y = K.apply(x, scale=3.0)
    y.sum().backward()
    try:
        _ident(L).apply(L.tensor([1.]), k=1)
    except TypeError:
        return y, x.grad, "TypeError"


@scenario
def legacy_call(L):
    _ident(L)()(L.tensor([1.]))


@scenario
def grad_accumulates_across_calls(L):
    x = L.tensor([1., 2.], requires_grad=True)
    Sq = _sq(L)
    (Sq.apply(x, 1) + Sq.apply(x, 2)).sum().backward()
    return x.grad


@scenario
def backward_sees_grad_mode(L):
    seen = []

    class M(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(L.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(L.is_grad_enabled())
            return g * 2
    x = L.tensor([1.], requires_grad=True)
    M.apply(x).sum().backward()
    L.autograd.grad(M.apply(x).sum(), x, create_graph=True)
    return seen


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_matches_torch(name):
    fn = SCENARIOS[name]
    assert outcome(fn, ember) == outcome(fn, torch)


def test_none_grads_are_none_not_zeros():
    """PyTorch 1.7: a Function whose backward returns None leaves .grad None."""
    class NoneB(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, None
    x = ember.ones(2, requires_grad=True)
    y = ember.ones(2, requires_grad=True)
    NoneB.apply(x, y).sum().backward()
    assert x.grad is not None and y.grad is None
