"""Static memory planning: every intermediate tensor of a training program gets an offset
in one arena, chosen from the tensors' lifetimes (greedy by size, first fit).

Why static: a microcontroller has no allocator worth using and no room for fragmentation;
an offset table computed ahead of time makes the peak known before the program runs.
"""
from dataclasses import dataclass

__all__ = ["Buffer", "plan_arena", "live_peak", "plot_timeline"]

ALIGN = 16


@dataclass
class Buffer:
    """One arena tensor: `nbytes` live from step `start` to step `end` (both inclusive)."""
    name: str
    nbytes: int
    start: int
    end: int
    offset: int = -1


def _aligned(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def plan_arena(buffers):
    """Assign `offset` to each buffer (largest first, lowest offset that overlaps no buffer
    live at the same time); returns the arena size in bytes."""
    placed = []
    for b in sorted(buffers, key=lambda b: (-b.nbytes, b.start)):
        clashes = sorted((p for p in placed if p.start <= b.end and b.start <= p.end),
                         key=lambda p: p.offset)
        offset = 0
        for p in clashes:
            if offset + _aligned(b.nbytes) <= p.offset:
                break
            offset = max(offset, p.offset + _aligned(p.nbytes))
        b.offset = offset
        placed.append(b)
    return max((b.offset + _aligned(b.nbytes) for b in buffers), default=0)


def live_peak(buffers):
    """The most bytes live at any one step: a lower bound for any arena."""
    steps = {s for b in buffers for s in (b.start, b.end)}
    return max((sum(b.nbytes for b in buffers if b.start <= s <= b.end) for s in steps),
               default=0)


def plot_timeline(buffers, path, title="arena"):
    """Draw each buffer as a box (step range x byte range) into a PNG; returns `path`, or
    None when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(10, 5))
    for b in buffers:
        ax.add_patch(plt.Rectangle((b.start, b.offset / 1024), b.end - b.start + 1,
                                   max(b.nbytes, 1) / 1024, alpha=0.6, edgecolor="k",
                                   linewidth=0.3))
    ax.set_xlim(0, max((b.end + 1 for b in buffers), default=1))
    ax.set_ylim(0, max((b.offset + b.nbytes for b in buffers), default=1) / 1024)
    ax.set_xlabel("program step")
    ax.set_ylabel("arena offset (KB)")
    ax.set_title(title)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
