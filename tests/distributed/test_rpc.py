"""ember.distributed.rpc across processes: calls, RRefs, async_execution, failures."""
import os
import pickle

import pytest

pytest.importorskip("zmq")

from rpc_workers import async_exec, basics, failures, refcount, run_world  # noqa: E402


def _start_method():
    import multiprocessing as mp
    return "fork" if "fork" in mp.get_all_start_methods() else "spawn"


def _run(fn, ws, tmp_path, timeout=60):
    from rpc_workers import cleanup_stores
    try:
        run_world(fn, ws, str(tmp_path), timeout=timeout, start_method=_start_method())
    finally:
        cleanup_stores()


def test_calls_rrefs_errors_shutdown(tmp_path):
    _run(basics, 3, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1", "ok2"]


def test_owner_frees_value_when_no_user_holds_it(tmp_path):
    _run(refcount, 3, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1", "ok2"]


def test_async_execution_two_threads_fifty_calls_chain_and_batch(tmp_path):
    _run(async_exec, 3, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1", "ok2"]


def test_unknown_function_malformed_unauthenticated_and_dead_worker(tmp_path):
    _run(failures, 3, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1"]
    with open(tmp_path / "ok0", "rb") as f:
        assert pickle.load(f) < 5.0


def test_profiler_records_rpc_and_remote_ops(tmp_path):
    from rpc_workers import profiled
    _run(profiled, 2, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1"]


def test_launcher_env_rendezvous_runs_rpc_example():
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--standalone",
                          "--nproc-per-node", "2",
                          os.path.join(root, "examples", "rpc", "launched.py")],
                         capture_output=True, text=True, timeout=90, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "sum over workers: [3.0, 3.0, 3.0]" in out.stdout
