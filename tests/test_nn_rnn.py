"""Recurrent layers and nn.utils.rnn against PyTorch: RNN (tanh/relu), LSTM (proj_size),
GRU, the three cells, and packing/padding helpers.

Modules are built in both frameworks, torch's state_dict is copied into ember's, and
outputs, final states, input/initial-state gradients and every parameter gradient are
compared, over layers 1-2, bidirectional, batch_first, bias=False, float64, unbatched
input and packed input with unsorted lengths."""
import warnings

import numpy as np
import pytest

from oracle import check_error, to_numpy, torch

import ember

RNG = np.random.default_rng(0)


def pair(ctor, double=False):
    tm, em = ctor(torch.nn), ctor(ember.nn)
    if double:
        tm, em = tm.double(), em.double()
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


def leaves(arrays):
    return ([ember.from_numpy(a.copy()).requires_grad_(True) for a in arrays],
            [torch.from_numpy(a.copy()).requires_grad_(True) for a in arrays])


def flat(out):
    """Tensors of a (nested) RNN result, PackedSequence data included."""
    if isinstance(out, (ember.nn.utils.rnn.PackedSequence, torch.nn.utils.rnn.PackedSequence)):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def compare(em, tm, fe, ft, arrays, atol=1e-5):
    """Runs fe(em, *ember_leaves) / ft(tm, *torch_leaves); compares outputs and all grads."""
    le, lt = leaves(arrays)
    oe, ot = flat(fe(em, *le)), flat(ft(tm, *lt))
    assert len(oe) == len(ot)
    for i, (a, b) in enumerate(zip(oe, ot)):
        assert tuple(a.shape) == tuple(b.shape), f"output {i}: {a.shape} vs {b.shape}"
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), atol=atol, rtol=1e-4,
                                   err_msg=f"output {i}")
    ws = [RNG.standard_normal(tuple(b.shape)) for b in ot]
    sum(((a * ember.from_numpy(w).to(a.dtype)).sum() for a, w in zip(oe, ws))).backward()
    sum(((b * torch.from_numpy(w).to(b.dtype)).sum() for b, w in zip(ot, ws))).backward()
    for i, (a, b) in enumerate(zip(le, lt)):
        np.testing.assert_allclose(to_numpy(a.grad), to_numpy(b.grad), atol=atol * 10,
                                   rtol=1e-3, err_msg=f"input grad {i}")
    pe, pt = dict(em.named_parameters()), dict(tm.named_parameters())
    assert list(pe) == list(pt)
    for k in pt:
        np.testing.assert_allclose(to_numpy(pe[k].grad), to_numpy(pt[k].grad), atol=atol * 10,
                                   rtol=1e-3, err_msg=k)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------ reprs, params

REPRS = ["RNN(3, 4)", "RNN(3, 4, 2, nonlinearity='relu', bias=False, batch_first=True)",
         "LSTM(3, 5, proj_size=2, num_layers=2, dropout=0.5, bidirectional=True)",
         "GRU(3, 4, bidirectional=True)", "LSTM(3, 4, batch_first=True)",
         "RNNCell(3, 4, nonlinearity='relu')", "RNNCell(3, 4, bias=False)",
         "LSTMCell(3, 4)", "GRUCell(3, 4, bias=False)"]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_and_parameters(expr):
    em, tm = eval("nn." + expr, {"nn": ember.nn}), eval("nn." + expr, {"nn": torch.nn})
    assert repr(em) == repr(tm)
    shapes_e = [(k, tuple(v.shape)) for k, v in em.named_parameters()]
    shapes_t = [(k, tuple(v.shape)) for k, v in tm.named_parameters()]
    assert shapes_e == shapes_t
    bound = 1 / np.sqrt(em.hidden_size)
    for _, p in em.named_parameters():
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound and a.std() > bound / 4


def test_flat_weights_and_all_weights():
    em = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    tm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert em._flat_weights_names == tm._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in em.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
    assert em.flatten_parameters() is None
    em.double()
    assert em._flat_weights[0].dtype is ember.float64


# ------------------------------------------------------------------ full layers

CONFIGS = [
    ("RNN", dict()), ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True, batch_first=True)),
    ("LSTM", dict()), ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, batch_first=True)),
    ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True, bias=False)),
    ("GRU", dict()), ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False)),
]


