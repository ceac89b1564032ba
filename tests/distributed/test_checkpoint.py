"""Distributed checkpoint: 4-rank save of DTensor shards, load with 1, 2 and 3 ranks; crash safety;
model + optimizer state_dict helpers; API behaviour next to torch's DCP (single process)."""
import json
import os

import numpy as np
import pytest

import ember
import ember.distributed.checkpoint as dcp
from dcp_workers import async_save_run, dcp_load, dcp_save, dcp_save_crash, global_arrays
from dist_workers import run_world
from ember.distributed.checkpoint.state_dict import (StateDictOptions, get_state_dict,
                                                     set_state_dict)

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")


def _load_one_process(ckpt, arrays):
    sd = {k: ember.from_numpy(np.zeros_like(a)) for k, a in arrays.items()}
    sd["nested"] = {"r2": ember.zeros(4, 4), "step": 0}
    dcp.load(sd, checkpoint_id=ckpt)
    return sd


@pytest.fixture(scope="module")
def saved4(tmp_path_factory):
    path = tmp_path_factory.mktemp("dcp4")
    ckpt = str(path / "ckpt")
    run_world(dcp_save, 4, str(path), ckpt, timeout=120)
    return path, ckpt


def test_save_4_ranks_layout(saved4):
    path, ckpt = saved4
    md = json.load(open(os.path.join(ckpt, ".metadata")))
    files = sorted(f for f in os.listdir(ckpt) if f.endswith(".safetensors"))
    assert len(files) == 4 and all(f.startswith(f"__{r}_") for r, f in enumerate(files))
    # each data file is a plain safetensors file: its chunks are named fqn@offsets
    from safetensors.numpy import load_file
    chunks = {}
    for f in files:
        chunks.update(load_file(os.path.join(ckpt, f)))
    np.testing.assert_array_equal(chunks["a@4,0"], global_arrays()["a"][4:6])
    np.testing.assert_array_equal(chunks["c@0,9"], global_arrays()["c"][:, 9:])
    sdm = md["state_dict_metadata"]
    assert sdm["a"]["size"] == [7, 3] and [c["sizes"] for c in sdm["a"]["chunks"]] == \
        [[2, 3], [2, 3], [2, 3], [1, 3]]
    assert len(sdm["b"]["chunks"]) == 3                 # the empty 4th shard is not written
    assert [c["offsets"] for c in sdm["c"]["chunks"]] == [[0, 0], [0, 3], [0, 6], [0, 9]]
    assert len(sdm["r"]["chunks"]) == 1 and sdm["nested.step"] == {"type": "bytes"}
    # replicated items are written once in all
    entries = [s for s in md["storage_data"] if s["fqn"] in ("r", "s", "nested.r2",
                                                              "nested.step")]
    assert len(entries) == 4
    assert sdm["c"]["dtype"] == "float64" and sdm["i"]["dtype"] == "int64"


def test_load_with_1_rank(saved4):
    _, ckpt = saved4
    arrays = global_arrays()
    sd = _load_one_process(ckpt, arrays)
    for k, a in arrays.items():
        np.testing.assert_array_equal(sd[k].numpy(), a)
        assert sd[k].dtype == ember.from_numpy(a).dtype
    np.testing.assert_array_equal(sd["nested"]["r2"].numpy(), arrays["r"] * 2)
    assert sd["nested"]["step"] == 7


@pytest.mark.parametrize("ws", [2, 3])
def test_load_with_other_world_sizes(ws, saved4):
    path, ckpt = saved4
    run_world(dcp_load, ws, str(path), ckpt, timeout=120)
    assert all(os.path.exists(os.path.join(path, f"loaded_{ws}_{r}")) for r in range(ws))


