"""Compiled vs eager: Python-level constructs (closures, globals, defaults, varargs,
containers, early returns, exceptions, side effects, recursion, user classes).

Each program is called several times while its state changes; each test asserts equal
results and side effects and PyTorch 2.13's compile count (`cnt.frame_count`).
"""
import collections
import dataclasses

import pytest
from corpus_helpers import check_calls, same, torch_bug

SCALE = 2.0
OFFSET = None          # a global tensor, set per test
LOG = []               # a global list the programs append to


def counter(lib):
    return lib._dynamo.testing.CompileCounter()


def test_closure_float_changes(lib):
    cnt = counter(lib)

    def make(scale):
        def f(x):
            return x * scale + 1
        return f

    f1, f2 = make(2.0), make(3.0)
    c1, c2 = lib.compile(f1, backend=cnt), lib.compile(f2, backend=cnt)
    x = lib.randn(4, 3)
    check_calls(lib, f1, c1, [(x,), (x,)])
    check_calls(lib, f2, c2, [(x,), (x,)])
    # the same code object with another closure value: one more graph, never a stale one
    assert cnt.frame_count == 2


def test_closure_cell_rebound(lib):
    cnt = counter(lib)
    k = 1.5

    def f(x):
        return x.sin() * k

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(5)
    check_calls(lib, f, cf, [(x,)])
    k = -0.5                                    # noqa: F841 - read by f through its cell
    check_calls(lib, f, cf, [(x,), (x,)])
    assert cnt.frame_count == 2


def test_closure_tensor_rebound(lib):
    cnt = counter(lib)
    w = lib.randn(3, 3)

    def f(x):
        return x @ w

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(2, 3)
    check_calls(lib, f, cf, [(x,)])
    w = lib.randn(3, 3)                         # noqa: F841 - a new tensor, same metadata
    check_calls(lib, f, cf, [(x,)])
    w = lib.randn(3, 3, dtype=lib.float64)      # noqa: F841 - new dtype
    check_calls(lib, f, cf, [(x.double(),)])
    assert cnt.frame_count == 2


def test_global_float_changes(lib):
    global SCALE
    cnt = counter(lib)

    def f(x):
        return x * SCALE

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    try:
        check_calls(lib, f, cf, [(x,), (x,)])
        SCALE = 5.0
        check_calls(lib, f, cf, [(x,), (x,)])
    finally:
        SCALE = 2.0
    assert cnt.frame_count == 2


def test_global_tensor_changes(lib):
    global OFFSET
    cnt = counter(lib)

    def f(x):
        return x + OFFSET

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(2, 3)
    try:
        OFFSET = lib.ones(3)
        check_calls(lib, f, cf, [(x,)])
        OFFSET = lib.full((3,), 7.0)
        check_calls(lib, f, cf, [(x,)])
        OFFSET = lib.ones(2, 3)                 # new shape: a guard fails
        check_calls(lib, f, cf, [(x,)])
    finally:
        OFFSET = None
    assert cnt.frame_count == 2


def test_default_args(lib):
    cnt = counter(lib)

    def f(x, scale=2.0, shift=None):
        y = x * scale
        if shift is not None:
            y = y + shift
        return y

    cf = lib.compile(f, backend=cnt)
    x, s = lib.randn(3), lib.randn(3)
    check_calls(lib, f, cf, [(x,), (x,)])
    check_calls(lib, f, cf, [(x, 2.0, s)])
    assert cnt.frame_count == 2


def test_default_mutable_tensor_default(lib):
    cnt = counter(lib)
    bias = lib.zeros(3)

    def f(x, b=bias):
        b.add_(1)
        return x + b

    eager_bias = bias.clone()

    def g(x, b=eager_bias):
        b.add_(1)
        return x + b

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    for _ in range(3):
        same(lib, cf(x), g(x))
    same(lib, bias, eager_bias)
    assert cnt.frame_count == 1


