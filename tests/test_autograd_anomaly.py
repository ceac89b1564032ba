"""detect_anomaly / set_detect_anomaly: NaN check, forward traceback, hints."""
import warnings

import pytest

from oracle import torch
import ember


def _nan_fn(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")
    return Bad


def _raising_fn(L):
    class Err(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")
    return Err


@pytest.mark.parametrize("L", [torch, ember], ids=["torch", "ember"])
def test_nan_detected_with_message(L):
    x = L.tensor([1., 2.], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = L.autograd.detect_anomaly()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with ctx:
            y = _nan_fn(L).apply(x).sum()
            with pytest.raises(RuntimeError,
                               match=r"Function 'BadBackward' returned nan values in its 0th "
                                     r"output\."):
                y.backward()
    assert any("Error detected in BadBackward" in str(m.message) for m in w)


@pytest.mark.parametrize("L", [torch, ember], ids=["torch", "ember"])
def test_nan_not_checked_when_disabled(L):
    x = L.tensor([1., 2.], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with L.autograd.detect_anomaly(check_nan=False):
            _nan_fn(L).apply(x).sum().backward()
    assert x.grad.isnan().all()
    x.grad = None
    _nan_fn(L).apply(x).sum().backward()       # anomaly mode off: no check


@pytest.mark.parametrize("L", [torch, ember], ids=["torch", "ember"])
def test_forward_trace_in_warning(L):
    x = L.tensor([1., 2.], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with L.autograd.detect_anomaly():
            y = _raising_fn(L).apply(x).sum()   # MARK-forward-line
            with pytest.raises(ValueError, match="boom"):
                y.backward()
    msgs = [str(m.message) for m in w if "Error detected in ErrBackward" in str(m.message)]
    assert len(msgs) == 1
    assert "Traceback of forward call that caused the error" in msgs[0]
    assert "MARK-forward-line" in msgs[0]


@pytest.mark.parametrize("L", [torch, ember], ids=["torch", "ember"])
def test_ops_nodes_get_trace_too(L):
    x = L.tensor([1., 2.], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with L.autograd.detect_anomaly():
            h = x * 1
            c = h.sin()                          # MARK-sin
            h.add_(1)
            with pytest.raises(RuntimeError, match="Good luck!"):
                c.sum().backward()
    msgs = [str(m.message) for m in w if "Error detected in SinBackward0" in str(m.message)]
    assert msgs and "MARK-sin" in msgs[0]


@pytest.mark.parametrize("L", [torch, ember], ids=["torch", "ember"])
def test_set_detect_anomaly_forms(L):
    assert not L.is_anomaly_enabled()
    L.autograd.set_detect_anomaly(True)
    assert L.is_anomaly_enabled() and L.is_anomaly_check_nan_enabled()
    L.autograd.set_detect_anomaly(False)
    assert not L.is_anomaly_enabled()
    with L.autograd.set_detect_anomaly(True, check_nan=False):
        assert L.is_anomaly_enabled() and not L.is_anomaly_check_nan_enabled()
    assert not L.is_anomaly_enabled() and L.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("L", [torch, ember], ids=["torch", "ember"])
def test_detect_anomaly_is_not_a_decorator(L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError):
            L.autograd.detect_anomaly()(lambda: None)
