"""Per-rank program for test_dist_ring (importable by spawned children)."""
import os
import time

import numpy as np

from dist_workers import _init


def ring(rank, ws, port, outdir):
    """Multi-chunk ring all-reduce / reduce-scatter (tiny chunks force many pipelined
    pieces), with a late rank so frames both land in posted buffers and arrive before
    their post; results equal NumPy and are bit-identical on every rank."""
    import ember
    from ember.distributed import _gloo
    _gloo.CHUNK_BYTES = 4096
    dist = _init(rank, ws, port)
    R = dist.ReduceOp
    n = 70001 + ws
    data = [np.random.RandomState(r).randn(n).astype(np.float32) for r in range(ws)]
    ints = [np.random.RandomState(r).randint(-1000, 1000, n).astype(np.int64) for r in range(ws)]
    out = {}
    for late in range(ws):
        for name, op, arrs, ref in (("sum", R.SUM, data, np.sum), ("max", R.MAX, ints, np.max),
                                    ("avg", R.AVG, data, np.mean)):
            if rank == late:
                time.sleep(0.2)
            t = ember.from_numpy(arrs[rank].copy())
            dist.all_reduce(t, op=op)
            want = ref(np.stack(arrs), axis=0)
            if arrs is ints:
                assert np.array_equal(t.numpy(), want), name
            else:
                np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5)
            out[(late, name)] = t.numpy()
        # a strided (non-contiguous) tensor goes through a contiguous copy and back
        base = ember.from_numpy(np.stack([data[rank], data[rank]], 1).copy())
        col = base[:, 1]
        dist.all_reduce(col)
        np.testing.assert_allclose(base[:, 1].numpy(), np.sum(data, 0), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(base[:, 0].numpy(), data[rank])
        # reduce_scatter_tensor uses the ring reduce-scatter alone
        m = 20000
        full = ember.from_numpy(np.concatenate([data[rank][:m]] * ws) * (rank + 1))
        mine = ember.zeros(m)
        dist.reduce_scatter_tensor(mine, full)
        np.testing.assert_allclose(mine.numpy(), sum(
            data[r][:m] * (r + 1) for r in range(ws)), rtol=1e-5, atol=1e-4)
    # every rank holds the same bits: gather rank 0's results and compare
    for key, arr in out.items():
        ref = ember.from_numpy(arr.copy())
        dist.broadcast(ref, src=0)
        assert np.array_equal(ref.numpy(), arr), key
    open(os.path.join(outdir, f"ok{rank}"), "w").close()
    dist.destroy_process_group()
