"""ember.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader
(single process and worker processes)."""
import collections
import os
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as TD

import ember
import ember.utils.data as ED

Point = collections.namedtuple("Point", ["x", "y"])


def _plain(obj):
    """A comparable form of a (nested) batch: tensors -> (dtype name, shape, values)."""
    if isinstance(obj, (torch.Tensor, ember.Tensor)):
        arr = obj.detach()
        dt = str(obj.dtype).replace("torch.", "")
        if dt == "bfloat16":
            arr = arr.float()
        return ("T", dt, tuple(obj.shape), arr.numpy().tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: _plain(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, tuple(_plain(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_plain(v) for v in obj])
    if isinstance(obj, np.ndarray):
        return ("np", obj.dtype.str, obj.tolist())
    return obj


def _both(make):
    """make(L) with L = ember's and torch's modules (utils.data, tensor library)."""
    return make(ED, ember), make(TD, torch)


def _same_error(fn):
    errs = []
    for D, L in ((ED, ember), (TD, torch)):
        with pytest.raises(Exception) as info:
            fn(D, L)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]), errs
    assert str(errs[0]) == str(errs[1]), errs


def _arr(L, a):
    return L.from_numpy(np.array(a))


# ------------------------------------------------------------------------ datasets

def test_tensor_stack_concat_subset_match_torch():
    x, y = np.arange(12.0).reshape(6, 2), np.arange(6)

    def make(D, L):
        td = D.TensorDataset(_arr(L, x), _arr(L, y))
        st = D.StackDataset(td, D.TensorDataset(_arr(L, y)))
        sk = D.StackDataset(a=td, b=list(range(6)))
        cat = D.ConcatDataset([td, D.TensorDataset(_arr(L, x[:2]), _arr(L, y[:2]))])
        sub = D.Subset(td, [5, 0, 3])
        return [len(td), td[2], len(st), st[1], st.__getitems__([0, 4]), sk[3],
                sk.__getitems__([1, 2]), len(cat), cat[7], cat[-1], cat[-8], cat.cumulative_sizes,
                len(sub), sub[1], sub.__getitems__([0, 2]), len(td + td), (td + td)[7]]

    e, t = _both(make)
    assert _plain(e) == _plain(t)


def test_chain_and_iterable_add():
    class Rng(ED.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    ch = Rng(2) + Rng(3)
    assert isinstance(ch, ED.ChainDataset)
    assert list(ch) == [0, 1, 0, 1, 2] and len(ch) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ED.ChainDataset([Rng(1), [1, 2]]))


@pytest.mark.parametrize("fn", [
    lambda D, L: D.TensorDataset(L.zeros(3), L.zeros(4)),
    lambda D, L: D.StackDataset([1, 2], b=[1, 2]),
    lambda D, L: D.StackDataset([1, 2], [1]),
    lambda D, L: D.StackDataset(),
    lambda D, L: D.ConcatDataset([]),
    lambda D, L: D.ConcatDataset([[1, 2]])[-3],
    lambda D, L: D.ConcatDataset([D.IterableDataset()]),
    lambda D, L: D.Dataset()[0],
    lambda D, L: D.random_split(range(10), [3, 3]),
    lambda D, L: D.random_split(range(10), [1.5, -0.5]),
])
def test_dataset_errors_match_torch(fn):
    _same_error(fn)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1.0, 0.0],
                                     [0.33, 0.33, 0.34], [0.25] * 4])
def test_random_split_sizes_and_cover(lengths):
    n = 10
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        e = ED.random_split(range(n), lengths, generator=ember.Generator().manual_seed(1))
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        t = TD.random_split(range(n), lengths, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in e] == [len(s) for s in t]
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    assert sorted(i for s in e for i in s) == list(range(n))
    again = ED.random_split(range(n), lengths, generator=ember.Generator().manual_seed(1))
    assert [list(s) for s in again] == [list(s) for s in e]


# ------------------------------------------------------------------------ samplers

def test_sequential_and_batch_samplers_match_torch():
    for bs in (1, 3, 4, 10, 11):
        for drop in (False, True):
            e = ED.BatchSampler(ED.SequentialSampler(range(10)), bs, drop)
            t = TD.BatchSampler(TD.SequentialSampler(range(10)), bs, drop)
            assert list(e) == list(t) and len(e) == len(t)


