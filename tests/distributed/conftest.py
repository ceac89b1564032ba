"""Fixtures shared by the single-process RPC tests."""
import pytest


@pytest.fixture
def world1():
    """A world of one RPC worker, "solo", that calls itself through its sockets."""
    import ember.distributed.rpc as rpc
    from rpc_workers import free_port
    rpc.init_rpc("solo", rank=0, world_size=1, rpc_backend_options=rpc.TensorPipeRpcBackendOptions(
        init_method=f"tcp://127.0.0.1:{free_port()}", rpc_timeout=20))
    yield rpc
    rpc.shutdown()
