"""scaled_dot_product_attention on CPU: ember's flash kernel vs ember's math path vs
PyTorch's CPU SDPA (its default here is its flash kernel) vs PyTorch's math path.

Shapes (B, H=8, L, D=64) with query length = key length L in 512, 2048 (B = 1 and 4) and
8192 (B = 1; the math paths are skipped there: their L x L scores alone need
B*H*L*L*4 bytes = 2 GiB, several times over). float32, non-causal and causal; forward
alone and forward + backward (sum of the output, gradients to q, k, v).

Time: best of several calls (the machine is shared), the libraries interleaved.
Peak memory: the process's resident-set high-water mark (VmHWM, reset before each call by
writing 5 to /proc/self/clear_refs) minus the resident set before the call, so the same
method covers NumPy's, C's and PyTorch's allocations (the script re-executes itself with
glibc's mmap threshold at 64 KiB so freed blocks leave the resident set; the first call of
each row, also the warm-up, is the one measured). Both libraries use the same thread
count (all cores unless --threads N). Writes benchmarks/results/attention.{json,md}.
Usage: python benchmarks/attention.py [--quick] [--threads N]
"""
import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

_ap = argparse.ArgumentParser()
_ap.add_argument("--quick", action="store_true", help="L = 512 and 2048, B = 1 only")
_ap.add_argument("--threads", type=int, default=os.cpu_count())
ARGS = _ap.parse_args()
if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
    # glibc then maps every block over 64 KiB and unmaps it when freed, so the resident
    # set follows what is live (else freed heap memory is reused unseen by VmHWM)
    os.environ.update(MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="65536")
    os.execv(sys.executable, [sys.executable, *sys.argv])
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)      # before any OpenMP runtime loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(ARGS.threads))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
import ember.nn.functional as EF  # noqa: E402
from ember.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
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


def _peak_bytes(fn):
    """Resident-set growth while fn runs (high-water mark reset first)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = _status("VmRSS")
    fn()
    return max(0, _status("VmHWM") - base)


def _workload(name, B, L, causal, backward):
    lib, sdpa, kernel, backend = IMPLS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((B, H, L, D)).astype(np.float32) for _ in range(3)]
    q, k, v = (lib.from_numpy(a).requires_grad_(backward) for a in arrays)

    def run():
        if kernel is None:
            out = sdpa(q, k, v, is_causal=causal)
        else:
            with kernel(backend):
                out = sdpa(q, k, v, is_causal=causal)
        if backward:
            out.sum().backward()
            q.grad = k.grad = v.grad = None
    return run


def _measure(B, L, causal, backward, names, reps):
    fns = {n: _workload(n, B, L, causal, backward) for n in names}
    peaks = {n: _peak_bytes(f) for n, f in fns.items()}       # also the warm-up call
    best = {n: float("inf") for n in names}
    for _ in range(reps):
        for n, f in fns.items():
            t0 = time.perf_counter()
            f()
            best[n] = min(best[n], time.perf_counter() - t0)
    return {n: {"ms": best[n] * 1e3, "peak_mib": peaks[n] / 2**20} for n in names}


def main():
    torch.set_num_threads(ARGS.threads)
    configs = [(1, 512), (4, 512), (1, 2048), (4, 2048), (1, 8192)]
    if ARGS.quick:
        configs = [(1, 512), (1, 2048)]
    rows = []
    for B, L in configs:
        names = [n for n in IMPLS if L <= 2048 or "math" not in n]
        for causal in (False, True):
            for backward in (False, True):
                reps = 2 if L >= 8192 else (3 if L >= 2048 else 7)
                res = _measure(B, L, causal, backward, names, reps)
                row = {"B": B, "L": L, "causal": causal,
                       "pass": "fwd+bwd" if backward else "fwd", "results": res,
                       "flash_vs_torch": res["ember flash"]["ms"] / res["torch default"]["ms"]}
                rows.append(row)
                print(_line(row), flush=True)
    meta = {"threads": ARGS.threads, "torch": torch.__version__, "H": H, "D": D,
            "dtype": "float32", "cpu": _cpu(),
            "memory": "VmHWM - VmRSS around one call (clear_refs reset)",
            "note": "shared machine: best of repeats; others' load shows as noise"}
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
    return "skipped (O(L^2))" if x is None else f"{x['ms']:.1f} ms / {x['peak_mib']:.0f} MiB"


def _line(r):
    cells = "  ".join(f"{n}: {_cell(r, n)}" for n in IMPLS)
    return (f"B={r['B']} L={r['L']} causal={r['causal']} {r['pass']}: {cells}  "
            f"flash/torch={r['flash_vs_torch']:.2f}")


def _markdown(meta, rows):
    out = [f"# scaled_dot_product_attention, CPU ({meta['threads']} threads, float32, "
           f"H={H}, D={D}, torch {meta['torch']})", "",
           "Each cell: best time / peak resident-memory growth of one call. "
           "ratio = ember flash time / torch default (its flash) time.", "",
           "| B | L | causal | pass | " + " | ".join(IMPLS) + " | ratio |",
           "|---|---|---|---|" + "---|" * len(IMPLS) + "---|"]
    for r in rows:
        out.append(f"| {r['B']} | {r['L']} | {r['causal']} | {r['pass']} | "
                   + " | ".join(_cell(r, n) for n in IMPLS)
                   + f" | {r['flash_vs_torch']:.2f} |")
    out += ["", f"CPU: {meta['cpu']}. {meta['note']}. Memory: {meta['memory']}.", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
