"""`@record` and ChildFailedError (torch.distributed.elastic.multiprocessing.errors).

Why: when a worker dies, the launcher should print *that worker's* traceback, not just an
exit code. `@record` on the worker's entry point writes the exception (message, Python call
stack, time) as JSON to the file named by TORCHELASTIC_ERROR_FILE; the agent reads the first
failure's file and reports it in PyTorch's "Root Cause" layout.
"""
import json
import os
import signal
import socket
import time
import traceback
from dataclasses import dataclass, field
from functools import wraps

__all__ = ["record", "ChildFailedError", "ProcessFailure", "ErrorHandler", "get_error_handler"]

_NOT_AVAILABLE = "<N/A>"


def _atomic_write_json(path, data):
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


class ErrorHandler:
    """Writes the error file of this process (the path comes from TORCHELASTIC_ERROR_FILE)."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE")

    def initialize(self):
        pass

    def record_exception(self, e):
        path = self._get_error_file_path()
        if not path:
            return
        _atomic_write_json(path, {"message": {
            "message": f"{type(e).__name__}: {e}",
            "extraInfo": {"py_callstack": traceback.format_exc(),
                          "timestamp": str(int(time.time()))}}})

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copy a child's error file into ours (a nested launcher passes the root cause up)."""
        path = self._get_error_file_path()
        if not path:
            return
        with open(rootcause_error_file) as f:
            data = json.load(f)
        if error_code and isinstance(data.get("message"), dict):
            data["message"].setdefault("errorCode", error_code)
        _atomic_write_json(path, data)


def get_error_handler():
    return ErrorHandler()


def record(fn, error_handler=None):
    """Decorate a worker's main function: an exception escaping it is written to the error
    file before it propagates (SystemExit(0) returns None, as in PyTorch)."""
    handler = error_handler or get_error_handler()

    @wraps(fn)
    def wrapper(*args, **kwargs):
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code in (0, None):
                return None
            raise
        except ChildFailedError as e:
            _, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE and os.path.exists(failure.error_file):
                handler.dump_error_file(failure.error_file, failure.exitcode)
            raise
        except Exception as e:
            handler.record_exception(e)
            raise
    return wrapper


@dataclass
class ProcessFailure:
    """One failed worker: its ranks, exit code, pid and (if @record ran) its error file."""
    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    rank: int = -1
    timestamp: int = field(default_factory=lambda: int(time.time()))
    message: str = ""

    def __post_init__(self):
        self.error_file_data = None
        if self.error_file and os.path.isfile(self.error_file):
            try:
                with open(self.error_file) as f:
                    self.error_file_data = json.load(f)
                msg = self.error_file_data.get("message", {})
                if isinstance(msg, dict):
                    self.message = msg.get("extraInfo", {}).get("py_callstack") or \
                        msg.get("message", "")
                    ts = msg.get("extraInfo", {}).get("timestamp")
                    if ts:
                        self.timestamp = int(ts)
                else:
                    self.message = str(msg)
            except (OSError, ValueError):
                self.message = f"(unreadable error file {self.error_file})"
        else:
            self.error_file = _NOT_AVAILABLE
        if not self.message:
            if self.exitcode < 0:
                try:
                    name = signal.Signals(-self.exitcode).name
                except ValueError:
                    name = f"signal {-self.exitcode}"
                self.message = f"Signal {-self.exitcode} ({name}) received by PID {self.pid}"
            else:
                self.message = ("To enable traceback see: "
                                "https://pytorch.org/docs/stable/elastic/errors.html")

    def signal_name(self):
        if self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return _NOT_AVAILABLE
        return _NOT_AVAILABLE

    def timestamp_isoformat(self):
        return time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(self.timestamp))


class ChildFailedError(Exception):
    """Raised by the launcher when workers failed; str() is PyTorch's failure report."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures          # {global rank: ProcessFailure}
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        width = 60
        root_rank, root = self.get_first_failure()
        others = [self._format(r, f) for r, f in sorted(self.failures.items()) if r != root_rank]
        lines = [boarder_delim * width, f"{self.name} FAILED", section_delim * width,
                 "Failures:", "\n".join(others) if others else "  <NO_OTHER_FAILURES>",
                 section_delim * width, "Root Cause (first observed failure):",
                 self._format(root_rank, root), boarder_delim * width]
        return "\n" + "\n".join(lines)

    @staticmethod
    def _format(rank, f):
        msg = f.message.rstrip().replace("\n", "\n  ")
        return (f"[{rank}]:\n  time      : {f.timestamp_isoformat()}\n"
                f"  host      : {socket.getfqdn()}\n"
                f"  rank      : {rank} (local_rank: {f.local_rank})\n"
                f"  exitcode  : {f.exitcode} (pid: {f.pid})\n"
                f"  error_file: {f.error_file}\n"
                f"  traceback : {msg}")
