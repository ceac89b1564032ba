"""scaled_dot_product_attention on CPU: ember's flash kernel vs ember's math path vs
PyTorch's CPU SDPA (its default here is its flash kernel) vs PyTorch's math path.

Shapes (B, H=8, L, D=64) with query length = key length L in 512, 2048 (B = 1 and 4) and
8192 (B = 1; the math paths are skipped there: their L x L scores alone need
B*H*L*L*4 bytes = 2 GiB, several times over), float32; plus bfloat16 at B = 1, L = 2048
(flash kernels only). Non-causal and causal; forward alone and forward + backward (sum of
the output, gradients to q, k, v).

Time: best of several calls (the machine is shared), the libraries interleaved.
Peak memory: one call in a fresh child process (so no allocator cache of an earlier call
hides anything): its resident-set high-water mark (VmHWM, reset just before the call by
writing 5 to /proc/self/clear_refs) minus the resident set before the call, so the same
method covers NumPy's, C's and PyTorch's allocations; glibc's mmap threshold is set to
64 KiB (mallopt) so freed blocks leave the resident set. Page-level: ~1 MiB is noise.
Time: the parent process, best of several calls, libraries interleaved with a short sleep
between calls so one library's idle OpenMP threads do not spin against the other's.
Both libraries use the same thread count (all cores unless --threads N).
Writes benchmarks/results/attention.{json,md}.
Usage: python benchmarks/attention.py [--quick] [--threads N]
"""
import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

_ap = argparse.ArgumentParser()
_ap.add_argument("--quick", action="store_true", help="L = 512 and 2048, B = 1 only")
_ap.add_argument("--threads", type=int, default=os.cpu_count())
_ap.add_argument("--mem", nargs=6, help=argparse.SUPPRESS)   # child: NAME B L DTYPE C BW
ARGS = _ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)      # before any OpenMP runtime loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(ARGS.threads))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
import ember.nn.functional as EF  # noqa: E402
from ember.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
F32 = "float32"
H, D = 8, 64
IMPLS = {
    "ember flash": (ember, EF.scaled_dot_product_attention, sdpa_kernel,
                    SDPBackend.FLASH_ATTENTION),
    "ember math": (ember, EF.scaled_dot_product_attention, sdpa_kernel, SDPBackend.MATH),
    "torch default": (torch, torch.nn.functional.scaled_dot_product_attention, None, None),
    "torch math": (torch, torch.nn.functional.scaled_dot_product_attention,
                   torch.nn.attention.sdpa_kernel, torch.nn.attention.SDPBackend.MATH),
}


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def _pin_malloc():
    """glibc: map every block over 64 KiB and unmap it when freed, so the resident set
    follows live memory (set after the imports: setting it by environment did not last)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 65536)        # M_MMAP_THRESHOLD
    libc.mallopt(-1, 65536)        # M_TRIM_THRESHOLD


def _peak_bytes(fn):
    """Resident-set growth while fn runs (high-water mark reset first)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = _status("VmRSS")
    fn()
    return max(0, _status("VmHWM") - base)


def _workload(name, B, L, dtype, causal, backward):
    lib, sdpa, kernel, backend = IMPLS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((B, H, L, D)).astype(np.float32) for _ in range(3)]
    q, k, v = (lib.from_numpy(a).to(getattr(lib, dtype)).requires_grad_(backward)
               for a in arrays)

    def run():
        if kernel is None:
            out = sdpa(q, k, v, is_causal=causal)
        else:
            with kernel(backend):
                out = sdpa(q, k, v, is_causal=causal)
        if backward:
            out.float().sum().backward()
            q.grad = k.grad = v.grad = None
    return run


