"""Compiled vs eager: automatic dynamic shapes (PyTorch 2.1). The first call specializes;
a call differing only in sizes recompiles once with those dims symbolic; further sizes
reuse that graph. `dynamic=True` starts symbolic, `dynamic=False` never is; sizes 0 and 1
stay specialized; `mark_dynamic` ranges are enforced. Counts are PyTorch 2.13's."""
import copy

import pytest
from corpus_helpers import check_calls, same


def counter(lib):
    return lib._dynamo.testing.CompileCounter()


def counts_over(lib, f, shapes, **compile_kw):
    """Frame count after each call of compiled `f` on a tensor of each shape; results are
    checked against eager on the way."""
    cnt = counter(lib)
    cf = lib.compile(f, backend=cnt, **compile_kw)
    seen = []
    for shape in shapes:
        check_calls(lib, f, cf, [(lib.randn(*shape),)])
        seen.append(cnt.frame_count)
    return seen


def reduce_rows(x):
    return (x * 2).sum(0) + x.mean()


def test_batch_sizes_automatic_dynamic(lib):
    seen = counts_over(lib, reduce_rows, [(2, 3), (3, 3), (4, 3), (5, 3), (8, 3), (2, 3)])
    assert seen == [1, 2, 2, 2, 2, 2]


def test_sequence_lengths_automatic_dynamic(lib):
    def f(x):                                      # (batch, seq, feat)
        return x.softmax(1).cumsum(1)[:, -1]

    seen = counts_over(lib, f, [(2, 4, 3), (2, 5, 3), (2, 9, 3), (2, 4, 3)])
    assert seen == [1, 2, 2, 2]


def test_batch_then_sequence_dims_become_dynamic_in_turn(lib):
    cnt = counter(lib)
    nn = lib.nn
    eager = nn.Sequential(nn.Linear(3, 5), nn.ReLU())
    comp = copy.deepcopy(eager)
    cm = lib.compile(comp, backend=cnt)
    seen = []
    for b, s in [(2, 5), (3, 5), (4, 5), (4, 6), (4, 7), (8, 9), (2, 5)]:
        x = lib.randn(b, s, 3)
        same(lib, cm(x), eager(x))
        seen.append(cnt.frame_count)
    assert seen == [1, 2, 2, 3, 3, 3, 3]


def test_sizes_zero_and_one_stay_specialized(lib):
    seen = counts_over(lib, reduce_rows, [(2, 3), (3, 3), (1, 3), (0, 3), (5, 3), (1, 3)])
    assert seen == [1, 2, 3, 4, 4, 4]


def test_first_call_size_one(lib):
    seen = counts_over(lib, reduce_rows, [(1, 3), (2, 3), (3, 3), (4, 3)])
    assert seen == [1, 2, 2, 2]


def test_dynamic_true_starts_symbolic(lib):
    seen = counts_over(lib, reduce_rows, [(2, 3), (3, 4), (4, 7), (1, 3), (0, 3), (6, 2)],
                       dynamic=True)
    assert seen == [1, 1, 1, 2, 3, 3]


def test_dynamic_false_never_symbolic(lib):
    seen = counts_over(lib, reduce_rows, [(2, 3), (3, 3), (4, 3), (3, 3), (5, 3)],
                       dynamic=False)
    assert seen == [1, 2, 3, 3, 4]


def test_automatic_dynamic_off_in_config(lib):
    lib._dynamo.config.automatic_dynamic_shapes = False
    seen = counts_over(lib, reduce_rows, [(2, 3), (3, 3), (4, 3)])
    assert seen == [1, 2, 3]


def test_shape_used_in_python_math(lib):
    def f(x):
        n = x.shape[0]
        return x.reshape(n * x.shape[1]) / n, n + 1

    seen = counts_over(lib, f, [(2, 3), (3, 3), (5, 3), (7, 3)])
    assert seen == [1, 2, 2, 2]


def test_shape_branch_guards_dynamic_graph(lib):
    def f(x):
        if x.shape[0] > 4:
            return x[:4].sum(0)
        return x.sum(0) * 2

    seen = counts_over(lib, f, [(2, 3), (3, 3), (4, 3), (6, 3), (9, 3), (2, 3)])
    # sizes 3..: one dynamic graph guarded on s0 <= 4, then one guarded on s0 > 4
    assert seen == [1, 2, 2, 3, 3, 3]


def test_mark_dynamic_in_range(lib):
    cnt = counter(lib)
    cf = lib.compile(reduce_rows, backend=cnt)
    x = lib.randn(4, 3)
    lib._dynamo.mark_dynamic(x, 0, min=2, max=10)
    same(lib, cf(x), reduce_rows(x))
    for n in (5, 9, 2):
        y = lib.randn(n, 3)
        same(lib, cf(y), reduce_rows(y))
    assert cnt.frame_count == 1


def test_mark_dynamic_violated_raises(lib):
    cf = lib.compile(reduce_rows, backend="eager")
    x = lib.randn(12, 3)
    lib._dynamo.mark_dynamic(x, 0, min=2, max=10)
    with pytest.raises(RuntimeError, match=r"12 not in range \[2, 10\]"):
        cf(x)


def test_mark_dynamic_specialized_by_code_raises(lib):
    def f(x):
        if x.shape[0] == 4:
            return x + 1
        return x

    x = lib.randn(4, 3)
    lib._dynamo.mark_dynamic(x, 0)
    with pytest.raises(RuntimeError, match="specialized"):
        lib.compile(f, backend="eager")(x)


def test_maybe_mark_dynamic_allows_specialization(lib):
    cnt = counter(lib)

    def f(x):
        if x.shape[0] == 4:
            return x + 1
        return x

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(4, 3)
    lib._dynamo.maybe_mark_dynamic(x, 0)
    same(lib, cf(x), f(x))
    assert cnt.frame_count == 1


def test_mark_static_under_dynamic_true(lib):
    cnt = counter(lib)
    cf = lib.compile(reduce_rows, backend=cnt, dynamic=True)
    seen = []
    for n in (3, 4, 5):
        x = lib.randn(n, 3)
        lib._dynamo.mark_static(x, 0)
        same(lib, cf(x), reduce_rows(x))
        seen.append(cnt.frame_count)
    assert seen == [1, 2, 3]


def test_dynamic_int_argument_in_shape(lib):
    def f(x, n):
        return x.new_ones(n) * x.sum()

    cnt = counter(lib)
    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x, 2), (x, 3), (x, 6), (x, 9)])
    assert cnt.frame_count == 2
