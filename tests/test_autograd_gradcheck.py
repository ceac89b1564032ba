"""gradcheck / gradgradcheck: same verdicts and exception types as torch's."""
import warnings

import numpy as np
import pytest

from oracle import torch
import ember


def _inputs(L, arrays, rg=True):
    mk = ember.from_numpy if L is ember else torch.from_numpy
    return tuple(mk(a.copy()).requires_grad_(rg) for a in arrays)


rng = np.random.default_rng(0)
R = rng.standard_normal((2, 3))
V = rng.standard_normal(3)
Z = rng.standard_normal(3) + 1j * rng.standard_normal(3)


def _broken_fn(L):
    class Wrong(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x * 3          # should be 2x
    return Wrong.apply


def _undef_fn(L):
    class NoUndef(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("cannot handle an undefined grad")
            return g * 2
    return NoUndef.apply


def _bad_double(L):
    class BadDouble(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.detach() * 2      # right value, but no second derivative
    return BadDouble.apply


CASES = [
    ("mul_exp", lambda L: lambda a, b: (a * b).exp(), (R, V), True),
    ("multi_out", lambda L: lambda a, b: ((a * b).sum(), a.sin(), b * 2), (R, V), True),
    ("detached", lambda L: lambda a, b: a * b.detach() + b, (R, V), False),
    ("broken_custom", lambda L: (lambda f: lambda a: f(a))(_broken_fn(L)), (V,), False),
    ("complex_in_real_out", lambda L: lambda z: (z * z.conj()).real * 1.0, (Z,), True),
    ("complex_in_out", lambda L: lambda z: z * z + z.exp(), (Z,), True),
    ("complex_wrong", lambda L: lambda z: z * z.conj().detach(), (Z,), False),
    ("view_ops", lambda L: lambda a: a.t().reshape(6).exp()[1:4], (R,), True),
    ("scalar", lambda L: lambda a: a.sum() * a.sum(), (R,), True),
]


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("name,make,arrays,ok", CASES, ids=[c[0] for c in CASES])
def test_verdict_matches_torch(name, make, arrays, ok, fast):
    for L in (torch, ember):
        res = L.autograd.gradcheck(make(L), _inputs(L, arrays), raise_exception=False,
                                   fast_mode=fast)
        assert res is ok, f"{L.__name__}: {res}"


@pytest.mark.parametrize("name,make,arrays,ok", CASES[:3] + CASES[5:7], ids=lambda c: str(c)[:12])
def test_raises_like_torch(name, make, arrays, ok):
    errs = []
    for L in (torch, ember):
        try:
            errs.append(L.autograd.gradcheck(make(L), _inputs(L, arrays)))
        except Exception as e:
            errs.append(type(e).__name__)
    assert errs[0] == errs[1] == (True if ok else "GradcheckError")


def test_mismatch_message():
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        ember.autograd.gradcheck(_broken_fn(ember), _inputs(ember, (V,)))
    with pytest.raises(RuntimeError, match="While considering the imaginary part of complex outputs"):
        ember.autograd.gradcheck(lambda z: z * z.conj().detach(), _inputs(ember, (Z,)))


def test_undefined_grad_check():
    for L in (torch, ember):
        f = _undef_fn(L)
        x = _inputs(L, (V,))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert L.autograd.gradcheck(f, x, raise_exception=False) is False
            assert L.autograd.gradcheck(f, x, check_undefined_grad=False) is True


def test_gradgradcheck():
    for L in (torch, ember):
        assert L.autograd.gradgradcheck(lambda a, b: (a * b).exp().sin(), _inputs(L, (R, V)))
        assert L.autograd.gradgradcheck(lambda a: a * a, _inputs(L, (V,)), fast_mode=True)
        assert L.autograd.gradgradcheck(lambda z: z * z * z, _inputs(L, (Z,)))
        go = _inputs(L, (rng.standard_normal((2, 3)),))
        assert L.autograd.gradgradcheck(lambda a: a.exp(), _inputs(L, (R,)), go)
        assert L.autograd.gradgradcheck(lambda a: a.exp(), _inputs(L, (R,)),
                                        gen_non_contig_grad_outputs=True)
        f = _bad_double(L)
        assert L.autograd.gradcheck(f, _inputs(L, (V,)))
        assert not L.autograd.gradgradcheck(f, _inputs(L, (V,)), raise_exception=False)


def _inplace_on_views(a, b):
    h = a * 1
    h[1:].mul_(b[1:])
    h.t()[0].add_(b[0] * b[0])
    return h.exp()


def test_inplace_view_history_double_backward():
    """CopySlices and regenerated view nodes are differentiable twice (ember ops only)."""
    ts = _inputs(ember, (rng.standard_normal((3, 3)), rng.standard_normal((3, 3))))
    assert ember.autograd.gradcheck(_inplace_on_views, ts)
    assert ember.autograd.gradgradcheck(_inplace_on_views, ts)
    tt = _inputs(torch, (ts[0].detach().numpy(), ts[1].detach().numpy()))
    ge = ember.autograd.grad(_inplace_on_views(*ts).sum(), ts)
    gt = torch.autograd.grad(_inplace_on_views(*tt).sum(), tt)
    for e, t in zip(ge, gt):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10)


def test_batched_grad():
    for L in (torch, ember):
        assert L.autograd.gradcheck(lambda a, b: (a * b).exp(), _inputs(L, (R, V)),
                                    check_batched_grad=True)


def test_non_tensor_and_non_grad_inputs():
    for L in (torch, ember):
        x, = _inputs(L, (V,))
        c, = _inputs(L, (V,), rg=False)
        assert L.autograd.gradcheck(lambda a, k, b: a * k + b, (x, 3.0, c))
        assert L.autograd.gradcheck(lambda a: a.exp(), x)     # a bare tensor as inputs


@pytest.mark.parametrize("fn,inputs", [
    (lambda L: (lambda a: a * 2), lambda L: _inputs(L, (V,), rg=False)),       # ValueError
    (lambda L: (lambda a: a * 2), lambda L: (_inputs(L, (V,))[0].detach()
                                             .expand(2, 3).requires_grad_(),)),  # stride 0
])
def test_input_errors(fn, inputs):
    errs = []
    for L in (torch, ember):
        with pytest.raises(Exception) as e:
            L.autograd.gradcheck(fn(L), inputs(L))
        errs.append(type(e.value))
    assert errs[0] is errs[1]


def test_float32_warns_and_flags():
    x = ember.from_numpy(V.astype(np.float32)).requires_grad_()
    with pytest.warns(UserWarning, match="not a double precision"):
        ember.autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-3)
    with pytest.raises(AssertionError):
        ember.autograd.gradcheck(lambda a: a, _inputs(ember, (V,)), check_backward_ad=False)
    with pytest.raises(NotImplementedError):
        ember.autograd.gradcheck(lambda a: a, _inputs(ember, (V,)), check_forward_ad=True)


def test_module_path():
    from ember.autograd.gradcheck import gradcheck, gradgradcheck, GradcheckError
    assert gradcheck is ember.autograd.gradcheck and gradgradcheck is ember.autograd.gradgradcheck
    assert issubclass(GradcheckError, RuntimeError)
