"""Memory counters count live tensor bytes exactly: allocations, views (0 bytes),
in-place ops (0 bytes), op results, gradients, frees, and the peak."""
import gc

import numpy as np
import pytest

import ember

F4 = 4          # bytes of a float32


@pytest.fixture(autouse=True)
def _no_gc():
    """Counts must be exact without the cycle collector: a tensor that only the
    collector frees would be a reference cycle (a leak until the next collection)."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def mem():
    return ember.memory_allocated()


class Delta:
    """with Delta() as d: ... ; d.bytes = bytes allocated (and still live) inside."""

    def __enter__(self):
        self.start = mem()
        return self

    def __exit__(self, *exc):
        self.bytes = mem() - self.start


def test_allocation_and_free():
    with Delta() as d:
        a = ember.zeros(100)
    assert d.bytes == 100 * F4
    with Delta() as d:
        b = ember.ones(3, 5, dtype=ember.float64)
        c = ember.empty(7, dtype=ember.uint8)
        e = ember.full((2, 2), True)
    assert d.bytes == 120 + 7 + 4
    with Delta() as d:
        del a, b
    assert d.bytes == -(400 + 120)
    with Delta() as d:
        del c, e
    assert d.bytes == -11


def test_from_numpy_and_numpy_are_free():
    arr = np.zeros(1000)
    with Delta() as d:
        t = ember.from_numpy(arr)
        ember.as_tensor(arr)
        t.numpy()
    assert d.bytes == 0
    with Delta() as d:
        u = ember.tensor(arr)
    assert d.bytes == 8000
    del t, u


VIEWS = [
    lambda x: x.view(6, 4), lambda x: x.view(-1), lambda x: x.reshape(4, 6),
    lambda x: x.transpose(0, 1), lambda x: x.t(), lambda x: x.T, lambda x: x.permute(1, 0),
    lambda x: x[1], lambda x: x[:, 1:3], lambda x: x[::2], lambda x: x[None], lambda x: x[...],
    lambda x: x.unsqueeze(0), lambda x: x.unsqueeze(1).squeeze(1), lambda x: x.expand(3, 4, 6),
    lambda x: x.detach(), lambda x: x.narrow(1, 1, 2), lambda x: x.select(0, 2),
    lambda x: x.diagonal(), lambda x: x.as_strided((2, 2), (1, 1)), lambda x: x.flatten(),
    lambda x: x.unflatten(1, (2, 3)), lambda x: x.movedim(0, 1), lambda x: x.split(2),
    lambda x: x.chunk(3, 1), lambda x: x.unbind(0), lambda x: x.unfold(0, 2, 1),
    lambda x: x.contiguous(), lambda x: x.to(ember.float32), lambda x: x.view(ember.int32),
    lambda x: x.expand_as(ember.empty(2, 4, 6)), lambda x: x.real,
]


@pytest.mark.parametrize("fn", VIEWS)
def test_views_add_zero_bytes(fn):
    x = ember.zeros(4, 6)
    with Delta() as d:
        v = fn(x)
    assert d.bytes == 0
    del v


def test_view_keeps_storage_alive():
    x = ember.zeros(4, 6)
    v = x[1:3]
    with Delta() as d:
        del x
    assert d.bytes == 0                     # the view still holds the storage
    with Delta() as d:
        del v
    assert d.bytes == -96


def test_copies_count_their_bytes():
    x = ember.zeros(4, 6)
    with Delta() as d:
        y = x.t().contiguous()
    assert d.bytes == 96
    with Delta() as d:
        z = x.t().reshape(-1)               # not viewable: a copy
    assert d.bytes == 96
    with Delta() as d:
        w = x.clone()
        h = x.to(ember.float16)
        i = x.double()
    assert d.bytes == 96 + 48 + 192
    del y, z, w, h, i


INPLACE = [
    lambda x, y: x.add_(1), lambda x, y: x.mul_(y), lambda x, y: x.sub_(y, alpha=2),
    lambda x, y: x.copy_(y), lambda x, y: x.exp_(), lambda x, y: x.abs_(),
    lambda x, y: x.clamp_(0, 1), lambda x, y: x.uniform_(), lambda x, y: x.normal_(),
    lambda x, y: x.bernoulli_(0.5), lambda x, y: x.random_(3),
    lambda x, y: x.__setitem__(0, 5.0), lambda x, y: x.__setitem__((slice(None), 1), y[:, 1]),
    lambda x, y: x.masked_fill_(y > 0, 1.0), lambda x, y: x.t().add_(1),
    lambda x, y: x[1:].mul_(2), lambda x, y: x.copy_(ember.ones(6)),
    lambda x, y: x.__iadd__(y), lambda x, y: x.__imul__(2),
]


@pytest.mark.parametrize("fn", INPLACE)
def test_inplace_adds_zero_bytes(fn):
    x = ember.zeros(4, 6)
    y = ember.randn(4, 6)
    with Delta() as d:
        fn(x, y)
    assert d.bytes == 0


def test_inplace_under_autograd_frees_temporaries():
    w = ember.ones(10, requires_grad=True)
    y = w * 2
    with Delta() as d:
        y.add_(1)
        y.sub_(w)
    assert d.bytes == 0
    del y


def test_inplace_under_autograd_saves_no_copy():
    w = ember.ones(10, requires_grad=True)
    y = w * 2
    with Delta() as d:
        y.mul_(3)
        y.exp_()
    assert d.bytes == 0


@pytest.mark.parametrize("fn,nbytes", [
    (lambda a, b: a + b, 96), (lambda a, b: a * 2, 96), (lambda a, b: a.sum(), 4),
    (lambda a, b: a.sum(0), 24), (lambda a, b: a.mean(1, keepdim=True), 16),
    (lambda a, b: a > b, 24), (lambda a, b: a @ b.t(), 64),
    (lambda a, b: a.int() + 1, 96), (lambda a, b: a.long(), 192),
    (lambda a, b: ember.cat([a, b]), 192), (lambda a, b: ember.stack([a, b]), 192),
    (lambda a, b: a.double() * b, 192), (lambda a, b: ember.where(a > 0, a, b), 96),
    (lambda a, b: a.softmax(-1), 96), (lambda a, b: a.max(1), 16 + 32),
    (lambda a, b: a.argmax(), 8), (lambda a, b: a[ember.tensor([0, 2])], 48),
    (lambda a, b: a.exp().log(), 96), (lambda a, b: ember.rand(3, 2), 24),
])
def test_op_results_count_exactly(fn, nbytes):
    a, b = ember.randn(4, 6), ember.randn(4, 6)
    with Delta() as d:
        r = fn(a, b)
    assert d.bytes == nbytes
    del r


def test_temporaries_are_freed():
    a = ember.randn(4, 6)
    with Delta() as d:
        r = ((a * 2 + 1).exp() - a).sum()
    assert d.bytes == 4
    del r


def test_out_argument():
    a, b = ember.randn(4, 6), ember.randn(4, 6)
    out = ember.empty(4, 6)
    with Delta() as d:
        ember.add(a, b, out=out)
    assert d.bytes == 0
    small = ember.empty(2)
    with Delta() as d:
        ember.add(a, b, out=small)          # resized to 24 elements
    assert d.bytes == 96 - 8
    with Delta() as d:
        del small
    assert d.bytes == -96


def test_data_alias_keeps_storage_counted():
    with Delta() as d:
        x = ember.zeros(100).data           # the alias outlives its source tensor
    assert d.bytes == 400
    with Delta() as d:
        del x
    assert d.bytes == -400


def test_grads_after_backward():
    w = ember.randn(8, 4, requires_grad=True)     # 128 bytes
    b = ember.zeros(4, requires_grad=True)        # 16 bytes
    x = ember.randn(16, 8)                        # 512 bytes
    base = mem()
    loss = ((x @ w + b).relu() ** 2).mean()
    assert mem() > base                           # the graph holds saved tensors
    loss.backward()
    del loss
    assert mem() - base == 128 + 16               # only the grads remain
    loss = ((x @ w + b).relu() ** 2).mean()
    loss.backward()                               # accumulates in place
    del loss
    assert mem() - base == 128 + 16
    w.grad = None
    b.grad = None
    assert mem() == base


def test_graph_is_freed_without_backward():
    w = ember.randn(8, 4, requires_grad=True)
    base = mem()
    y = (w.exp() * w).sigmoid().sum()
    del y
    assert mem() == base


def test_retain_graph_keeps_saved_tensors_until_released():
    w = ember.randn(32, requires_grad=True)
    base = mem()
    y = (w * w).sum()
    y.backward(retain_graph=True)
    assert mem() - base >= 128 + 4                # grad + the kept graph
    y.backward()
    del y
    assert mem() - base == 128


def test_peak_tracking():
    ember.reset_peak_memory_stats()
    base = mem()
    assert ember.max_memory_allocated() == base
    a = ember.zeros(100)                          # +400
    b = a + 1                                     # +400 -> peak base + 800
    del b
    c = ember.zeros(50)                           # +200
    assert mem() == base + 600
    assert ember.max_memory_allocated() == base + 800
    ember.reset_peak_memory_stats()
    assert ember.max_memory_allocated() == base + 600
    stats = ember.memory_stats()
    assert stats["allocated_bytes.all.current"] == base + 600
    assert stats["allocated_bytes.all.peak"] == base + 600
    del a, c


def test_peak_over_forward_backward():
    w1 = ember.randn(16, 32, requires_grad=True)
    w2 = ember.randn(32, 4, requires_grad=True)
    x = ember.randn(8, 16)
    ember.reset_peak_memory_stats()
    base = mem()
    h = (x @ w1).relu()                           # 8x32 floats = 1024 bytes
    out = (h @ w2).sum()
    fwd_peak = ember.max_memory_allocated()
    assert fwd_peak - base >= 1024 + 128 + 4      # h, h @ w2, out (and saved tensors)
    out.backward()
    del h, out
    assert mem() - base == w1.nbytes + w2.nbytes  # grads only
    peak = ember.max_memory_allocated()
    assert peak >= fwd_peak and peak >= mem()
    # a second step with freed graph peaks at the same height: nothing leaked
    ember.reset_peak_memory_stats()
    start = mem()
    h = (x @ w1).relu()
    out = (h @ w2).sum()
    out.backward()
    del h, out
    assert mem() == start


def test_leaf_and_requires_grad_factories():
    with Delta() as d:
        p = ember.zeros(10, requires_grad=True)
        q = ember.randn(5, requires_grad=True)
    assert d.bytes == 60
    del p, q


def test_deepcopy_and_pickle_count():
    import copy
    import pickle
    x = ember.randn(10)
    with Delta() as d:
        y = copy.deepcopy(x)
    assert d.bytes == 40
    with Delta() as d:
        z = pickle.loads(pickle.dumps(x))
    assert d.bytes == 40
    del y, z