def _hidden_arrays(mode, kw, batch, dtype=np.float32):
    n = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h = randn(n, batch, kw.get("proj_size", 0) or 5, dtype=dtype)
    if mode == "LSTM":
        return [h, randn(n, batch, 5, dtype=dtype)]
    return [h]


@pytest.mark.parametrize("mode,kw", CONFIGS)
@pytest.mark.parametrize("with_hx", [False, True])
def test_layer_matches_torch(mode, kw, with_hx):
    em, tm = pair(lambda nn: getattr(nn, mode)(4, 5, **kw))
    x = randn(3, 6, 4)     # (B, T, F) when batch_first else (T, B, F)
    batch = 3 if kw.get("batch_first") else 6
    arrays = [x] + (_hidden_arrays(mode, kw, batch) if with_hx else [])

    def run(m, x, *h):
        if not h:
            return m(x)
        return m(x, tuple(h) if mode == "LSTM" else h[0])
    compare(em, tm, run, run, arrays)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_unbatched_and_float64(mode):
    kw = dict(num_layers=2, bidirectional=True)
    em, tm = pair(lambda nn: getattr(nn, mode)(4, 5, **kw), double=True)
    hs = [h[:, 0] for h in _hidden_arrays(mode, kw, 1, np.float64)]

    def run(m, x, *h):
        return m(x, tuple(h) if mode == "LSTM" else h[0])
    compare(em, tm, run, run, [randn(7, 4, dtype=np.float64)] + hs, atol=1e-10)


def test_non_contiguous_input_and_empty_batch():
    em, tm = pair(lambda nn: nn.GRU(4, 5, batch_first=True))
    x = randn(4, 6, 3)
    oe, he = em(ember.from_numpy(x).transpose(0, 2))
    ot, ht = tm(torch.from_numpy(x).transpose(0, 2))
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=1e-5)
    oe, (he, ce) = ember.nn.LSTM(4, 5)(ember.zeros(3, 0, 4))
    assert tuple(oe.shape) == (3, 0, 5) and tuple(he.shape) == (1, 0, 5)


def test_dropout_between_layers_only_in_training():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        em, tm = pair(lambda nn: nn.LSTM(4, 5, num_layers=2, dropout=0.5))
    x = randn(5, 3, 4)
    em.eval()
    tm.eval()
    np.testing.assert_allclose(em(ember.from_numpy(x))[0].detach().numpy(),
                               tm(torch.from_numpy(x))[0].detach().numpy(), atol=1e-5)
    em.train()
    ember.manual_seed(0)
    a = em(ember.from_numpy(x))[0].detach().numpy()
    ember.manual_seed(1)
    b = em(ember.from_numpy(x))[0].detach().numpy()
    assert not np.allclose(a, b)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ember.nn.GRU(3, 4, dropout=0.2)


# ------------------------------------------------------------------ packed input

def _packed_run(lengths, batch_first=False, enforce_sorted=False):
    def run(m, x, *h):
        L = ember if isinstance(x, ember.Tensor) else torch
        U = L.nn.utils.rnn
        p = U.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
        if h:
            out, hn = m(p, tuple(h) if len(h) == 2 else h[0])
        else:
            out, hn = m(p)
        padded, lens = U.pad_packed_sequence(out, batch_first=batch_first, total_length=7)
        assert lens.tolist() == list(lengths)
        return out, padded, hn
    return run


@pytest.mark.parametrize("mode,kw", [
    ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(proj_size=2)),
    ("GRU", dict(bidirectional=True, batch_first=True)),
    ("RNN", dict(num_layers=2, bidirectional=True, nonlinearity="relu"))])
@pytest.mark.parametrize("with_hx", [False, True])
def test_packed_unsorted(mode, kw, with_hx):
    em, tm = pair(lambda nn: getattr(nn, mode)(4, 5, **kw))
    lengths = [3, 6, 1, 6, 2]
    x = randn(5, 6, 4) if kw.get("batch_first") else randn(6, 5, 4)
    arrays = [x] + (_hidden_arrays(mode, kw, 5) if with_hx else [])
    run = _packed_run(lengths, batch_first=kw.get("batch_first", False))
    compare(em, tm, run, run, arrays)


