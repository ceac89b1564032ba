"""Per-rank programs for the multi-process tests (importable by spawned children)."""
import os
import pickle
import socket
import time

import numpy as np


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_world(fn, world_size, *args, timeout=90, start_method="spawn"):
    """Run fn(rank, world_size, port, *args) on `world_size` processes; kill all on timeout."""
    import ember.multiprocessing as mp
    port = free_port()
    ctx = mp.start_processes(fn, args=(world_size, port) + args, nprocs=world_size,
                             join=False, start_method=start_method)
    deadline = time.monotonic() + timeout
    try:
        while not ctx.join(timeout=max(0.1, deadline - time.monotonic())):
            if time.monotonic() > deadline:
                raise TimeoutError(f"world of {world_size} did not finish in {timeout} s")
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()


def _init(rank, world_size, port, timeout_s=60):
    from datetime import timedelta

    import ember.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=timedelta(seconds=timeout_s))
    return dist


def collectives(rank, ws, port, outdir):
    """Every collective against a NumPy reference; sizes cross the direct/ring threshold."""
    _collectives_body(_init(rank, ws, port), rank, ws, outdir, "gloo")


def collectives_mpi(outdir):
    """The same checks on the MPI backend (run under mpiexec)."""
    import ember.distributed as dist
    dist.init_process_group("mpi")
    _collectives_body(dist, dist.get_rank(), dist.get_world_size(), outdir, "mpi")


