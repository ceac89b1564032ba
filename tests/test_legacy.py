"""Legacy constructors and type objects (torch.Tensor(data), torch.FloatTensor, x.new,
x.type(torch.LongTensor)), torch.accelerator, torch.backends.* modules, device predicates and
sequence indexing — checked against PyTorch's CPU build."""
import numpy as np
import pytest

from oracle import torch
import ember

CONSTRUCT = [
    ("Tensor", ([1, 2],), {}), ("Tensor", ((2, 3),), {}), ("Tensor", (2, 3), {}),
    ("Tensor", (), {}), ("FloatTensor", ([1.5],), {}), ("DoubleTensor", (2,), {}),
    ("LongTensor", ([1.7, -2.2],), {}), ("IntTensor", ([[1], [2]],), {}),
    ("BoolTensor", ([True, False],), {}), ("ByteTensor", (3,), {}), ("HalfTensor", ([1],), {}),
    ("DoubleTensor", (), {"size": (2, 1)}), ("Tensor", (2,), {"device": "cpu"}),
    ("ShortTensor", ([3],), {}), ("CharTensor", ([3],), {}), ("BFloat16Tensor", ([1.5],), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CONSTRUCT, ids=lambda v: repr(v)[:20])
def test_legacy_constructors_match_torch(name, args, kwargs):
    e = getattr(ember, name)(*args, **kwargs)
    t = getattr(torch, name)(*args, **kwargs)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    if args and not isinstance(args[0], int):
        np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


def test_size_argument_means_sizes():
    assert ember.Tensor(ember.Size([2, 3])).shape == (2, 3)
    assert torch.Tensor(torch.Size([2, 3])).shape == (2, 3)


@pytest.mark.parametrize("make", [
    lambda L: L.Tensor(2.5), lambda L: L.Tensor([1], [2]),
    lambda L: L.FloatTensor(L.zeros(2, dtype=L.float64)),
    lambda L: L.Tensor([1], dtype=L.int64), lambda L: L.cuda.FloatTensor([1]),
])
def test_legacy_constructor_errors_match_torch(make):
    with pytest.raises(Exception) as te:
        make(torch)
    with pytest.raises(type(te.value)):
        make(ember)


def test_tensor_of_a_tensor_keeps_its_dtype_and_data():
    x = ember.tensor([1, 2])
    y = ember.Tensor(x)
    assert y.dtype is ember.int64 and y.data_ptr() == x.data_ptr()


def test_type_objects():
    x = ember.zeros(2)
    assert isinstance(x, ember.FloatTensor) and not isinstance(x, ember.LongTensor)
    assert not issubclass(ember.FloatTensor, ember.Tensor)
    assert issubclass(torch.FloatTensor, torch.Tensor) is False
    assert ember.FloatTensor.dtype is ember.float32 and ember.FloatTensor.is_cuda is False
    assert x.type(ember.LongTensor).dtype is ember.int64
    assert x.type("torch.DoubleTensor").dtype is ember.float64
    assert x.type() == torch.zeros(2).type() == "torch.FloatTensor"
    assert repr(ember.LongTensor) == repr(torch.LongTensor)
    with pytest.raises(RuntimeError):
        x.type(ember.cuda.FloatTensor)


def test_new():
    for L in (ember, torch):
        x = L.zeros(2, dtype=L.float64)
        assert x.new(3).shape == (3,) and x.new(3).dtype == L.float64
        assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new().shape == (0,)


def test_device_predicates():
    for name in ("is_xpu", "is_mps", "is_xla", "is_mkldnn", "is_quantized", "is_sparse",
                 "is_nested", "is_vulkan", "is_mtia", "is_maia", "is_ipu"):
        assert getattr(ember.zeros(1), name) is getattr(torch.zeros(1), name) is False
    assert ember.zeros(1).is_pinned() is torch.zeros(1).is_pinned() is False
    assert ember.zeros(2).is_same_size(ember.ones(2))
    assert ember.tensor([2.0]).is_nonzero() and not ember.tensor([0]).is_nonzero()
    with pytest.raises(RuntimeError):
        ember.zeros(2).is_nonzero()


def test_accelerator_reports_none():
    for L in (ember, torch):
        A = L.accelerator
        assert A.is_available() is False and A.current_accelerator() is None
        assert A.device_count() == 0
        for fn in (A.current_device_index, A.synchronize, A.memory_allocated, A.empty_cache):
            with pytest.raises(RuntimeError, match="none is available"):
                fn()
        with A.device_index(None):
            pass


def test_backends_are_modules():
    import importlib
    for sub in ("cudnn", "cuda", "mps", "mkldnn", "openmp", "mkl", "opt_einsum", "cpu"):
        importlib.import_module(f"ember.backends.{sub}")
    import ember.backends.cudnn as cudnn
    assert cudnn.is_available() is torch.backends.cudnn.is_available() is False
    with cudnn.flags(enabled=False, deterministic=True):
        assert cudnn.enabled is False and cudnn.deterministic is True
    assert cudnn.enabled is True and cudnn.deterministic is False
    assert ember.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert ember.backends.cuda.flash_sdp_enabled() is True


@pytest.mark.parametrize("key", [
    range(2), (range(2), range(2)), ((0, 1),), (0, (1, 2)), (slice(None), range(1, 3)),
    (range(3, 0, -1),), [0, 2], (np.array([0, 4]),),
], ids=repr)
def test_sequence_indexing_matches_torch(key):
    e = ember.arange(15.0).reshape(5, 3)
    t = torch.arange(15.0).reshape(5, 3)
    assert e[key].tolist() == t[key].tolist()
    e[key] = -1.0
    t[key] = -1.0
    assert e.tolist() == t.tolist()


def test_class_paths_programs_import():
    from ember.nn.modules.activation import MultiheadAttention
    from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
    from ember.nn.modules.utils import _pair, _quadruple, _reverse_repeat_tuple
    assert MultiheadAttention is ember.nn.MultiheadAttention
    assert issubclass(NonDynamicallyQuantizableLinear, ember.nn.Linear)
    assert _pair(3) == (3, 3) and _quadruple([1, 2]) == (1, 2)
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
