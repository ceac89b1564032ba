"""An unmodified PyTorch DDP script (torch.multiprocessing.spawn + gloo) under `ember run`
gives the same weights as under PyTorch."""
import json
import os
import subprocess
import sys

import pytest

from dist_workers import free_port

pytest.importorskip("torch")

SCRIPT = '''
import json
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train(rank, world_size, port, out):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    xs = torch.linspace(-1, 1, 64).reshape(16, 4)
    ys = xs.sum(1, keepdim=True) ** 2
    sampler = DistributedSampler(TensorDataset(xs, ys), shuffle=True, seed=3)
    loader = DataLoader(TensorDataset(xs, ys), batch_size=4, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"impl": type(model).__module__.split(".")[0],
                       "params": [p.detach().reshape(-1).tolist()
                                  for p in model.parameters()]}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(train, args=(2, int(sys.argv[1]), sys.argv[2]), nprocs=2, join=True)
'''


def test_unmodified_torch_ddp_script_under_ember_run(tmp_path):
    script = tmp_path / "ddp_script.py"
    script.write_text(SCRIPT)
    results = {}
    for how, cmd in (("ember", [sys.executable, "-m", "ember", "run"]),
                     ("torch", [sys.executable])):
        out = tmp_path / f"{how}.json"
        proc = subprocess.run(cmd + [str(script), str(free_port()), str(out)],
                              capture_output=True, text=True, timeout=180,
                              env=dict(os.environ, PYTHONPATH=os.getcwd()))
        assert proc.returncode == 0, proc.stderr
        results[how] = json.loads(out.read_text())
        assert results[how]["impl"] == how        # the spawned child really ran on ember
    for e, t in zip(results["ember"]["params"], results["torch"]["params"]):
        assert e == pytest.approx(t, rel=1e-5, abs=1e-6)