def _collectives_body(dist, rank, ws, outdir, backend):
    import ember
    T = ember.from_numpy
    R = ember.distributed.ReduceOp
    assert dist.get_rank() == rank and dist.get_world_size() == ws
    assert dist.is_initialized() and dist.get_backend() == backend
    data = [np.random.RandomState(r).randn(70001).astype(np.float32) for r in range(ws)]
    for n in (1, 1000, 70001):
        for op, ref in ((R.SUM, np.sum), (R.MAX, np.max), (R.MIN, np.min),
                        (R.PRODUCT, np.prod), (R.AVG, np.mean)):
            t = T(data[rank][:n].copy())
            dist.all_reduce(t, op=op)
            want = ref(np.stack([d[:n] for d in data]), axis=0)
            np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5)
    # bit-identical results on every rank
    t = T(data[rank].copy())
    dist.all_reduce(t)
    everyone = [None] * ws
    dist.all_gather_object(everyone, t.numpy().tobytes())
    assert all(e == everyone[0] for e in everyone)
    ints = T(np.array([rank + 1, 6, 12], np.int64))
    dist.all_reduce(ints, op=R.BXOR)
    x = 0
    for r in range(ws):
        x ^= r + 1
    assert ints.tolist()[0] == x
    # strided tensor in-place
    m = T(np.ones((4, 6), np.float32) * (rank + 1)).t()
    dist.all_reduce(m)
    assert (m.numpy() == sum(range(1, ws + 1))).all()
    # broadcast / reduce (global ranks), large and small
    for n in (3, 400000):
        b = T(np.full(n, float(rank), np.float32))
        dist.broadcast(b, src=ws - 1)
        assert (b.numpy() == ws - 1).all()
        r_ = T(np.full(n, float(rank + 1), np.float32))
        dist.reduce(r_, dst=1)
        if rank == 1:
            assert (r_.numpy() == sum(range(1, ws + 1))).all()
    # all_gather, into_tensor, gather, scatter
    outs = [ember.zeros(2, 3) for _ in range(ws)]
    dist.all_gather(outs, ember.full((2, 3), float(rank)))
    assert [o[1, 2].item() for o in outs] == list(range(ws))
    big = ember.zeros(ws * 2, 3)
    dist.all_gather_into_tensor(big, ember.full((2, 3), float(rank)))
    assert big[:, 0].tolist() == [float(r) for r in range(ws) for _ in range(2)]
    g = [ember.zeros(2) for _ in range(ws)] if rank == 0 else None
    dist.gather(ember.full((2,), float(rank) * 2), g, dst=0)
    if rank == 0:
        assert [x[0].item() for x in g] == [2.0 * r for r in range(ws)]
    s = ember.zeros(3)
    dist.scatter(s, [ember.full((3,), float(r) + 10) for r in range(ws)] if rank == 0 else None,
                 src=0)
    assert s.tolist() == [10.0 + rank] * 3
    # reduce_scatter (small and ring-sized)
    for n in (4, 30000):
        ins = [T(np.full(n, float(rank * 10 + j), np.float32)) for j in range(ws)]
        out = ember.zeros(n)
        dist.reduce_scatter(out, ins)
        assert (out.numpy() == sum(r * 10 + rank for r in range(ws))).all()
        out2 = ember.zeros(n)
        dist.reduce_scatter_tensor(out2, ember.cat(ins))
        assert (out2.numpy() == out.numpy()).all()
    # all_to_all and all_to_all_single with uneven splits
    ins = [ember.full((j + 1,), float(rank * 100 + j)) for j in range(ws)]
    outs = [ember.zeros(rank + 1) for _ in range(ws)]
    dist.all_to_all(outs, ins)
    assert [o[0].item() for o in outs] == [float(r * 100 + rank) for r in range(ws)]
    in_splits = [j + 1 for j in range(ws)]
    out_splits = [rank + 1] * ws
    inp = ember.cat([ember.full((j + 1, 2), float(rank * 100 + j)) for j in range(ws)])
    out = ember.zeros(sum(out_splits), 2)
    dist.all_to_all_single(out, inp, out_splits, in_splits)
    exp = np.concatenate([np.full((rank + 1, 2), r * 100 + rank) for r in range(ws)])
    assert (out.numpy() == exp).all()
    # p2p: ring exchange with isend/irecv both ways, batch_isend_irecv, tags
    right, left = (rank + 1) % ws, (rank - 1) % ws
    a, b = ember.zeros(5), ember.zeros(5)
    ops = [dist.P2POp(dist.isend, ember.full((5,), float(rank)), right, tag=3),
           dist.P2POp(dist.irecv, a, left, tag=3),
           dist.P2POp(dist.isend, ember.full((5,), float(rank) + 0.5), left, tag=4),
           dist.P2POp(dist.irecv, b, right, tag=4)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert a.tolist() == [float(left)] * 5 and b.tolist() == [right + 0.5] * 5
    if rank == 0:
        dist.send(ember.arange(6.0), dst=1)
    elif rank == 1:
        t = ember.zeros(6)
        assert dist.recv(t, src=0) == 0 and t.tolist() == list(range(6))
    # async ops overlap and complete with a Future
    works = [dist.all_reduce(ember.ones(50000) * (rank + 1), async_op=True) for _ in range(3)]
    vals = [w.get_future().wait()[0] for w in works]
    assert all(float(v[0]) == sum(range(1, ws + 1)) for v in vals)
    assert all(w.is_completed() and w.is_success() for w in works)
    # objects and subgroups
    objs = [{"r": rank}, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"r": 0}, "x"]
    sub = dist.new_group([0, ws - 1])
    if rank in (0, ws - 1):
        t = ember.full((2,), float(rank))
        dist.all_reduce(t, group=sub)
        assert t.tolist() == [float(ws - 1)] * 2
        assert dist.get_rank(sub) == (0 if rank == 0 else 1)
    else:
        assert sub is dist.GroupMember.NON_GROUP_MEMBER
    # DDP on this backend: its gradient is the mean of the ranks' local gradients
    lin = ember.nn.Linear(3, 2)
    with ember.no_grad():
        lin.weight.copy_(ember.arange(6.0).reshape(2, 3) / 10)
        lin.bias.fill_(0.5)
    plain = ember.nn.Linear(3, 2)
    plain.load_state_dict(lin.state_dict())
    ddp = ember.nn.parallel.DistributedDataParallel(lin)
    xb = ember.arange(12.0).reshape(4, 3) * (rank + 1)
    ddp(xb).pow(2).sum().backward()
    plain(xb).pow(2).sum().backward()
    want = plain.weight.grad.clone()
    dist.all_reduce(want)
    assert ember.allclose(lin.weight.grad, want / ws, rtol=1e-5)
    dist.barrier()
    if backend == "gloo":
        dist.monitored_barrier()
    with open(os.path.join(outdir, f"ok{rank}"), "wb") as f:
        pickle.dump(True, f)
    dist.destroy_process_group()