def test_crash_mid_save_keeps_previous_checkpoint(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    run_world(dcp_save, 2, str(tmp_path), ckpt, timeout=120)
    before = set(os.listdir(ckpt))
    with pytest.raises(Exception):
        run_world(dcp_save_crash, 2, str(tmp_path), ckpt, timeout=60)
    assert len(set(os.listdir(ckpt)) - before) >= 1      # the dead save's files are there
    arrays = global_arrays()
    sd = _load_one_process(ckpt, arrays)                   # ... and ignored
    for k, a in arrays.items():
        np.testing.assert_array_equal(sd[k].numpy(), a)
    # the next good save removes the orphans
    run_world(dcp_save, 2, str(tmp_path), ckpt, timeout=120)
    assert len([f for f in os.listdir(ckpt) if f.endswith(".safetensors")]) == 2
    assert len([f for f in os.listdir(ckpt) if f.endswith(".pkl")]) == 1   # nested.step
    assert not [f for f in os.listdir(ckpt) if f.endswith(".tmp")]


def _model_and_opt(seed):
    nn = ember.nn
    ember.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return m, ember.optim.Adam(m.parameters(), lr=0.01)


def test_model_optimizer_round_trip(tmp_path):
    m, opt = _model_and_opt(0)
    for _ in range(2):
        opt.zero_grad()
        m(ember.randn(3, 4)).pow(2).sum().backward()
        opt.step()
    msd, osd = get_state_dict(m, opt)
    assert list(osd["state"]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert osd["param_groups"][0]["params"] == list(osd["state"])
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=str(tmp_path))
    m2, opt2 = _model_and_opt(1)
    msd2, osd2 = get_state_dict(m2, opt2)                  # a fresh optimizer gets its state
    dcp.load({"model": msd2, "optim": osd2}, checkpoint_id=str(tmp_path))
    set_state_dict(m2, opt2, model_state_dict=msd2, optim_state_dict=osd2)
    for a, b in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    s1, s2 = opt.state_dict()["state"], opt2.state_dict()["state"]
    for i in s1:
        for k in s1[i]:
            np.testing.assert_array_equal(np.asarray(s1[i][k]), np.asarray(s2[i][k]))
    x = ember.randn(5, 4)
    for o, mm in ((opt, m), (opt2, m2)):                    # training continues identically
        o.zero_grad()
        mm(x).sum().backward()
        o.step()
    for a, b in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert StateDictOptions().full_state_dict is False


def test_api_behaviour_like_torch(tmp_path):
    import torch.distributed.checkpoint as tdcp
    from torch.distributed.checkpoint.api import CheckpointException as TorchCE
    for lib, mod, ce in ((torch, tdcp, TorchCE), (ember, dcp, dcp.CheckpointException)):
        d = str(tmp_path / lib.__name__)
        mod.save({"a": lib.arange(6.0).reshape(2, 3), "n": {"e": 3}}, checkpoint_id=d)
        sd = {"a": lib.zeros(2, 3), "n": {"e": 0}}
        keep = sd["a"]
        mod.load(sd, checkpoint_id=d)                       # in place
        assert sd["a"] is keep and keep.sum().item() == 15.0 and sd["n"]["e"] == 3
        with pytest.raises(ce) as info:
            mod.load({"b": lib.zeros(2)}, checkpoint_id=d)
        assert issubclass(ce, BaseException) and not issubclass(ce, Exception)
        exc = list(info.value.failures.values())[0]
        exc = exc[0] if isinstance(exc, tuple) else exc
        assert isinstance(exc, RuntimeError) and "Missing key in checkpoint state_dict: b" in \
            str(exc)
        with pytest.raises(RuntimeError, match="checkpoint_id` must be specified"):
            mod.save({"a": lib.zeros(1)})
        with pytest.raises(ce):
            mod.load({"a": lib.zeros(3)}, checkpoint_id=d)  # size mismatch


def test_async_save_returns_future(tmp_path):
    sd = {"w": ember.arange(4.0)}
    fut = dcp.async_save(sd, checkpoint_id=str(tmp_path))
    sd["w"].add_(100)                                      # staged: later edits not saved
    assert isinstance(fut.result(timeout=30), dcp.Metadata)     # a concurrent Future, as torch
    out = {"w": ember.zeros(4)}
    dcp.load(out, checkpoint_id=str(tmp_path))
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(4.0, dtype=np.float32))


