"""The RPC agent's transport choices: ipc:// to loopback peers, tcp:// to others, and its
server thread pool (errors do not kill a thread; shutdown drops queued work)."""
import threading
import time

import pytest

zmq = pytest.importorskip("zmq")

import ember  # noqa: E402
import ember.distributed.rpc as rpc  # noqa: E402
from ember.distributed.rpc import _agent, api  # noqa: E402
from rpc_workers import add_one  # noqa: E402


def test_loopback_peer_is_dialled_over_ipc(world1):
    agent = api._agent
    endpoint = agent._dealers[0].getsockopt(zmq.LAST_ENDPOINT).decode()
    assert endpoint == _agent._ipc_endpoint(agent.token, 0)
    assert endpoint.startswith("ipc://@ember-rpc-")
    x = ember.randn(5)
    assert ember.equal(rpc.rpc_sync("solo", add_one, args=(x,)), x + 1)
    # frames without the group's token are still dropped before unpickling
    before = agent.rejected
    with zmq.Context.instance().socket(zmq.DEALER) as s:
        s.setsockopt(zmq.LINGER, 0)
        s.connect(endpoint)
        s.send_multipart([b"not the token", b"x"])
        deadline = time.monotonic() + 10
        while agent.rejected == before and time.monotonic() < deadline:
            time.sleep(0.01)
    assert agent.rejected == before + 1


@pytest.mark.parametrize("addr,want", [("tcp://127.0.0.1:5000", True),
                                       ("tcp://127.3.4.5:5000", True),
                                       ("tcp://10.1.2.3:5000", False),
                                       ("tcp://[::1]:5000", True),
                                       ("ipc://@x", False), (None, False)])
def test_only_loopback_addresses_switch_to_ipc(addr, want):
    assert _agent._is_loopback(addr) is want


def _boom():
    raise ValueError("boom")


def test_server_pool_survives_errors_and_drops_queued_work_on_shutdown():
    pool = _agent._ServerPool(1, "test-pool")
    ran, gate = [], threading.Event()
    with pytest.warns(RuntimeWarning, match="boom"):
        pool.submit(_boom)
        pool.submit(ran.append, "after error")
        deadline = time.monotonic() + 10
        while not ran and time.monotonic() < deadline:
            time.sleep(0.01)
    assert ran == ["after error"]
    pool.submit(gate.wait)
    pool.submit(ran.append, "queued")
    time.sleep(0.05)
    threading.Timer(0.2, gate.set).start()
    pool.shutdown(wait=True, cancel_futures=True)
    assert ran == ["after error"]