def raising(rank, ws, port):
    if rank == 1:
        raise ValueError("boom from rank 1")
    time.sleep(30)


def exiting(rank, ws, port):
    if rank == 1:
        os._exit(3)
    time.sleep(30)


# ----------------------------------------------------------------------------- DDP
def _mlp(nn, state):
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    for (name, p) in model.named_parameters():
        p.data.copy_(_as(p, state[name]))
    return model


def _as(p, arr):
    mod = type(p).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return torch.from_numpy(arr.copy())
    import ember
    return ember.from_numpy(arr.copy())


def ddp_train(rank, ws, port, path, framework, opts):
    """Train the MLP under DDP (ember or torch, gloo) for a few steps; save rank's params."""
    from datetime import timedelta
    data = np.load(os.path.join(path, "data.npz"))
    state = {k[2:]: data[k] for k in data.files if k.startswith("p.")}
    if framework == "torch":
        import torch
        import torch.distributed as dist
        lib = torch
    else:
        import ember as lib
        import ember.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=ws, timeout=timedelta(seconds=60))
    lib.manual_seed(0)
    model = _mlp(lib.nn, state)
    if rank == 1:           # DDP must broadcast rank 0's weights at construction
        with lib.no_grad():
            for p in model.parameters():
                p.add_(1.0)
    cap = opts.get("bucket_cap_mb", 25)
    if framework == "torch":
        cap = opts.get("torch_bucket_cap_mb", cap)
    ddp = lib.nn.parallel.DistributedDataParallel(
        model, bucket_cap_mb=cap,
        gradient_as_bucket_view=opts.get("grad_view", False))
    if opts.get("hook") == "fp16":
        from importlib import import_module
        hooks = import_module(f"{lib.__name__}.distributed.algorithms.ddp_comm_hooks."
                              f"default_hooks")
        ddp.register_comm_hook(None, hooks.fp16_compress_hook)
    elif opts.get("hook") == "powersgd":
        # full rank and always compressing: PowerSGD is then exact, so it must match plain
        # averaging (torch's and ember's initial Q differ, their products do not)
        from importlib import import_module
        mod = import_module(f"{lib.__name__}.distributed.algorithms.ddp_comm_hooks."
                            f"powerSGD_hook")
        state = mod.PowerSGDState(process_group=None, matrix_approximation_rank=16,
                                  start_powerSGD_iter=2, min_compression_rate=0)
        ddp.register_comm_hook(state, mod.powerSGD_hook)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    X, Y = data["X"], data["Y"]
    B = X.shape[1] // ws
    steps = int(data["steps"])
    for step in range(steps):
        xs = X[step, rank * B:(rank + 1) * B]
        ys = Y[step, rank * B:(rank + 1) * B]
        opt.zero_grad()
        if opts.get("no_sync") and step == 0:
            with ddp.no_sync():     # accumulate locally, then one synced backward
                half = B // 2
                lib.nn.functional.mse_loss(ddp(lib.from_numpy(xs[:half])),
                                           lib.from_numpy(ys[:half])).mul(0.5).backward()
            loss = lib.nn.functional.mse_loss(ddp(lib.from_numpy(xs[half:])),
                                              lib.from_numpy(ys[half:])).mul(0.5)
        else:
            loss = lib.nn.functional.mse_loss(ddp(lib.from_numpy(xs)), lib.from_numpy(ys))
        loss.backward()
        opt.step()
    out = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    np.savez(os.path.join(path, f"{framework}_{rank}.npz"), **out)
    dist.destroy_process_group()


def join_train(rank, ws, port, path):
    """Rank r trains r + 1 steps inside `with Join([ddp])`; saves its final params."""
    import ember
    import ember.distributed as dist
    from ember.distributed.algorithms.join import Join
    _init(rank, ws, port, timeout_s=60)
    data = np.load(os.path.join(path, "data.npz"))
    state = {k[2:]: data[k] for k in data.files if k.startswith("p.")}
    model = _mlp(ember.nn, state)
    ddp = ember.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0005)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    X, Y = data["X"], data["Y"]
    with Join([ddp]):
        for step in range(rank + 1):
            opt.zero_grad()
            loss = ember.nn.functional.mse_loss(ddp(ember.from_numpy(X[step, rank])),
                                                ember.from_numpy(Y[step, rank]))
            loss.backward()
            opt.step()
    out = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    np.savez(os.path.join(path, f"join_{rank}.npz"), **out)
    dist.destroy_process_group()


