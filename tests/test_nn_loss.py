"""Losses against PyTorch: every functional loss x reduction (values, input and target
gradients), weights, ignore_index, label smoothing, K-dim inputs, empty batches,
float64 gradcheck, the loss modules (repr, buffers, legacy size_average/reduce),
CTC (values and gradients through log_softmax), autocast and errors."""
import warnings

import numpy as np
import pytest

from oracle import check, check_error, gradcheck, NC, torch, to_numpy

import ember

RED = ["none", "mean", "sum"]


def rn(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def un(*shape, seed=0, lo=0.05, hi=0.95, dtype=np.float32):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def ints(hi, *shape, seed=0):
    return np.random.default_rng(seed).integers(0, hi, shape).astype(np.int64)


def sign(*shape, seed=0):
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0).astype(np.float32)


def T(L, a):
    return L.from_numpy(np.ascontiguousarray(a).copy())


X, Y = rn(4, 5), rn(4, 5, seed=1)
P, Q = un(4, 5), un(4, 5, seed=1)
CLS = np.array([0, 3, 4, 1])
W5 = un(5, seed=3, lo=0.5, hi=2.0)
MLT = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 2, 0, 0], [4, -1, 0, 0, 0]])

F = lambda L: L.nn.functional     # noqa: E731

# name -> (fn(L, reduction, *tensors), inputs); every float input gets compared grads
LOSSES = {
    "l1": (lambda L, r, x, y: F(L).l1_loss(x, y, reduction=r), [X, Y]),
    "mse": (lambda L, r, x, y: F(L).mse_loss(x, y, reduction=r), [X, Y]),
    "huber": (lambda L, r, x, y: F(L).huber_loss(x, y, reduction=r, delta=0.7), [X, Y]),
    "smooth_l1": (lambda L, r, x, y: F(L).smooth_l1_loss(x, y, reduction=r, beta=0.5), [X, Y]),
    "smooth_l1_beta0": (lambda L, r, x, y: F(L).smooth_l1_loss(x, y, reduction=r, beta=0.0),
                        [X, Y]),
    "soft_margin": (lambda L, r, x: F(L).soft_margin_loss(x, T(L, sign(4, 5)), reduction=r), [X]),
    "bce": (lambda L, r, p, q: F(L).binary_cross_entropy(p, q, reduction=r), [P, Q]),
    "bce_weight": (lambda L, r, p, q: F(L).binary_cross_entropy(p, q, T(L, W5), reduction=r),
                   [P, Q]),
    "bce_logits": (lambda L, r, x, q: F(L).binary_cross_entropy_with_logits(x, q, reduction=r),
                   [X * 3, Q]),
    "bce_logits_pos_weight": (lambda L, r, x, q: F(L).binary_cross_entropy_with_logits(
        x, q, T(L, W5), reduction=r, pos_weight=T(L, un(5, seed=4, lo=0.5, hi=3))), [X * 3, Q]),
    "kl_div": (lambda L, r, x, q: F(L).kl_div(x, q, reduction=r), [X, Q]),
    "kl_div_log_target": (lambda L, r, x, y: F(L).kl_div(x, y, reduction=r, log_target=True),
                          [X, Y]),
    "poisson": (lambda L, r, x, q: F(L).poisson_nll_loss(x, q * 3, reduction=r), [X, Q]),
    "poisson_full": (lambda L, r, p, q: F(L).poisson_nll_loss(p, q * 4, log_input=False,
                                                              full=True, reduction=r), [P, Q]),
    "gaussian": (lambda L, r, x, y, v: F(L).gaussian_nll_loss(x, y, v, reduction=r), [X, Y, P]),
    "gaussian_full_homosc": (lambda L, r, x, y, v: F(L).gaussian_nll_loss(
        x, y, v, full=True, reduction=r), [X, Y, un(4, seed=5)]),
    "gaussian_bcast": (lambda L, r, x, y, v: F(L).gaussian_nll_loss(x, y, v, reduction=r),
                       [X, Y, un(4, 1, seed=6)]),
    "margin_ranking": (lambda L, r, a, b: F(L).margin_ranking_loss(a, b, T(L, sign(4, 5)),
                                                                    margin=0.3, reduction=r),
                       [X, Y]),
    "hinge": (lambda L, r, x: F(L).hinge_embedding_loss(x, T(L, sign(4, 5)), margin=0.5,
                                                        reduction=r), [X]),
    "cosine": (lambda L, r, a, b: F(L).cosine_embedding_loss(a, b, T(L, sign(4)), margin=0.2,
                                                             reduction=r), [X, Y]),
    "cosine_1d": (lambda L, r, a, b: F(L).cosine_embedding_loss(a, b, L.tensor(-1.0),
                                                                reduction=r), [X[0], Y[0]]),
    "triplet": (lambda L, r, a, p, n: F(L).triplet_margin_loss(a, p, n, reduction=r),
                [X, Y, rn(4, 5, seed=2)]),
    "triplet_swap_p1": (lambda L, r, a, p, n: F(L).triplet_margin_loss(
        a, p, n, margin=2.0, p=1, swap=True, reduction=r), [X, Y, rn(4, 5, seed=2)]),
    "triplet_distance": (lambda L, r, a, p, n: F(L).triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F(L).cosine_similarity(u, v), swap=True,
        reduction=r), [X, Y, rn(4, 5, seed=2)]),
    "multilabel_soft_margin": (lambda L, r, x, q: F(L).multilabel_soft_margin_loss(
        x, q, T(L, W5), reduction=r), [X, Q]),
    "multi_margin": (lambda L, r, x: F(L).multi_margin_loss(x, T(L, CLS), reduction=r), [X]),
    "multi_margin_p2_weight": (lambda L, r, x: F(L).multi_margin_loss(
        x, T(L, CLS), p=2, margin=0.7, weight=T(L, W5).to(x.dtype), reduction=r), [X]),
    "multi_margin_1d": (lambda L, r, x: F(L).multi_margin_loss(x, L.tensor(2), reduction=r),
                        [X[0]]),
    "multilabel_margin": (lambda L, r, x: F(L).multilabel_margin_loss(x, T(L, MLT),
                                                                      reduction=r), [X]),
    "multilabel_margin_1d": (lambda L, r, x: F(L).multilabel_margin_loss(x, T(L, MLT[0]),
                                                                         reduction=r), [X[0]]),
    "nll": (lambda L, r, x: F(L).nll_loss(x, T(L, CLS), reduction=r), [X]),
    "nll_weight_ignore": (lambda L, r, x: F(L).nll_loss(x, T(L, CLS), T(L, W5).to(x.dtype),
                                                        ignore_index=3,
                                                        reduction=r), [X]),
    "nll_1d": (lambda L, r, x: F(L).nll_loss(x, L.tensor(2), reduction=r), [X[0]]),
    "nll_2d_spatial": (lambda L, r, x: F(L).nll_loss(x, T(L, ints(3, 2, 4, 5)), reduction=r),
                       [rn(2, 3, 4, 5)]),
    "nll_kd": (lambda L, r, x: F(L).nll_loss(x, T(L, ints(3, 2, 2, 3, 2)), T(L, W5[:3]).to(x.dtype),
                                             ignore_index=1, reduction=r), [rn(2, 3, 2, 3, 2)]),
    "nll_uint8_target": (lambda L, r, x: F(L).nll_loss(x, T(L, CLS.astype(np.uint8)),
                                                       reduction=r), [X]),
    "ce": (lambda L, r, x: F(L).cross_entropy(x, T(L, CLS), reduction=r), [X]),
    "ce_weight_ignore": (lambda L, r, x: F(L).cross_entropy(x, T(L, CLS), T(L, W5).to(x.dtype),
                                                            ignore_index=4, reduction=r), [X]),
    "ce_smoothing": (lambda L, r, x: F(L).cross_entropy(x, T(L, CLS), label_smoothing=0.2,
                                                        reduction=r), [X]),
    "ce_smoothing_weight_ignore": (lambda L, r, x: F(L).cross_entropy(
        x, T(L, CLS), T(L, W5).to(x.dtype), ignore_index=0, label_smoothing=0.3, reduction=r), [X]),
    "ce_kd_smoothing": (lambda L, r, x: F(L).cross_entropy(x, T(L, ints(3, 2, 4, 5)),
                                                           label_smoothing=0.1, reduction=r),
                        [rn(2, 3, 4, 5)]),
    "ce_1d": (lambda L, r, x: F(L).cross_entropy(x, L.tensor(1), reduction=r), [X[0]]),
    "ce_probs": (lambda L, r, x, q: F(L).cross_entropy(x, q, reduction=r), [X, Q]),
    "ce_probs_weight_smoothing": (lambda L, r, x, q: F(L).cross_entropy(
        x, q, T(L, W5), label_smoothing=0.25, reduction=r), [X, Q]),
    "ce_probs_weight_grad": (lambda L, r, x, q, w: F(L).cross_entropy(x, q, w, reduction=r),
                             [X, Q, W5]),
    "multilabel_soft_margin_weight_grad": (lambda L, r, x, q, w: F(L).multilabel_soft_margin_loss(
        x, q, w, reduction=r), [X, Q, W5]),
    "ce_probs_kd": (lambda L, r, x, q: F(L).cross_entropy(x, q, reduction=r),
                    [rn(2, 3, 4), un(2, 3, 4)]),
}


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_torch(name, reduction):
    fn, inputs = LOSSES[name]
    check(lambda L, *a: fn(L, reduction, *a), *inputs)


