"""How much of PyTorch's own OpInfo database ember passes (needs torch + expecttest).

Usage: python scripts/opinfo_coverage.py [--ops a,b,...] [--max-samples N] [--workers 2]
                                          [--out benchmarks/results/opinfo] [--quiet]

For every OpInfo in `torch.testing._internal.common_methods_invocations.op_db`, on CPU and
each of float32/float64/int64/bool/complex64 the OpInfo supports, torch generates the sample
inputs; each sample is converted (tensors -> ember tensors through NumPy, dtypes, sizes,
nested lists) and run through ember's callable of the same name; the result is compared with
torch's (dtype, shape, then values with assert_close at OpInfo-like tolerances). Both sides
run right after seeding PyTorch's CPU generator (ember's generator="mt19937"), so ops that
draw random numbers internally (sdpa's dropout_p) compare by value; samplers themselves
(rand*, dropout, ...) and undefined values (empty*) are compared on dtype and shape only.
Writes <out>.json (per op name: samples passed / total, failures grouped by error type and
message head) and <out>.md, and prints the two headline numbers. Why: the issue's goal
(">= 98% of samples on >= 590 op names") needs one reproducible measure.
"""
import argparse
import collections
import json
import math
import multiprocessing
import os
import signal
import sys
import time
import types
import warnings

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import ember

DTYPES = [torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64]
# OpInfo-like tolerances (test_ops compares with references at about these)
TOL = {torch.float32: (1.3e-5, 1e-5), torch.complex64: (1.3e-5, 1e-5),
       torch.float64: (1e-7, 1e-7)}
# values that are undefined (empty*) or drawn by samplers ember does not match number for
# number under generator="mt19937" (see ember/_mt19937.py): compared on dtype and shape only
SHAPE_ONLY = {"empty", "empty_like", "empty_permuted", "empty_strided", "new_empty",
              "new_empty_strided", "pca_lowrank", "svd_lowrank"}
SAMPLE_TIMEOUT_S = 5.0
SEED = 1234            # both sides draw from PyTorch's CPU generator seeded with this
OP_BUDGET_S = 40.0


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout(f"sample ran over {SAMPLE_TIMEOUT_S}s")