@pytest.mark.parametrize("fn", [
    lambda D, L: D.BatchSampler(range(3), 0, False),
    lambda D, L: D.BatchSampler(range(3), True, False),
    lambda D, L: D.BatchSampler(range(3), 2, 1),
    lambda D, L: D.RandomSampler(range(3), replacement=1),
    lambda D, L: D.RandomSampler(range(3), num_samples=0),
    lambda D, L: D.RandomSampler([], num_samples=None),
    lambda D, L: D.WeightedRandomSampler([1.0, 2.0], 0),
    lambda D, L: D.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
    lambda D, L: D.WeightedRandomSampler([[1.0, 2.0]], 2),
])
def test_sampler_errors_match_torch(fn):
    _same_error(fn)


def test_random_sampler_permutations_and_determinism():
    g = ember.Generator().manual_seed(3)
    s = ED.RandomSampler(range(17), generator=g)
    a, b = list(s), list(s)
    assert sorted(a) == list(range(17)) and sorted(b) == list(range(17)) and a != b
    assert list(ED.RandomSampler(range(17), generator=ember.Generator().manual_seed(3))) == a
    ember.manual_seed(5)
    c = list(ED.RandomSampler(range(17)))
    ember.manual_seed(5)
    assert list(ED.RandomSampler(range(17))) == c
    s = ED.RandomSampler(range(5), num_samples=12, generator=g)
    draws = list(s)
    assert len(s) == 12 and len(draws) == 12
    assert sorted(draws[:5]) == sorted(draws[5:10]) == list(range(5))
    r = ED.RandomSampler(range(4), replacement=True, num_samples=70, generator=g)
    draws = list(r)
    assert len(draws) == 70 and set(draws) == set(range(4))


def test_subset_and_weighted_samplers():
    g = ember.Generator().manual_seed(0)
    idx = [10, 20, 30, 40]
    s = ED.SubsetRandomSampler(idx, generator=g)
    assert sorted(s) == idx and len(s) == 4
    w = ED.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=g)
    draws = list(w)
    assert len(w) == 50 and len(draws) == 50 and set(draws) <= {1, 3}
    w = ED.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g)
    assert sorted(w) == [0, 1, 2]


# ------------------------------------------------------------------------ collation

def _sample_batches(L):
    return [
        [0, 1, 2], [0.5, 1.5], [True, False], ["a", "b"], [b"x", b"y"],
        [np.array([1, 2], np.int32), np.array([3, 4], np.int32)],
        [np.float32(1.5), np.float32(2.5)], [np.int64(3), np.int64(4)], [np.bool_(True)],
        [np.array(2.0)], [L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])],
        [L.tensor(1, dtype=L.int16), L.tensor(2, dtype=L.int16)],
        [L.zeros(2, dtype=L.bfloat16)] * 2,
        [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
        [collections.OrderedDict(z=1, a=2)] * 2,
        [Point(1, np.array([1.0])), Point(2, np.array([2.0]))],
        [(1, "s", 2.0), (3, "t", 4.0)], [[1, [2, 3]], [4, [5, 6]]],
        [{"x": (L.ones(2), {"deep": [np.int8(1)]})}] * 3,
    ]


def test_default_collate_matches_torch():
    for e, t in zip(_sample_batches(ember), _sample_batches(torch)):
        assert _plain(ED.default_collate(e)) == _plain(TD.default_collate(t)), e


def test_default_convert_matches_torch():
    for e, t in zip(_sample_batches(ember), _sample_batches(torch)):
        for x, y in zip(e, t):
            assert _plain(ED.default_convert(x)) == _plain(TD.default_convert(y))
    for v in (np.array(["a", "b"]), np.array([object()]), "s", 3, np.str_("q")):
        assert ED.default_convert(v) is v


@pytest.mark.parametrize("batch", [
    [[1, 2], [3]],
    [np.array(["a"]), np.array(["b"])],
    [object(), object()],
    [None, None],
])
def test_default_collate_errors_match_torch(batch):
    _same_error(lambda D, L: D.default_collate(batch))


# ------------------------------------------------------------------------ DataLoader

class _Squares:
    """A map-style dataset of dict samples (used with both libraries)."""

    def __init__(self, L, n=10):
        self.L, self.n = L, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"i": i, "x": self.L.tensor([float(i), float(i * i)]), "name": f"s{i}"}


