"""Compiled vs eager: global state that changes between calls (grad mode, default dtype,
autocast, determinism) and random ops drawing the same numbers as eager for a seed."""
from corpus_helpers import check_calls, same


def counter(lib):
    return lib._dynamo.testing.CompileCounter()


def test_grad_mode_changes_between_calls(lib):
    cnt = counter(lib)

    def f(x, w):
        return (x @ w).tanh()

    cf = lib.compile(f, backend=cnt)
    x, w = lib.randn(2, 3), lib.randn(3, 3, requires_grad=True)
    check_calls(lib, f, cf, [(x, w)])
    with lib.no_grad():
        check_calls(lib, f, cf, [(x, w), (x, w)])
        assert not cf(x, w).requires_grad
    check_calls(lib, f, cf, [(x, w)])
    assert cf(x, w).requires_grad
    assert cnt.frame_count == 2


def test_set_grad_enabled_inside(lib):
    cnt = counter(lib)

    def f(x):
        with lib.set_grad_enabled(False):
            a = x * 2
        b = x * 3
        return a, b, lib.is_grad_enabled()

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3, requires_grad=True)
    a, b, enabled = cf(x)
    same(lib, (a, b, enabled), f(x))
    assert not a.requires_grad and b.requires_grad and enabled
    assert lib.is_grad_enabled()
    assert cnt.frame_count == 1


def test_enable_grad_inside_outer_no_grad(lib):
    cnt = counter(lib)

    def f(x):
        with lib.enable_grad():
            y = x.exp()
        return y, x * 2

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(3, requires_grad=True)
    with lib.no_grad():
        check_calls(lib, f, cf, [(x,), (x,)])
        y, z = cf(x)
    assert y.requires_grad and not z.requires_grad
    assert cnt.frame_count == 1


def test_default_dtype_changes_between_calls(lib):
    cnt = counter(lib)

    def f(x):
        return lib.ones(3) * 2 + x.sum(), lib.tensor(1.5)

    cf = lib.compile(f, backend=cnt)
    x = lib.arange(4)
    check_calls(lib, f, cf, [(x,), (x,)])
    lib.set_default_dtype(lib.float64)
    try:
        check_calls(lib, f, cf, [(x,), (x,)])
        assert cf(x)[0].dtype == lib.float64
    finally:
        lib.set_default_dtype(lib.float32)
    check_calls(lib, f, cf, [(x,)])
    assert cf(x)[1].dtype == lib.float32
    assert cnt.frame_count == 2


def test_autocast_changes_between_calls(lib):
    cnt = counter(lib)

    def f(a, b):
        return a @ b + 1, (a + b).sum()

    cf = lib.compile(f, backend=cnt)
    a, b = lib.randn(4, 4), lib.randn(4, 4)
    check_calls(lib, f, cf, [(a, b)])
    with lib.autocast("cpu", dtype=lib.bfloat16):
        check_calls(lib, f, cf, [(a, b), (a, b)])
        assert cf(a, b)[0].dtype == lib.bfloat16
        assert cf(a, b)[1].dtype == lib.float32
    check_calls(lib, f, cf, [(a, b)])
    assert cnt.frame_count == 2


def test_autocast_inside(lib):
    cnt = counter(lib)

    def f(a, b):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            c = a @ b
        return c, c.float() @ b

    cf = lib.compile(f, backend=cnt)
    check_calls(lib, f, cf, [(lib.randn(3, 3), lib.randn(3, 3)) for _ in range(2)])
    assert cnt.frame_count == 1


def test_deterministic_flag_changes(lib):
    cnt = counter(lib)

    def f(x):
        return x.cumsum(0) * 2

    cf = lib.compile(f, backend=cnt)
    x = lib.randn(5)
    check_calls(lib, f, cf, [(x,)])
    lib.use_deterministic_algorithms(True)
    try:
        check_calls(lib, f, cf, [(x,), (x,)])
    finally:
        lib.use_deterministic_algorithms(False)
    check_calls(lib, f, cf, [(x,)])
    assert cnt.frame_count == 2


def _same_draws(lib, f, cf, args_list, seed=1234):
    """Eager and compiled calls from the same seed produce the same tensors, and leave
    the generator in the same state."""
    lib.manual_seed(seed)
    want = [f(*a) for a in args_list]
    after_eager = lib.rand(4)
    lib.manual_seed(seed)
    got = [cf(*a) for a in args_list]
    after_comp = lib.rand(4)
    same(lib, got, want, exact=True)
    same(lib, after_comp, after_eager, exact=True)


def test_randn_inside_same_as_eager(lib):
    cnt = counter(lib)

    def f(x):
        return x + lib.randn(x.shape), lib.rand(2, 3)

    cf = lib.compile(f, backend=cnt)
    _same_draws(lib, f, cf, [(lib.zeros(3),)] * 3)
    assert cnt.frame_count == 1


def test_dropout_same_as_eager(lib):
    cnt = counter(lib)
    F = lib.nn.functional

    def f(x, training):
        return F.dropout(x, p=0.3, training=training) * 2

    cf = lib.compile(f, backend=cnt)
    x = lib.ones(6, 5)
    _same_draws(lib, f, cf, [(x, True), (x, True), (x, False), (x, True)])
    assert cnt.frame_count == 2


def test_rand_like_and_bernoulli(lib):
    cnt = counter(lib)

    def f(p):
        noise = lib.rand_like(p)
        mask = lib.bernoulli(p)
        return noise * mask, lib.randint(0, 10, (3,)), lib.randperm(5)

    cf = lib.compile(f, backend=cnt)
    _same_draws(lib, f, cf, [(lib.full((4,), 0.5),)] * 3)
    assert cnt.frame_count == 1


def test_random_with_generator_state_between_calls(lib):
    cnt = counter(lib)

    def f(x):
        return x * lib.randn(x.shape)

    cf = lib.compile(f, backend=cnt)
    x = lib.ones(3)
    lib.manual_seed(5)
    state = lib.get_rng_state()
    a = cf(x)
    lib.set_rng_state(state)
    b = cf(x)
    lib.set_rng_state(state)
    c = f(x)
    same(lib, a, b, exact=True)
    same(lib, a, c, exact=True)
    assert cnt.frame_count == 1
