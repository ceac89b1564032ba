"""Compiled vs eager: Python side effects and aliasing (global/nonlocal writes, dict and
attribute mutation of inputs, returned inputs and views, nested compiled calls,
context managers, `compiler.is_compiling`)."""
import functools
import logging

from corpus_helpers import check_calls, same

CALLS = 0


def counter(lib):
    return lib._dynamo.testing.CompileCounter()


def test_returned_input_is_the_same_object(lib):
    cnt = counter(lib)

    def f(x, y):
        return x, y * 2, x

    cf = lib.compile(f, backend=cnt)
    for _ in range(2):
        x, y = lib.randn(3), lib.randn(3)
        a, b, c = cf(x, y)
        assert a is x and c is x
        same(lib, b, y * 2)
    assert cnt.frame_count == 1


def test_returned_view_aliases_input(lib):
    cnt = counter(lib)

    def f(x):
        return x.view(2, 3), x[1:].t()

    cf = lib.compile(f, backend=cnt)
    x = lib.arange(6.0)
    v, w = cf(x)
    same(lib, (v, w), f(x))
    v[0, 0] = 100.0
    assert x[0].item() == 100.0
    w.mul_(0)                              # writes through to x[1:]
    assert x[1:].abs().sum().item() == 0.0
    assert cnt.frame_count == 1


def test_global_counter_write(lib):
    global CALLS
    cnt = counter(lib)

    def f(x):
        global CALLS
        CALLS += 1
        return x * CALLS

    cf = lib.compile(f, backend=cnt)
    CALLS = 0
    x = lib.ones(2)
    got = [cf(x) for _ in range(3)]
    CALLS = 0
    want = [f(x) for _ in range(3)]
    same(lib, got, want)
    assert CALLS == 3
    # PyTorch 2.13 specializes int globals on their value (no automatic dynamic for
    # globals): one graph per value read
    assert cnt.frame_count == 3


def test_nonlocal_write(lib):
    cnt = counter(lib)

    def make():
        total = 0.0

        def f(x):
            nonlocal total
            total = total + 1.0
            return x + total

        return f, lambda: total

    f, read_f = make()
    g, read_g = make()
    cg = lib.compile(g, backend=cnt)
    x = lib.zeros(2)
    for _ in range(3):
        same(lib, cg(x), f(x))
    assert read_f() == read_g() == 3.0
    assert cnt.frame_count <= 3


def test_input_dict_mutated(lib):
    cnt = counter(lib)

    def f(state, x):
        state["calls"] = state.get("calls", 0) + 1
        state["last"] = x * 2
        state.pop("tmp", None)
        return x + 1

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [({"tmp": 1}, lib.randn(2)), ({}, lib.randn(2)),
                             ({"calls": 5}, lib.randn(2))])
    assert cnt.frame_count <= 3


def test_object_attribute_set(lib):
    cnt = counter(lib)

    class Box:
        pass

    def f(box, x):
        box.value = x.sum()
        box.count = getattr(box, "count", 0) + 1
        return x * 2

    cf = lib.compile(f, backend=cnt)
    b_e, b_c = Box(), Box()
    x = lib.randn(3)
    for _ in range(3):
        same(lib, cf(b_c, x), f(b_e, x))
        same(lib, b_c.value, b_e.value)
    assert b_c.count == b_e.count == 3
    assert cnt.frame_count <= 3


def test_list_input_mutated(lib):
    cnt = counter(lib)

    def f(xs):
        xs[0] = xs[0] * 10
        xs.append(xs[1] + 1)
        return len(xs)

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [([lib.randn(2), lib.randn(2)],) for _ in range(3)])
    assert cnt.frame_count == 1


def test_nested_compiled_calls(lib):
    cnt = counter(lib)

    @lib.compile(backend=cnt)
    def inner(x):
        return x.sin() * 2

    def outer(x):
        return inner(x + 1).sum()

    c_outer = lib.compile(outer, backend=cnt)
    for _ in range(3):
        x = lib.randn(4)
        same(lib, c_outer(x), (((x + 1).sin()) * 2).sum())
    # the inner function is inlined into the outer graph
    assert cnt.frame_count == 1


def test_is_compiling(lib):
    cnt = counter(lib)

    def f(x):
        if lib.compiler.is_compiling():
            return x + 1
        return x - 1

    cf = lib.compile(f, backend=cnt)
    x = lib.zeros(2)
    same(lib, f(x), x - 1)
    same(lib, cf(x), x + 1)
    assert cnt.frame_count == 1


def test_user_context_manager(lib):
    cnt = counter(lib)

    class Track:
        def __init__(self, log):
            self.log = log

        def __enter__(self):
            self.log.append("enter")
            return self

        def __exit__(self, *exc):
            self.log.append("exit")
            return False

    def make(log):
        def f(x):
            with Track(log):
                y = x * 3
            return y.relu()
        return f

    log_e, log_c = [], []
    f, cf = make(log_e), lib.compile(make(log_c), backend=cnt)
    for _ in range(2):
        x = lib.randn(3)
        same(lib, cf(x), f(x))
    assert log_c == log_e == ["enter", "exit"] * 2


def test_functools_partial_and_lambda(lib):
    cnt = counter(lib)

    def scaled_add(x, y, alpha):
        return x + alpha * y

    p = functools.partial(scaled_add, alpha=0.5)
    cp = lib.compile(p, backend=cnt)
    lam = lib.compile(lambda x: (x ** 2).mean(), backend=cnt)
    for _ in range(2):
        x, y = lib.randn(3), lib.randn(3)
        same(lib, cp(x, y), p(x, y))
        same(lib, lam(x), (x ** 2).mean())
    assert cnt.frame_count == 2


def test_logging_call_in_compiled_code(lib, caplog):
    cnt = counter(lib)
    log = logging.getLogger("corpus.user")

    def f(x):
        y = x.exp()
        log.warning("y has %d elements", y.numel())
        return y.log()

    cf = lib.compile(f, backend=cnt)
    with caplog.at_level(logging.WARNING, logger="corpus.user"):
        check_calls(lib, f, cf, [(lib.rand(3) + 0.5,) for _ in range(2)])
    msgs = [r.getMessage() for r in caplog.records if r.name == "corpus.user"]
    assert msgs == ["y has 3 elements"] * 4
    assert 1 <= cnt.frame_count <= 2      # a break at the logging call, or captured as is


def test_compiler_reset_recompiles(lib):
    cnt = counter(lib)

    def f(x):
        return x.floor()

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3)
    check_calls(lib, f, cf, [(x,), (x,)])
    lib.compiler.reset()
    check_calls(lib, f, cf, [(x,)])
    assert cnt.frame_count == 2