class _Count(ED.IterableDataset):
    """0..n-1, sharded across workers by get_worker_info()."""

    def __init__(self, n, with_len=True):
        self.n, self.with_len = n, with_len

    def __iter__(self):
        info = ED.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        if not self.with_len:
            raise TypeError("no len")
        return self.n


class _TCount(TD.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


LOADER_CASES = [
    dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
    dict(batch_size=4, collate_fn=lambda b: [s["i"] for s in b]),
    dict(batch_sampler=[[3, 1], [0], [9, 8, 7]]), dict(sampler=[5, 2, 2, 0], batch_size=2),
    dict(batch_size=10), dict(batch_size=1),
]


@pytest.mark.parametrize("kw", LOADER_CASES)
def test_dataloader_matches_torch(kw):
    e = ED.DataLoader(_Squares(ember), **kw)
    t = TD.DataLoader(_Squares(torch), **kw)
    assert len(e) == len(t)
    assert _plain(list(e)) == _plain(list(t))


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=5)])
def test_iterable_dataloader_len_matches_torch(kw):
    e = ED.DataLoader(_Count(7), **kw)
    t = TD.DataLoader(_TCount(7), **kw)
    assert len(e) == len(t)
    assert _plain(list(e)) == _plain(list(t))


def test_iterable_len_warning():
    dl = ED.DataLoader(_Count(7), batch_size=None)
    dl.dataset.n = 9            # reports 9 now; len(dl) is taken first
    dl.dataset.with_len = True
    n = len(dl)
    dl.dataset.n = 12
    with pytest.warns(UserWarning, match=f"was reported to be {n}"):
        list(dl)


@pytest.mark.parametrize("kw", [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1), dict(persistent_workers=True),
    dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_size=None, drop_last=True),
    dict(multiprocessing_context="fork"), dict(num_workers=1, multiprocessing_context="nope"),
    dict(num_workers=1, multiprocessing_context=3),
])
def test_dataloader_argument_errors_match_torch(kw):
    _same_error(lambda D, L: D.DataLoader(list(range(4)), **kw))


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])])
def test_iterable_dataloader_argument_errors(kw):
    for D, ds in ((ED, _Count(3)), (TD, _TCount(3))):
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected "
                                             "unspecified"):
            D.DataLoader(ds, **kw)


def test_dataloader_frozen_attributes():
    dl = ED.DataLoader([1, 2])
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        dl.batch_size = 3
    dl.num_workers = 0          # not frozen, as in torch


def test_shuffle_deterministic_with_generator():
    ds = list(range(23))

    def epochs(workers):
        dl = ED.DataLoader(ds, batch_size=5, shuffle=True, num_workers=workers,
                           generator=ember.Generator().manual_seed(7))
        return [[b.tolist() for b in dl] for _ in range(2)]

    a = epochs(0)
    assert a == epochs(0)
    assert a[0] != a[1]
    assert sorted(sum(a[0], [])) == ds
    assert a == epochs(2)       # worker processes keep the sampler's order


# ------------------------------------------------------------------ worker processes

