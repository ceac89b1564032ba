"""Samples for the loss ops (ember/ops/loss.py), called through nn.functional; targets,
class indices and weights are sample inputs too, so fake-tensor runs see only fakes."""
import ember
import ember.nn.functional as F
from ember.ops import get

from ._util import t, idx

F64 = ember.float64


def sign():
    return ember.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=F64)


def prob(seed=0):
    """Values in (0.2, 0.8): BCE inputs and probability targets."""
    return t(2, 3, kind="pos", seed=seed) / 2.5


def ctc_targets():
    return ember.tensor([[1, 2], [3, 3]])


def _ctc_backward(x, targets):
    lp = x.log_softmax(2)
    nll, alpha = get("_ctc_loss")(lp, targets, (5, 4), (2, 2), 0, False)
    return get("_ctc_loss_backward")(nll * 0 + 1, lp, targets, (5, 4), (2, 2), nll, alpha, 0,
                                     False)


def _w():
    """Class weights (0.5, 0.8, 1.1)."""
    return ember.arange(3, dtype=F64) * 0.3 + 0.5


def _pair(fn):
    return lambda: (fn, [t(2, 3), t(2, 3, seed=1)])


SAMPLES = {
    "l1_loss": _pair(lambda x, y: F.l1_loss(x, y)),
    "mse_loss": _pair(lambda x, y: F.mse_loss(x, y, reduction="sum")),
    "huber_loss": _pair(lambda x, y: F.huber_loss(x, y, delta=0.5)),
    "smooth_l1_loss": _pair(lambda x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.5)),
    # PyTorch refuses grads for soft_margin's target and for class weights: weights come
    # from arange (a factory op, so fake-tensor runs see fakes), the target from a sign
    "soft_margin_loss": lambda: (lambda x, y: F.soft_margin_loss(x, y.detach().sign()),
                                 [t(2, 3), t(2, 3, seed=1)]),
    "binary_cross_entropy": lambda: (lambda p, q: F.binary_cross_entropy(
        p, q, _w()), [prob(), prob(1)]),
    "binary_cross_entropy_with_logits": lambda: (
        lambda x, q: F.binary_cross_entropy_with_logits(
            x, q, _w(), pos_weight=_w() * 2), [t(2, 3), prob()]),
    "kl_div": lambda: (lambda x, q: F.kl_div(x, q, reduction="batchmean"), [t(2, 3), prob()]),
    "poisson_nll_loss": lambda: (lambda x, q: F.poisson_nll_loss(x, q * 3, full=True),
                                 [t(2, 3), prob()]),
    "margin_ranking_loss": lambda: (lambda a, b, y: F.margin_ranking_loss(a, b, y, 0.1),
                                    [t(2, 3), t(2, 3, seed=1), sign()]),
    "hinge_embedding_loss": lambda: (lambda x, y: F.hinge_embedding_loss(x, y, 0.5),
                                     [t(2, 3), sign()]),
    "cosine_embedding_loss": lambda: (lambda a, b, y: F.cosine_embedding_loss(a, b, y, -0.5),
                                      [t(2, 3), t(2, 3, seed=1), sign()[0, :2]]),
    "triplet_margin_loss": lambda: (lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
                                    [t(2, 3), t(2, 3, seed=1), t(2, 3, seed=2)]),
    "multi_margin_loss": lambda: (lambda x, c: F.multi_margin_loss(
        x, c, p=2, weight=_w()), [t(2, 3), idx(2, 0)]),
    "multilabel_margin_loss": lambda: (F.multilabel_margin_loss,
                                       [t(2, 3), ember.tensor([[2, 0, -1], [1, -1, 0]])]),
    "nll_loss": lambda: (lambda x, c: F.nll_loss(x, c, ignore_index=0), [t(2, 3), idx(2, 0)]),
    "cross_entropy_loss": lambda: (lambda x, c: F.cross_entropy(x, c, label_smoothing=0.1),
                                   [t(2, 3), idx(2, 0)]),
    "_ctc_loss": lambda: (lambda x, c: F.ctc_loss(x.log_softmax(2), c, [5, 4], [2, 2]),
                          [t(5, 2, 4), ctc_targets()]),
    "_ctc_loss_backward": lambda: (_ctc_backward, [t(5, 2, 4), ctc_targets()]),
}

NON_DIFFERENTIABLE = {"_ctc_loss_backward"}     # PyTorch has no derivative for it either
