"""Attention and transformers against PyTorch: F.scaled_dot_product_attention (masks,
causal, scale, GQA, dropout), F.multi_head_attention_forward through MultiheadAttention
(packed/separate projections, bias_kv, zero_attn, masks, weights), and the Transformer
encoder/decoder stacks (post/pre-norm, activations, masks) in eval and train mode."""
import numpy as np
import pytest

from oracle import check, check_error, to_numpy, torch

import ember

RNG = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def pair(ctor, double=False):
    tm, em = ctor(torch.nn), ctor(ember.nn)
    if double:
        tm, em = tm.double(), em.double()
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return em, tm


def lib_of(x):
    return ember if isinstance(x, ember.Tensor) else torch


def compare_module(em, tm, run, arrays, masks=(), atol=2e-5):
    """run(module, lib, *leaves, *masks): outputs, input grads and parameter grads agree."""
    le = [ember.from_numpy(a.copy()).requires_grad_(True) for a in arrays]
    lt = [torch.from_numpy(a.copy()).requires_grad_(True) for a in arrays]
    me = [ember.from_numpy(m.copy()) if m is not None else None for m in masks]
    mt = [torch.from_numpy(m.copy()) if m is not None else None for m in masks]
    oe, ot = run(em, ember, *le, *me), run(tm, torch, *lt, *mt)
    oe, ot = [o for o in oe if o is not None], [o for o in ot if o is not None]
    assert len(oe) == len(ot)
    for i, (a, b) in enumerate(zip(oe, ot)):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), atol=atol, rtol=1e-4,
                                   err_msg=f"output {i}")
    ws = [RNG.standard_normal(tuple(b.shape)) for b in ot]
    sum((a * ember.from_numpy(w).to(a.dtype)).sum() for a, w in zip(oe, ws)).backward()
    sum((b * torch.from_numpy(w).to(b.dtype)).sum() for b, w in zip(ot, ws)).backward()
    for i, (a, b) in enumerate(zip(le, lt)):
        np.testing.assert_allclose(to_numpy(a.grad), to_numpy(b.grad), atol=atol * 10,
                                   rtol=1e-3, err_msg=f"input grad {i}")
    pe, pt = dict(em.named_parameters()), dict(tm.named_parameters())
    assert list(pe) == list(pt)
    for k in pt:
        if pt[k].grad is None:
            assert pe[k].grad is None or not pe[k].grad.numpy().any(), k
            continue
        np.testing.assert_allclose(to_numpy(pe[k].grad), to_numpy(pt[k].grad), atol=atol * 10,
                                   rtol=1e-3, err_msg=k)


# ------------------------------------------------------------------ SDPA

def sdpa(**kw):
    return lambda L, q, k, v, *m: L.nn.functional.scaled_dot_product_attention(
        q, k, v, *m, **kw)


BOOL_MASK = RNG.random((4, 5)) > 0.3
FLOAT_MASK = np.where(RNG.random((2, 1, 4, 5)) > 0.3, 0, -np.inf).astype(np.float32) + \
    randn(2, 1, 4, 5)
DEAD_MASK = BOOL_MASK.copy()
DEAD_MASK[1] = False

SDPA_CASES = [
    ("plain", sdpa(), []), ("scale", sdpa(scale=0.3), []),
    ("causal", sdpa(is_causal=True), []), ("bool_mask", sdpa(), [BOOL_MASK]),
    ("float_mask", sdpa(), [FLOAT_MASK]),
    ("fully_masked_row", sdpa(), [DEAD_MASK]),
]


@pytest.mark.parametrize("name,fn,masks", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa(name, fn, masks):
    check(fn, randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 6), *masks, atol=1e-5)


def test_sdpa_shapes_dtypes():
    check(sdpa(), randn(4, 8), randn(5, 8), randn(5, 3))                      # 2-D
    check(sdpa(), randn(3, 4, 8), randn(1, 5, 8), randn(1, 5, 8))             # broadcast
    check(sdpa(is_causal=True), randn(2, 6, 4, dtype=np.float64),
          randn(2, 3, 4, dtype=np.float64), randn(2, 3, 4, dtype=np.float64))  # L > S
    check(sdpa(), randn(2, 0, 4), randn(2, 3, 4), randn(2, 3, 4))            # empty
    f = np.zeros((2, 4, 8), np.float32)
    check(sdpa(), f, f[:, :3], f[:, :3].copy(), BOOL_MASK[:, :3])


def test_sdpa_gqa():
    check(sdpa(enable_gqa=True), randn(2, 6, 4, 8), randn(2, 2, 5, 8), randn(2, 2, 5, 8))
    check(sdpa(enable_gqa=True), randn(2, 4, 4, 8), randn(2, 1, 5, 8), randn(2, 4, 5, 8))


def test_sdpa_dropout():
    q, k, v = (ember.from_numpy(randn(2, 2, 6, 4)) for _ in range(3))
    F = ember.nn.functional
    base = F.scaled_dot_product_attention(q, k, v)
    ember.manual_seed(0)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert a.shape == base.shape and not np.allclose(a.numpy(), base.numpy())
    zero = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not zero.numpy().any()


