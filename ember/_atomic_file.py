"""Atomic file replacement for ember.save, with clean-up of temporaries left by killed saves.

Why: a save writes `.<name>.<pid>.<random>.tmp` beside the target and os.replace()s it
over the target at the end, so a reader never sees a half-written checkpoint. A save
killed mid-write (SIGKILL, OOM killer, power loss) cannot remove its temporary; without
clean-up every kill left a full-size file behind forever. The next save of the same target
removes such leftovers, but only files that are provably ours and provably abandoned:

- the name matches exactly this scheme for this target (nothing else is touched);
- the writer's pid (in the name) is not alive, and is not this process;
- an advisory lock (fcntl.flock) on the file can be taken: every writer holds one on its
  temporary while writing, so a live writer in another pid namespace (a container sharing
  the directory) keeps its file.
"""
import contextlib
import os
import re
import tempfile

try:
    import fcntl
except ImportError:         # Windows: the pid check alone decides
    fcntl = None

__all__ = ["atomic_write", "remove_stale_temps", "temp_pattern"]


def temp_pattern(path):
    """The regex of this target's temporaries: group 1 is the writer's pid."""
    base = re.escape(f".{os.path.basename(path)}.")
    return re.compile(base + r"(\d+)\.[A-Za-z0-9_]{8}\.tmp\Z")


def _pid_alive(pid):
    if pid <= 0:
        return True             # not a real writer pid: never judge it dead
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # exists, belongs to another user
        return True
    except OSError:
        return True
    return True


def remove_stale_temps(path):
    """Deletes temporaries of `path` whose writer is gone; returns the names removed."""
    folder = os.path.dirname(os.path.abspath(path))
    pattern = temp_pattern(path)
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = pattern.match(name)
        if m is None:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _pid_alive(pid):
            continue
        full = os.path.join(folder, name)
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue        # someone is writing it
            with contextlib.suppress(FileNotFoundError):
                os.unlink(full)
                removed.append(name)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def atomic_write(path, mode):
    """Yields a binary file; on success it replaces `path` (with permissions `mode`),
    on any failure it is removed and `path` keeps its old content."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.{os.getpid()}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            if fcntl is not None:
                fcntl.flock(out.fileno(), fcntl.LOCK_EX)    # held until the file is closed
            yield out
            out.flush()
            os.fsync(out.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
