"""The gloo backend's chunk-pipelined ring (posted receive buffers) on spawned processes."""
import os

import pytest

from dist_workers import run_world
from ring_workers import ring


@pytest.mark.parametrize("world_size", [2, 3])
def test_ring_allreduce_many_chunks(world_size, tmp_path):
    run_world(ring, world_size, str(tmp_path), timeout=120)
    assert sorted(os.listdir(tmp_path)) == [f"ok{r}" for r in range(world_size)]