def test_varargs_kwargs(lib):
    cnt = counter(lib)

    def f(*args, **kwargs):
        out = sum(args[1:], args[0])
        for k in sorted(kwargs):
            out = out * kwargs[k]
        return out

    cf = lib.compile(f, backend=cnt)
    a, b, c = lib.randn(3), lib.randn(3), lib.randn(3)
    check_calls(lib, f, cf, [(a, b)])
    check_calls(lib, f, cf, [(a, b)])
    for args in [(a, b, c)]:
        same(lib, cf(*args, w=2.0), f(*args, w=2.0))
        same(lib, cf(*args, w=2.0, v=c), f(*args, w=2.0, v=c))
    assert cnt.frame_count == 3


def test_kwargs_forwarding(lib):
    cnt = counter(lib)

    def inner(x, *, alpha=1.0, beta=0.0):
        return x * alpha + beta

    def f(x, **kw):
        return inner(x, **kw).relu()

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(4)
    for kw in [{}, {}, {"alpha": 3.0}, {"alpha": 3.0, "beta": 1.0}]:
        same(lib, cf(x, **kw), f(x, **kw))
    assert cnt.frame_count == 3


def test_dict_in_dict_out(lib):
    cnt = counter(lib)

    def f(d):
        return {"sum": d["a"] + d["b"], "prod": d["a"] * d["b"], "n": len(d)}

    cf = lib.compile(f, backend=cnt)
    d = {"a": lib.randn(3), "b": lib.randn(3)}
    check_calls(lib, f, cf, [(d,), (d,)])
    check_calls(lib, f, cf, [({"a": lib.randn(3), "b": lib.randn(3), "c": 1},)])
    assert cnt.frame_count == 2


def test_list_and_tuple_inputs(lib):
    cnt = counter(lib)

    def f(xs, pair):
        a, b = pair
        return [x * a + b for x in xs], (a - b, len(xs))

    cf = lib.compile(f, backend=cnt)
    a, b = lib.randn(2), lib.randn(2)
    xs = [lib.randn(2) for _ in range(3)]
    check_calls(lib, f, cf, [(xs, (a, b)), (xs, (b, a))])
    check_calls(lib, f, cf, [(xs[:2], (a, b))])        # another list length
    assert cnt.frame_count == 2


@dataclasses.dataclass
class Batch:
    x: object
    y: object
    weight: float = 1.0


@dataclasses.dataclass
class Result:
    loss: object
    pred: object


def test_dataclass_in_and_out(lib):
    cnt = counter(lib)

    def f(batch):
        pred = batch.x.tanh()
        return Result(loss=((pred - batch.y) ** 2).mean() * batch.weight, pred=pred)

    cf = lib.compile(f, backend=cnt)
    b = Batch(lib.randn(4, 2), lib.randn(4, 2))
    check_calls(lib, f, cf, [(b,), (b,)])
    check_calls(lib, f, cf, [(Batch(b.x, b.y, weight=0.5),)])
    assert cnt.frame_count == 2


Point = collections.namedtuple("Point", ["x", "y"])


def test_namedtuple_in_and_out(lib):
    cnt = counter(lib)

    def f(p):
        return Point(p.y * 2, p.x + p.y)

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(Point(lib.randn(3), lib.randn(3)),) for _ in range(3)])
    assert cnt.frame_count == 1


def test_early_return_on_python_flag(lib):
    cnt = counter(lib)

    def f(x, fast):
        if fast:
            return x + 1
        y = x.exp()
        return y / y.sum()

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(5)
    check_calls(lib, f, cf, [(x, True), (x, False), (x, True), (x, False)])
    assert cnt.frame_count == 2


def test_early_return_on_shape(lib):
    cnt = counter(lib)

    def f(x):
        if x.shape[0] == 1:
            return x.squeeze(0)
        return x.sum(0)

    cf = lib.compile(f, backend=cnt, dynamic=False)
    check_calls(lib, f, cf, [(lib.randn(1, 4),), (lib.randn(3, 4),), (lib.randn(1, 4),)])
    assert cnt.frame_count == 2


