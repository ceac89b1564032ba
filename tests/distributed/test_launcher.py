"""`python -m ember.distributed.run` (torchrun's flags): environment, restarts with the
failing rank's traceback, resume from a checkpoint after SIGKILL, nodes joining and leaving."""
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from ember.distributed.run import config_from_args, parse_args

LAUNCH = [sys.executable, "-m", "ember.distributed.run"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _script(tmp_path, name, code):
    p = tmp_path / name
    p.write_text(textwrap.dedent(code))
    return str(p)


def _launch(args, timeout=60, **kw):
    return subprocess.run(LAUNCH + args, capture_output=True, text=True, timeout=timeout, **kw)


ENV_SCRIPT = """
    import json, os, sys
    import torch
    from torch.distributed.elastic.multiprocessing.errors import record
    KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
            "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT",
            "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID"]

    @record
    def main():
        # one write per line: print() writes the text and the newline separately, and two
        # workers share the launcher's stdout
        sys.stdout.write(json.dumps({k: os.environ[k] for k in KEYS}) + "\\n")
        sys.stdout.flush()
        if sys.argv[1:] == ["fail"] and os.environ["RANK"] == "1":
            raise ValueError("boom from rank " + os.environ["RANK"])
        assert torch.__name__ == "torch" and torch.ones(1).__class__.__module__.startswith("ember")

    main()
"""


def test_flags_both_spellings_and_defaults():
    a = parse_args(["--nproc_per_node=3", "--max-restarts", "2", "--nnodes", "1:4",
                    "--rdzv_backend=c10d", "--rdzv-endpoint=localhost:1234", "-r", "3",
                    "--tee=0:1,2:2", "train.py", "--lr", "0.1"])
    spec, nodes, endpoint, _ = config_from_args(a)
    assert spec.nproc == 3 and spec.max_restarts == 2 and nodes == (1, 4)
    assert endpoint == ("localhost", 1234)
    assert spec.redirects == {0: 3, 1: 3, 2: 3} and spec.tee == {0: 1, 2: 2}
    assert spec.entrypoint[-3:] == ["train.py", "--lr", "0.1"]
    with pytest.raises(ValueError, match="static"):
        config_from_args(parse_args(["--nnodes=1:2", "x.py"]))
    with pytest.raises(ValueError, match="rdzv-endpoint"):
        config_from_args(parse_args(["--rdzv-backend=c10d", "x.py"]))


def test_workers_get_torchruns_environment(tmp_path):
    script = _script(tmp_path, "env.py", ENV_SCRIPT)
    out = _launch(["--standalone", "--nproc-per-node=2", script])
    assert out.returncode == 0, out.stderr
    envs = sorted((json.loads(line) for line in out.stdout.splitlines()),
                  key=lambda e: int(e["RANK"]))
    assert [e["RANK"] for e in envs] == ["0", "1"] and [e["LOCAL_RANK"] for e in envs] == \
        ["0", "1"]
    for e in envs:
        assert e["WORLD_SIZE"] == e["LOCAL_WORLD_SIZE"] == "2" and e["GROUP_RANK"] == "0"
        assert e["ROLE_NAME"] == "default" and e["TORCHELASTIC_RESTART_COUNT"] == "0"
        assert e["MASTER_ADDR"] == "127.0.0.1" and int(e["MASTER_PORT"]) > 0
    assert envs[0]["MASTER_PORT"] == envs[1]["MASTER_PORT"]


def test_failure_restarts_then_reports_the_root_cause(tmp_path):
    script = _script(tmp_path, "env.py", ENV_SCRIPT)
    out = _launch(["--standalone", "--nproc-per-node=2", "--max-restarts=1", script, "fail"])
    assert out.returncode == 1
    # rank 1 prints, then fails, in each attempt: the group ran twice (rank 0 may be
    # stopped before it prints, so only the failing rank's lines are certain)
    runs = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted(e["TORCHELASTIC_RESTART_COUNT"] for e in runs if e["RANK"] == "1") == \
        ["0", "1"]
    assert {e["TORCHELASTIC_RESTART_COUNT"] for e in runs} <= {"0", "1"}
    err = out.stderr
    assert "ChildFailedError" in err and "Root Cause (first observed failure)" in err
    assert "rank      : 1 (local_rank: 1)" in err and "exitcode  : 1" in err
    assert "ValueError: boom from rank 1" in err.split("Root Cause")[1]   # from the error file


def test_log_dir_redirects_and_tee(tmp_path):
    script = _script(tmp_path, "env.py", ENV_SCRIPT)
    logs = tmp_path / "logs"
    out = _launch(["--standalone", "--nproc-per-node=2", f"--log-dir={logs}", "--redirects=1",
                   "--tee=0:1", script])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[default0]:{")   # rank 1 went to its file
    files = sorted(p.relative_to(logs).parts[1:] for p in logs.rglob("stdout.log"))
    assert files == [("attempt_0", "0", "stdout.log"), ("attempt_0", "1", "stdout.log")]
    for p in logs.rglob("stdout.log"):
        assert json.loads(p.read_text())["WORLD_SIZE"] == "2"


TRAIN = """
    import os, signal, sys
    import torch
    from torch.distributed.elastic.multiprocessing.errors import record

    @record
    def main():
        ckpt, out = sys.argv[1], sys.argv[2]
        g = torch.Generator().manual_seed(0)
        x = torch.randn(64, 4, generator=g)
        y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
        model = torch.nn.Linear(4, 1)
        with torch.no_grad():
            model.weight.zero_()
            model.bias.zero_()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        start = 0
        if os.path.exists(ckpt):
            state = torch.load(ckpt)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            start = state["epoch"] + 1
        for epoch in range(start, 4):
            for i in range(8):
                if (epoch == 2 and i == 3 and os.environ.get("KILL") == "1"
                        and os.environ["TORCHELASTIC_RESTART_COUNT"] == "0"):
                    os.kill(os.getpid(), signal.SIGKILL)        # dies mid-epoch
                loss = ((model(x[i * 8:(i + 1) * 8]) - y[i * 8:(i + 1) * 8]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                        "epoch": epoch}, ckpt)
        torch.save(model.state_dict(), out)

    main()
"""


def test_sigkilled_worker_resumes_from_checkpoint(tmp_path):
    import ember
    script = _script(tmp_path, "train.py", TRAIN)
    runs = {}
    for kill in ("0", "1"):
        ckpt, out = tmp_path / f"ckpt{kill}.pt", tmp_path / f"final{kill}.pt"
        res = _launch(["--standalone", "--nproc-per-node=1", "--max-restarts=2", script,
                       str(ckpt), str(out)], env={**os.environ, "KILL": kill})
        assert res.returncode == 0, res.stderr
        runs[kill] = ember.load(out)
        if kill == "1":
            assert "restart 1/2" in res.stderr and "SIGKILL" not in res.stdout
    for k in runs["0"]:
        assert ember.equal(runs["0"][k], runs["1"][k]), k


NODE_SCRIPT = """
    import json, os, sys, time
    out, stop = sys.argv[1], sys.argv[2]
    with open(os.path.join(out, f"{os.environ['GROUP_RANK']}-{os.getpid()}.json"), "w") as f:
        json.dump({k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "GROUP_RANK")}, f)
    while not os.path.exists(stop):
        time.sleep(0.05)
"""


def _wait_for(pred, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the launcher")


def _world_sizes(out_dir):
    seen = []
    for p in sorted(out_dir.iterdir(), key=lambda p: p.stat().st_mtime):
        try:
            seen.append(json.loads(p.read_text()))
        except ValueError:
            pass
    return seen


def test_nodes_joining_and_leaving_reform_the_group(tmp_path):
    """Two launchers on this host stand in for two nodes (--nnodes=1:2, c10d rendezvous)."""
    script = _script(tmp_path, "node.py", NODE_SCRIPT)
    out_dir, stop = tmp_path / "out", tmp_path / "stop"
    out_dir.mkdir()
    port = _free_port()
    args = LAUNCH + ["--nnodes=1:2", "--nproc-per-node=1", "--rdzv-backend=c10d",
                     f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=job1",
                     "--rdzv-conf=last_call_timeout=0.5,heartbeat_timeout=1.5",
                     script, str(out_dir), str(stop)]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    second = None
    try:
        _wait_for(lambda: any(e["WORLD_SIZE"] == "1" for e in _world_sizes(out_dir)))
        second = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        both = _wait_for(lambda: [e for e in _world_sizes(out_dir) if e["WORLD_SIZE"] == "2"]
                         if len([e for e in _world_sizes(out_dir)
                                 if e["WORLD_SIZE"] == "2"]) == 2 else None)
        assert sorted(e["RANK"] for e in both) == ["0", "1"]
        n_before = len(_world_sizes(out_dir))
        second.send_signal(signal.SIGKILL)               # a node leaves (its workers die too)
        second.wait(10)
        _wait_for(lambda: len(_world_sizes(out_dir)) > n_before and
                  _world_sizes(out_dir)[-1]["WORLD_SIZE"] == "1")
        stop.write_text("")
        assert first.wait(30) == 0, first.stderr.read().decode()
    finally:
        stop.write_text("")
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