@pytest.mark.parametrize("name", ["l1", "mse", "bce", "kl_div", "nll", "ce", "ce_probs",
                                  "bce_logits_pos_weight", "multi_margin", "cosine",
                                  "triplet", "huber", "poisson_full", "hinge"])
def test_float64_values_and_grads(name):
    fn, inputs = LOSSES[name]
    check(lambda L, *a: fn(L, "mean", *a), *[a.astype(np.float64) for a in inputs],
          atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("name", ["l1", "mse", "kl_div", "nll_weight_ignore",
                                  "ce_smoothing_weight_ignore", "ce_probs_weight_smoothing",
                                  "bce_weight", "multilabel_margin", "multi_margin_p2_weight",
                                  "soft_margin", "triplet_swap_p1"])
def test_non_contiguous_inputs(name):
    fn, inputs = LOSSES[name]
    check(lambda L, *a: fn(L, "sum", *a), *[NC(a) if a.ndim >= 2 else a for a in inputs])


GRADCHECK = ["mse", "huber", "smooth_l1", "soft_margin", "bce", "bce_logits_pos_weight",
             "kl_div", "kl_div_log_target", "poisson", "poisson_full", "margin_ranking",
             "cosine", "triplet", "multi_margin_p2_weight", "multilabel_margin", "nll_kd",
             "ce_smoothing_weight_ignore", "ce_probs_weight_smoothing", "gaussian",
             "multilabel_soft_margin"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck_and_double_backward(name):
    fn, inputs = LOSSES[name]
    gradcheck(lambda L, *a: fn(L, "mean", *a), *inputs)
    xs = [ember.from_numpy(a.astype(np.float64)).requires_grad_(True) for a in inputs]
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, "sum", *a), xs)