def test_packed_sorted_tensor_lengths():
    em, tm = pair(lambda nn: nn.LSTM(4, 5, bidirectional=True))
    run = _packed_run([5, 3, 3, 1], enforce_sorted=True)
    compare(em, tm, run, run, [randn(5, 4, 4)])


# ------------------------------------------------------------------ cells

CELLS = [("RNNCell", dict()), ("RNNCell", dict(nonlinearity="relu", bias=False)),
         ("LSTMCell", dict()), ("LSTMCell", dict(bias=False)), ("GRUCell", dict())]


@pytest.mark.parametrize("name,kw", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [True, False])
def test_cells(name, kw, batched, with_hx):
    em, tm = pair(lambda nn: getattr(nn, name)(4, 5, **kw))
    shape = (3,) if batched else ()
    arrays = [randn(*shape, 4)]
    if with_hx:
        arrays += [randn(*shape, 5) for _ in range(2 if name == "LSTMCell" else 1)]

    def run(m, x, *h):
        if not h:
            return m(x)
        return m(x, tuple(h) if len(h) == 2 else h[0])
    compare(em, tm, run, run, arrays)


def test_cell_sequence_gradcheck():
    cell = ember.nn.LSTMCell(2, 3).double()
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)

    def fn(x):
        h = c = ember.zeros(2, 3, dtype=ember.float64)
        for t in range(x.shape[0]):
            h, c = cell(x[t], (h, c))
        return h
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


# ------------------------------------------------------------------ nn.utils.rnn

def test_pad_sequence_variants():
    seqs = [randn(3, 2), randn(5, 2), randn(1, 2)]
    for kw in (dict(), dict(batch_first=True, padding_value=-1.5),
               dict(padding_side="left", batch_first=True)):
        le, lt = leaves(seqs)
        a = ember.nn.utils.rnn.pad_sequence(le, **kw)
        b = torch.nn.utils.rnn.pad_sequence(lt, **kw)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        w = randn(*b.shape)
        (a * ember.from_numpy(w)).sum().backward()
        (b * torch.from_numpy(w)).sum().backward()
        for p, q in zip(le, lt):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy())


def test_pack_unpack_roundtrip():
    U, T = ember.nn.utils.rnn, torch.nn.utils.rnn
    seqs = [randn(2, 3), randn(4, 3), randn(3, 3)]
    pe = U.pack_sequence([ember.from_numpy(s) for s in seqs], enforce_sorted=False)
    pt = T.pack_sequence([torch.from_numpy(s) for s in seqs], enforce_sorted=False)
    for a, b in zip(pe, pt):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert pe.batch_sizes.dtype is ember.int64
    for a, s in zip(U.unpack_sequence(pe), seqs):
        np.testing.assert_array_equal(a.numpy(), s)
    padded = U.pad_sequence([ember.from_numpy(s) for s in seqs], batch_first=True)
    parts = U.unpad_sequence(padded, ember.tensor([2, 4, 3]), batch_first=True)
    assert [tuple(p.shape) for p in parts] == [(2, 3), (4, 3), (3, 3)]
    assert pe.double().data.dtype is ember.float64
    assert isinstance(pe.to(ember.float64), U.PackedSequence)
    np.testing.assert_array_equal(U.invert_permutation(ember.tensor([2, 0, 1])).numpy(),
                                  T.invert_permutation(torch.tensor([2, 0, 1])).numpy())


def test_pad_packed_padding_value_and_batch_first():
    x = randn(4, 3, 2)
    outs = []
    for L in (ember, torch):
        U = L.nn.utils.rnn
        p = U.pack_padded_sequence(L.from_numpy(x), L.tensor([4, 2, 3]), enforce_sorted=False)
        outs.append(U.pad_packed_sequence(p, batch_first=True, padding_value=9.0))
    np.testing.assert_array_equal(outs[0][0].numpy(), outs[1][0].numpy())
    np.testing.assert_array_equal(outs[0][1].numpy(), outs[1][1].numpy())


# ------------------------------------------------------------------ errors

