"""ember.utils.checkpoint: recomputation in backward, same gradients, same dropout mask."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.5), nn.Linear(8, 3))


@pytest.mark.parametrize("reentrant", [True, False])
def test_recomputes_and_matches_plain_gradients(reentrant):
    model = _model()
    calls = []

    def segment(x):
        calls.append(1)
        return model(x)

    x = ember.randn(5, 4, requires_grad=True)
    ember.manual_seed(7)
    out_plain = model(x)
    out_plain.pow(2).sum().backward()
    g_plain = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    ember.manual_seed(7)
    out = checkpoint(segment, x, use_reentrant=reentrant)
    assert len(calls) == 1
    np.testing.assert_allclose(out.detach().numpy(), out_plain.detach().numpy())
    out.pow(2).sum().backward()
    assert len(calls) == 2          # forward ran again inside backward
    g_ck = [p.grad for p in model.parameters()] + [x.grad]
    for a, b in zip(g_plain, g_ck):  # same dropout mask => same gradients
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_rng_state_not_preserved_changes_mask():
    drop = nn.Dropout(0.5)
    x = ember.ones(2000, requires_grad=True)
    out = checkpoint(drop, x, use_reentrant=True, preserve_rng_state=False)
    out.sum().backward()
    mask_fwd = out.detach().numpy() != 0
    mask_bwd = x.grad.numpy() != 0
    assert (mask_fwd != mask_bwd).any()


def test_non_reentrant_params_without_input_grad_and_kwargs():
    lin = nn.Linear(3, 2)
    x = ember.randn(4, 3)

    def f(a, scale=1.0):
        return lin(a) * scale
    out = checkpoint(f, x, scale=2.0, use_reentrant=False)
    out.sum().backward()
    expected = 2.0 * x.sum(0).numpy()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.stack([expected] * 2), rtol=1e-6)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(f, x, scale=2.0, use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(f, x, use_reentrant=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(f, x.requires_grad_())


def test_multiple_outputs_and_non_tensor_args():
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)

    def f(x, k, y):
        return x * k, (x * y).sum()
    o1, o2 = checkpoint(f, a, 3.0, b, use_reentrant=True)
    (o1.sum() + o2).backward()
    np.testing.assert_allclose(a.grad.numpy(), 3.0 + b.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_sequential(reentrant):
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(6)])
    x = ember.randn(2, 4, requires_grad=True)
    model(x).sum().backward()
    g = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    out = checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
    out.sum().backward()
    for a, p in zip(g, model.parameters()):
        np.testing.assert_allclose(a.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_non_reentrant_supports_autograd_grad_and_captured_tensors():
    lin = nn.Linear(3, 3)
    x = ember.randn(4, 3, requires_grad=True)
    h = x * 2                               # non-leaf captured by the closure
    calls = []

    def seg(a):
        calls.append(1)
        return (lin(a) * h).tanh()

    ref = seg(x).sum()
    g_ref = ember.autograd.grad(ref, [lin.weight, x], retain_graph=True)
    out = checkpoint(seg, x, use_reentrant=False).sum()
    g = ember.autograd.grad(out, [lin.weight, x])
    assert len(calls) == 3                  # plain run, checkpoint forward, recompute
    for a, b in zip(g, g_ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert lin.weight.grad is None          # autograd.grad leaves .grad alone
    out2 = checkpoint(seg, x, use_reentrant=False).sum()
    out2.backward(inputs=[lin.bias])
    assert lin.bias.grad is not None and lin.weight.grad is None and x.grad is None


def test_non_reentrant_multiple_outputs():
    a = ember.randn(3, requires_grad=True)
    w = ember.randn(3, requires_grad=True)

    def f(x):
        return x * w, (x * x).sum()
    o1, o2 = checkpoint(f, a, use_reentrant=False)
    (o1.sum() + o2).backward()
    np.testing.assert_allclose(a.grad.numpy(), w.detach().numpy() + 2 * a.detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), a.detach().numpy(), rtol=1e-6)


def test_checkpoint_module_api():
    import ember.utils.checkpoint as C
    TC = pytest.importorskip("torch.utils.checkpoint")
    assert issubclass(C.CheckpointError, RuntimeError)
    assert [p.name for p in C.CheckpointPolicy] == [p.name for p in TC.CheckpointPolicy]
    a = ember.ones(2, requires_grad=True)
    d = C.detach_variable((a, 3))
    assert d[0].requires_grad and d[0].grad_fn is None and d[1] == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        C.detach_variable([a])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
        C.check_backward_validity([ember.ones(1)])
    out = checkpoint(lambda x: x * 2, a, use_reentrant=False, context_fn=C.noop_context_fn)
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])
    with pytest.raises(NotImplementedError, match="selective activation checkpointing"):
        C.create_selective_checkpoint_contexts([])
    assert C.DefaultDeviceType.get_device_type() == "cpu"
