"""Hang and failure detection: a dead or stalled rank makes every survivor raise within the
timeout, naming the collective, its sequence number and the missing ranks, and exit != 0."""
import os
import subprocess
import sys
import time

import pytest

from dist_workers import free_port

HERE = os.path.dirname(os.path.abspath(__file__))


def _launch(mode, ws=3):
    port = free_port()
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import dist_workers as w; "
            f"w.failing(int(sys.argv[1]), {ws}, {port}, {mode!r})")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(r)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in range(ws)]
    return procs


def _finish(procs, limit):
    start = time.monotonic()
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(1, limit - (time.monotonic() - start))))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return outs, time.monotonic() - start


def test_sigkilled_rank_fails_survivors_fast():
    procs = _launch("kill")
    outs, _ = _finish(procs, 60)
    assert procs[2].returncode == -9
    for r in (0, 1):
        out, err = outs[r]
        assert procs[r].returncode != 0, err
        assert "DistBackendError" in err and "all_reduce (sequence number" in err, err
        assert "missing ranks: [2]" in err, err
        assert "step 2" in out and "step 3" not in out


def test_stalled_rank_times_out_naming_it():
    procs = _launch("sleep")
    t0 = time.monotonic()
    survivors = []
    for r in (0, 1):
        try:
            survivors.append(procs[r].communicate(timeout=45))
        except subprocess.TimeoutExpired:
            pytest.fail(f"rank {r} hung instead of timing out")
    elapsed = time.monotonic() - t0
    procs[2].kill()
    procs[2].communicate()
    for r, (out, err) in zip((0, 1), survivors):
        assert procs[r].returncode != 0, err
        # sequence 1 is DDP's parameter broadcast, 2-4 the all-reduces of steps 0-2
        assert "all_reduce (sequence number 5)" in err, err
        assert "timed out after 3000 ms" in err and "ranks [2] did not join it" in err, err
    assert elapsed < 40


def test_monitored_barrier_names_absent_rank():
    procs = _launch("monitored")
    outs, _ = _finish(procs, 60)
    err0 = outs[0][1]
    assert procs[0].returncode != 0
    assert "Ranks 2 failed to pass monitoredBarrier in 2000 ms" in err0, err0
    assert procs[1].returncode != 0     # never got rank 0's acknowledgement
