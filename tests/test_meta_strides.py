"""Fake tensors report what the real run gives: shape, dtype, device, strides and
contiguity, for every registry sample; and metas compute symbolic output shapes."""
import pytest

from ember.ops import REGISTRY
from ember._subclasses.fake_tensor import FakeTensorMode

from registry_samples import SAMPLES
from test_registry import sample, flat_tensors


def _layout(t):
    """What a fake tensor must report. Strides are compared on the dims of size >1
    only, as PyTorch's own fake-tensor checks do (`check_significant_strides`): a
    size-1 dim's stride is arbitrary (NumPy and PyTorch pick different ones)."""
    st = tuple(s if n > 1 else None for n, s in zip(t.shape, t.stride()))
    return (tuple(t.shape), t.dtype, str(t.device), st, t.is_contiguous())


# the fake run's layout differs from the real one, with the reason
KNOWN = {
    "accumulate_grad_": "the engine lays a real .grad out like a non-contiguous leaf "
                        "(autograd/engine.py _copy_like); a fake .grad stays the fake "
                        "gradient's layout",
}


STATIC = sorted(n for n in SAMPLES if "dynamic_output_shape" not in REGISTRY[n].tags)


@pytest.mark.parametrize("name", STATIC)
def test_fake_layout_matches_real(name):
    fn, inputs = sample(name)
    real = flat_tensors(fn(*inputs))
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x) for x in inputs]
    with mode:
        fake = flat_tensors(fn(*fakes))
    assert [_layout(o) for o in fake] == [_layout(o) for o in real]


def _fortran(x):
    """x's values in the reversed memory order (a non-contiguous layout)."""
    if x.dim() < 2:
        return x
    rev = list(range(x.dim()))[::-1]
    y = x.detach().permute(rev).contiguous().permute(rev)
    return y.requires_grad_(x.requires_grad) if x.requires_grad else y


@pytest.mark.parametrize("name", STATIC)
def test_fake_layout_matches_real_on_transposed_inputs(name):
    """The same samples on column-major inputs: views, pointwise ops and copies
    follow the input's layout in the real run, and so must the fake run."""
    if name in KNOWN:
        pytest.skip(KNOWN[name])
    fn, inputs = sample(name)
    inputs = [_fortran(x) for x in inputs]
    try:
        real = flat_tensors(fn(*inputs))
    except Exception as e:      # e.g. view() of a non-viewable layout: fake raises alike
        mode = FakeTensorMode()
        fakes = [mode.from_tensor(x) for x in inputs]
        with mode, pytest.raises(type(e)):
            fn(*fakes)
        return
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x) for x in inputs]
    with mode:
        fake = flat_tensors(fn(*fakes))
    assert [_layout(o) for o in fake] == [_layout(o) for o in real]
