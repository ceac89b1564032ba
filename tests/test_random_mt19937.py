"""ember.manual_seed(s, generator="mt19937") gives PyTorch's CPU random numbers.

Why: ported programs are checked number for number against PyTorch; every sampler below is
run after torch.manual_seed(s) and ember.manual_seed(s, generator="mt19937") and must give
bitwise the same values, dtypes and shapes (and leave both generators in the same state).
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_engine():
    """Each test switches the default generator to mt19937; put the old one back after."""
    from ember import _random
    state, engine = ember.get_rng_state(), _random._DEFAULTS["engine"]
    yield
    ember.set_rng_state(state)
    _random._DEFAULTS["engine"] = engine


def _np(t):
    if str(t.dtype).endswith(("bfloat16", "float16")):
        return t.detach().float().numpy()
    return t.detach().numpy()


def _same(fn, seed=1234):
    torch.manual_seed(seed)
    want = fn(torch)
    ember.manual_seed(seed, generator="mt19937")
    got = fn(ember)
    want = want if isinstance(want, (list, tuple)) else [want]
    got = got if isinstance(got, (list, tuple)) else [got]
    for i, (g, w) in enumerate(zip(got, want)):
        assert str(g.dtype) == str(w.dtype), i
        assert tuple(g.shape) == tuple(w.shape), i
        np.testing.assert_array_equal(_np(g), _np(w), err_msg=f"output {i}")
    # both generators end in the same place
    np.testing.assert_array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())


X = np.random.default_rng(1).standard_normal((8, 50)).astype(np.float32)
P = np.random.default_rng(0).random(300)

CASES = {
    "rand": lambda m: [m.rand(3, 1000), m.rand(7, dtype=m.float64),
                       m.rand(100, dtype=m.float16), m.rand(100, dtype=m.bfloat16),
                       m.rand(40, dtype=m.complex64)],
    "randn_serial": lambda m: [m.randn(5), m.randn(3, dtype=m.float64), m.randn(1)],
    "randn_blocks": lambda m: [m.randn(16), m.randn(1000), m.randn(37, dtype=m.float64),
                               m.randn(10, 10), m.randn(40, dtype=m.complex64)],
    "randint": lambda m: [m.randint(10, (100,)), m.randint(-5, 2 ** 40, (50,)),
                          m.randint(0, 255, (20,), dtype=m.uint8),
                          m.randint(3, 10, (10,), dtype=m.float32),
                          m.randint(0, 2 ** 29, (9,), dtype=m.int32)],
    "randperm": lambda m: [m.randperm(10), m.randperm(1000), m.randperm(3, dtype=m.float32)],
    "uniform_": lambda m: [m.empty(100).uniform_(-0.3, 0.9), m.empty(999).uniform_(1e6, 1e6 + 1),
                           m.empty(300, dtype=m.float16).uniform_(0, 1),
                           m.empty(300, dtype=m.float16).uniform_(-1.7, 2.9),
                           m.empty(300, dtype=m.bfloat16).uniform_(0.1, 0.2),
                           m.empty(100, dtype=m.float64).uniform_(-2.5, 7)],
    "normal_": lambda m: [m.empty(100).normal_(0.3, 2.5),
                          m.empty(100, dtype=m.float64).normal_(-1, 0.5),
                          m.empty(7).normal_(2, 3)],
    "normal": lambda m: [m.normal(m.zeros(20) + 1, m.ones(20) * 2),
                         m.normal(2.0, 3.0, size=(30,)), m.normal(m.arange(5.0), 1.0)],
    "bernoulli": lambda m: [m.empty(100).bernoulli_(0.3),
                            m.empty(50, dtype=m.float64).bernoulli_(0.7),
                            m.bernoulli(m.tensor(P, dtype=m.float32)), m.bernoulli(m.tensor(P)),
                            m.empty(300).bernoulli_(m.tensor(P, dtype=m.float32))],
    "random_": lambda m: [m.empty(10, dtype=m.int64).random_(),
                          m.empty(10, dtype=m.int32).random_(), m.empty(10).random_(),
                          m.empty(10, dtype=m.int64).random_(5, 100)],
    "serial_distributions": lambda m: [
        m.empty(40).exponential_(1.5), m.empty(7, dtype=m.float64).exponential_(),
        m.empty(30).cauchy_(0.5, 2.0), m.empty(5, dtype=m.float64).log_normal_(0.3, 0.7),
        m.empty(31).log_normal_(), m.empty(20, dtype=m.int64).geometric_(0.3),
        m.empty(9).geometric_(0.6)],
    "multinomial": lambda m: [m.multinomial(m.tensor(P[:9], dtype=m.float32), 4),
                              m.multinomial(m.tensor(P[:27].reshape(3, 9)), 1),
                              m.multinomial(m.tensor(P[:27].reshape(3, 9)), 20, True),
                              m.multinomial(m.tensor(P[:7], dtype=m.float32), 9, True)],
    "rrelu": lambda m: [m.nn.functional.rrelu(m.tensor(X), 0.1, 0.3, training=True),
                        m.nn.functional.rrelu(m.tensor(X, dtype=m.float64), training=True),
                        m.nn.RReLU()(m.tensor(X))],
    "distributions": lambda m: [
        m.distributions.Normal(m.zeros(5) + 1, m.ones(5) * 2).sample((3,)),
        m.distributions.Uniform(m.zeros(5), m.ones(5) * 2).sample((3,)),
        m.distributions.Bernoulli(m.ones(5) * 0.3).sample((3,)),
        m.distributions.Categorical(m.tensor([0.1, 0.2, 0.7])).sample((6,)),
        m.distributions.Exponential(m.ones(5) * 2).sample((3,)),
        m.distributions.MultivariateNormal(m.zeros(3), m.eye(3) * 2).sample((4,))],
    "dropout": lambda m: [m.nn.functional.dropout(m.tensor(X), 0.3),
                          m.nn.functional.dropout(m.tensor(X), 0.5),
                          m.nn.functional.dropout2d(m.tensor(X).reshape(2, 4, 5, 10), 0.2),
                          m.nn.Dropout(0.1)(m.tensor(X))],
    "fractional_max_pool": lambda m: [
        m.nn.FractionalMaxPool2d(2, output_ratio=0.5)(m.tensor(X).reshape(2, 4, 5, 10)),
        m.nn.FractionalMaxPool3d(2, output_size=2, return_indices=True)(
            m.tensor(X).reshape(2, 2, 4, 5, 5))[1]],
    "modules": lambda m: [p for mod in (m.nn.Linear(20, 30), m.nn.Conv2d(3, 8, 3),
                                        m.nn.Embedding(10, 4), m.nn.LSTM(4, 6))
                          for p in mod.parameters()],
    "nn_init": lambda m: [f(m.empty(30, 20)) for f in (
        m.nn.init.xavier_uniform_, m.nn.init.xavier_normal_, m.nn.init.kaiming_normal_,
        lambda w: m.nn.init.kaiming_uniform_(w, a=0.1), lambda w: m.nn.init.normal_(w, 0, .02),
        lambda w: m.nn.init.uniform_(w, -1, 1), lambda w: m.nn.init.sparse_(w, 0.3),
        lambda w: m.nn.init.trunc_normal_(w, std=0.02),
        lambda w: m.nn.init.trunc_normal_(w, a=-0.5, b=0.5),
        lambda w: m.nn.init.trunc_normal_(w, a=1.0, b=1.5))],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_numbers_as_torch(name):
    _same(CASES[name])


def test_a_sequence_of_calls_keeps_the_cached_normal():
    """normal_distribution<double> keeps its second value for the next small draw."""
    _same(lambda m: [m.randn(3), m.rand(2), m.randn(1, dtype=m.float64), m.randn(5),
                     m.randint(0, 7, (3,)), m.randn(17)], seed=7)


def test_state_moves_between_torch_and_ember():
    torch.manual_seed(3)
    torch.randn(5)                                   # leaves a cached normal in the state
    ember.set_rng_state(ember.tensor(torch.get_rng_state().numpy()))
    assert ember.default_generator.engine == "mt19937"
    np.testing.assert_array_equal(ember.randn(7).numpy(), torch.randn(7).numpy())
    np.testing.assert_array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())
    torch.set_rng_state(torch.from_numpy(ember.get_rng_state().numpy()))
    np.testing.assert_array_equal(ember.rand(4).numpy(), torch.rand(4).numpy())
    assert ember.initial_seed() == torch.initial_seed() == 3


def test_generator_objects_and_dataloader_order():
    g = ember.Generator().manual_seed(11, generator="mt19937")
    tg = torch.Generator().manual_seed(11)
    assert g.engine == "mt19937"
    np.testing.assert_array_equal(ember.randperm(50, generator=g).numpy(),
                                  torch.randperm(50, generator=tg).numpy())
    # after the switch, a DataLoader's own Generator() shuffles as PyTorch's does
    data = list(range(20))

    def order(m):
        m.manual_seed(5) if m is torch else m.manual_seed(5, generator="mt19937")
        return [int(b) for batch in m.utils.data.DataLoader(data, batch_size=4, shuffle=True)
                for b in batch]
    assert order(ember) == order(torch)


def test_switch_back_and_errors():
    ember.manual_seed(1, generator="mt19937")
    a = ember.rand(3)
    ember.manual_seed(1)                            # the engine stays
    np.testing.assert_array_equal(ember.rand(3).numpy(), a.numpy())
    ember.manual_seed(1, generator="philox")
    assert ember.default_generator.engine == "philox"
    assert ember.Generator().engine == "philox"
    assert not np.array_equal(ember.rand(3).numpy(), a.numpy())
    with pytest.raises(ValueError, match="mt19937"):
        ember.manual_seed(1, generator="pcg64")
    with pytest.raises(RuntimeError, match="not valid"):
        bad = np.zeros(5056, np.uint8)
        ember.Generator().set_state(ember.tensor(bad))


def test_a_ported_training_loop_follows_torch_step_by_step():
    """Data, initial weights, shuffling and dropout all come from the generator: with the
    same seed the losses agree to float rounding (no weights copied between the two)."""
    def run(m):
        if m is torch:
            m.manual_seed(0)
        else:
            m.manual_seed(0, generator="mt19937")
        nn = m.nn
        X, y = m.randn(64, 10), m.randint(0, 3, (64,))
        dl = m.utils.data.DataLoader(m.utils.data.TensorDataset(X, y), batch_size=16,
                                     shuffle=True)
        model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
        opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(2):
            for xb, yb in dl:
                loss = nn.functional.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses
    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-5)


def test_ember_rng_environment_variable_starts_with_torchs_engine():
    """EMBER_RNG=mt19937: an unmodified program (no manual_seed call even) draws PyTorch's
    numbers from PyTorch's default seed."""
    import os
    import subprocess
    import sys
    code = "import ember; print(ember.default_generator.engine, ember.rand(3).tolist())"
    env = dict(os.environ, EMBER_RNG="mt19937")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split(" ", 1)
    assert out[0] == "mt19937"
    gen = torch.Generator()                          # PyTorch's default CPU seed
    assert eval(out[1]) == torch.rand(3, generator=gen).tolist()


def test_generator_pickles_and_fork_rng_keep_the_stream():
    import pickle
    g = ember.Generator().manual_seed(21, generator="mt19937")
    ember.randn(5, generator=g)                       # leaves a cached normal value
    h = pickle.loads(pickle.dumps(g))
    assert h.engine == "mt19937"
    np.testing.assert_array_equal(ember.randn(9, generator=h).numpy(),
                                  ember.randn(9, generator=g).numpy())
    ember.manual_seed(4, generator="mt19937")
    with ember.random.fork_rng():
        ember.rand(10)
    torch.manual_seed(4)
    np.testing.assert_array_equal(ember.rand(3).numpy(), torch.rand(3).numpy())
