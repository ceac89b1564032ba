"""ember.distributed vs PyTorch's gloo, side by side in one run (a few minutes).

Measures, on this machine's loopback:
1. all_reduce bus bandwidth (bytes * 2(n-1)/n / time) for 4 KB - 64 MB float32 tensors
   with 2 and 4 processes: ember "gloo" (TCP), ember "mpi" (mpiexec) and PyTorch gloo;
   ratios are ember / torch.
2. DDP step time of a ResNet-18 on 2 processes, ember vs PyTorch, and the overlap:
   the same step without communication (`no_sync`) and the bucket all-reduces alone; with
   overlap, step(DDP) < step(no_sync) + comm.
3. Launcher restart latency: a 2-worker job under `python -m ember.distributed.run` and
   under torchrun (same flags, --monitor-interval 0.1) whose rank 0 exits with an error;
   the time from that exit until both workers of the restarted group have imported
   `torch` (ember under ember's launcher) and run their first line.
The machine is shared, so every measurement is repeated in rounds that alternate the
libraries (ember, torch, ember, ...) and the best of the rounds is kept for each.
Writes benchmarks/results/distributed.json and distributed.md and prints the tables.
Usage: python benchmarks/distributed.py [--quick] [--rounds N]
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


RESULTS = Path(__file__).resolve().parent / "results"
SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lib(name):
    if name == "torch":
        import torch
        torch.set_num_threads(1)
        return torch
    import ember
    return ember


def _time_allreduce(L, dist, nbytes, budget):
    t = L.ones(nbytes // 4)
    for _ in range(2):
        dist.all_reduce(t)
    dist.barrier()
    iters, start = 0, time.perf_counter()
    while True:
        dist.all_reduce(t)
        iters += 1
        elapsed = time.perf_counter() - start
        # every rank must run the same number of iterations: rank 0 decides
        flag = L.tensor([1.0 if elapsed < budget and iters < 200 else 0.0])
        dist.broadcast(flag, src=0)
        if flag.item() == 0:
            break
    # time again without the decision broadcasts
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t)
    return (time.perf_counter() - start) / iters


def allreduce_worker(rank, ws, port, lib, out, budget):
    L = _lib(lib)
    dist = L.distributed
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=ws)
    res = {n: _time_allreduce(L, dist, n, budget) for n in SIZES}
    if rank == 0:
        with open(out, "w") as f:
            json.dump(res, f)
    dist.destroy_process_group()


def _mpi_worker(out, budget):
    import ember
    dist = ember.distributed
    dist.init_process_group("mpi")
    res = {n: _time_allreduce(ember, dist, n, budget) for n in SIZES}
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(res, f)


# ----------------------------------------------------------------------------- DDP
def _resnet(L):
    """ResNet-18 (torchvision's layout: BasicBlocks [2, 2, 2, 2], 64-512 channels), written
    once against either library, 10 classes."""
    nn = L.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None if stride == 1 and cin == cout else nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = L.relu(self.b1(self.c1(x)))
            return L.relu((x if self.down is None else self.down(x)) + self.b2(self.c2(y)))

    layers, cin = [], 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                         nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(512, 10))


def ddp_worker(rank, ws, port, lib, out, steps):
    L = _lib(lib)
    dist = L.distributed
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=ws)
    L.manual_seed(0)
    model = _resnet(L)
    ddp = L.nn.parallel.DistributedDataParallel(model)     # PyTorch's 25 MB buckets
    opt = L.optim.SGD(ddp.parameters(), lr=0.01)
    x, y = L.randn(8, 3, 64, 64), L.randint(0, 10, (8,))

    def step():
        opt.zero_grad()
        L.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()

    def timed(fn):
        fn()
        dist.barrier()
        best = float("inf")
        for _ in range(steps):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
            dist.barrier()
        return best

    def nosync():
        with ddp.no_sync():
            step()

    grads = [p for p in model.parameters()]

    def comm_only():            # the same bytes, all-reduced after the fact
        for p in grads:
            dist.all_reduce(p.grad)

    res = {"ddp_step": timed(step), "nosync_step": timed(nosync), "comm_only": timed(comm_only),
           "params": sum(p.numel() for p in grads)}
    if rank == 0:
        with open(out, "w") as f:
            json.dump(res, f)
    dist.destroy_process_group()


def _spawn(fn, ws, *args):
    """Run fn on ws processes; once more if one dies of a signal (torch's gloo has aborted
    under load here: "terminate called without an active exception")."""
    import ember.multiprocessing as mp
    for attempt in range(2):
        try:
            mp.start_processes(fn, args=(ws, _port()) + args, nprocs=ws, start_method="spawn")
            return
        except mp.ProcessExitedException as e:
            if attempt or e.signal_name is None:
                raise
            print(f"benchmark worker died ({e}); running it once more", file=sys.stderr)


# ----------------------------------------------------------------------------- launcher
RESTART_SCRIPT = """
import os, sys, time
import torch    # under ember's launcher this is ember: both restart into a ready framework
path = os.path.join(sys.argv[1], f"{os.environ['TORCHELASTIC_RESTART_COUNT']}-{os.environ['RANK']}")
with open(path, "w") as f:
    f.write(repr(time.time()))
if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
    if os.environ["RANK"] == "0":
        sys.exit(1)
    time.sleep(60)
"""


def restart_latency(lib, tmp):
    """Seconds from rank 0's failing exit to the last restarted worker's first line."""
    d = tempfile.mkdtemp(dir=tmp)
    script = os.path.join(d, "worker.py")
    with open(script, "w") as f:
        f.write(RESTART_SCRIPT)
    mod = "ember.distributed.run" if lib == "ember" else "torch.distributed.run"
    subprocess.run([sys.executable, "-m", mod, "--standalone", "--nproc-per-node=2",
                    "--max-restarts=1", "--monitor-interval=0.1", script, d], check=True,
                   capture_output=True, timeout=300)

    def stamp(name):
        with open(os.path.join(d, name)) as f:
            return float(f.read())
    # rank 0 wrote its stamp just before exiting: the exit follows within microseconds
    return max(stamp("1-0"), stamp("1-1")) - stamp("0-0")


def _best_allreduce(old, new):
    """Per size, the fastest time of the rounds so far."""
    return new if old is None else {k: min(v, new[k]) for k, v in old.items()}


def main():
    quick = "--quick" in sys.argv
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else \
        (1 if quick else 3)
    budget = 0.15 if quick else 0.4
    tmp = tempfile.mkdtemp()
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    table, ddp, restart = {}, {}, {}
    for rnd in range(rounds):
        for ws in (2, 4):
            for lib in ("ember", "torch"):
                out = os.path.join(tmp, f"ar_{lib}_{ws}_{rnd}.json")
                _spawn(allreduce_worker, ws, lib, out, budget)
                key = (f"{lib}-gloo", ws)
                table[key] = _best_allreduce(table.get(key), json.load(open(out)))
            out = os.path.join(tmp, f"ar_mpi_{ws}_{rnd}.json")
            if os.path.exists(mpiexec):
                subprocess.run([mpiexec, "--oversubscribe", "-n", str(ws), sys.executable,
                                __file__, "--mpi-worker", out, str(budget)], env=env,
                               check=True, timeout=600)
                key = ("ember-mpi", ws)
                table[key] = _best_allreduce(table.get(key), json.load(open(out)))
        for lib in ("ember", "torch"):
            out = os.path.join(tmp, f"ddp_{lib}_{rnd}.json")
            _spawn(ddp_worker, 2, lib, out, 3 if quick else 6)
            new = json.load(open(out))
            ddp[lib] = new if lib not in ddp else \
                {k: min(v, new[k]) if k != "params" else v for k, v in ddp[lib].items()}
            secs = restart_latency(lib, tmp)
            restart[lib] = min(restart.get(lib, secs), secs)
    _report(table, ddp, restart, rounds)


def _busbw(nbytes, secs, ws):
    return nbytes * 2 * (ws - 1) / ws / secs / 1e9


def _report(table, ddp, restart, rounds):
    lines = ["# ember.distributed vs PyTorch gloo (loopback, this machine)", "",
             f"{os.cpu_count()} cores, shared with other jobs; best of {rounds} rounds that "
             f"alternate the libraries.", "",
             "## all_reduce bus bandwidth (GB/s); ratio = ember / torch", ""]
    data = {"allreduce": {}, "ddp": ddp, "restart_s": restart, "rounds": rounds}
    for ws in (2, 4):
        libs = [k for k in ("ember-gloo", "ember-mpi", "torch-gloo") if (k, ws) in table]
        lines += [f"### {ws} processes", "",
                  "| size | " + " | ".join(libs) + " | gloo ratio | mpi ratio |",
                  "|---" * (len(libs) + 3) + "|"]
        for n in SIZES:
            bw = {k: _busbw(n, table[(k, ws)][str(n)], ws) for k in libs}
            data["allreduce"].setdefault(str(ws), {})[n] = bw
            ratio = bw["ember-gloo"] / bw["torch-gloo"]
            mratio = (f"{bw['ember-mpi'] / bw['torch-gloo']:.2f}" if "ember-mpi" in bw
                      else "-")
            size = f"{n >> 10} KB" if n < (1 << 20) else f"{n >> 20} MB"
            lines.append(f"| {size} | " + " | ".join(f"{bw[k]:.3f}" for k in libs)
                         + f" | {ratio:.2f} | {mratio} |")
        lines.append("")
    lines += ["## DDP step, ResNet-18, batch 8x3x64x64, 2 processes (ms, best of n)", "",
              "| lib | DDP step | step without comm (no_sync) | all-reduces alone | "
              "hidden by overlap |", "|---|---|---|---|---|"]
    for lib, r in ddp.items():
        hidden = r["nosync_step"] + r["comm_only"] - r["ddp_step"]
        lines.append(f"| {lib} | {r['ddp_step'] * 1e3:.1f} | {r['nosync_step'] * 1e3:.1f} | "
                     f"{r['comm_only'] * 1e3:.1f} | {hidden * 1e3:.1f} |")
    lines.append(f"\nDDP step ratio ember / torch: "
                 f"{ddp['ember']['ddp_step'] / ddp['torch']['ddp_step']:.2f}")
    lines += ["", "## Launcher restart latency (2 workers, rank 0 fails, --max-restarts 1)", "",
              "| launcher | failure -> restarted group running (s) |", "|---|---|",
              f"| ember.distributed.run | {restart['ember']:.2f} |",
              f"| torchrun | {restart['torch']:.2f} |", "",
              f"ratio ember / torch: {restart['ember'] / restart['torch']:.2f}"]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    for name, payload in (("distributed.json", json.dumps(data, indent=1, default=str)),
                          ("distributed.md", text)):
        tmp = RESULTS / (name + ".tmp")
        tmp.write_text(payload)
        os.replace(tmp, RESULTS / name)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--mpi-worker":
        _mpi_worker(sys.argv[2], float(sys.argv[3]))
    else:
        main()