class _Info(ED.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        w = ED.get_worker_info()
        import random
        return {"i": i, "id": w.id, "num_workers": w.num_workers, "seed": w.seed,
                "pid": os.getpid(), "same_ds": w.dataset is self,
                "py": random.random(), "np": float(np.random.rand()),
                "ember": ember.rand(1).item(), "t": ember.full((2,), float(i))}


def test_workers_match_single_process_and_collate_in_worker():
    ds = _Squares(ember, 11)
    for kw in (dict(batch_size=3), dict(batch_size=None), dict(batch_size=4, drop_last=True),
               dict(batch_size=2, prefetch_factor=1), dict(batch_size=3, in_order=False)):
        single = _plain(list(ED.DataLoader(ds, **{k: v for k, v in kw.items()
                                                  if k != "prefetch_factor"})))
        multi = _plain(list(ED.DataLoader(ds, num_workers=2, **kw)))
        if kw.get("in_order", True):
            assert multi == single, kw
        else:
            assert sorted(map(repr, multi[1])) == sorted(map(repr, single[1]))


def test_worker_info_and_seeding():
    assert ED.get_worker_info() is None
    g = ember.Generator().manual_seed(11)
    out = list(ED.DataLoader(_Info(), batch_size=None, num_workers=2, generator=g))
    assert [o["i"] for o in out] == list(range(8))
    assert [o["id"] for o in out] == [0, 1] * 4          # round-robin, in order
    assert all(o["num_workers"] == 2 and o["same_ds"] for o in out)
    base = out[0]["seed"]
    assert [o["seed"] for o in out] == [base, base + 1] * 4
    assert len({o["pid"] for o in out}) == 2 and os.getpid() not in {o["pid"] for o in out}
    for key in ("py", "np", "ember"):                      # workers draw different streams
        assert out[0][key] != out[1][key]
    assert isinstance(out[0]["t"], ember.Tensor) and out[3]["t"].tolist() == [3.0, 3.0]
    again = list(ED.DataLoader(_Info(), batch_size=None, num_workers=2,
                               generator=ember.Generator().manual_seed(11)))
    assert [(o["seed"], o["py"], o["np"], o["ember"]) for o in again] == \
        [(o["seed"], o["py"], o["np"], o["ember"]) for o in out]
    # ember's seed is base_seed + worker_id, as torch.manual_seed in a torch worker
    ember.manual_seed(base)
    assert out[0]["ember"] == ember.rand(1).item()


def _init_fn(worker_id):
    import random
    random.seed(1000 + worker_id)


def test_worker_init_fn():
    out = list(ED.DataLoader(_Info(), batch_size=None, num_workers=2, worker_init_fn=_init_fn))
    import random
    random.seed(1000)
    assert out[0]["py"] == random.random()


def test_iterable_dataset_sharding():
    dl = ED.DataLoader(_Count(11), batch_size=2, num_workers=2)
    batches = [b.tolist() for b in dl]
    assert batches == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9]]
    dl = ED.DataLoader(_Count(11), batch_size=2, num_workers=2, drop_last=True)
    assert [b.tolist() for b in dl] == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10]]
    assert sorted(int(x) for x in ED.DataLoader(_Count(5), batch_size=None, num_workers=3)) == \
        list(range(5))


class _Fails(ED.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4:
            raise ValueError(f"bad sample {i}")
        if i == 5:
            raise KeyError("missing")
        return i


def test_worker_exception_surfaces_with_traceback():
    it = iter(ED.DataLoader(_Fails(), batch_size=None, num_workers=2))
    assert [next(it) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError) as info:
        next(it)
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\n"
                          "Original Traceback (most recent call last):\n")
    assert "in __getitem__" in msg and "ValueError: bad sample 4" in msg
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        next(it)


def test_worker_init_fn_exception():
    def bad_init(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")

    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"):
        list(ED.DataLoader(list(range(4)), num_workers=2, worker_init_fn=bad_init))


class _Slow(ED.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(1.0 if i == 1 else 0.0)
        return i


def test_timeout():
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.2 seconds"):
        list(ED.DataLoader(_Slow(), batch_size=None, num_workers=2, timeout=0.2))


class _Dies(ED.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def test_worker_death_is_reported():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly"):
        list(ED.DataLoader(_Dies(), batch_size=None, num_workers=2))


def test_clean_shutdown():
    it = iter(ED.DataLoader(list(range(20)), batch_size=2, num_workers=2))
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    list(it)                                    # exhausted: workers stop
    assert not any(w.is_alive() for w in workers)
    it = iter(ED.DataLoader(list(range(200)), batch_size=2, num_workers=2))
    next(it)                                    # abandoned early
    workers = list(it._workers)
    del it
    assert not any(w.is_alive() for w in workers)


def test_persistent_workers():
    dl = ED.DataLoader(_Info(), batch_size=4, num_workers=2, persistent_workers=True)
    pids = [sorted({p for b in dl for p in b["pid"].tolist()}) for _ in range(3)]
    assert len(pids[0]) == 2 and all(p == pids[0] for p in pids)
    it = dl._iterator
    assert all(w.is_alive() for w in it._workers)
    workers = list(it._workers)
    del dl, it
    import gc
    gc.collect()
    assert not any(w.is_alive() for w in workers)
    dl = ED.DataLoader(_Count(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [sorted(sum((b.tolist() for b in dl), [])) for _ in range(2)] == [list(range(5))] * 2


def test_pin_memory_accepted():
    dl = ED.DataLoader(list(range(4)), batch_size=2, pin_memory=True)
    assert [b.tolist() for b in dl] == [[0, 1], [2, 3]]
