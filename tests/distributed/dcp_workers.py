"""Per-rank programs for the DTensor / DCP / FSDP tests (importable by spawned children)."""
import os

import numpy as np

from dist_workers import _init


def global_arrays():
    """The tensors every checkpoint test saves: uneven shards, an empty shard, other dtypes."""
    rs = np.random.RandomState(0)
    return {"a": np.arange(21, dtype=np.float32).reshape(7, 3),       # Shard(0): 2,2,2,1
            "b": rs.randn(3).astype(np.float32),                       # Shard(0): 1,1,1,0
            "c": rs.randn(3, 10).astype(np.float64),                   # Shard(1): 3,3,3,1
            "r": rs.randn(4, 4).astype(np.float32),                    # replicated
            "i": np.arange(10, dtype=np.int64),                        # Shard(0)
            "s": np.array(2.5, dtype=np.float32)}                      # 0-d, replicated


PLACE = {"a": 0, "b": 0, "c": 1, "r": None, "i": 0, "s": None}


def _state(arrays, mesh, zeros=False):
    import ember
    from ember.distributed.tensor import Replicate, Shard, distribute_tensor
    sd = {}
    for k, a in arrays.items():
        t = ember.from_numpy(np.zeros_like(a) if zeros else a.copy())
        if PLACE[k] is None:
            sd[k] = t
        else:
            sd[k] = distribute_tensor(t, mesh, [Shard(PLACE[k])])
    sd["nested"] = {"r2": ember.from_numpy(np.zeros_like(arrays["r"]) if zeros else
                                           arrays["r"] * 2), "step": 0 if zeros else 7}
    return sd, Replicate


def dtensor_basics(rank, ws, port, outdir):
    import ember
    from ember.distributed.tensor import (DTensor, Replicate, Shard, distribute_tensor,
                                          init_device_mesh)
    _init(rank, ws, port)
    mesh = init_device_mesh("cpu", (ws,))
    out = {}
    for k, a in global_arrays().items():
        if a.ndim == 0:
            continue
        for dim in range(a.ndim):
            d = distribute_tensor(ember.from_numpy(a.copy()), mesh, [Shard(dim)])
            assert tuple(d.shape) == a.shape and d.dtype == ember.from_numpy(a).dtype
            assert d.placements == (Shard(dim),) and d.device_mesh == mesh
            out[f"{k}.{dim}.local"] = d.to_local().numpy()
            np.testing.assert_array_equal(d.full_tensor().numpy(), a)
            rep = d.redistribute(mesh, [Replicate()])
            np.testing.assert_array_equal(rep.to_local().numpy(), a)
            back = rep.redistribute(mesh, [Shard(dim)])
            np.testing.assert_array_equal(back.to_local().numpy(), out[f"{k}.{dim}.local"])
            other = d.redistribute(mesh, [Shard(a.ndim - 1 - dim)])
            np.testing.assert_array_equal(other.full_tensor().numpy(), a)
            # from_local without shape: the global shape is gathered, uneven pieces included
            fl = DTensor.from_local(d.to_local(), mesh, [Shard(dim)])
            assert tuple(fl.shape) == a.shape
            np.testing.assert_array_equal(fl.full_tensor().numpy(), a)
    np.savez(os.path.join(outdir, f"dt_{rank}.npz"), **out)


def dcp_save(rank, ws, port, outdir, ckpt):
    import ember.distributed.checkpoint as dcp
    from ember.distributed.tensor import init_device_mesh
    _init(rank, ws, port)
    mesh = init_device_mesh("cpu", (ws,))
    sd, _ = _state(global_arrays(), mesh)
    dcp.save(sd, checkpoint_id=ckpt)


def dcp_load(rank, ws, port, outdir, ckpt, initialized=False):
    import ember.distributed.checkpoint as dcp
    from ember.distributed.tensor import DTensor, init_device_mesh
    if not initialized:
        _init(rank, ws, port)
    mesh = init_device_mesh("cpu", (ws,))
    arrays = global_arrays()
    sd, _ = _state(arrays, mesh, zeros=True)
    dcp.load(sd, checkpoint_id=ckpt)
    for k, a in arrays.items():
        v = sd[k]
        got = v.full_tensor() if isinstance(v, DTensor) else v
        np.testing.assert_array_equal(got.numpy(), a)
    np.testing.assert_array_equal(sd["nested"]["r2"].numpy(), arrays["r"] * 2)
    assert sd["nested"]["step"] == 7
    open(os.path.join(outdir, f"loaded_{ws}_{rank}"), "w").close()


def dcp_save_crash(rank, ws, port, outdir, ckpt):
    """Writes new data files, then dies (SIGKILL-like) before the metadata is replaced."""
    import ember.distributed.checkpoint as dcp
    from ember.distributed.checkpoint.filesystem import FileSystemWriter
    from ember.distributed.tensor import init_device_mesh
    _init(rank, ws, port)
    mesh = init_device_mesh("cpu", (ws,))
    arrays = {k: np.asarray(v + 100, dtype=v.dtype) for k, v in global_arrays().items()}
    sd, _ = _state(arrays, mesh)

    def die(self, metadata, results):
        os._exit(17)
    FileSystemWriter.finish = die
    dcp.save(sd, checkpoint_id=ckpt)


# -- FSDP ---------------------------------------------------------------------------------
def mlp():
    import ember
    nn = ember.nn
    return nn.Sequential(nn.Linear(8, 15), nn.ReLU(), nn.Linear(15, 6), nn.ReLU(),
                         nn.Linear(6, 4))


