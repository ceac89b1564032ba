"""Workers for tests/distributed/test_dist_compile.py: DDP with ember.compile (issue 13
point 8), on spawned gloo ranks."""
import json
import os

import numpy as np


def ddp_compiled_train(rank, ws, port, path, mode):
    """Train an MLP under DDP with a compiled backward (aot_eager), graphs split at bucket
    boundaries; save the parameters and the order of backward pieces and all-reduces."""
    from datetime import timedelta
    import ember
    import ember.distributed as dist
    from ember._functorch.aot_autograd import aot_module_simplified, make_boxed_func
    from ember.nn.parallel import _reducer
    data = np.load(os.path.join(path, "data.npz"))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=ws, timeout=timedelta(seconds=60))
    nn = ember.nn
    model = nn.Sequential(nn.Linear(8, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 4))
    for name, p in model.named_parameters():
        p.data.copy_(ember.from_numpy(data["p." + name].copy()))
    events, graphs = [], []

    def logged(tag):
        def compiler(gm, example_inputs):
            def run(args):
                events.append(tag)
                return gm.forward(*args)
            return make_boxed_func(lambda *a: run(a))
        return compiler

    def backend(gm, example_inputs):
        graphs.append(len([n for n in gm.graph.nodes if n.op == "call_function"]))
        return aot_module_simplified(gm, example_inputs, fw_compiler=logged("fw"),
                                     bw_compiler=logged("bw"))

    real_run = _reducer.Reducer._run_hook

    def run_hook(self, bucket, last):
        events.append("allreduce")
        return real_run(self, bucket, last)

    _reducer.Reducer._run_hook = run_hook
    cap = 0.0005            # ~500 bytes: small buckets after DDP's 1 MB first bucket
    if mode == "compile_ddp":
        ddp = ember.compile(nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap),
                            backend=backend)
    else:                   # DDP around a compiled module
        ddp = nn.parallel.DistributedDataParallel(ember.compile(model, backend=backend),
                                                  bucket_cap_mb=cap)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    X, Y = data["X"], data["Y"]
    B = X.shape[1] // ws
    for step in range(int(data["steps"])):
        xs = ember.from_numpy(X[step, rank * B:(rank + 1) * B].copy())
        ys = ember.from_numpy(Y[step, rank * B:(rank + 1) * B].copy())
        opt.zero_grad()
        del events[:]
        nn.functional.mse_loss(ddp(xs), ys).backward()
        opt.step()
    out = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    np.savez(os.path.join(path, f"{mode}_{rank}.npz"), **out)
    with open(os.path.join(path, f"{mode}_{rank}.json"), "w") as f:
        json.dump({"events": events, "graphs": graphs}, f)
    dist.destroy_process_group()