SDPA_ERRORS = [
    ("dtype", sdpa(), [randn(2, 4, 8), randn(2, 5, 8), randn(2, 5, 8, dtype=np.float64)]),
    ("mask_dtype", sdpa(), [randn(2, 4, 8), randn(2, 5, 8), randn(2, 5, 8),
                            np.zeros((4, 5), np.int64)]),
    ("mask_float64", sdpa(), [randn(2, 4, 8), randn(2, 5, 8), randn(2, 5, 8),
                              np.zeros((4, 5), np.float64)]),
    ("1d", sdpa(), [randn(8), randn(5, 8), randn(5, 8)]),
    ("heads", sdpa(), [randn(2, 3, 4, 8), randn(2, 2, 5, 8), randn(2, 2, 5, 8)]),
    ("gqa", sdpa(enable_gqa=True), [randn(2, 3, 4, 8), randn(2, 2, 5, 8), randn(2, 2, 5, 8)]),
    ("causal_and_mask", sdpa(is_causal=True), [randn(2, 4, 8), randn(2, 5, 8), randn(2, 5, 6),
                                                BOOL_MASK]),
    ("head_dim", sdpa(), [randn(2, 4, 8), randn(2, 5, 4), randn(2, 5, 8)]),
]


@pytest.mark.parametrize("name,fn,arrays", SDPA_ERRORS, ids=[c[0] for c in SDPA_ERRORS])
def test_sdpa_errors(name, fn, arrays):
    check_error(fn, *arrays)


# ------------------------------------------------------------------ MultiheadAttention

MHA_REPRS = ["MultiheadAttention(8, 2)", "MultiheadAttention(8, 4, bias=False, kdim=3, vdim=5)",
             "MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True)"]


@pytest.mark.parametrize("expr", MHA_REPRS)
def test_mha_repr_and_parameters(expr):
    em, tm = eval("nn." + expr, {"nn": ember.nn}), eval("nn." + expr, {"nn": torch.nn})
    assert repr(em) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in em.named_parameters()] == \
        [(k, tuple(v.shape)) for k, v in tm.named_parameters()]
    if em.in_proj_bias is not None:
        assert not em.in_proj_bias.detach().numpy().any()


KPM = np.array([[False, False, False, True, True], [False, False, False, False, True]])
MASK2 = np.triu(np.ones((5, 5), bool), 1)
MASK3F = randn(2 * 2, 5, 5)

MHA_CASES = [
    ("self", dict(), dict(), None, None),
    ("self_batch_first", dict(batch_first=True), dict(), None, None),
    ("cross_kdim_vdim", dict(kdim=3, vdim=6), dict(average_attn_weights=False), None, None),
    ("no_bias_kv_zero", dict(bias=False, add_bias_kv=True, add_zero_attn=True), dict(),
     KPM, MASK2),
    ("masks_bool", dict(), dict(), KPM, MASK2),
    ("masks_no_weights", dict(), dict(need_weights=False), KPM, MASK2),
    ("float_masks", dict(), dict(), np.where(KPM, -1e4, 0.0).astype(np.float32), MASK3F),
    ("causal_no_weights", dict(batch_first=True), dict(need_weights=False, is_causal=True),
     None, MASK2),
    ("causal_with_kpm", dict(), dict(need_weights=False, is_causal=True), KPM, MASK2),
]