CTOR_ERRORS = ["LSTM(3, 4, dropout=1.5)", "LSTM(3, 4, dropout=True)", "LSTM(3, 4.0)",
               "LSTM(3, 0)", "LSTM(0, 4)", "LSTM(3, 4, num_layers=0)", "LSTM(3, 4, proj_size=4)",
               "LSTM(3, 4, proj_size=-1)", "RNN(3, 4, nonlinearity='gelu')",
               "GRU(3, 4, proj_size=2)", "RNN(3, 4, proj_size=2)", "LSTM(3, 4, bias=1)",
               "LSTM(3, 4, batch_first=None)"]


@pytest.mark.parametrize("expr", CTOR_ERRORS)
def test_constructor_errors(expr):
    def go(nn):
        try:
            eval("nn." + expr, {"nn": nn})
        except Exception as e:  # noqa: BLE001
            return type(e), str(e)
        return None
    assert go(ember.nn) == go(torch.nn)


FORWARD_ERRORS = [
    ("LSTM(3, 4)", [(2, 3, 3, 1)], None),            # 4-D input
    ("LSTM(3, 4)", [(5, 2, 4)], None),               # wrong input_size
    ("GRU(3, 4)", [(5, 2, 3), (1, 3, 4)], None),     # wrong hidden batch
    ("RNN(3, 4)", [(5, 2, 3), (1, 2)], None),        # hx rank
    ("LSTM(3, 4)", [(5, 2, 3), (1, 2, 4), (1, 2, 5)], None),  # c size
    ("LSTM(3, 4)", [(5, 3), (1, 1, 4), (1, 1, 4)], None),     # unbatched with 3-D hx
    ("LSTM(3, 4)", [(0, 2, 3)], None),               # empty sequence
    ("LSTMCell(3, 4)", [(2, 5)], None), ("GRUCell(3, 4)", [(2, 3), (3, 4)], None),
    ("RNNCell(3, 4)", [(2, 2, 3)], None), ("GRUCell(3, 4)", [(2, 3), (2, 5)], None),
]


@pytest.mark.parametrize("expr,shapes,_", FORWARD_ERRORS)
def test_forward_errors(expr, shapes, _):
    em, tm = pair(lambda nn: eval("nn." + expr, {"nn": nn}))
    arrays = [randn(*s) for s in shapes]

    def run(L, *xs):
        m = em if L is ember else tm
        if len(xs) == 3 and "LSTM(" in expr:
            return m(xs[0], (xs[1], xs[2]))
        return m(*xs)
    check_error(run, *arrays)


def test_dtype_mismatch_and_packing_errors():
    check_error(lambda L, x: (ember.nn.GRU(3, 4) if L is ember else torch.nn.GRU(3, 4))(x),
                randn(2, 2, 3, dtype=np.float64))
    for L in (ember, torch):
        U = L.nn.utils.rnn
        x = L.zeros(4, 3, 2)
        for bad in ([1, 2, 3], [3, 3, 0], [2, 4], [0, 0, 0]):
            with pytest.raises(RuntimeError):
                U.pack_padded_sequence(x, bad)
        with pytest.raises(RuntimeError):
            U.pack_padded_sequence(L.zeros(0, 3, 2), [1, 1, 1])
        p = U.pack_padded_sequence(x, [4, 2, 1])
        with pytest.raises(ValueError, match="total_length"):
            U.pad_packed_sequence(p, total_length=2)
        with pytest.raises(RuntimeError):
            U.pad_sequence([])


def test_autocast_dtypes_follow_torch():
    """Under CPU autocast PyTorch's LSTM is one lower-precision op; GRU/cells mix dtypes."""
    x = randn(3, 2, 8)

    def dtypes(L):
        out = []
        L.manual_seed(0)
        with L.autocast("cpu", dtype=L.bfloat16):
            for name in ("LSTM", "GRU", "RNN"):
                o, h = getattr(L.nn, name)(8, 5)(L.from_numpy(x))
                out.append((str(o.dtype), str((h[0] if isinstance(h, tuple) else h).dtype)))
            for name in ("LSTMCell", "GRUCell", "RNNCell"):
                r = getattr(L.nn, name)(8, 5)(L.from_numpy(x[0]))
                out.append(str((r[0] if isinstance(r, tuple) else r).dtype))
        return out
    assert dtypes(ember) == dtypes(torch)