def _wrap(model, api, strategy):
    import ember
    from ember.distributed import fsdp
    if api == "fully_shard":
        for layer in model:
            if isinstance(layer, ember.nn.Linear):
                fsdp.fully_shard(layer, reshard_after_forward=strategy == "FULL_SHARD")
        return fsdp.fully_shard(model, reshard_after_forward=strategy == "FULL_SHARD")
    return fsdp.FullyShardedDataParallel(
        model, sharding_strategy=fsdp.ShardingStrategy[strategy],
        auto_wrap_policy=fsdp.ModuleWrapPolicy({ember.nn.Linear}))


def fsdp_train(rank, ws, port, outdir, api, strategy):
    import ember
    import ember.distributed.checkpoint as dcp
    from ember.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict
    from ember.distributed.tensor import DTensor
    _init(rank, ws, port)
    d = dict(np.load(os.path.join(outdir, "data.npz")))
    model = mlp()
    if rank == 1:                      # construction broadcasts rank 0's initial values
        for p in model.parameters():
            p.data.mul_(3.0)
    for name, p in model.named_parameters():
        if rank == 0:
            p.data.copy_(ember.from_numpy(d["p." + name]))
    model = _wrap(model, api, strategy)
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    B = d["X"].shape[1] // ws
    for step in range(int(d["steps"])):
        opt.zero_grad()
        x = ember.from_numpy(d["X"][step][rank * B:(rank + 1) * B])
        y = ember.from_numpy(d["Y"][step][rank * B:(rank + 1) * B])
        ember.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    full = get_state_dict(model, opt, options=StateDictOptions(full_state_dict=True))[0]
    msd, osd = get_state_dict(model, opt)
    shapes = {}
    for k, v in msd.items():
        assert isinstance(v, DTensor) == (strategy != "NO_SHARD"), (k, type(v))
        if isinstance(v, DTensor):
            shapes[k] = tuple(v.to_local().shape)
            exp = osd["state"][k]["exp_avg"]
            assert isinstance(exp, DTensor) and tuple(exp.to_local().shape) == shapes[k]
    if strategy != "NO_SHARD":             # the optimizer only ever sees shards
        assert sum(p.numel() for p in opt.param_groups[0]["params"]) < \
            sum(v.numel() for v in full.values())
    with ember.no_grad():                  # eval forward gathers without autograd
        out = model(ember.from_numpy(d["X"][0]))
    if api == "fully_shard":               # FSDP2: model.state_dict() holds DTensors
        sd2 = model.state_dict()
        assert sorted(sd2) == sorted(full) and all(isinstance(v, DTensor) for v in sd2.values())
        for k in full:
            np.testing.assert_array_equal(sd2[k].full_tensor().numpy(), full[k].numpy())
        model.load_state_dict(sd2)
        model.load_state_dict(full)
    if api == "fsdp":                      # FSDP1's state_dict_type: FULL and SHARDED
        from ember.distributed.fsdp import FullyShardedDataParallel as FSDP
        from ember.distributed.fsdp import StateDictType
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
            fsd = model.state_dict()
        assert sorted(fsd) == sorted(full)
        for k in full:
            np.testing.assert_array_equal(fsd[k].numpy(), full[k].numpy())
        with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
            ssd = model.state_dict()
            assert all(isinstance(v, DTensor) for v in ssd.values()) == \
                (strategy != "NO_SHARD")
            model.load_state_dict(ssd)
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
            model.load_state_dict(fsd)
        osd1 = FSDP.optim_state_dict(model, opt)
        assert sorted(osd1["state"]) == sorted(full)
    np.savez(os.path.join(outdir, f"fsdp_{rank}.npz"), eval_out=out.numpy(),
             **{k: v.numpy() for k, v in full.items()},
             **{"shape." + k: np.array(s) for k, s in shapes.items()})
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=os.path.join(outdir, "ckpt"))


def async_save_run(rank, ws, port, outdir, ckpt):
    """async_save returns at once; collectives on the default group go on meanwhile."""
    import ember
    import ember.distributed as dist
    import ember.distributed.checkpoint as dcp
    from ember.distributed.tensor import init_device_mesh
    _init(rank, ws, port)
    mesh = init_device_mesh("cpu", (ws,))
    sd, _ = _state(global_arrays(), mesh)
    fut = dcp.async_save(sd, checkpoint_id=ckpt)
    sd["a"].to_local().add_(1000)          # staged: this edit is not in the checkpoint
    t = ember.ones(3)
    for _ in range(5):
        dist.all_reduce(t)
    assert t.tolist() == [float(ws ** 5)] * 3
    fut.result(timeout=60)
    dcp_load(rank, ws, port, outdir, ckpt, initialized=True)


def memory_run(rank, ws, port, outdir, kind):
    """Peak ember memory per rank over two Adam steps: DDP vs fully_shard (per layer)."""
    import gc

    import ember
    from ember.distributed import fsdp
    from ember.nn.parallel import DistributedDataParallel
    _init(rank, ws, port)
    nn = ember.nn
    ember.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(256, 256), nn.ReLU())])
    if kind == "ddp":
        model = DistributedDataParallel(model)
    else:
        for layer in model:
            if isinstance(layer, nn.Linear):
                fsdp.fully_shard(layer, reshard_after_forward=kind == "fsdp")
        fsdp.fully_shard(model, reshard_after_forward=kind == "fsdp")
    opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    gc.collect()
    base = ember.memory_allocated()
    ember.reset_peak_memory_stats()
    for _ in range(2):
        opt.zero_grad()
        model(ember.randn(4, 256)).pow(2).mean().backward()
        opt.step()
    np.save(os.path.join(outdir, f"mem_{kind}_{rank}.npy"),
            np.array([base, ember.max_memory_allocated()]))