@pytest.mark.parametrize("name,ctor,call,kpm,mask", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_mha(name, ctor, call, kpm, mask):
    em, tm = pair(lambda nn: nn.MultiheadAttention(8, 2, **ctor))
    cross = "kdim" in ctor
    bf = ctor.get("batch_first", False)
    shape = (2, 5, 8) if bf else (5, 2, 8)
    arrays = [randn(*shape)]
    if cross:
        arrays += [randn(7, 2, 3), randn(7, 2, 6)]
        kpm = mask = None

    def run(m, L, x, *rest):
        k, v = (rest[0], rest[1]) if cross else (x, x)
        return m(x, k, v, key_padding_mask=kpm_t(L), attn_mask=mask_t(L), **call)

    def kpm_t(L):
        return None if kpm is None else L.from_numpy(kpm.copy())

    def mask_t(L):
        return None if mask is None else L.from_numpy(mask.copy())
    compare_module(em, tm, run, arrays)


def test_mha_unbatched_and_double():
    em, tm = pair(lambda nn: nn.MultiheadAttention(6, 3, kdim=4, vdim=4), double=True)
    arrays = [randn(5, 6, dtype=np.float64), randn(7, 4, dtype=np.float64)]
    kpm = np.array([False] * 6 + [True])

    def run(m, L, q, kv):
        return m(q, kv, kv, key_padding_mask=L.from_numpy(kpm.copy()))
    compare_module(em, tm, run, arrays, atol=1e-10)


def test_mha_train_dropout_zero_matches():
    em, tm = pair(lambda nn: nn.MultiheadAttention(8, 4, dropout=0.0))

    def run(m, L, x):
        return m(x, x, x)
    compare_module(em.train(), tm.train(), run, [randn(3, 2, 8)])


def test_mha_errors():
    for L in (ember, torch):
        with pytest.raises(AssertionError):
            L.nn.MultiheadAttention(8, 3)
        with pytest.raises(ValueError):
            L.nn.MultiheadAttention(0, 2)
        m = L.nn.MultiheadAttention(8, 2)
        x = L.zeros(5, 2, 8)
        with pytest.raises(AssertionError):
            m(x, L.zeros(5, 8), L.zeros(5, 8))
        with pytest.raises(RuntimeError):
            m(x, x, x, attn_mask=L.zeros(4, 4))
        with pytest.raises(RuntimeError):
            m(x, x, x, is_causal=True)
        with pytest.raises(AssertionError):
            m(x, x, x, attn_mask=L.zeros(5, 5, dtype=L.int64))
        with pytest.raises(AssertionError):
            m(L.zeros(5, 2, 6), L.zeros(5, 2, 6), L.zeros(5, 2, 6))


# ------------------------------------------------------------------ transformers

def test_generate_square_subsequent_mask():
    a = ember.nn.Transformer.generate_square_subsequent_mask(4)
    b = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert a.dtype is ember.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    a = ember.nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
    assert a.dtype is ember.float64


ENC_CASES = [
    ("post_norm", dict(), "train"), ("pre_norm_gelu", dict(norm_first=True, activation="gelu"),
                                     "train"),
    ("callable_act_batch_first", dict(activation=lambda x: x.tanh(), batch_first=True), "eval"),
    ("no_bias", dict(bias=False), "eval"),
]


@pytest.mark.parametrize("name,kw,mode", ENC_CASES, ids=[c[0] for c in ENC_CASES])
def test_encoder(name, kw, mode):
    dropout = 0.0 if mode == "train" else 0.1
    fn = kw.get("activation")
    if callable(fn):
        kw = dict(kw, activation=None)

    def ctor(nn):
        act = fn if callable(fn) else kw.get("activation", "relu")
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout, **dict(kw, activation=act))
        return nn.TransformerEncoder(layer, 2, nn.LayerNorm(8), enable_nested_tensor=False)
    em, tm = pair(ctor)
    getattr(em, mode)()
    getattr(tm, mode)()
    bf = kw.get("batch_first", False)
    x = randn(2, 5, 8) if bf else randn(5, 2, 8)
    kpm = np.array([[False] * 5, [False, False, False, True, True]])

    def run(m, L, x):
        mask = L.nn.Transformer.generate_square_subsequent_mask(5)
        return (m(x, mask=mask, src_key_padding_mask=L.from_numpy(kpm.copy())),
                m(x, mask=mask, is_causal=True), m(x))
    compare_module(em, tm, run, [x], atol=5e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder(norm_first):
    def ctor(nn):
        layer = nn.TransformerDecoderLayer(8, 2, 16, 0.0, norm_first=norm_first)
        return nn.TransformerDecoder(layer, 2, nn.LayerNorm(8))
    em, tm = pair(ctor)
    kpm = np.array([[False] * 6, [False] * 4 + [True] * 2])

    def run(m, L, tgt, mem):
        mask = L.nn.Transformer.generate_square_subsequent_mask(4)
        return m(tgt, mem, tgt_mask=mask, memory_key_padding_mask=L.from_numpy(kpm.copy()))
    compare_module(em, tm, run, [randn(4, 2, 8), randn(6, 2, 8)], atol=5e-5)


def test_full_transformer_eval_and_no_grad():
    def ctor(nn):
        return nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                              dim_feedforward=16, batch_first=True)
    em, tm = pair(ctor)
    em.eval()
    tm.eval()

    def run(m, L, src, tgt):
        return (m(src, tgt, tgt_mask=L.nn.Transformer.generate_square_subsequent_mask(4)),)
    compare_module(em, tm, run, [randn(2, 6, 8), randn(2, 4, 8)], atol=5e-5)
    src, tgt = randn(2, 6, 8), randn(2, 4, 8)
    with ember.no_grad():
        a = em(ember.from_numpy(src), ember.from_numpy(tgt))
    with torch.no_grad():     # PyTorch's fast path: same values
        b = tm(torch.from_numpy(src), torch.from_numpy(tgt))
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=5e-5)


def test_transformer_errors():
    for L in (ember, torch):
        m = L.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                             dim_feedforward=8)
        with pytest.raises(RuntimeError, match="batch number"):
            m(L.zeros(3, 2, 8), L.zeros(3, 3, 8))
        with pytest.raises(RuntimeError, match="feature number"):
            m(L.zeros(3, 2, 6), L.zeros(3, 2, 6))
        with pytest.raises(RuntimeError, match="relu/gelu"):
            L.nn.TransformerEncoderLayer(8, 2, activation="tanh")
