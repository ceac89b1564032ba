"""The per-node agent: start the local workers of a round, watch them, restart the group.

Note: one agent runs per node (torchrun's LocalElasticAgent). A round's workers get
torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
ROLE_*, MASTER_ADDR/PORT, TORCHELASTIC_*). Each monitor pass either sees all local workers
succeed (done), a worker fail (stop the rest; start a new round if restarts are left,
otherwise shut the run down and report the root cause), or the round move on (another node
failed, a node is waiting to join, or a peer's heartbeat went stale): then the local workers
are stopped and restarted in the next round without using up a restart.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field

from .multiprocessing.errors import ChildFailedError, ProcessFailure

__all__ = ["WorkerSpec", "LocalElasticAgent", "RunResult"]


@dataclass
class WorkerSpec:
    entrypoint: list           # argv of one worker (the python bootstrap or a raw command)
    nproc: int
    role: str = "default"
    max_restarts: int = 0
    monitor_interval: float = 0.1
    run_id: str = "none"
    log_dir: str = None
    redirects: dict = field(default_factory=dict)    # local rank -> bitmask 1=out 2=err
    tee: dict = field(default_factory=dict)
    extra_env: dict = field(default_factory=dict)
    stop_grace: float = 5.0
    name: str = ""


@dataclass
class RunResult:
    state: str                 # "SUCCEEDED" or "FAILED"
    failures: dict = field(default_factory=dict)
    restarts: int = 0


class _Worker:
    def __init__(self, local_rank, rank, proc, error_file, pumps):
        self.local_rank, self.rank, self.proc = local_rank, rank, proc
        self.error_file, self.pumps = error_file, pumps


def _pump(src, sink, console, prefix):
    """Copy a worker's stream to its log file and (tee) to the console, line-prefixed."""
    for line in iter(src.readline, b""):
        if sink is not None:
            sink.write(line)
            sink.flush()
        if console is not None:
            console.write(prefix + line)
            console.flush()
    src.close()
    if sink is not None:
        sink.close()


