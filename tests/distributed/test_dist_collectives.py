"""Collectives of the gloo (TCP) backend on spawned processes, and spawn's error reporting."""
import os

import pytest

import ember.distributed as dist
import ember.multiprocessing as mp
from dist_workers import collectives, exiting, raising, run_world


@pytest.mark.parametrize("world_size", [2, 3])
def test_collectives_match_numpy(world_size, tmp_path):
    run_world(collectives, world_size, str(tmp_path), timeout=120)
    assert sorted(os.listdir(tmp_path)) == [f"ok{r}" for r in range(world_size)]


def test_spawn_propagates_child_exception():
    with pytest.raises(mp.ProcessRaisedException, match="boom from rank 1") as ei:
        mp.spawn(raising, args=(2, 0), nprocs=2)
    assert "Process 1 terminated with the following error" in str(ei.value)
    assert "Traceback" in str(ei.value) and ei.value.error_index == 1


def test_spawn_reports_exit_code():
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with exit "
                                                        "code 3") as ei:
        mp.spawn(exiting, args=(2, 0), nprocs=2)
    assert ei.value.exit_code == 3


def test_not_initialized_errors():
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    assert dist.Backend("GLOO") == "gloo"


def test_single_process_world_with_store():
    import ember
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        t = ember.ones(3)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        assert t.tolist() == [1.0] * 3
        with pytest.raises(TypeError, match="Expected parameter `tensor`"):
            dist.all_reduce([t])
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        # the root passes one tensor per rank (torch's messages)
        with pytest.raises(ValueError, match="``gather_list`` must have a length equal"):
            dist.gather(t, [ember.zeros(3), ember.zeros(3)], dst=0)
        with pytest.raises(ValueError, match="``scatter_list`` must have a length equal"):
            dist.scatter(t, [ember.zeros(3), ember.zeros(3)], src=0)
        out = [ember.zeros(3)]
        dist.gather(t, out, dst=0)
        assert out[0].tolist() == [1.0] * 3
    finally:
        dist.destroy_process_group()


def test_reinit_on_same_address():
    from dist_workers import reinit
    run_world(reinit, 2, timeout=90)
