"""Issue 14 point 8: RPC from compiled and scripted code. rpc_async/rpc_sync/remote and
Future.wait inside an ember.compile'd or ember.jit.script'ed function run for real at graph
breaks (the code around them stays compiled) and give eager's results."""
import pytest

pytest.importorskip("zmq")

import ember  # noqa: E402
import ember.distributed.rpc as rpc  # noqa: E402
from rpc_workers import add_one  # noqa: E402


def remote_step(x):
    y = x * 2
    fut = rpc.rpc_async("solo", add_one, args=(y,))
    z = rpc.rpc_sync("solo", ember.mul, args=(y, 3))
    return fut.wait() + z + 1


def test_rpc_under_compile_and_script(world1):
    ember._dynamo.reset()
    x = ember.randn(3)
    want = remote_step(x)
    compiled = ember.compile(remote_step, backend="eager")
    for _ in range(2):
        ember.testing.assert_close(compiled(x), want)
    ex = ember._dynamo.explain(remote_step)(x)
    assert ex.graph_count >= 2                      # code around the calls is compiled
    assert all("outside the graph" in r.reason for r in ex.break_reasons), ex.break_reasons
    scripted = ember.jit.script(remote_step)
    for _ in range(2):
        ember.testing.assert_close(scripted(x), want)


def test_fullgraph_names_the_remote_call(world1):
    with pytest.raises(ember._dynamo.exc.Unsupported, match="rpc_async: remote calls run"):
        ember.compile(remote_step, backend="eager", fullgraph=True)(ember.randn(3))
