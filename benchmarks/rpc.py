"""RPC round trips on loopback: ember (ZeroMQ) vs PyTorch (TensorPipe), in one run.

Writes benchmarks/results/rpc.json and rpc.md and prints the table. For each library,
two processes are started (spawn); worker0 times `rpc_sync(worker1, echo, (x,))` for a
no-op call and for 1 MB and 64 MB float32 tensors that travel both ways. Libraries run
alternately, three times each (the machine is shared); the table keeps the best median.
ember also reports the array-data copies its wire layer made per round trip, and the
throughput of a parameter server stepped by 1 vs 4 trainers at once (distributed autograd
+ DistributedOptimizer).
"""
import json
import multiprocessing as mp
import os
import socket
import statistics
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = {"no-op": None, "1 MB": 2 ** 18, "64 MB": 2 ** 24}
ITERS = {"no-op": 300, "1 MB": 60, "64 MB": 8}


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def echo(x=None):
    return x


def _rpc_module(lib):
    if lib == "torch":
        import torch
        import torch.distributed.rpc as rpc
        return torch, rpc
    import ember
    import ember.distributed.rpc as rpc
    return ember, rpc


def _latency_worker(rank, lib, port, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
    L, rpc = _rpc_module(lib)
    if lib == "torch":
        L.set_num_threads(1)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=4, rpc_timeout=120)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=2, rpc_backend_options=opts)
    if rank == 0:
        out = {}
        for name, n in SIZES.items():
            args = () if n is None else (L.ones(n),)
            for _ in range(3):
                rpc.rpc_sync("worker1", echo, args=args)
            if lib == "ember":
                from ember.distributed.rpc import _wire
                c0 = dict(_wire.COPIES)
            ts = []
            for _ in range(ITERS[name]):
                t0 = time.perf_counter()
                rpc.rpc_sync("worker1", echo, args=args)
                ts.append(time.perf_counter() - t0)
            out[name] = statistics.median(ts)
            if lib == "ember":
                out[name + " copies"] = (_wire.COPIES["send"] + _wire.COPIES["recv"]
                                         - c0["send"] - c0["recv"]) / ITERS[name]
        q.put(out)
    rpc.shutdown()


# -- parameter server throughput -----------------------------------------------------
def _ps_forward(net_rref, x):
    """Forward on clones of the weights: a trainer's saved tensors must not be the
    parameters other trainers update in place meanwhile (that backward would fail the
    in-place version check, in PyTorch as in ember); gradients still reach the params."""
    import ember.nn.functional as F
    w1, b1, w2, b2 = (p.clone() for p in net_rref.local_value().parameters())
    return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)


def _param_rrefs(net_rref):
    import ember.distributed.rpc as rpc
    return [rpc.RRef(p) for p in net_rref.local_value().parameters()]


def _train(net_rref, steps):
    import ember
    import ember.distributed.autograd as dist_autograd
    import ember.distributed.rpc as rpc
    from ember.distributed.optim import DistributedOptimizer
    params = rpc.rpc_sync(net_rref.owner(), _param_rrefs, args=(net_rref,))
    opt = DistributedOptimizer(ember.optim.SGD, params, lr=0.01)
    x, y = ember.randn(64, 256), ember.randn(64, 10)
    t0 = time.perf_counter()
    for _ in range(steps):
        with dist_autograd.context() as cid:
            out = rpc.rpc_sync(net_rref.owner(), _ps_forward, args=(net_rref, x))
            loss = ember.nn.functional.mse_loss(out, y)
            dist_autograd.backward(cid, [loss])
            opt.step(cid)
    return time.perf_counter() - t0


def _ps_worker(rank, ws, port, steps, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
    import ember
    import ember.distributed.rpc as rpc
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=120)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=ws, rpc_backend_options=opts)
    if rank == 0:
        net = ember.nn.Sequential(ember.nn.Linear(256, 512), ember.nn.ReLU(),
                                  ember.nn.Linear(512, 10))
        ref = rpc.RRef(net)
        t0 = time.perf_counter()
        futs = [rpc.rpc_async(k, _train, args=(ref, steps)) for k in range(1, ws)]
        for f in futs:
            f.wait()
        wall = time.perf_counter() - t0
        q.put((ws - 1) * steps / wall)
    rpc.shutdown()


def _run(target, n, *args):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = _port()
    procs = [ctx.Process(target=target, args=(r,) + args[:1] + (port,) + args[1:] + (q,))
             for r in range(n)] if target is _latency_worker else \
        [ctx.Process(target=target, args=(r, n, port) + args + (q,)) for r in range(n)]
    for p in procs:
        p.start()
    res = q.get(timeout=600)
    for p in procs:
        p.join(120)
    return res


def main():
    results = {"ember": {}, "torch": {}}
    for _ in range(3):
        for lib in ("ember", "torch"):
            r = _run(_latency_worker, 2, lib)
            for k, v in r.items():
                old = results[lib].get(k)
                results[lib][k] = v if old is None or k.endswith("copies") else min(old, v)
    ps = {n: _run(_ps_worker, n + 1, 20) for n in (1, 4)}
    rows = ["| payload | ember (ms) | torch TensorPipe (ms) | ember / torch | "
            "ember data copies on worker0 (0 per send, 1 per receive) |",
            "|---|---|---|---|---|"]
    for name in SIZES:
        e, t = results["ember"][name], results["torch"][name]
        rows.append(f"| {name} round trip | {e * 1e3:.3f} | {t * 1e3:.3f} | {e / t:.2f} | "
                    f"{results['ember'][name + ' copies']:.0f} |")
    rows.append("")
    rows.append(f"Parameter server (ember): 1 trainer {ps[1]:.1f} steps/s, 4 trainers at once "
                f"{ps[4]:.1f} steps/s in total ({ps[4] / ps[1]:.2f}x), on "
                f"{os.cpu_count()} cores.")
    table = "\n".join(rows)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    data = {"latency_s": results, "ps_steps_per_s": ps, "cpus": os.cpu_count(),
            "python": sys.version.split()[0]}
    for name, text in (("rpc.json", json.dumps(data, indent=1)), ("rpc.md", table + "\n")):
        tmp = RESULTS / (name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, RESULTS / name)


if __name__ == "__main__":
    main()
