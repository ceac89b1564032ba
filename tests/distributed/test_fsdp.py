"""FSDP on 2 spawned gloo ranks vs single-process training on the concatenated batch; sharded
optimizer state; SHARDED_STATE_DICT through DCP into a plain model; memory vs DDP."""
import functools
import os

import numpy as np
import pytest

import ember
import ember.distributed.checkpoint as dcp
from dcp_workers import fsdp_train, memory_run, mlp
from dist_workers import run_world
from ember.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

torch = pytest.importorskip("torch")


def _data(path, ws, steps=3, B=3):
    rs = np.random.RandomState(1)
    params = {n: (rs.randn(*p.shape) * 0.4).astype(np.float32)
              for n, p in mlp().named_parameters()}
    X = rs.randn(steps, ws * B, 8).astype(np.float32)
    Y = rs.randn(steps, ws * B, 4).astype(np.float32)
    np.savez(os.path.join(path, "data.npz"), X=X, Y=Y, steps=steps,
             **{"p." + k: v for k, v in params.items()})
    return params, X, Y


def _single(params, X, Y):
    model = mlp()
    for n, p in model.named_parameters():
        p.data.copy_(ember.from_numpy(params[n].copy()))
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    for step in range(X.shape[0]):
        opt.zero_grad()
        ember.nn.functional.mse_loss(model(ember.from_numpy(X[step])),
                                     ember.from_numpy(Y[step])).backward()
        opt.step()
    return model, opt


def _torch_single(params, X, Y):
    tm = torch.nn.Sequential(torch.nn.Linear(8, 15), torch.nn.ReLU(), torch.nn.Linear(15, 6),
                             torch.nn.ReLU(), torch.nn.Linear(6, 4))
    tm.load_state_dict({k: torch.from_numpy(v) for k, v in params.items()})
    opt = torch.optim.Adam(tm.parameters(), lr=0.01)
    for step in range(X.shape[0]):
        opt.zero_grad()
        torch.nn.functional.mse_loss(tm(torch.from_numpy(X[step])),
                                     torch.from_numpy(Y[step])).backward()
        opt.step()
    return {k: v.detach().numpy() for k, v in tm.state_dict().items()}


@pytest.mark.parametrize("api,strategy", [
    ("fully_shard", "FULL_SHARD"), ("fully_shard", "SHARD_GRAD_OP"),
    ("fsdp", "FULL_SHARD"), ("fsdp", "SHARD_GRAD_OP"), ("fsdp", "NO_SHARD")])
def test_fsdp_matches_single_process(api, strategy, tmp_path):
    params, X, Y = _data(tmp_path, 2)
    run_world(fsdp_train, 2, str(tmp_path), api, strategy, timeout=150)
    ref_model, ref_opt = _single(params, X, Y)
    ref = {n: p.detach().numpy() for n, p in ref_model.named_parameters()}
    tref = _torch_single(params, X, Y)
    r0 = dict(np.load(os.path.join(tmp_path, "fsdp_0.npz")))
    r1 = dict(np.load(os.path.join(tmp_path, "fsdp_1.npz")))
    for k in ref:
        np.testing.assert_array_equal(r0[k], r1[k])
        np.testing.assert_allclose(r0[k], ref[k], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r0[k], tref[k], rtol=1e-5, atol=1e-6)
    with ember.no_grad():
        np.testing.assert_allclose(r0["eval_out"], ref_model(ember.from_numpy(X[0])).numpy(),
                                   rtol=1e-5, atol=1e-6)
    if strategy != "NO_SHARD":          # dim-0 shards as torch.chunk: 15 rows -> 8 + 7
        assert tuple(r0["shape.0.weight"]) == (8, 8) and tuple(r1["shape.0.weight"]) == (7, 8)
        assert tuple(r1["shape.4.bias"]) == (2,)
    # the sharded checkpoint loads into a plain single-process model and Adam
    model, opt = mlp(), None
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    msd, osd = get_state_dict(model, opt)
    dcp.load({"model": msd, "optim": osd}, checkpoint_id=os.path.join(tmp_path, "ckpt"))
    set_state_dict(model, opt, model_state_dict=msd, optim_state_dict=osd)
    for n, p in model.named_parameters():
        np.testing.assert_array_equal(p.detach().numpy(), r0[n])
    want = ref_opt.state_dict()["state"]
    got = opt.state_dict()["state"]
    for i in want:
        for k in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_allclose(np.asarray(got[i][k]), np.asarray(want[i][k]),
                                       rtol=1e-4, atol=1e-7)
        assert float(np.asarray(got[i]["step"])) == X.shape[0]


