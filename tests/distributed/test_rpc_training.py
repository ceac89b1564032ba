"""RPC training patterns with distributed autograd and DistributedOptimizer, each
compared with the same model trained in one process."""
import os

import pytest

pytest.importorskip("zmq")

from rpc_train_workers import parameter_server, pipeline, rl, rnn  # noqa: E402
from rpc_workers import run_world  # noqa: E402


def _run(fn, ws, tmp_path, timeout=60):
    import multiprocessing as mp
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    from rpc_workers import cleanup_stores
    try:
        run_world(fn, ws, str(tmp_path), timeout=timeout, start_method=method)
    finally:
        cleanup_stores()
    assert sorted(os.listdir(tmp_path)) == [f"ok{r}" for r in range(ws)]


def test_parameter_server_two_trainers(tmp_path):
    _run(parameter_server, 3, tmp_path)


def test_pipeline_parallel_cnn_over_two_workers(tmp_path):
    _run(pipeline, 3, tmp_path)


def test_model_parallel_rnn_remote_embedding_and_decoder(tmp_path):
    _run(rnn, 3, tmp_path)


def test_rl_agent_and_observers(tmp_path):
    _run(rl, 3, tmp_path)


def test_rpc_with_ddp_two_trainers_one_parameter_server(tmp_path):
    from rpc_train_workers import rpc_ddp
    from rpc_workers import free_port
    import multiprocessing as mp
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    from rpc_workers import cleanup_stores
    try:
        run_world(rpc_ddp, 3, str(tmp_path), free_port(), timeout=60, start_method=method)
    finally:
        cleanup_stores()
    assert sorted(os.listdir(tmp_path)) == ["ok0", "ok1", "ok2"]
