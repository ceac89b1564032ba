"""ember.jit.trace / script: ScriptModule surface, save/load in a fresh process."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember


def _net():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4),
                               ember.nn.ReLU(inplace=True), ember.nn.Flatten(),
                               ember.nn.Linear(4 * 6 * 6, 5)).eval()


_CHILD = textwrap.dedent("""
    import sys, numpy as np, ember
    m = ember.jit.load(sys.argv[1])
    x = ember.from_numpy(np.load(sys.argv[2]))
    with ember.no_grad():
        np.save(sys.argv[3], m(x).numpy())
""")


def _in_child(tmp_path, path, x):
    (tmp_path / "child.py").write_text(_CHILD)
    np.save(tmp_path / "x.npy", x.numpy())
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    r = subprocess.run([sys.executable, str(tmp_path / "child.py"), str(path),
                        str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return np.load(tmp_path / "y.npy")


def test_trace_save_load_fresh_process(tmp_path):
    m = _net()
    traced = ember.jit.trace(m, ember.randn(2, 3, 8, 8))
    assert isinstance(traced, ember.jit.ScriptModule)
    assert "convolution" in traced.code and traced.graph is not None
    traced.save(str(tmp_path / "m.pt"))
    x = ember.randn(5, 3, 8, 8)          # another batch size: the batch dim stayed dynamic
    got = _in_child(tmp_path, tmp_path / "m.pt", x)
    with ember.no_grad():
        np.testing.assert_allclose(got, m(x).numpy(), rtol=1e-5, atol=1e-5)


def test_trace_function_and_kwargs():
    def f(x, y):
        return (x * y).sum(1)
    tf = ember.jit.trace(f, (ember.randn(3, 4), ember.randn(3, 4)))
    x, y = ember.randn(6, 4), ember.randn(6, 4)
    np.testing.assert_allclose(tf(x, y).numpy(), f(x, y).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="example_inputs"):
        ember.jit.trace(f)


def test_script_captures_on_first_call_and_round_trips(tmp_path):
    m = _net()
    s = ember.jit.script(m)
    with pytest.raises(RuntimeError, match="first call"):
        s.code
    x = ember.randn(2, 3, 8, 8)
    np.testing.assert_allclose(s(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert "linear" in s.code
    s.save(str(tmp_path / "s.pt"))
    loaded = ember.jit.load(str(tmp_path / "s.pt"))
    np.testing.assert_allclose(loaded(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)


def test_script_error_names_the_construct_and_line():
    def f(x):
        if x.sum() > 0:
            return x + 1
        return x - 1
    s = ember.jit.script(f)
    with pytest.raises(RuntimeError) as ei:
        s(ember.randn(3))
    msg = str(ei.value)
    assert "data-dependent control flow" in msg and "test_jit_script.py" in msg


def test_freeze_and_optimize_for_inference():
    m = _net()
    traced = ember.jit.trace(m, ember.randn(2, 3, 8, 8))
    with pytest.raises(RuntimeError, match="ScriptModule"):
        ember.jit.freeze(m)
    frozen = ember.jit.freeze(traced)
    assert not any(p.requires_grad for p in frozen.parameters())
    x = ember.randn(3, 3, 8, 8)
    with ember.no_grad():
        want = m(x).numpy()
        np.testing.assert_allclose(frozen(x).numpy(), want, rtol=1e-6)
        opt = ember.jit.optimize_for_inference(traced)
        np.testing.assert_allclose(opt(x).numpy(), want, rtol=1e-4, atol=1e-5)
        assert opt.exported_program.graph_module._fn is not None     # the backend ran


def test_fork_wait_inside_traced_function():
    def f(x):
        fut = ember.jit.fork(ember.mul, x, 2)
        return ember.jit.wait(fut) + x
    x = ember.randn(4, 3)
    tf = ember.jit.trace(f, (x,))
    assert "mul" in tf.code and "fork" not in tf.code     # the task is in the graph
    np.testing.assert_allclose(tf(x).numpy(), (x * 3).numpy(), rtol=1e-6)
    cf = ember.compile(f, fullgraph=True, backend="eager")
    np.testing.assert_allclose(cf(x).numpy(), (x * 3).numpy(), rtol=1e-6)
