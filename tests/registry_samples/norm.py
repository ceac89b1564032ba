"""Samples for normalization and embedding ops (ember/ops/norm.py, ember/ops/embedding.py)."""
import ember
import ember.nn.functional as F

from ._util import t, idx

NON_DIFFERENTIABLE = set()

NO_GRADCHECK = {}

SAMPLES = {
    # training mode: gradients flow through the batch statistics
    "batch_norm": lambda: (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                           [t(3, 2, 4), t(2, seed=1), t(2, seed=2)]),
    # batch_norm's training-mode backward as one op (F.batch_norm's vjp dispatches it)
    "native_batch_norm_backward": lambda: (
        lambda g, x, w: ember.ops.get("native_batch_norm_backward")(
            g, x, w, None, None, None, None, True, 1e-5, [True, True, True]),
        [t(3, 2, 4, seed=3), t(3, 2, 4), t(2, seed=1)]),
    # layer_norm's backward as one op (F.layer_norm's vjp dispatches it)
    "native_layer_norm_backward": lambda: (
        lambda g, x, m, r, w: ember.ops.get("native_layer_norm_backward")(
            g, x, [3, 4], m, r, w, None, [True, True, True]),
        [t(2, 3, 4, seed=3), t(2, 3, 4), t(2, 1, 1, seed=4), t(2, 1, 1, seed=5).abs() + 0.5,
         t(3, 4, seed=1)]),
    "layer_norm": lambda: (lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
                           [t(2, 3, 4), t(3, 4, seed=1), t(3, 4, seed=2)]),
    # (the padding row is not looked up: its zero gradient is deliberately not the derivative)
    "embedding": lambda: (lambda w, i: F.embedding(i, w, padding_idx=1),
                          [t(3, 2), idx([0, 2], [2, 0])]),
    "embedding_dense_backward": lambda: (
        lambda g, i: ember.ops.get("embedding_dense_backward")(g, i, 4, 0, True),
        [t(3, 2), idx(0, 2, 2)]),
    "_embedding_bag": lambda: (
        lambda w, p, i, o: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
        [t(4, 3), t(5, seed=1), idx(0, 2, 1, 2, 3), idx(0, 2, 2)]),
}