@pytest.mark.parametrize("case", ["nll", "ce", "ce_probs", "mse", "bce", "kl", "multi_margin",
                                  "multilabel_margin", "cosine"])
def test_empty_batch(case):
    e = np.zeros((0, 5), np.float32)
    fns = {
        "nll": (lambda L, x, r: F(L).nll_loss(x, L.zeros(0, dtype=L.long), reduction=r), [e]),
        "ce": (lambda L, x, r: F(L).cross_entropy(x, L.zeros(0, dtype=L.long), reduction=r), [e]),
        "ce_probs": (lambda L, x, r: F(L).cross_entropy(x, L.zeros(0, 5), reduction=r), [e]),
        "mse": (lambda L, x, r: F(L).mse_loss(x, L.zeros(0, 5), reduction=r), [e]),
        "bce": (lambda L, x, r: F(L).binary_cross_entropy(x, L.zeros(0, 5), reduction=r), [e]),
        "kl": (lambda L, x, r: F(L).kl_div(x, L.zeros(0, 5), reduction=r), [e]),
        "multi_margin": (lambda L, x, r: F(L).multi_margin_loss(x, L.zeros(0, dtype=L.long),
                                                                reduction=r), [e]),
        "multilabel_margin": (lambda L, x, r: F(L).multilabel_margin_loss(
            x, L.zeros(0, 5, dtype=L.long), reduction=r), [e]),
        "cosine": (lambda L, x, r: F(L).cosine_embedding_loss(x, x, L.zeros(0), reduction=r),
                   [e]),
    }
    fn, inputs = fns[case]
    # torch's multi(label)_margin mean over an empty batch reads uninitialised memory
    reds = ["none"] if "margin" in case else RED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in reds:
            check(lambda L, x: fn(L, x, r), *inputs)