def _child_peak(name, B, L, dtype, causal, backward):
    """Peak bytes of one call, measured in a fresh process."""
    args = [name, str(B), str(L), dtype, str(int(causal)), str(int(backward))]
    out = subprocess.run([sys.executable, __file__, "--threads", str(ARGS.threads),
                          "--mem", *args], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def _measure(B, L, dtype, causal, backward, names, reps):
    fns = {n: _workload(n, B, L, dtype, causal, backward) for n in names}
    peaks = {n: _child_peak(n, B, L, dtype, causal, backward) for n in names}
    best = {n: float("inf") for n in names}
    for f in fns.values():
        f()                                                    # warm-up
    for _ in range(reps):
        for n, f in fns.items():
            time.sleep(0.05)
            t0 = time.perf_counter()
            f()
            best[n] = min(best[n], time.perf_counter() - t0)
    return {n: {"ms": best[n] * 1e3, "peak_mib": peaks[n] / 2**20} for n in names}


def main():
    torch.set_num_threads(ARGS.threads)
    if ARGS.mem:
        _pin_malloc()
        name, B, L, dtype, causal, backward = ARGS.mem
        small = _workload(name, 1, 8, dtype, bool(int(causal)), bool(int(backward)))
        small()                                 # loads the kernels and starts the threads
        fn = _workload(name, int(B), int(L), dtype, bool(int(causal)), bool(int(backward)))
        print(_peak_bytes(fn))
        return
    configs = [(1, 512, F32), (4, 512, F32), (1, 2048, F32), (4, 2048, F32),
               (1, 8192, F32), (1, 2048, "bfloat16")]
    if ARGS.quick:
        configs = [(1, 512, F32), (1, 2048, F32)]
    rows = []
    for B, L, dtype in configs:
        names = [n for n in IMPLS if (L <= 2048 and dtype == F32) or "math" not in n]
        for causal in (False, True):
            for backward in (False, True):
                reps = 2 if L >= 8192 else (3 if L >= 2048 else 7)
                res = _measure(B, L, dtype, causal, backward, names, reps)
                row = {"B": B, "L": L, "dtype": dtype, "causal": causal,
                       "pass": "fwd+bwd" if backward else "fwd", "results": res,
                       "flash_vs_torch": res["ember flash"]["ms"] / res["torch default"]["ms"]}
                rows.append(row)
                print(_line(row), flush=True)
    meta = {"threads": ARGS.threads, "torch": torch.__version__, "H": H, "D": D,
            "cpu": _cpu(),
            "memory": "VmHWM - VmRSS around one call (clear_refs reset)",
            "note": "shared machine: best of repeats; others' load shows as noise, and calls "
                    "under ~20 ms come in steps of 4/8/16 ms here (the container's CPU "
                    "quota), so the L=512 ratios are coarse"}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "attention.json").write_text(json.dumps({"meta": meta, "rows": rows},
                                                       indent=1))
    (RESULTS / "attention.md").write_text(_markdown(meta, rows))
    print(f"wrote {RESULTS / 'attention.md'}")


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            return next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


def _cell(r, name):
    x = r["results"].get(name)
    return "skipped" if x is None else f"{x['ms']:.1f} ms / {x['peak_mib']:.0f} MiB"


def _line(r):
    cells = "  ".join(f"{n}: {_cell(r, n)}" for n in IMPLS)
    return (f"B={r['B']} L={r['L']} {r['dtype']} causal={r['causal']} {r['pass']}: {cells}  "
            f"flash/torch={r['flash_vs_torch']:.2f}")


def _markdown(meta, rows):
    out = [f"# scaled_dot_product_attention, CPU ({meta['threads']} threads, "
           f"H={H}, D={D}, torch {meta['torch']})", "",
           "Each cell: best time / peak resident-memory growth of one call. "
           "ratio = ember flash time / torch default (its flash) time. The math paths are "
           "skipped at L=8192 (O(L^2) scores: GiBs) and for bfloat16.", "",
           "| B | L | dtype | causal | pass | " + " | ".join(IMPLS) + " | ratio |",
           "|---|---|---|---|---|" + "---|" * len(IMPLS) + "---|"]
    for r in rows:
        out.append(f"| {r['B']} | {r['L']} | {r['dtype']} | {r['causal']} | {r['pass']} | "
                   + " | ".join(_cell(r, n) for n in IMPLS)
                   + f" | {r['flash_vs_torch']:.2f} |")
    out += ["", f"CPU: {meta['cpu']}. {meta['note']}. Memory: {meta['memory']}.", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