class LocalElasticAgent:
    def __init__(self, spec, rdzv):
        self.spec = spec
        self.rdzv = rdzv
        self.restart_count = 0
        self._own_log_dir = spec.log_dir is None     # a temp dir, removed after success
        base = spec.log_dir or tempfile.mkdtemp(prefix="emberelastic_")
        self.log_root = os.path.join(base, f"{spec.run_id}_{uuid.uuid4().hex[:8]}")
        self.workers = []

    # -- starting and stopping workers ------------------------------------------------
    def _env(self, info, local_rank, error_file):
        spec = self.spec
        env = dict(os.environ)
        env.update(spec.extra_env)
        rank = info.rank_offset + local_rank
        env.update({
            "LOCAL_RANK": str(local_rank), "RANK": str(rank), "GROUP_RANK": str(info.node_rank),
            "ROLE_RANK": str(rank), "ROLE_NAME": spec.role, "LOCAL_WORLD_SIZE": str(spec.nproc),
            "WORLD_SIZE": str(info.world_size), "GROUP_WORLD_SIZE": str(info.num_nodes),
            "ROLE_WORLD_SIZE": str(info.world_size), "MASTER_ADDR": info.master_addr,
            "MASTER_PORT": str(info.master_port),
            "TORCHELASTIC_RESTART_COUNT": str(self.restart_count),
            "TORCHELASTIC_MAX_RESTARTS": str(spec.max_restarts),
            "TORCHELASTIC_RUN_ID": spec.run_id, "TORCHELASTIC_USE_AGENT_STORE": "False",
            "TORCHELASTIC_ERROR_FILE": error_file, "PYTHONUNBUFFERED": "1"})
        if spec.nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = "1"       # as torchrun: don't oversubscribe the cores
        return env

    def _start(self, info):
        attempt = os.path.join(self.log_root, f"attempt_{self.restart_count}")
        self.workers = []
        for lr in range(self.spec.nproc):
            wdir = os.path.join(attempt, str(lr))
            os.makedirs(wdir, exist_ok=True)
            error_file = os.path.join(wdir, "error.json")
            streams, pumps = {}, []
            redirect = self.spec.redirects.get(lr, 0)
            tee = self.spec.tee.get(lr, 0)
            for bit, name in ((1, "stdout"), (2, "stderr")):
                to_file, to_both = redirect & bit or tee & bit, tee & bit
                streams[name] = subprocess.PIPE if to_both else (
                    open(os.path.join(wdir, f"{name}.log"), "wb") if to_file else None)
            proc = subprocess.Popen(self.spec.entrypoint, env=self._env(info, lr, error_file),
                                    preexec_fn=_worker_preexec, **streams)
            for bit, name in ((1, "stdout"), (2, "stderr")):
                if streams[name] is subprocess.PIPE:
                    console = getattr(sys, name).buffer
                    sink = open(os.path.join(wdir, f"{name}.log"), "wb")
                    t = threading.Thread(target=_pump, daemon=True, args=(
                        getattr(proc, name), sink, console,
                        f"[{self.spec.role}{lr}]:".encode()))
                    t.start()
                    pumps.append(t)
                elif streams[name] is not None:
                    streams[name].close()
            self.workers.append(_Worker(lr, info.rank_offset + lr, proc, error_file, pumps))

    def _stop(self):
        """SIGTERM each worker's process group, then SIGKILL what is left after the grace."""
        alive = [w for w in self.workers if w.proc.poll() is None]
        for w in alive:
            _signal_group(w.proc, signal.SIGTERM)
        deadline = time.monotonic() + self.spec.stop_grace
        for w in alive:
            try:
                w.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(w.proc, signal.SIGKILL)
                w.proc.wait()
        for w in self.workers:
            for t in w.pumps:
                t.join(timeout=5)

    # -- the run loop ---------------------------------------------------------------------
    def run(self):
        try:
            result = self._run()
        finally:
            self._stop()
        if result.state == "SUCCEEDED" and self._own_log_dir:
            shutil.rmtree(os.path.dirname(self.log_root), ignore_errors=True)
        return result

    def _run(self):
        while True:
            info = self.rdzv.next_rendezvous()
            self._start(info)
            outcome = self._monitor()
            if outcome == "SUCCEEDED":
                self.rdzv.mark_done()
                return RunResult("SUCCEEDED", restarts=self.restart_count)
            if outcome == "SHUTDOWN":
                return RunResult("FAILED", self._failures() or {}, self.restart_count)
            if outcome == "FAILED":
                failures = self._failures()
                self._stop()
                if self.restart_count >= self.spec.max_restarts:
                    self.rdzv.shutdown()
                    return RunResult("FAILED", failures, self.restart_count)
                self.restart_count += 1
                print(f"[ember.distributed.run] worker group failed (rank "
                      f"{min(failures)} exit {failures[min(failures)].exitcode}); restart "
                      f"{self.restart_count}/{self.spec.max_restarts}", file=sys.stderr,
                      flush=True)
                self.rdzv.next_round()
            else:                                  # the round moved: membership change
                self._stop()
                self.rdzv.next_round()

    def _monitor(self):
        rdzv = self.rdzv
        while True:
            time.sleep(self.spec.monitor_interval)
            codes = [w.proc.poll() for w in self.workers]
            if any(c is not None and c != 0 for c in codes):
                return "FAILED"
            if all(c == 0 for c in codes):
                return "SUCCEEDED"
            rdzv.heartbeat()
            if rdzv.is_shutdown():
                self._stop()
                return "SHUTDOWN"
            if rdzv.round_moved() or rdzv.num_nodes_waiting() > 0 or rdzv.stale_peers():
                return "RESTART"

    def _failures(self):
        failures = {}
        for w in self.workers:
            code = w.proc.poll()
            if code is not None and code != 0:
                failures[w.rank] = ProcessFailure(w.local_rank, w.proc.pid, code, w.error_file,
                                                  rank=w.rank)
        return failures

    def child_failed_error(self, result):
        return ChildFailedError(self.spec.name, result.failures)


def _worker_preexec():
    """In the child before exec: its own process group (so a stop reaches its children too)
    and, on Linux, SIGKILL when the agent dies — workers never outlive a killed agent."""
    os.setsid()
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