def syncbn_train(rank, ws, port, path):
    """SyncBatchNorm forward/backward on this rank's slice; saves output, grads, stats."""
    import ember
    import ember.distributed as dist
    _init(rank, ws, port)
    data = np.load(os.path.join(path, "data.npz"))
    x = ember.from_numpy(data["x"][rank].copy()).requires_grad_()
    bn = ember.nn.SyncBatchNorm(3)
    with ember.no_grad():
        bn.weight.copy_(ember.from_numpy(data["w"]))
        bn.bias.copy_(ember.from_numpy(data["b"]))
    y = bn(x)
    (y * ember.from_numpy(data["g"][rank])).sum().backward()
    np.savez(os.path.join(path, f"bn_{rank}.npz"), y=y.detach().numpy(), gx=x.grad.numpy(),
             gw=bn.weight.grad.numpy(), gb=bn.bias.grad.numpy(),
             rm=bn.running_mean.numpy(), rv=bn.running_var.numpy())
    dist.destroy_process_group()


# ----------------------------------------------------------------------------- failures
def failing(rank, ws, port, mode):
    """`kill`: the last rank SIGKILLs itself mid-DDP-training; `sleep`: it stalls;
    `monitored`: it never reaches monitored_barrier. Survivors must raise and exit != 0."""
    import signal
    import sys

    import ember
    dist = _init(rank, ws, port, timeout_s=3)
    print("ready", flush=True)
    if mode == "monitored":
        if rank == ws - 1:
            time.sleep(8)
            return
        from datetime import timedelta
        dist.monitored_barrier(timeout=timedelta(seconds=2), wait_all_ranks=True)
        return
    model = ember.nn.Linear(64, 64)
    ddp = ember.nn.parallel.DistributedDataParallel(model)
    x = ember.randn(4, 64)
    for step in range(20):
        if step == 3 and rank == ws - 1:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(30)
        if mode == "kill":
            ddp(x).sum().backward()
        else:
            dist.all_reduce(ember.ones(100000))
        print("step", step, flush=True)
    sys.exit(0)


def unused_train(rank, ws, port, path, framework):
    """find_unused_parameters: a head used by no rank, one used by rank 0 only at step 1."""
    from datetime import timedelta
    if framework == "torch":
        import torch as lib
    else:
        import ember as lib
    dist = lib.distributed
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=ws, timeout=timedelta(seconds=60))

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = (lib.nn.Linear(4, 2) for _ in range(3))

        def forward(self, x, use_b):
            return self.a(x) + self.b(x) if use_b else self.a(x)

    net = Net()
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
    ddp = lib.nn.parallel.DistributedDataParallel(net, find_unused_parameters=True)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.1)
    x = lib.linspace(-1, 1, 8).reshape(2, 4) * (rank + 1)
    for step in range(3):
        opt.zero_grad()
        ddp(x, (step == 1 and rank == 0) or step == 2).pow(2).sum().backward()
        opt.step()
    out = {n: p.detach().numpy().copy() for n, p in net.named_parameters()}
    out["c_grad_is_none"] = np.array(net.c.weight.grad is None)
    out["b_grad"] = net.b.weight.grad.numpy().copy()
    np.savez(os.path.join(path, f"unused_{framework}_{rank}.npz"), **out)
    dist.destroy_process_group()


def reinit(rank, ws, port):
    """init / destroy / init again on the same address: the second group must work."""
    import ember
    for round_ in range(2):
        dist = _init(rank, ws, port, timeout_s=30)
        t = ember.full((3,), float(rank + round_))
        dist.all_reduce(t)
        assert t.tolist() == [float(sum(range(ws)) + ws * round_)] * 3
        dist.barrier()
        dist.destroy_process_group()
        if rank != 0:
            # as with PyTorch, a client that reconnects before the master has closed the
            # old store joins the old one: give rank 0 time to leave
            time.sleep(1.0)
