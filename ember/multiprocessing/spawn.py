"""`spawn` / `start_processes` with PyTorch's error propagation.

Note: a child that raises writes its formatted traceback to a file the parent reads, so
the parent raises ProcessRaisedException carrying the child's traceback; a child that dies
(exit code or signal) gives ProcessExitedException. When one child fails the others are
terminated, so a failed rank never leaves the rest hanging in a collective.
"""
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "SpawnContext", "spawn", "start_processes"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                             self.signal_name))


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        import traceback
        tmp = error_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(traceback.format_exc())
        os.replace(tmp, error_file)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """True when all children finished; raises on the first failure (others killed)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                error_index = i
                break
        if error_index is None:
            return not self.sentinels
        self._terminate_rest(grace_period)
        failed = self.processes[error_index]
        code = failed.exitcode
        if not os.path.exists(self.error_files[error_index]):
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(
                    f"process {error_index} terminated with signal {name}",
                    error_index, failed.pid, code, name)
            raise ProcessExitedException(
                f"process {error_index} terminated with exit code {code}",
                error_index, failed.pid, code)
        with open(self.error_files[error_index]) as f:
            original = f.read()
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n" + original
        raise ProcessRaisedException(msg, error_index, failed.pid)

    def _terminate_rest(self, grace_period):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + (grace_period or 5.0)
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.")
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    mp = multiprocessing.get_context(start_method)
    tmpdir = tempfile.mkdtemp(prefix="ember_spawn_")
    error_files, processes = [], []
    for i in range(nprocs):
        ef = os.path.join(tmpdir, f"error_{i}")
        p = mp.Process(target=_wrap, args=(fn, i, args, ef), daemon=daemon)
        p.start()
        error_files.append(ef)
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes running `fn(i, *args)` (torch.multiprocessing.spawn)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      f"To use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
