"""Samples and declarations for the core ops (issue: ember core).

Each module in this folder defines SAMPLES {op name: () -> (fn, inputs)},
NON_DIFFERENTIABLE (ops whose outputs carry no gradient in PyTorch) and
NO_GRADCHECK {op name: reason}; tests/test_registry.py merges them all.
"""
import ember

from ._util import F64, C128, t, idx, mask, X, _unary, _binary, _fill  # noqa: F401

# ops whose outputs carry no gradient in PyTorch (comparisons, bitwise and logical ops,
# index-valued results, factories and the samplers with integer or index outputs)
NON_DIFFERENTIABLE = {
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan",
    "argmax", "argmin", "all", "any", "nonzero", "nonzero_numpy",
    "full", "empty", "arange", "linspace", "logspace", "eye",
    "rand", "randn", "randint", "randperm", "multinomial", "normal_size",
}

# differentiable ops that gradcheck cannot check, and why
NO_GRADCHECK = {
    "floor_divide": "PyTorch records the op but its derivative raises (not implemented)",
}


SAMPLES = {
    # pointwise, unary
    "neg": _unary(lambda x: -x),
    "exp": _unary(ember.exp),
    "log": _unary(ember.log, "pos"),
    "sqrt": _unary(ember.sqrt, "pos"),
    "sin": _unary(ember.sin),
    "cos": _unary(ember.cos),
    "tanh": _unary(ember.tanh),
    "abs": _unary(ember.abs),
    "sigmoid": _unary(ember.sigmoid),
    "relu": _unary(ember.relu),
    "sign": _unary(ember.sign),
    "sgn": _unary(ember.sgn, dtype=C128),
    "floor": _unary(ember.floor),
    "reciprocal": _unary(ember.reciprocal, "pos"),
    "square": _unary(ember.square),
    "conj_physical": _unary(ember.conj_physical, dtype=C128),
    "logical_not": _unary(ember.logical_not),
    "isnan": _unary(ember.isnan),
    "bitwise_not": _unary(lambda x: ~x, "int", ember.int64),
    # pointwise, binary (y broadcasts against x)
    "add": _binary(lambda x, y: ember.add(x, y, alpha=2)),
    "sub": _binary(lambda x, y: x - y),
    "mul": _binary(lambda x, y: x * y),
    "div": _binary(lambda x, y: x / y, "pos"),
    "div_rounding": _binary(lambda x, y: ember.div(x, y, rounding_mode="floor"), "pos"),
    "floor_divide": _binary(lambda x, y: x // y, "pos"),
    "remainder": _binary(lambda x, y: x % y, "pos"),
    "pow": _binary(lambda x, y: x ** y, "pos"),
    "maximum": _binary(ember.maximum),
    "minimum": _binary(ember.minimum),
    "eq": _binary(lambda x, y: x == y, "int", ember.int64),
    "ne": _binary(lambda x, y: x != y),
    "lt": _binary(lambda x, y: x < y),
    "le": _binary(lambda x, y: x <= y),
    "gt": _binary(lambda x, y: x > y),
    "ge": _binary(lambda x, y: x >= y),
    "logical_and": _binary(ember.logical_and),
    "logical_or": _binary(ember.logical_or),
    "logical_xor": _binary(ember.logical_xor),
    "bitwise_and": _binary(lambda x, y: x & y, "int", ember.int64),
    "bitwise_or": _binary(lambda x, y: x | y, "int", ember.int64),
    "bitwise_xor": _binary(lambda x, y: x ^ y, "int", ember.int64),
    "where": lambda: (ember.where, [mask(), X(), t(3, seed=1)]),
    "clamp": _unary(lambda x: x.clamp(-0.5, 0.5)),
    # copies
    "clone": _unary(ember.clone),
    "_to_copy": _unary(lambda x: x.to(C128)),
    "contiguous": _unary(lambda x: x.t().contiguous()),
    "copy_": _binary(lambda x, y: x.clone().copy_(y)),
    # views and shape
    "view": _unary(lambda x: x.view(3, 2)),
    "_reshape_copy": _unary(lambda x: x.t().reshape(6)),
    "alias": _unary(lambda x: x.as_subclass(ember.Tensor)),
    "as_strided": _unary(lambda x: x.as_strided((2, 2), (1, 2), 1)),
    "as_strided_scatter": lambda: (
        lambda x, s: ember.as_strided_scatter(x, s, (2, 2), (1, 2), 1), [X(), t(2, 2)]),
    "expand": lambda: (lambda x: x.expand(2, 3, 4), [t(3, 1)]),
    "permute": _unary(lambda x: x.permute(1, 0)),
    "squeeze": lambda: (lambda x: x.squeeze(1), [t(2, 1, 3)]),
    "unsqueeze": _unary(lambda x: x.unsqueeze(-1)),
    "slice": _unary(lambda x: x[:, 1:3]),
    "slice_scatter": lambda: (
        lambda x, s: ember.slice_scatter(x, s, 1, 1, 3), [X(), t(2, 2)]),
    "select": _unary(lambda x: x.select(1, -1)),
    "select_scatter": lambda: (lambda x, s: ember.select_scatter(x, s, 0, 1), [X(), t(3)]),
    "split_with_sizes": _unary(lambda x: x.split([1, 2], 1)),
    "unbind": _unary(lambda x: x.unbind(1)),
    "diagonal": lambda: (lambda x: x.diagonal(1), [t(3, 4)]),
    "diagonal_scatter": lambda: (lambda x, s: ember.diagonal_scatter(x, s, -1),
                                 [t(3, 4), t(2)]),
    "unfold": lambda: (lambda x: x.unfold(1, 2, 2), [t(2, 5)]),
    "unfold_backward": lambda: (lambda g: ember.ops.get("unfold_backward")(g, (2, 5), 1, 2, 2),
                                [t(2, 2, 2)]),
    "view_as_real": _unary(ember.view_as_real, dtype=C128),
    "view_as_complex": lambda: (ember.view_as_complex, [t(3, 2)]),
    "cat": lambda: (lambda x, y: ember.cat([x, y], 1), [X(), t(2, 2)]),
    "stack": _unary(lambda x: ember.stack([x, x * 2], -1)),
    # indexing
    "index": lambda: (lambda x, i: x[:, i], [X(), idx(2, 0)]),
    "index_put": lambda: (lambda x, i, v: x.index_put((None, i), v, accumulate=True),
                          [X(), idx(2, 0, 2), t(3)]),
    "gather": lambda: (lambda x, i: x.gather(1, i), [X(), idx([0, 2], [1, 0])]),
    "scatter": lambda: (lambda x, i, s: x.scatter(1, i, s), [X(), idx([0, 2], [1, 0]), X()]),
    "scatter_add": lambda: (lambda x, i, s: x.scatter_add(1, i, s),
                            [X(), idx([0, 2], [1, 1]), X()]),
    "index_select": lambda: (lambda x, i: x.index_select(1, i), [X(), idx(2, 0, 2)]),
    "index_add": lambda: (lambda x, i, s: x.index_add(1, i, s, alpha=2),
                          [X(), idx(2, 0, 2), X()]),
    "index_fill": lambda: (lambda x, i: x.index_fill(1, i, 2.5), [X(), idx(2, 0)]),
    "masked_fill": lambda: (lambda x, m: x.masked_fill(m, 0.5), [X(), mask()]),
    "masked_select": lambda: (ember.masked_select, [X(), mask()]),
    "masked_scatter": lambda: (ember.masked_scatter, [X(), mask(), t(5)]),
    "nonzero": lambda: (ember.nonzero, [X(kind="int")]),
    "nonzero_numpy": lambda: (lambda x: ember.nonzero(x, as_tuple=True), [X(kind="int")]),
    # reductions
    "sum": _unary(lambda x: x.sum(1)),
    "sum_to_size": _unary(lambda x: x.sum_to_size(1, 3)),
    "mean": _unary(lambda x: x.mean(0, keepdim=True)),
    "prod": _unary(lambda x: x.prod(1)),
    "max": _unary(ember.max),
    "min": _unary(ember.min),
    "max_dim": _unary(lambda x: x.max(1)),
    "min_dim": _unary(lambda x: x.min(0, keepdim=True)),
    "amax": _unary(lambda x: x.amax(1)),
    "amin": _unary(lambda x: x.amin((0, 1))),
    "argmax": _unary(lambda x: x.argmax(1)),
    "argmin": _unary(ember.argmin),
    "all": _unary(lambda x: x.all(1)),
    "any": _unary(ember.any),
    "var": _unary(lambda x: x.var(1)),
    "std": _unary(lambda x: x.std(0, correction=0)),
    # matrix products
    "mm": lambda: (ember.mm, [X(), t(3, 4)]),
    "bmm": lambda: (ember.bmm, [t(2, 2, 3), t(2, 3, 4)]),
    "mv": lambda: (ember.mv, [X(), t(3)]),
    "dot": lambda: (ember.dot, [t(3), t(3, seed=1)]),
    "matmul": lambda: (ember.matmul, [t(2, 2, 3), t(3, 4)]),
    # softmax
    "softmax": _unary(lambda x: ember.softmax(x, 1)),
    "log_softmax": _unary(lambda x: ember.log_softmax(x, 0)),
    # factories
    "full": lambda: (lambda: ember.full((2, 3), 1.5), []),
    "empty": lambda: (lambda: ember.empty(2, 3, dtype=ember.int32), []),
    "arange": lambda: (lambda: ember.arange(1, 7, 2), []),
    "linspace": lambda: (lambda: ember.linspace(0, 1, 5), []),
    "logspace": lambda: (lambda: ember.logspace(0, 1, 4), []),
    "eye": lambda: (lambda: ember.eye(3, 2), []),
    # random
    "rand": lambda: (lambda: ember.rand(2, 3), []),
    "randn": lambda: (lambda: ember.randn(2, 3, dtype=F64), []),
    "randint": lambda: (lambda: ember.randint(0, 5, (2, 3)), []),
    "randperm": lambda: (lambda: ember.randperm(5), []),
    "multinomial": lambda: (lambda p: ember.multinomial(p, 2), [X(kind="pos")]),
    "normal": lambda: (ember.normal, [X(), X(kind="pos")]),
    "normal_size": lambda: (lambda: ember.normal(0.0, 1.0, size=(2, 3)), []),
    "bernoulli": lambda: (ember.bernoulli, [X(kind="pos") / 3]),
    "bernoulli_p": _unary(lambda x: ember.bernoulli(x, 0.5)),
    "bernoulli_tensor": lambda: (lambda x, p: x.clone().bernoulli_(p), [X(), t(3, kind="pos") / 3]),
    "uniform": _fill(lambda x: x.uniform_(-1, 1)),
    "normal_functional": _fill(lambda x: x.normal_()),
    "random": _fill(lambda x: x.random_(0, 5)),
    "exponential": _fill(lambda x: x.exponential_()),
    "geometric": _fill(lambda x: x.geometric_(0.5)),
    "log_normal": _fill(lambda x: x.log_normal_()),
    "cauchy": _fill(lambda x: x.cauchy_()),
    # fused backward formulas (called by vjps; sampled directly)
    "_softmax_backward_data": lambda: (
        lambda g, y: ember.ops.get("_softmax_backward_data")(g, y.softmax(1), 1), [X(), X(seed=1)]),
    "_log_softmax_backward_data": lambda: (
        lambda g, y: ember.ops.get("_log_softmax_backward_data")(g, y.log_softmax(1), 1),
        [X(), X(seed=1)]),
    "threshold_backward": lambda: (
        lambda g, y: ember.ops.get("threshold_backward")(g, y.relu(), 0), [X(), X(seed=1)]),
    "fill": lambda: (lambda x, v: ember.fill(x, v), [X(), t()]),
}
