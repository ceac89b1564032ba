"""View and shape ops against PyTorch: values, dtypes, grads, aliasing, errors."""
import numpy as np
import pytest

from oracle import check, check_error, gradcheck, NC, randn, torch
import ember

A = randn(3, 4)
B = randn(2, 3, 4)
E0 = np.zeros((0, 3), np.float32)
S0 = np.float32(2.5) * np.ones((), np.float32)


# ------------------------------------------------------------------- values and grads

VIEW_CASES = [
    ("view", lambda L, x: x.view(4, 3), A),
    ("view_-1", lambda L, x: x.view(-1, 2), A),
    ("view_0d", lambda L, x: x.view(1, 1), S0),
    ("view_empty", lambda L, x: x.view(0, 5), E0),
    ("reshape_nc", lambda L, x: x.reshape(12), NC(A)),
    ("flatten", lambda L, x: L.flatten(x, 1), B),
    ("flatten_0d", lambda L, x: x.flatten(), S0),
    ("unflatten", lambda L, x: x.unflatten(-1, (2, -1)), B),
    ("squeeze_tuple", lambda L, x: x.unsqueeze(0).unsqueeze(-1).squeeze((0, -1)), A),
    ("squeeze_keep", lambda L, x: x.squeeze(1), A),
    ("select", lambda L, x: x.select(1, -1), A),
    ("select_fn", lambda L, x: L.select(x, 0, 2), B[1]),
    ("narrow", lambda L, x: x.narrow(-1, 1, 2), A),
    ("narrow_neg", lambda L, x: L.narrow(x, 0, -2, 2), NC(A)),
    ("split_int", lambda L, x: x.split(2), A),
    ("split_list", lambda L, x: L.split(x, [1, 0, 3], dim=-1), A),
    ("split_nc", lambda L, x: x.split(2, 1), NC(A)),
    ("split_empty", lambda L, x: x.split(2), E0),
    ("chunk", lambda L, x: x.chunk(3, dim=1), A),
    ("chunk_uneven", lambda L, x: L.chunk(x, 4, -1), randn(2, 5)),
    ("chunk_empty", lambda L, x: L.chunk(x, 3), np.zeros(0, np.float32)),
    ("tensor_split_n", lambda L, x: x.tensor_split(3, dim=1), A),
    ("tensor_split_idx", lambda L, x: L.tensor_split(x, [1, 3], dim=-1), A),
    ("unbind", lambda L, x: x.unbind(1), A),
    ("unbind_nc", lambda L, x: L.unbind(x), NC(A)),
    ("diagonal", lambda L, x: x.diagonal(), A),
    ("diagonal_off", lambda L, x: L.diagonal(x, 1), A),
    ("diagonal_neg", lambda L, x: L.diagonal(x, -1, 0, 1), A),
    ("diagonal_big_off", lambda L, x: L.diagonal(x, 7), A),
    ("diagonal_dims", lambda L, x: x.diagonal(1, -1, 0), B),
    ("diagonal_nc", lambda L, x: x.diagonal(0, 1, 2), NC(B)),
    ("unfold", lambda L, x: x.unfold(1, 2, 1), A),
    ("unfold_step", lambda L, x: x.unfold(-1, 2, 2), B),
    ("unfold_gap", lambda L, x: x.unfold(0, 1, 2), A),
    ("unfold_0d", lambda L, x: x.unfold(0, 1, 1), S0),
    ("movedim", lambda L, x: L.movedim(x, 0, -1), B),
    ("movedim_tuple", lambda L, x: x.movedim((0, 1), (2, 0)), B),
    ("moveaxis", lambda L, x: L.moveaxis(x, -1, 0), B),
    ("permute", lambda L, x: x.permute(2, 0, 1), B),
    ("transpose", lambda L, x: x.transpose(-1, 0), B),
    ("expand", lambda L, x: x[:, None].expand(3, 2, 4), A),
    ("slice_scatter", lambda L, x, y: L.slice_scatter(x, y, 1, 0, 4, 2), A, randn(3, 2)),
    ("select_scatter", lambda L, x, y: L.select_scatter(x, y, 0, 1), A, randn(4)),
    ("diagonal_scatter", lambda L, x, y: L.diagonal_scatter(x, y, 1), A, randn(3)),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_ops(case):
    check(case[1], *case[2:])


CAT_CASES = [
    ("cat0", lambda L, a, b: L.cat([a, b]), A, randn(2, 4)),
    ("cat_neg", lambda L, a, b: L.cat((a, b), dim=-1), A, randn(3, 2)),
    ("cat_nc", lambda L, a, b: L.cat([a, b], 1), NC(randn(4, 3)), NC(randn(4, 3))),
    ("cat_legacy_empty", lambda L, a, b: L.cat([a, b]), A, np.zeros(0, np.float32)),
    ("cat_empty_dim", lambda L, a, b: L.cat([a, b]), E0, randn(2, 3)),
    ("cat_promote", lambda L, a, b: L.cat([a, b]), A, np.ones((1, 4), np.int64)),
    ("cat_f16_f64", lambda L, a, b: L.cat([a.half(), b]), A, randn(1, 4, dtype=np.float64)),
    ("cat_bf16", lambda L, a, b: L.cat([a.bfloat16(), b.bfloat16()], 1), A, A),
    ("concat", lambda L, a, b: L.concat([a, b, a]), A, A),
    ("stack", lambda L, a, b: L.stack([a, b]), A, A),
    ("stack_neg", lambda L, a, b: L.stack([a, b], dim=-1), A, NC(A)),
    ("stack_0d", lambda L, a, b: L.stack([a, b]), S0, S0),
    ("stack_promote", lambda L, a, b: L.stack([a, b], 1), A, np.ones((3, 4), np.int32)),
    ("hstack", lambda L, a, b: L.hstack([a, b]), A, A),
    ("vstack", lambda L, a, b: L.vstack([a[0], b[1]]), A, A),
    ("dstack", lambda L, a, b: L.dstack([a, b]), A, A),
]


@pytest.mark.parametrize("name,fn,a,b", CAT_CASES, ids=[c[0] for c in CAT_CASES])
def test_cat_stack(name, fn, a, b):
    check(fn, a, b)


def test_cat_single_and_out():
    check(lambda L, a: L.cat([a]), A)
    out = ember.empty(0)
    r = ember.cat([ember.ones(2), ember.zeros(1)], out=out)
    assert r is out and out.tolist() == [1.0, 1.0, 0.0]


def test_complex_views():
    z = (randn(3, 2) + 1j * randn(3, 2, seed=1)).astype(np.complex64)
    check(lambda L, x: x.real, z)
    check(lambda L, x: x.imag, z)
    check(lambda L, x: L.view_as_real(x), z)
    check(lambda L, x: L.view_as_complex(x), randn(3, 2))
    check(lambda L, x: L.real(x), A)
    zz = z.astype(np.complex128)
    gradcheck(lambda L, x: L.view_as_real(L.view_as_complex(x) * 2).sum(-1), randn(4, 2))
    e = ember.from_numpy(zz.copy())
    e.real[0, 0] = 10.0
    e.imag[1] = ember.tensor([5.0, 6.0], dtype=ember.float64)
    assert e[0, 0].item() == 10 + 1j * zz[0, 0].imag
    assert e[1].imag.tolist() == [5.0, 6.0]


def test_view_dtype():
    check(lambda L, x: x.view(L.int32), A, grad=False)
    check(lambda L, x: x.view(L.int16), A, grad=False)
    check(lambda L, x: x.view(L.float64), randn(3, 4), grad=False)
    check_error(lambda L, x: x.view(L.float64), randn(3, 3))
    check_error(lambda L, x: x.t().view(L.float64), randn(4, 4))


# ------------------------------------------------------------------------- gradcheck

@pytest.mark.parametrize("fn", [
    lambda L, x: L.cat([x, x * 2], 1),
    lambda L, x: L.stack([x, x * 2], -1),
    lambda L, x: x.split(2, 1)[1] * 3,
    lambda L, x: x.unbind(0)[2] * 2,
    lambda L, x: x.diagonal(-1) * 2,
    lambda L, x: x.unfold(1, 2, 1) * 1,
    lambda L, x: x.unfold(1, 3, 1).unfold(0, 2, 1),
    lambda L, x: L.diagonal_scatter(x, x[0, :3] * 1, 1),
    lambda L, x: L.slice_scatter(x, x[:, :2] * 2, 1, 2, 4),
    lambda L, x: L.select_scatter(x, x[1] * 2, 0, 0),
    lambda L, x: x.narrow(1, 1, 2).movedim(0, 1),
])
def test_gradcheck(fn):
    gradcheck(fn, randn(3, 4, dtype=np.float64))


def test_double_backward_unfold():
    x = ember.from_numpy(randn(5, dtype=np.float64)).requires_grad_()
    y = (x.unfold(0, 2, 1) ** 2).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    tx = torch.from_numpy(x.detach().numpy().copy()).requires_grad_()
    (tg,) = torch.autograd.grad((tx.unfold(0, 2, 1) ** 2).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy())


# -------------------------------------------------------------------------- aliasing

@pytest.mark.parametrize("make", [
    lambda x: x.view(12),
    lambda x: x.select(0, 1),
    lambda x: x.narrow(1, 1, 2),
    lambda x: x.split(2)[1],
    lambda x: x.chunk(2, 1)[0],
    lambda x: x.unbind(1)[3],
    lambda x: x.tensor_split(2)[1],
    lambda x: x.diagonal(1),
    lambda x: x.unfold(1, 2, 2),
    lambda x: x.movedim(0, 1),
    lambda x: x.t().diagonal(),
    lambda x: x.unflatten(1, (2, 2)),
    lambda x: x.squeeze(),
    lambda x: x.expand(2, 3, 4)[1],
])
def test_views_alias(make):
    x = ember.from_numpy(A.copy())
    v = make(x)
    assert v._base is x
    before = x._version
    v.mul_(0).add_(7)
    assert x._version == v._version == before + 2
    tx = torch.from_numpy(A.copy())
    make(tx).mul_(0).add_(7)
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_view_of_view_writes_base():
    x = ember.zeros(4, 4)
    x.diagonal().narrow(0, 1, 2).copy_(ember.ones(2))
    assert x.sum().item() == 2 and x[1, 1].item() == 1 and x[2, 2].item() == 1


def test_multi_output_view_inplace_errors_like_torch():
    for L in (ember, torch):
        x = L.ones(4, 3, requires_grad=True)
        y = x * 1
        for parts in (y.split(2), y.chunk(2), y.unbind(0)):
            with pytest.raises(RuntimeError, match="multiple views"):
                parts[0].mul_(2)
        with L.no_grad():
            y.split(2)[0].mul_(2)
        with pytest.raises(RuntimeError):
            x.split(2)[0].mul_(2)
    # writing through a single-output view under grad is fine and gives correct grads
    check(lambda L, x: _write_through_narrow(L, x), A)


def _write_through_narrow(L, x):
    y = x * 1
    y.narrow(0, 1, 1).mul_(3)
    return y


def test_split_grad_partial_use():
    check(lambda L, x: x.split([1, 3], 1)[1] * 2, A)
    check(lambda L, x: x.unbind(0)[1], A)


def test_view_incompatible_strides():
    msg = check_error(lambda L, x: x.t().view(12), A)
    assert "view size is not compatible" in msg
    check(lambda L, x: x.t().reshape(12), A)
    check(lambda L, x: x.t()[:, 1:].reshape(-1), A)


# ---------------------------------------------------------------------------- errors

ERRORS = [
    lambda L, x: x.view(5, 3),
    lambda L, x: x.view(-1, -1),
    lambda L, x: x.select(2, 0),
    lambda L, x: x.select(0, 3),
    lambda L, x: x.narrow(0, 4, 1),
    lambda L, x: x.narrow(0, 2, 2),
    lambda L, x: x.split(0),
    lambda L, x: x.split(-1),
    lambda L, x: x.split([1, 1]),
    lambda L, x: x.chunk(0),
    lambda L, x: x.unbind(2),
    lambda L, x: x.diagonal(0, 0, 0),
    lambda L, x: x.diagonal(0, 0, 2),
    lambda L, x: x.unfold(0, 5, 1),
    lambda L, x: x.unfold(0, 2, 0),
    lambda L, x: x.movedim((0, 1), 0),
    lambda L, x: x.movedim((0, 0), (0, 1)),
    lambda L, x: x.imag,
    lambda L, x: L.view_as_real(x),
    lambda L, x: L.view_as_complex(x),
    lambda L, x: L.view_as_complex(x[:, :2].t()),
    lambda L, x: L.view_as_complex(x.long()[:, :2]),
    lambda L, x: x.unflatten(1, (3, 2)),
    lambda L, x: x.squeeze(3),
    lambda L, x: L.cat([x, x.t()]),
    lambda L, x: L.cat([x, x[0]]),
    lambda L, x: L.cat([x, x], 2),
    lambda L, x: L.cat([x[0, 0]]),
    lambda L, x: L.cat([]),
    lambda L, x: L.cat(x),
    lambda L, x: L.stack([x, x[:2]]),
    lambda L, x: L.stack([]),
    lambda L, x: L.stack([x, x], 3),
    lambda L, x: x.permute(0, 0),
    lambda L, x: x.permute(0),
    lambda L, x: x.expand(2, 3),
    lambda L, x: L.select_scatter(x, x, 0, 0),
    lambda L, x: L.slice_scatter(x, x, 0, 0, 1),
    lambda L, x: x[::-1],
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    check_error(ERRORS[i], A)


def test_split_messages():
    msg = check_error(lambda L, x: L.cat([x, x[:, :2]]), A)
    assert msg.startswith("Sizes of tensors must match except in dimension 0")
    msg = check_error(lambda L, x: L.stack([x, x[:2]]), A)
    assert "stack expects each tensor to be equal size" in msg


def test_as_strided_gradient_accumulates_over_overlapping_windows():
    """Overlapping windows (unfold-style framing) each send their gradient back: torch
    gives [1, 2, 3, 2, 1, 0] here; a scatter that overwrites gave [1, 1, 1, 1, 1, 0]."""
    import torch as T
    for size, stride, off in [((3, 3), (1, 1), 0), ((2, 2, 3), (4, 1, 2), 1), ((4, 2), (2, 3), 0)]:
        grads = []
        for L in (ember, T):
            x = L.arange(12.0, dtype=L.float64).requires_grad_()
            w = L.arange(float(np.prod(size)), dtype=L.float64).reshape(size)
            (x.as_strided(size, stride, off) * w).sum().backward()
            grads.append(x.grad.tolist())
        assert grads[0] == grads[1]
    x = ember.randn(8, dtype=ember.float64, requires_grad=True)
    fn = lambda t: t.as_strided((4, 3), (1, 1), 1) ** 2
    assert ember.autograd.gradcheck(fn, (x,)) and ember.autograd.gradgradcheck(fn, (x,))