@torch_bug("after the KeyError branch is compiled, {'scale': 2.0} reuses it (stale)")
def test_try_except_inside(lib):
    cnt = counter(lib)

    def f(x, d):
        try:
            y = x * d["scale"]
        except KeyError:
            y = x - 1
        return y.cos()

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x, {"scale": 2.0}), (x, {}), (x, {"scale": 2.0}), (x, {})])
    # PyTorch's 2 comes with a stale third result; a correct capture needs one graph per
    # key set (2), and splitting the function around the except handler at most one more
    assert 2 <= cnt.frame_count <= 3


def test_try_finally_counts(lib):
    cnt = counter(lib)
    seen = []

    def f(x):
        try:
            return x.relu()
        finally:
            seen.append(1)

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(4)
    for _ in range(3):
        same(lib, cf(x), f(x))
    assert seen == [1] * 6
    # PyTorch guards the appended list's length (SEQUENCE_LENGTH) and so recompiles on
    # every call here; the guarantee is results and side effects, at most one graph a call
    assert cnt.frame_count <= 3


def test_exception_raised_to_caller(lib):
    cnt = counter(lib)

    def f(x, n):
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        return x * n

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(2)
    check_calls(lib, f, cf, [(x, 2)])
    with pytest.raises(ValueError, match="n must be >= 0, got -1"):
        cf(x, -1)
    check_calls(lib, f, cf, [(x, 2)])
    # PyTorch: 1 graph for n=2; raising -1 compiles nothing (the frame raises, falls back)
    assert cnt.frame_count == 1


def test_print_is_a_graph_break(lib, capsys):
    cnt = counter(lib)

    def f(x):
        y = x * 2
        print("between", y.shape)
        return y + 1

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x,), (x,), (x,)])
    out = capsys.readouterr().out
    assert out.count("between") == 6
    assert out.splitlines()[0] == out.splitlines()[1]
    assert cnt.frame_count == 2


def test_append_to_outer_list(lib):
    cnt = counter(lib)
    eager_log, comp_log = [], []

    def make(log):
        def f(x):
            y = x.sigmoid()
            log.append(y)
            log.append(len(log))
            return y * 2
        return f

    f, cf = make(eager_log), lib.compile(make(comp_log), backend=cnt)
    x = lib.randn(3)
    for _ in range(3):
        same(lib, cf(x), f(x))
    same(lib, comp_log, eager_log)
    assert len(comp_log) == 6
    # a list length is a guard: len(log) is read, so each call sees a new length
    assert cnt.frame_count <= 3


def test_append_to_global_list(lib):
    cnt = counter(lib)

    def f(x):
        LOG.append(x.sum())
        return x + 1

    cf = lib.compile(f, backend=cnt)
    LOG.clear()
    x = lib.randn(3)
    try:
        for _ in range(3):
            same(lib, cf(x), x + 1)
        assert len(LOG) == 3
        for item in LOG:
            same(lib, item, x.sum())
    finally:
        LOG.clear()
    # PyTorch guards the length of a list the program appends to, so each call recompiles
    assert cnt.frame_count <= 3


def test_inplace_update_of_inputs(lib):
    cnt = counter(lib)

    def f(x, y):
        x.add_(y)
        y.mul_(2)
        return x.sum() + y.sum()

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(lib.randn(3), lib.randn(3)) for _ in range(3)])
    assert cnt.frame_count == 1


def test_inplace_on_view_of_input(lib):
    cnt = counter(lib)

    def f(x):
        x[0].zero_()
        x[:, 1:] *= 3
        return x.t()

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(lib.randn(3, 4),) for _ in range(3)])
    assert cnt.frame_count == 1


