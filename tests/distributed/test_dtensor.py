"""DTensor basics on spawned gloo ranks: shards as torch.chunk splits them, gather, redistribute."""
import os

import numpy as np
import pytest

import ember
from dcp_workers import dtensor_basics, global_arrays
from dist_workers import run_world
from ember.distributed.tensor import (DeviceMesh, DTensor, Replicate, Shard, distribute_tensor,
                                      init_device_mesh)

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("ws", [2, 4])
def test_dtensor_shards_match_torch_chunk(ws, tmp_path):
    run_world(dtensor_basics, ws, str(tmp_path), timeout=120)
    for rank in range(ws):
        with np.load(os.path.join(tmp_path, f"dt_{rank}.npz")) as f:
            for k, a in global_arrays().items():
                for dim in range(a.ndim):
                    chunks = torch.chunk(torch.from_numpy(a), ws, dim)
                    want = chunks[rank].numpy() if rank < len(chunks) else \
                        np.empty(tuple(0 if d == dim else s for d, s in enumerate(a.shape)),
                                 a.dtype)
                    np.testing.assert_array_equal(f[f"{k}.{dim}.local"], want)


def test_single_rank_mesh_and_errors():
    mesh = DeviceMesh("cpu", [0])
    t = ember.arange(12.0).reshape(4, 3)
    d = distribute_tensor(t, mesh, [Shard(1)])
    assert d.shape == ember.Size([4, 3]) and d.placements == (Shard(dim=1),)
    assert d.ndim == 2 and d.numel() == 12 and d.dtype == ember.float32
    np.testing.assert_array_equal(d.full_tensor().numpy(), t.numpy())
    assert isinstance(DTensor.from_local(t, mesh, [Replicate()]), DTensor)
    with pytest.raises(NotImplementedError, match="__add__"):
        d + 1
    with pytest.raises(NotImplementedError, match="'sum'"):
        d.sum()
    assert not hasattr(d, "no_such_attribute")
    with pytest.raises(NotImplementedError, match="1-D"):
        DeviceMesh("cpu", [[0, 1], [2, 3]])
    with pytest.raises(NotImplementedError, match="1-D"):
        init_device_mesh("cpu", (1, 1))
    with pytest.raises(ValueError, match="placements"):
        distribute_tensor(t, mesh, [Shard(0), Shard(1)])
    assert repr(Shard(0)) == "Shard(dim=0)" and Replicate() == Replicate()