def test_all_targets_ignored_gives_nan_mean_and_zero_grad():
    check(lambda L, x: F(L).cross_entropy(x, L.full((4,), -100)), X)
    check(lambda L, x: F(L).nll_loss(x, L.full((4,), 2), ignore_index=2), X)


def test_bce_clamps_log_at_minus_100_and_handles_0_and_1():
    p = np.array([0.0, 1.0, 0.5, 1e-30], np.float32)
    q = np.array([1.0, 0.0, 0.5, 1.0], np.float32)
    check(lambda L, a, b: F(L).binary_cross_entropy(a, b, reduction="none"), p, q)


def test_bce_with_logits_is_stable_for_large_logits():
    x = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32)
    q = np.array([1.0, 0.0, 0.3, 1.0, 0.0], np.float32)
    check(lambda L, a, b: F(L).binary_cross_entropy_with_logits(a, b, reduction="none"), x, q)


def test_bfloat16_and_half_inputs():
    for dt in ("bfloat16", "float16"):
        check(lambda L, a, b: F(L).mse_loss(a.to(getattr(L, dt)), b.to(getattr(L, dt))), X, Y,
              atol=2e-2, rtol=2e-2)
        check(lambda L, a: F(L).cross_entropy(a.to(getattr(L, dt)), T(L, CLS)), X,
              atol=2e-2, rtol=2e-2)


def test_mixed_dtypes_promote():
    check(lambda L, a, b: F(L).mse_loss(a, b), X, Y.astype(np.float64))
    check(lambda L, a, b: F(L).l1_loss(a, b, reduction="none"), X, Y.astype(np.float64))


def test_broadcasting_warning_and_result():
    for L in (ember, torch):
        with pytest.warns(UserWarning, match="different to the input size"):
            F(L).mse_loss(L.zeros(3, 1), L.zeros(2))
    check(lambda L, a, b: F(L).l1_loss(a, b), rn(3, 1), rn(2))


def test_weighted_l1_mse_huber():
    w = un(4, 5, seed=9)
    for r in RED:
        check(lambda L, a, b, c: F(L).l1_loss(a, b, reduction=r, weight=c), X, Y, w)
        check(lambda L, a, b, c: F(L).mse_loss(a, b, reduction=r, weight=c), X, Y, w)
        check(lambda L, a, b, c: F(L).huber_loss(a, b, reduction=r, weight=c), X, Y, w)