def to_ember(x):
    """A torch sample argument -> the ember equivalent (recursively)."""
    if isinstance(x, torch.nn.Module):                # e.g. distance_function=PairwiseDistance()
        cls = getattr(ember.nn, type(x).__name__, None)
        if cls is None or any(True for _ in x.parameters()):
            return x
        m = cls()
        for k, v in vars(x).items():
            if not k.startswith("_") and k != "training":
                setattr(m, k, to_ember(v))
        return m
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:                 # sparse samples: the dense values
            dense = to_ember(x.to_dense())
            return dense.to_sparse_csr() if x.layout == torch.sparse_csr else dense.to_sparse()
        t = x.detach().resolve_conj().resolve_neg()
        name = str(t.dtype).split(".")[1]
        if t.storage_offset() and t.dtype not in (torch.bfloat16, torch.float16):
            # a view into a larger storage (as_strided's partial views): the same storage
            # and offset on the ember side, so storage-relative ops see the same memory
            n = t.untyped_storage().nbytes() // t.element_size()
            flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (n,), (1,))
            base = ember.from_numpy(np.array(flat.numpy(), copy=True))
            return base.as_strided(tuple(t.shape), t.stride(), t.storage_offset())
        if t.dtype in (torch.bfloat16, torch.float16):
            return ember.from_numpy(t.float().numpy().copy()).to(getattr(ember, name))
        return ember.from_numpy(np.array(t.numpy(), copy=True))
    if isinstance(x, torch.dtype):
        return getattr(ember, str(x).split(".")[1])
    if isinstance(x, torch.Size):
        return ember.Size(x)
    if isinstance(x, torch.device):
        return ember.device(str(x))
    if isinstance(x, torch.memory_format):
        return getattr(ember, str(x).split(".")[1])
    if isinstance(x, torch.layout):
        return getattr(ember, str(x).split(".")[1])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[to_ember(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(to_ember(v) for v in x)
    if isinstance(x, dict):
        return {k: to_ember(v) for k, v in x.items()}
    return x


def _wrapper_set_seed(op, *args, **kwargs):
    """OpInfo's wrapper_set_seed on ember: seed 42 (PyTorch's engine), state restored."""
    state = ember.get_rng_state()
    try:
        ember.manual_seed(42, generator="mt19937")
        return op(*args, **kwargs)
    finally:
        ember.set_rng_state(state)


def _rebound(fn):
    """The OpInfo's own wrapper function, with `torch`/`F` in its globals bound to ember."""
    g = dict(fn.__globals__)
    g["torch"] = ember
    g["F"] = ember.nn.functional
    g["wrapper_set_seed"] = _wrapper_set_seed
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def resolve(op):
    """ember's callable for an OpInfo, or None: by name, aten name, wrapper, Tensor method."""
    fn = op.op
    mod = getattr(fn, "__module__", "") or ""
    if isinstance(fn, types.FunctionType) and mod.startswith("torch.testing"):
        return _rebound(fn)
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        # torch.ops.aten.<name>.<overload>: ember.<name> where torch has the name at top
        # level too (torch._safe_softmax), else ember.ops.aten's overload
        ns, name, *overload = str(fn).split(".")
        obj = getattr(ember, name, None) if hasattr(torch, name) else None
        if obj is None:
            obj = getattr(ember.ops.aten, name, None)
            if obj is not None and overload:
                obj = getattr(obj, overload[0], None)
        if obj is not None:
            return obj
    for name in (op.name, op.aten_name):
        if not name:
            continue
        obj = ember
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None and callable(obj):
            return obj
        meth = getattr(ember.Tensor, name.split(".")[-1], None)
        if meth is not None:
            return meth
    return None


def _np(t):
    a = t.detach().numpy() if not isinstance(t, np.ndarray) else t
    if a.dtype.kind == "V" or str(a.dtype) in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        a = a.astype(np.float32)
    return a


def compare(e, t, dtype, shape_only, path="out"):
    """Raise AssertionError('<kind>: ...') when ember's result e differs from torch's t."""
    if isinstance(t, torch.Tensor):
        if t.layout != torch.strided:                 # sparse results: compare the dense values
            if str(t.layout) != str(getattr(e, "layout", "")):
                raise AssertionError(f"type: {path} layout {getattr(e, 'layout', None)} vs "
                                     f"torch {t.layout}")
            t, e = t.to_dense(), e.to_dense()
        if not isinstance(e, ember.Tensor):
            raise AssertionError(f"type: {path} is {type(e).__name__}, torch gives a Tensor")
        if str(e.dtype) != str(t.dtype):
            raise AssertionError(f"dtype: {path} {e.dtype} vs torch {t.dtype}")
        if tuple(e.shape) != tuple(t.shape):
            raise AssertionError(f"shape: {path} {tuple(e.shape)} vs torch {tuple(t.shape)}")
        if shape_only:
            return
        tt = t.detach().resolve_conj().resolve_neg()
        if tt.dtype in (torch.bfloat16, torch.float16):
            tt = tt.float()
        rtol, atol = TOL.get(dtype, (1.3e-5, 1e-5)) if tt.is_floating_point() or \
            tt.is_complex() else (0, 0)
        ee = torch.from_numpy(np.array(_np(e.resolve_conj() if hasattr(e, "resolve_conj")
                                           else e), copy=True)).to(tt.dtype)
        try:
            torch.testing.assert_close(ee, tt, rtol=rtol, atol=atol, equal_nan=True,
                                       check_dtype=False, check_device=False,
                                       check_stride=False)
        except AssertionError as exc:
            head = str(exc).strip().splitlines()[0][:60]
            raise AssertionError(f"values: {path} {head}") from None
        return
    if isinstance(t, (tuple, list)):
        if not isinstance(e, (tuple, list)) or len(e) != len(t):
            raise AssertionError(f"type: {path} is {type(e).__name__}, torch gives "
                                 f"{type(t).__name__} of {len(t)}")
        for i, (a, b) in enumerate(zip(e, t)):
            compare(a, b, dtype, shape_only, f"{path}[{i}]")
        return
    if isinstance(e, ember.Tensor):
        e = e.item() if e.numel() == 1 else e
    if isinstance(t, (bool, int, float, complex)) and isinstance(e, (bool, int, float, complex,
                                                                     np.generic)):
        if shape_only or t == e or (isinstance(t, float) and math.isnan(t) and math.isnan(e)):
            return
        if isinstance(t, (float, complex)) and abs(t - e) <= 1e-5 + 1e-5 * abs(t):
            return
        raise AssertionError(f"values: {path} {e!r} vs torch {t!r}")
    if t is None and e is None:
        return
    if type(t).__name__ != type(e).__name__ and not isinstance(t, (torch.dtype, torch.Size)):
        raise AssertionError(f"type: {path} is {type(e).__name__}, torch gives "
                             f"{type(t).__name__}")
    if str(t) != str(e):
        raise AssertionError(f"values: {path} {e!s:.30} vs torch {t!s:.30}")


def _error_key(exc):
    if isinstance(exc, AssertionError) and str(exc).split(":")[0] in (
            "type", "dtype", "shape", "values"):
        kind, _, rest = str(exc).partition(":")
        return f"mismatch {kind}: {rest.strip()[:70]}"
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg[:70]}"


def run_opinfo(index, max_samples):
    """Run one OpInfo's samples; returns (op name, passed, total, skipped, {error: count})."""
    op = op_db[index]
    fails = collections.Counter()
    passed = total = skipped = 0
    fn = resolve(op)
    shape_only = op.name in SHAPE_ONLY
    start = time.monotonic()
    signal.signal(signal.SIGALRM, _on_alarm)
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        torch.manual_seed(0)
        try:
            samples = []
            for s in op.sample_inputs("cpu", dtype, requires_grad=False):
                samples.append(s)
                if len(samples) >= max_samples:
                    break
        except Exception:                             # torch's own generator failed
            skipped += 1
            continue
        for s in samples:
            if time.monotonic() - start > OP_BUDGET_S:
                skipped += 1
                continue
            try:
                e_args = (to_ember(s.input), to_ember(s.args), to_ember(s.kwargs))
                torch.manual_seed(SEED)
                t_out = op(s.input, *s.args, **s.kwargs)
            except Exception:
                skipped += 1                          # torch itself rejects the sample
                continue
            total += 1
            if fn is None:
                fails[f"missing: no ember callable for {op.name}"] += 1
                continue
            signal.setitimer(signal.ITIMER_REAL, SAMPLE_TIMEOUT_S)
            try:
                ember.manual_seed(SEED, generator="mt19937")   # PyTorch's draws (dropout_p=)
                e_out = fn(e_args[0], *e_args[1], **e_args[2])
                compare(e_out, t_out, dtype, shape_only)
                passed += 1
            except (Exception, RecursionError, _Timeout) as exc:
                fails[_error_key(exc)] += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    return op.name, passed, total, skipped, dict(fails)


def _init_worker():
    warnings.simplefilter("ignore")                   # deprecations, both sides alike
    np.seterr(all="ignore")
    torch.set_num_threads(1)


def measure(names=None, max_samples=8, workers=2, quiet=False):
    """Run the selected OpInfos (all when names is None); returns the per-op-name report."""
    idx = [i for i, op in enumerate(op_db) if names is None or op.name in names]
    per = {}
    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(workers, initializer=_init_worker, maxtasksperchild=25)
    try:
        jobs = [(i, pool.apply_async(run_opinfo, (i, max_samples))) for i in idx]
        for i, job in jobs:
            try:
                name, p, t, sk, fails = job.get(timeout=OP_BUDGET_S + 120)
            except Exception as exc:                  # a worker hung or died on this op
                name, p, t, sk, fails = op_db[i].name, 0, 1, 0, {_error_key(exc): 1}
            r = per.setdefault(name, {"passed": 0, "total": 0, "skipped": 0,
                                      "failures": collections.Counter()})
            r["passed"] += p
            r["total"] += t
            r["skipped"] += sk
            r["failures"].update(fails)
            if not quiet:
                print(f"{name:45s} {p:4d}/{t:<4d}", file=sys.stderr, flush=True)
    finally:
        pool.terminate()
    for r in per.values():
        r["failures"] = dict(r["failures"].most_common())
    return per


def headline(per):
    names = [n for n, r in per.items() if r["total"]]
    ok = [n for n in names if r_passed(per[n])]
    passed = sum(r["passed"] for r in per.values())
    total = sum(r["total"] for r in per.values())
    return {"op_names": len(per), "op_names_with_samples": len(names),
            "op_names_passing_one": len(ok), "samples_passed": passed,
            "samples_total": total, "samples_pct": round(100.0 * passed / max(total, 1), 2)}


def r_passed(r):
    return r["passed"] > 0


def markdown(per, head, max_samples):
    groups = collections.Counter()
    for r in per.values():
        for k, v in r["failures"].items():
            groups[k.split(":")[0] if k.startswith("missing") else k] += v
    lines = ["# ember vs PyTorch's OpInfo database (CPU)", "",
             f"- op names with >= 1 passing sample: **{head['op_names_passing_one']}** of "
             f"{head['op_names_with_samples']} with samples ({head['op_names']} in op_db)",
             f"- samples passing: **{head['samples_pct']}%** ({head['samples_passed']} of "
             f"{head['samples_total']}); dtypes {', '.join(str(d)[6:] for d in DTYPES)}, "
             f"at most {max_samples} samples per OpInfo and dtype", "",
             "## Largest failure groups", "", "| samples | failure |", "|---:|---|"]
    lines += [f"| {v} | {k.replace('|', '/')} |" for k, v in groups.most_common(40)]
    lines += ["", "## Op names with failures", "", "| op | passed/total | first failure |",
              "|---|---:|---|"]
    for n, r in sorted(per.items()):
        if r["passed"] < r["total"]:
            first = next(iter(r["failures"]), "").replace("|", "/")
            lines.append(f"| {n} | {r['passed']}/{r['total']} | {first} |")
    return "\n".join(lines) + "\n"


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", help="comma-separated OpInfo names (default: all)")
    ap.add_argument("--max-samples", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..",
                                                  "benchmarks", "results", "opinfo"))
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    names = set(a.ops.split(",")) if a.ops else None
    t0 = time.time()
    per = measure(names, a.max_samples, a.workers, a.quiet)
    head = headline(per)
    head["seconds"] = round(time.time() - t0, 1)
    if a.out:
        _write(a.out + ".json", json.dumps({"headline": head, "ops": per}, indent=1,
                                           sort_keys=True))
        _write(a.out + ".md", markdown(per, head, a.max_samples))
    print(f"op names with >= 1 passing sample: {head['op_names_passing_one']} of "
          f"{head['op_names_with_samples']}")
    print(f"samples passing: {head['samples_pct']}% ({head['samples_passed']} of "
          f"{head['samples_total']})")
    return per


if __name__ == "__main__":
    main()