def test_fsdp_peak_memory_below_ddp(tmp_path):
    run_world(memory_run, 2, str(tmp_path), "ddp", timeout=150)
    run_world(memory_run, 2, str(tmp_path), "fsdp", timeout=150)
    run_world(memory_run, 2, str(tmp_path), "fsdp_grad_op", timeout=150)
    ddp = [np.load(os.path.join(tmp_path, f"mem_ddp_{r}.npy")) for r in range(2)]
    fs = [np.load(os.path.join(tmp_path, f"mem_fsdp_{r}.npy")) for r in range(2)]
    go = [np.load(os.path.join(tmp_path, f"mem_fsdp_grad_op_{r}.npy")) for r in range(2)]
    print("\nper-rank bytes [steady, peak]  DDP:", [d.tolist() for d in ddp],
          " FULL_SHARD:", [f.tolist() for f in fs], " SHARD_GRAD_OP:", [g.tolist() for g in go])
    for f, g in zip(fs, go):                  # parameters freed after forward vs kept
        assert f[1] < g[1]
    param_bytes = 4 * (256 * 256 + 256) * 4
    for d, f in zip(ddp, fs):
        assert f[1] < 0.75 * d[1]
        assert d[1] >= 4 * param_bytes        # DDP: params + grads + 2 Adam moments


def test_single_process_fsdp_and_unsupported_options(tmp_path):
    from ember.distributed import fsdp
    from ember.distributed.fsdp.wrap import size_based_auto_wrap_policy
    params, X, Y = _data(tmp_path, 1)
    ref_model, _ = _single(params, X, Y)
    model = mlp()
    for n, p in model.named_parameters():
        p.data.copy_(ember.from_numpy(params[n].copy()))
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=50)
    wrapped = fsdp.FullyShardedDataParallel(model, auto_wrap_policy=policy)
    assert isinstance(model[0], fsdp.FullyShardedDataParallel)       # 135 params >= 50
    assert not isinstance(model[4], fsdp.FullyShardedDataParallel)   # 28 params < 50
    opt = ember.optim.Adam(wrapped.parameters(), lr=0.01)
    for step in range(X.shape[0]):
        opt.zero_grad()
        ember.nn.functional.mse_loss(wrapped(ember.from_numpy(X[step])),
                                     ember.from_numpy(Y[step])).backward()
        opt.step()
    with fsdp.FullyShardedDataParallel.state_dict_type(wrapped,
                                                       fsdp.StateDictType.FULL_STATE_DICT):
        sd = wrapped.state_dict()
    for n, p in ref_model.named_parameters():
        np.testing.assert_allclose(sd[n].numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="mixed_precision"):
        fsdp.FullyShardedDataParallel(mlp(), mixed_precision=fsdp.MixedPrecision(
            param_dtype=ember.float16))
    with pytest.raises(NotImplementedError, match="HYBRID_SHARD"):
        fsdp.FullyShardedDataParallel(mlp(), sharding_strategy=fsdp.ShardingStrategy.HYBRID_SHARD)
    with pytest.raises(NotImplementedError, match="LOCAL_STATE_DICT"):
        with fsdp.FullyShardedDataParallel.state_dict_type(
                wrapped, fsdp.StateDictType.LOCAL_STATE_DICT):
            pass
    m = fsdp.fully_shard(mlp())
    assert isinstance(m, fsdp.FSDPModule) and isinstance(m, ember.nn.Sequential)