def test_legacy_size_average_and_reduce():
    for sa, rd in [(True, True), (False, True), (True, False), (None, False), (False, None)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(lambda L, a, b: F(L).mse_loss(a, b, size_average=sa, reduce=rd), X, Y)
            check(lambda L, a: F(L).nll_loss(a, T(L, CLS), size_average=sa, reduce=rd), X)
            check(lambda L, a, b: F(L).kl_div(a, b, size_average=sa, reduce=rd), X, Q)
            em = ember.nn.CrossEntropyLoss(size_average=sa, reduce=rd)
            tm = torch.nn.CrossEntropyLoss(size_average=sa, reduce=rd)
        assert em.reduction == tm.reduction


def test_kl_div_batchmean_and_mean_warning():
    check(lambda L, a, b: F(L).kl_div(a, b, reduction="batchmean"), X, Q)
    check(lambda L, a, b: F(L).kl_div(a, b, reduction="batchmean", log_target=True), X, Y)
    with pytest.warns(UserWarning, match="batchmean"):
        F(ember).kl_div(ember.zeros(2), ember.zeros(2))


# ------------------------------------------------------------------------ CTC

def _ctc_data(seed=0, n=3, t=12, c=6, s=4):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((t, n, c))
    targets = rng.integers(1, c, (n, s))
    targets[0, 1] = targets[0, 0]                # a repeated label needs a blank between
    il = np.array([t, t - 3, t - 1][:n])
    tl = np.array([s, 2, 0][:n])
    return logits, targets, il, tl


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("layout", ["padded", "concatenated", "lists"])
def test_ctc_values_and_grads(reduction, layout):
    logits, targets, il, tl = _ctc_data()
    logits = logits.astype(np.float32)

    def fn(L, x):
        tg = T(L, targets)
        if layout == "concatenated":
            tg = T(L, np.concatenate([targets[b, :tl[b]] for b in range(len(tl))]))
        ilx, tlx = (list(il), list(tl)) if layout == "lists" else (T(L, il), T(L, tl))
        return F(L).ctc_loss(x.log_softmax(2), tg, ilx, tlx, reduction=reduction)
    check(fn, logits, atol=1e-4)


def test_ctc_raw_log_probs_grad_matches_torch_formula():
    """PyTorch's ctc gradient assumes log_softmax inputs; fed raw values it differs from the
    true derivative, and ember reproduces it."""
    logits, targets, il, tl = _ctc_data(seed=1)
    lp = np.log(np.random.default_rng(2).dirichlet(np.ones(6), (12, 3)))
    check(lambda L, x: F(L).ctc_loss(x, T(L, targets), T(L, il), T(L, tl), blank=0,
                                     reduction="sum"), lp)


def test_ctc_blank_zero_infinity_unbatched_and_gradcheck():
    logits, targets, il, tl = _ctc_data(seed=3)
    il = np.array([12, 3, 11])                   # 3 steps cannot emit 4 labels: inf
    tl = np.array([4, 4, 1])
    for zi in (False, True):
        check(lambda L, x: F(L).ctc_loss(x.log_softmax(2), T(L, targets), T(L, il), T(L, tl),
                                         blank=5, reduction="none", zero_infinity=zi),
              np.abs(logits))
    check(lambda L, x: F(L).ctc_loss(x.log_softmax(2), T(L, targets), T(L, il), T(L, tl),
                                     blank=5, reduction="mean", zero_infinity=True), logits)
    check(lambda L, x: F(L).ctc_loss(x.log_softmax(1), T(L, targets[0]), L.tensor(12),
                                     L.tensor(4)), logits[:, 0])
    small, tg = logits[:5, :2, :4], np.array([[1, 2], [3, 3]])
    gradcheck(lambda L, x: F(L).ctc_loss(x.log_softmax(2), T(L, tg), L.tensor([5, 4]),
                                         L.tensor([2, 2])), small)


def test_ctc_module():
    logits, targets, il, tl = _ctc_data()
    em, tm = ember.nn.CTCLoss(blank=0, zero_infinity=True), torch.nn.CTCLoss(zero_infinity=True)
    ye = em(T(ember, logits).log_softmax(2), T(ember, targets), T(ember, il), T(ember, tl))
    yt = tm(T(torch, logits).log_softmax(2), T(torch, targets), T(torch, il), T(torch, tl))
    np.testing.assert_allclose(to_numpy(ye), to_numpy(yt), rtol=1e-6)


# ---------------------------------------------------------------------- modules

class Const:
    """A module input passed without requires_grad (a target PyTorch does not differentiate)."""

    def __init__(self, a):
        self.a = a


MODULES = [
    ("L1Loss()", LOSSES["l1"][1]), ("MSELoss(reduction='sum')", LOSSES["mse"][1]),
    ("HuberLoss(delta=0.5)", [X, Y]), ("SmoothL1Loss(beta=2.0)", [X, Y]),
    ("SoftMarginLoss()", [X, Const(sign(4, 5))]), ("BCELoss(weight=W)", [P, Q]),
    ("BCEWithLogitsLoss(weight=W, pos_weight=W)", [X, Q]),
    ("KLDivLoss(reduction='batchmean')", [X, Q]),
    ("KLDivLoss(log_target=True, reduction='sum')", [X, Y]),
    ("PoissonNLLLoss(log_input=False, full=True)", [P, Q]),
    ("GaussianNLLLoss(full=True)", [X, Y, P]), ("NLLLoss(weight=W, ignore_index=1)", [X, CLS]),
    ("NLLLoss2d()", [rn(2, 3, 4, 5), ints(3, 2, 4, 5)]),
    ("CrossEntropyLoss(weight=W, label_smoothing=0.1)", [X, CLS]),
    ("CrossEntropyLoss(ignore_index=0, reduction='none')", [X, CLS]),
    ("MultiLabelSoftMarginLoss(weight=W)", [X, Q]), ("MultiMarginLoss(p=2, weight=W)", [X, CLS]),
    ("MultiLabelMarginLoss()", [X, MLT]), ("HingeEmbeddingLoss(margin=2.0)", [X, sign(4, 5)]),
    ("CosineEmbeddingLoss(margin=0.5)", [X, Y, sign(4)]),
    ("MarginRankingLoss(margin=0.1)", [X[:, 0], Y[:, 0], sign(4)]),
    ("TripletMarginLoss(margin=0.5, p=3.0, swap=True)", [X, Y, rn(4, 5, seed=2)]),
    ("TripletMarginWithDistanceLoss(margin=2.0)", [X, Y, rn(4, 5, seed=2)]),
]


@pytest.mark.parametrize("src,inputs", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(src, inputs):
    em = eval(src, {"W": ember.from_numpy(W5.copy()), **vars(ember.nn)})
    tm = eval(src, {"W": torch.from_numpy(W5.copy()), **vars(torch.nn)})
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert em.reduction == tm.reduction
    diff = [a for a in inputs if not isinstance(a, Const)]

    def run(L, *d):
        it = iter(d)
        args = [T(L, a.a) if isinstance(a, Const) else next(it) for a in inputs]
        return (em if L is ember else tm)(*args)
    check(run, *diff)


def test_weighted_loss_buffers_follow_dtype_casts():
    em = ember.nn.CrossEntropyLoss(weight=ember.ones(5)).double()
    assert em.weight.dtype is ember.float64
    assert ember.nn.NLLLoss().weight is None


def test_module_constructor_errors():
    for L in (ember, torch):
        with pytest.raises(ValueError, match="only p == 1 and p == 2"):
            L.nn.MultiMarginLoss(p=3)
        with pytest.raises(ValueError, match="expected margin"):
            L.nn.TripletMarginLoss(margin=0)
        with pytest.raises(TypeError):
            L.nn.HuberLoss(delta="1")


# ---------------------------------------------------------------------- autocast

@pytest.mark.parametrize("name", ["l1", "mse", "ce", "nll", "bce", "bce_logits", "kl_div",
                                  "huber", "multi_margin", "cosine", "triplet", "poisson",
                                  "multilabel_soft_margin", "gaussian"])
def test_autocast_runs_losses_like_torch(name):
    fn, inputs = LOSSES[name]

    def run(L):
        with L.autocast("cpu"):
            ts = [T(L, a).to(L.bfloat16) for a in inputs]
            return str(fn(L, "mean", *ts).dtype)
    assert run(ember) == run(torch)


# ------------------------------------------------------------------------ errors

NOT_DIFFERENTIABLE = {   # PyTorch refuses these arguments with requires_grad at forward time
    "nll_weight": lambda L, x, w: F(L).nll_loss(x, T(L, CLS), w),
    "ce_weight": lambda L, x, w: F(L).cross_entropy(x, T(L, CLS), w, label_smoothing=0.1),
    "bce_weight": lambda L, x, w: F(L).binary_cross_entropy(x.sigmoid(), x.sigmoid(), w),
    "bce_logits_pos_weight": lambda L, x, w: F(L).binary_cross_entropy_with_logits(
        x, x.sigmoid(), pos_weight=w),
    "multi_margin_weight": lambda L, x, w: F(L).multi_margin_loss(x, T(L, CLS), weight=w),
    "soft_margin_target": lambda L, x, w: F(L).soft_margin_loss(x, w.expand(4, 5)),
}


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_not_differentiable_arguments_raise_like_torch(name):
    msgs = []
    for L in (torch, ember):
        w = T(L, W5).requires_grad_(True)
        with pytest.raises(RuntimeError) as e:
            NOT_DIFFERENTIABLE[name](L, T(L, X), w)
        msgs.append(str(e.value))
        with L.no_grad():       # no grad mode: no graph, no error
            NOT_DIFFERENTIABLE[name](L, T(L, X), w)
    assert msgs[0] == msgs[1]

ERRORS = {
    "nll_0d": (lambda L, x: F(L).nll_loss(x.sum(), L.tensor(0)), X),
    "nll_batch": (lambda L, x: F(L).nll_loss(x, L.tensor([0, 1])), X),
    "nll_oob": (lambda L, x: F(L).nll_loss(x, L.tensor([0, 1, 5, 0])), X),
    "nll_negative": (lambda L, x: F(L).nll_loss(x, L.tensor([0, 1, -3, 0])), X),
    "nll_int32_target": (lambda L, x: F(L).nll_loss(x, T(L, CLS).int()), X),
    "nll_float_target": (lambda L, x: F(L).nll_loss(x, T(L, CLS).float()), X),
    "nll_weight_size": (lambda L, x: F(L).nll_loss(x, T(L, CLS), L.ones(3)), X),
    "nll_int_input": (lambda L, x: F(L).nll_loss(x.long(), T(L, CLS)), X),
    "nll_4d_target": (lambda L, x: F(L).nll_loss(x.reshape(2, 2, 5, 1),
                                                 L.zeros(2, 4, 1, dtype=L.long)), X),
    "nll_3d_target": (lambda L, x: F(L).nll_loss(x.reshape(2, 2, 5), L.zeros(2, 4, dtype=L.long)),
                      X),
    "nll_2d_target": (lambda L, x: F(L).nll_loss(x, L.zeros(4, 2, dtype=L.long)), X),
    "ce_oob": (lambda L, x: F(L).cross_entropy(x, L.tensor([0, 1, 5, 0])), X),
    "ce_probs_ignore": (lambda L, x, q: F(L).cross_entropy(x, q, ignore_index=1), X, Q),
    "ce_probs_int": (lambda L, x: F(L).cross_entropy(x, L.ones(4, 5, dtype=L.int32)), X),
    "ce_smoothing_range": (lambda L, x: F(L).cross_entropy(x, T(L, CLS), label_smoothing=1.5), X),
    "ce_float_indices": (lambda L, x: F(L).cross_entropy(x, T(L, CLS).float()), X),
    "bce_size": (lambda L, p: F(L).binary_cross_entropy(p, p[:2]), P),
    "bce_range": (lambda L, x: F(L).binary_cross_entropy(x, x.abs().clamp(0, 1)), X),
    "bce_int": (lambda L: F(L).binary_cross_entropy(L.tensor([1]), L.tensor([1])),),
    "bce_logits_size": (lambda L, x: F(L).binary_cross_entropy_with_logits(x, x[:2]), X),
    "mse_int": (lambda L: F(L).mse_loss(L.ones(3, dtype=L.long), L.ones(3, dtype=L.long)),),
    "bad_reduction": (lambda L, x: F(L).mse_loss(x, x, reduction="foo"), X),
    "multi_margin_p": (lambda L, x: F(L).multi_margin_loss(x, T(L, CLS), p=3), X),
    "multi_margin_oob": (lambda L, x: F(L).multi_margin_loss(x, L.tensor([0, 1, 7, 0])), X),
    "multi_margin_tsize": (lambda L, x: F(L).multi_margin_loss(x, L.tensor([0, 1])), X),
    "multi_margin_3d": (lambda L, x: F(L).multi_margin_loss(x.reshape(2, 2, 5),
                                                            L.tensor([0, 1])), X),
    "multi_margin_weight_2d": (lambda L, x: F(L).multi_margin_loss(x, T(L, CLS),
                                                                   weight=L.ones(2, 2)), X),
    "multi_margin_weight_size": (lambda L, x: F(L).multi_margin_loss(x, T(L, CLS),
                                                                     weight=L.ones(3)), X),
    "multilabel_margin_tsize": (lambda L, x: F(L).multilabel_margin_loss(
        x, L.zeros(4, 3, dtype=L.long)), X),
    "multilabel_margin_oob": (lambda L, x: F(L).multilabel_margin_loss(x, L.full((4, 5), 7)), X),
    "cosine_target_2d": (lambda L, x: F(L).cosine_embedding_loss(x, x, L.ones(4, 1)), X),
    "cosine_1d_target_1d_inputs": (lambda L, x: F(L).cosine_embedding_loss(x[0], x[0],
                                                                           L.ones(4)), X),
    "cosine_0d_target": (lambda L, x: F(L).cosine_embedding_loss(x, x, L.tensor(1.0)), X),
    "margin_ranking_dims": (lambda L, x: F(L).margin_ranking_loss(x, x, L.ones(4)), X),
    "triplet_dims": (lambda L, x: F(L).triplet_margin_loss(x, x, x[0]), X),
    "triplet_margin": (lambda L, x: F(L).triplet_margin_loss(x, x, x, margin=0), X),
    "triplet_distance_dims": (lambda L, x: F(L).triplet_margin_with_distance_loss(x, x, x[0]),
                              X),
    "gaussian_var_negative": (lambda L, x: F(L).gaussian_nll_loss(x, x, -L.ones(4, 5)), X),
    "gaussian_var_size": (lambda L, x: F(L).gaussian_nll_loss(x, x, L.ones(2, 5)), X),
    "gaussian_reduction": (lambda L, x: F(L).gaussian_nll_loss(x, x, L.ones(4), reduction="x"),
                           X),
    "poisson_reduction": (lambda L, x: F(L).poisson_nll_loss(x, x, reduction="x"), X),
    "huber_weight_size": (lambda L, x: F(L).huber_loss(x, x, weight=L.ones(2)), X),
    "smooth_l1_negative_beta": (lambda L, x: F(L).smooth_l1_loss(x, x, beta=-1.0), X),
    "huber_delta": (lambda L, x: F(L).huber_loss(x, x, delta=0.0), X),
    "hinge_shape": (lambda L, x: F(L).hinge_embedding_loss(x, L.ones(2)), X),
    "soft_margin_shape": (lambda L, x: F(L).soft_margin_loss(x, L.ones(2)), X),
    "ctc_blank": (lambda L: F(L).ctc_loss(L.zeros(5, 2, 3), L.ones(2, 2, dtype=L.long),
                                          [5, 5], [2, 2], blank=3),),
    "ctc_input_length": (lambda L: F(L).ctc_loss(L.zeros(5, 2, 3), L.ones(2, 2, dtype=L.long),
                                                 [6, 5], [2, 2]),),
    "ctc_lengths_size": (lambda L: F(L).ctc_loss(L.zeros(5, 2, 3), L.ones(2, 2, dtype=L.long),
                                                 [5], [2, 2]),),
    "ctc_bfloat16": (lambda L: F(L).ctc_loss(L.zeros(5, 2, 3, dtype=L.bfloat16),
                                             L.ones(2, 2, dtype=L.long), [5, 5], [2, 2]),),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, *inputs = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg = check_error(fn, *inputs)
        try:
            fn(torch, *[torch.from_numpy(a.copy()) for a in inputs])
        except Exception as e:     # same message as torch, up to torch's 'torch.Size'
            assert str(e).split("\n")[0] == msg.split("\n")[0], (str(e), msg)