def test_generator_expression_and_function(lib):
    cnt = counter(lib)

    def gen(xs):
        for i, x in enumerate(xs):
            yield x * (i + 1)

    def f(xs):
        total = sum(t.sum() for t in xs)
        return total, list(gen(xs))

    cf = lib.compile(f, backend=cnt)
    xs = [lib.randn(2) for _ in range(3)]
    check_calls(lib, f, cf, [(xs,), (xs,)])
    check_calls(lib, f, cf, [(xs + [lib.randn(2)],)])
    assert cnt.frame_count == 2


def test_generator_of_tensors_passed_in(lib):
    cnt = counter(lib)

    def f(x, n):
        return lib.stack([x * i for i in range(n)])

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x, 2), (x, 2), (x, 4)])
    assert cnt.frame_count == 2


def test_recursion(lib):
    cnt = counter(lib)

    def power(x, n):
        if n == 0:
            return lib.ones_like(x)
        return x * power(x, n - 1)

    def f(x, n):
        return power(x, n)

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x, 3), (x, 3), (x, 5)])
    assert cnt.frame_count == 2


def test_mutual_recursion_on_shapes(lib):
    cnt = counter(lib)

    def halve(x):
        return x if x.shape[0] <= 2 else halve(x[::2] + x[1::2])

    cf = lib.compile(halve, backend=cnt, dynamic=False)
    check_calls(lib, halve, cf, [(lib.randn(8, 2),), (lib.randn(8, 2),), (lib.randn(16, 2),)])
    assert cnt.frame_count == 2


class Scaler:
    def __init__(self, lib, factor):
        self.lib = lib
        self.factor = factor
        self.calls = 0

    def scale(self, x):
        self.calls += 1
        return x * self.factor

    def __call__(self, x):
        return self.scale(x).clamp(min=-1.0, max=1.0)


def test_methods_of_user_classes(lib):
    cnt = counter(lib)
    s_eager, s_comp = Scaler(lib, 0.5), Scaler(lib, 0.5)

    def run(s, x):
        return s(x) + s.scale(x)

    cf = lib.compile(run, backend=cnt)
    x = lib.randn(4)
    same(lib, cf(s_comp, x), run(s_eager, x))
    same(lib, cf(s_comp, x), run(s_eager, x))
    s_eager.factor = s_comp.factor = 4.0         # an attribute change: guard fails
    same(lib, cf(s_comp, x), run(s_eager, x))
    assert s_comp.calls == s_eager.calls == 6
    # PyTorch: 3 (self.calls, an int attribute read and written, is specialized on the
    # first call and made dynamic by the second; the factor change is the third graph).
    # calls never enters the graph, so a capture that leaves it unguarded needs only 2
    assert 2 <= cnt.frame_count <= 3


def test_bound_method_compiled(lib):
    cnt = counter(lib)
    s_eager, s_comp = Scaler(lib, 3.0), Scaler(lib, 3.0)
    cf = lib.compile(s_comp.scale, backend=cnt)
    x = lib.randn(3)
    for _ in range(3):
        same(lib, cf(x), s_eager.scale(x))
    assert s_comp.calls == 3
    # PyTorch: 2 (calls=0 specializes; calls=1 recompiles with the int dynamic; calls=2
    # reuses that). calls never enters the graph, so leaving it unguarded needs only 1
    assert 1 <= cnt.frame_count <= 2


def test_python_int_argument_becomes_dynamic(lib):
    cnt = counter(lib)

    def f(x, n):
        return x * n + n

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x, 2), (x, 3), (x, 4), (x, 5)])
    # PyTorch: specialized on n=2, then one recompile with n symbolic (automatic dynamic)
    assert cnt.frame_count == 2


def test_string_and_none_arguments(lib):
    cnt = counter(lib)

    def f(x, mode, mask):
        y = x.relu() if mode == "relu" else x.tanh()
        return y if mask is None else y * mask

    cf = lib.compile(f, backend=cnt)
    x, m = lib.randn(4), lib.randn(4)
    check_calls(lib, f, cf, [(x, "relu", None), (x, "relu", None), (x, "tanh", None),
                             (x, "tanh", m), (x, "relu", None)])
    assert cnt.frame_count == 3
