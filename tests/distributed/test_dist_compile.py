"""Issue 13 point 8: DDP and ember.compile. Compiling a DDP model, or wrapping a compiled
model in DDP, splits the captured graph at DDP's bucket boundaries (DDPOptimizer), so with a
backend that compiles backward (aot_eager) the buckets' all-reduces still start while the
rest of backward runs; the trained parameters equal single-process training."""
import json
import os

import numpy as np
import pytest

import ember
from compile_workers import ddp_compiled_train
from dist_workers import run_world


def _data(path, ws, steps, B=4):
    rs = np.random.RandomState(0)
    # 2.weight is 1 MB: DDP's first bucket (1 MB) closes there, the rest get small buckets
    shapes = {"0.weight": (512, 8), "0.bias": (512,), "2.weight": (512, 512),
              "2.bias": (512,), "4.weight": (4, 512), "4.bias": (4,)}
    params = {k: (rs.randn(*s) * 0.05).astype(np.float32) for k, s in shapes.items()}
    X = rs.randn(steps, ws * B, 8).astype(np.float32)
    Y = rs.randn(steps, ws * B, 4).astype(np.float32)
    np.savez(os.path.join(path, "data.npz"), X=X, Y=Y, steps=steps,
             **{"p." + k: v for k, v in params.items()})
    return params, X, Y


def _single_process(params, X, Y):
    nn = ember.nn
    model = nn.Sequential(nn.Linear(8, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 4))
    for name, p in model.named_parameters():
        p.data.copy_(ember.from_numpy(params[name].copy()))
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    for step in range(len(X)):
        opt.zero_grad()
        nn.functional.mse_loss(model(ember.from_numpy(X[step])),
                               ember.from_numpy(Y[step])).backward()
        opt.step()
    return {n: p.detach().numpy() for n, p in model.named_parameters()}


@pytest.mark.parametrize("mode", ["compile_ddp", "ddp_of_compiled"])
def test_compiled_ddp_splits_at_buckets_and_overlaps(mode, tmp_path):
    params, X, Y = _data(tmp_path, 2, steps=3)
    run_world(ddp_compiled_train, 2, str(tmp_path), mode, timeout=180)
    ref = _single_process(params, X, Y)
    for rank in range(2):
        with np.load(tmp_path / f"{mode}_{rank}.npz") as got:
            for name, want in ref.items():
                np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6,
                                           err_msg=f"{mode} rank {rank} {name}")
        info = json.loads((tmp_path / f"{mode}_{rank}.json").read_text())
        assert len(info["graphs"]) >= 2            # one piece per bucket, compiled apiece
        ev = info["events"]                         # the last step's order of events
        first_reduce = ev.index("allreduce")
        last_bw = len(ev) - 1 - ev[::-1].index("bw")
        # a bucket's all-reduce starts before the last backward piece has run
        assert first_reduce < last_bw, " ".join(ev)