def test_async_save_two_ranks_while_training_collectives_run(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    run_world(async_save_run, 2, str(tmp_path), ckpt, timeout=120)
    assert os.path.exists(os.path.join(tmp_path, "loaded_2_0"))


def test_load_plan_reads_only_overlapping_regions(saved4):
    """Rank 1 of 3 holds rows 3..5 of 'a' (7 rows); saved chunks are rows 0-1, 2-3, 4-5, 6."""
    from ember.distributed.checkpoint.default_planner import create_default_local_load_plan
    from ember.distributed.checkpoint.filesystem import FileSystemReader
    from ember.distributed.tensor import DeviceMesh, DTensor, Shard
    _, ckpt = saved4
    md = FileSystemReader(ckpt).read_metadata()
    mesh = DeviceMesh("cpu", [0, 1, 2], _init_backend=False)
    mesh._coordinate = [1]                                  # act as rank 1 of 3
    target = DTensor(ember.zeros(3, 3), mesh, [Shard(0)], (7, 3))
    plan = create_default_local_load_plan({"a": target}, md)
    got = [(it.storage_index.offset, it.dest_offsets, it.storage_offsets, it.lengths)
           for it in plan.items]
    assert got == [((2, 0), (0, 0), (1, 0), (1, 3)), ((4, 0), (1, 0), (0, 0), (2, 3))]


def _as_rank(target_local, rank, ws, dim, global_shape):
    """A DTensor that holds rank `rank` of `ws`'s shard, without a process group."""
    from ember.distributed.tensor import DeviceMesh, DTensor, Shard
    mesh = DeviceMesh("cpu", list(range(ws)), _init_backend=False)
    mesh._coordinate = [rank]
    return DTensor(target_local, mesh, [Shard(dim)], global_shape)


def test_dtypes_safetensors_lacks_or_has_round_trip_and_reshard(tmp_path):
    """bool/bfloat16 natively; complex as a flagged real view, also when a region is read."""
    rs = np.random.RandomState(1)
    z128 = (rs.randn(6, 4) + 1j * rs.randn(6, 4)).astype(np.complex128)
    sd = {"bool": ember.from_numpy(rs.rand(5, 3) > 0.5),
          "bf16": ember.randn(4, 3).to(ember.bfloat16), "f16": ember.randn(3).half(),
          "i8": ember.arange(-4, 4, dtype=ember.int8), "u8": ember.arange(5, dtype=ember.uint8),
          "i16": ember.arange(6, dtype=ember.int16), "i32": ember.arange(6, dtype=ember.int32),
          "c64": ember.from_numpy(z128.astype(np.complex64)), "c128": ember.from_numpy(z128),
          "c0d": ember.tensor(1 - 2j, dtype=ember.complex128)}
    dcp.save(sd, checkpoint_id=str(tmp_path))
    md = json.load(open(tmp_path / ".metadata"))
    flagged = sorted(e["fqn"] for e in md["storage_data"] if e.get("complex"))
    assert flagged == ["c0d", "c128", "c64"]
    out = {k: ember.zeros_like(v) for k, v in sd.items()}
    dcp.load(out, checkpoint_id=str(tmp_path))
    for k, v in sd.items():
        assert out[k].dtype == v.dtype, k
        np.testing.assert_array_equal(out[k].numpy(), v.numpy(), err_msg=k)
    # the same dtypes through torch's DCP agree on values (torch reads its own format)
    import torch.distributed.checkpoint as tdcp
    tsd = {"c128": torch.from_numpy(z128), "bf16": torch.tensor(
        sd["bf16"].float().numpy()).bfloat16(), "bool": torch.from_numpy(sd["bool"].numpy())}
    tdcp.save(tsd, checkpoint_id=str(tmp_path / "torch"))
    tout = {k: torch.zeros_like(v) for k, v in tsd.items()}
    tdcp.load(tout, checkpoint_id=str(tmp_path / "torch"))
    for k in tsd:
        np.testing.assert_array_equal(tout[k].float().numpy() if k == "bf16" else
                                      tout[k].numpy(), out[k].float().numpy() if k == "bf16"
                                      else out[k].numpy())
    # resharding reads: rank 1 of 3 loads rows 2..3 of c128, columns 1 of bf16 (a region)
    rows = _as_rank(ember.zeros(2, 4, dtype=ember.complex128), 1, 3, 0, (6, 4))
    cols = _as_rank(ember.zeros(4, 1, dtype=ember.bfloat16), 1, 3, 1, (4, 3))
    dcp.load({"c128": rows, "bf16": cols}, checkpoint_id=str(tmp_path), no_dist=True,
             planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    np.testing.assert_array_equal(rows.to_local().numpy(), z128[2:4])
    np.testing.assert_array_equal(cols.to_local().numpy(), sd["bf16"].numpy()[:, 1:2])


def test_missing_safetensors_raises_import_error_naming_the_extra(tmp_path, monkeypatch):
    import subprocess
    import sys
    code = ("import sys; sys.modules['safetensors'] = None\n"
            "import ember, ember.distributed.checkpoint as dcp\n"     # importing needs no package
            "try:\n    dcp.save({'a': ember.ones(2)}, checkpoint_id=sys.argv[1])\n"
            "except ImportError as e:\n    print('IMPORTERROR', e)\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "IMPORTERROR" in r.stdout and "ember[distributed]" in r.stdout \
        and "safetensors" in r.stdout
    assert not os.listdir(tmp_path)                            # nothing half-written


LAZY = """
import sys
import ember, ember.distributed.checkpoint as dcp
from ember.distributed.tensor import DeviceMesh, DTensor, Shard
def hwm():                      # peak RSS since the last reset, bytes
    return next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
                if line.startswith("VmHWM"))
n = int(sys.argv[2])
mesh = DeviceMesh("cpu", [0, 1, 2, 3], _init_backend=False)
mesh._coordinate = [2]
target = DTensor(ember.zeros(n, n), mesh, [Shard(0)], (4 * n, n))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")                # resets VmHWM to the current RSS
before = hwm()
dcp.load({"w": target}, checkpoint_id=sys.argv[1], no_dist=True)
print(hwm() - before, target.to_local().sum().item())
"""


def test_load_reads_only_the_needed_quarter_of_a_chunk(tmp_path):
    """Rank 2 of 4 loads a quarter of the rows of one 64 MiB saved chunk: peak RSS grows by
    the region's mapped pages plus its copy (~2 x 16 MiB), not by the chunk (a whole-chunk
    read: +80 MiB). Measured at 256 MiB: +129 MiB lazy."""
    import subprocess
    import sys
    if not os.access("/proc/self/clear_refs", os.W_OK):
        pytest.skip("needs Linux /proc/self/clear_refs to reset the peak RSS")
    n = 2048
    w = np.arange(4 * n * n, dtype=np.float32).reshape(4 * n, n)
    dcp.save({"w": ember.from_numpy(w)}, checkpoint_id=str(tmp_path), no_dist=True)
    expect = float(w[2 * n:3 * n].astype(np.float64).sum())
    del w
    r = subprocess.run([sys.executable, "-c", LAZY, str(tmp_path), str(n)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    grew, total = r.stdout.split()
    chunk = 4 * n * n * 4
    assert float(total) == pytest.approx(expect, rel=1e-6)
    assert int(grew) < 0.75 * chunk, (int(grew), chunk)


def test_stateful_values_like_torch(tmp_path):
    """nn.Module / optimizer values are Stateful: saved via state_dict(), loaded back in."""
    for lib, mod in ((torch, __import__("torch.distributed.checkpoint").distributed.checkpoint),
                     (ember, dcp)):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        assert isinstance(m, mod.stateful.Stateful)
        d = str(tmp_path / lib.__name__)
        mod.save({"model": m, "step": 5}, checkpoint_id=d)
        m2 = lib.nn.Linear(3, 2)
        sd = {"model": m2, "step": 0}
        mod.load(sd, checkpoint_id=d)
        assert sd["model"] is m2 and sd["step"] == 5
        np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
        m3 = lib.nn.Linear(3, 2)
        mod.async_save({"model": m}, checkpoint_id=d + "_async").result(timeout=60)
        mod.load({"model": m3}, checkpoint_id=d + "_async")
        np.testing.assert_array_equal(m3.bias.detach().numpy(), m.bias.detach().numpy())


TORCH_DCP_SCRIPT = r'''
# An unmodified PyTorch program (the DCP tutorial's pattern): FSDP2 (fully_shard) or DDP
# training, checkpointed with torch.distributed.checkpoint, resumed by a second launch.
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                     get_state_dict, set_state_dict)
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel as DDP


class AppState(Stateful):
    """The DCP tutorial's wrapper: dcp.save/load call its state_dict/load_state_dict."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def state_dict(self):
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        return {"model": model_sd, "optim": optim_sd}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                       optim_state_dict=state_dict["optim"])


def build(kind, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    if kind == "fsdp":
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
    else:
        model = DDP(model)
    return model, torch.optim.Adam(model.parameters(), lr=0.01)


def train(model, opt, steps, start, rank):
    losses = []
    for i in range(start, start + steps):
        g = torch.Generator().manual_seed(1000 * i + rank)
        x, y = torch.randn(4, 8, generator=g), torch.randn(4, 4, generator=g)
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def full_params(model):
    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    return {k: v.detach().flatten().tolist() for k, v in sd.items()}


def main():
    # save: train 3 steps, checkpoint, train 2 more. resume (a new launch, so a fresh
    # process group): fresh model and optimizer, load the checkpoint, train the same 2 steps.
    kinds, mode, ckpt, out = sys.argv[1].split(","), sys.argv[2], sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    report = {"world": dist.get_world_size(), "torch": torch.__name__,
              "impl": type(torch.ones(1)).__module__}
    for kind in kinds:
        model, opt = build(kind, seed=0 if mode == "save" else 1)
        path, rep = os.path.join(ckpt, kind), report.setdefault(kind, {})
        if mode == "save":
            train(model, opt, 3, 0, rank)
            dcp.save({"app": AppState(model, opt)}, checkpoint_id=path)
            rep["saved"] = full_params(model)
        else:
            rep["fresh"] = full_params(model)
            dcp.load({"app": AppState(model, opt)}, checkpoint_id=path)
            rep["loaded"] = full_params(model)
        rep["losses"] = train(model, opt, 2, 3, rank)
        rep["end"] = full_params(model)
    with open(f"{out}.{rank}.json", "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def test_unmodified_torch_dcp_script_under_ember_launcher(tmp_path):
    """A plain-PyTorch FSDP2 and DDP program saves with torch.distributed.checkpoint under
    `python -m ember.distributed.run`; a second launch (a fresh process group, differently
    initialised models) loads it and trains on exactly as the first run went on."""
    import subprocess
    import sys
    script = tmp_path / "train_dcp.py"
    script.write_text(TORCH_DCP_SCRIPT)
    ckpt, out = str(tmp_path / "ckpt"), str(tmp_path / "out")
    for mode in ("save", "resume"):
        r = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--standalone",
                            "--nproc-per-node=2", str(script), "fsdp,ddp", mode, ckpt,
                            f"{out}_{mode}"], capture_output=True, text=True, timeout=120,
                           cwd=str(tmp_path))
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for rank in range(2):
        saved = json.load(open(f"{out}_save.{rank}.json"))
        resumed = json.load(open(f"{out}_resume.{rank}.json"))
        assert saved["torch"] == "torch" and saved["impl"].startswith("ember")
        assert saved["world"] == resumed["world"] == 2
        for kind in ("fsdp", "ddp"):
            s, r = saved[kind], resumed[kind]
            assert r["fresh"] != s["saved"]                     # the load had work to do
            assert r["loaded"] == s["saved"], kind
            assert r["losses"] == s["losses"], kind             # Adam's moments came back too
            assert r["end"] == s["end"], kind
    for kind in ("fsdp", "ddp"):                                # safetensors data files
        files = os.listdir(os.path.join(ckpt, kind))
        assert [f for f in files if f.endswith(".safetensors")] and ".metadata" in files
