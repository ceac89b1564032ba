"""Counters, compile-time metrics and result comparison of the capture (torch._dynamo.utils).

Why: tests and users ask the capture "how often did you compile, break, give up?" through
`counters`, with PyTorch's groups and keys: counters["frames"]["total"/"ok"] per frame
the capture starts / finishes, counters["stats"]["calls_captured"] per op put in a graph
and ["unique_graphs"] per graph compiled, counters["graph_break"][reason] per break,
counters["unimplemented"][msg] per construct refused. "Where did compile time go?" is
`compile_times()`, fed by `dynamo_timed` around each phase. `same` is the tolerance-aware
comparison compiled-vs-eager tests use.
"""
import collections
import contextlib
import itertools
import logging
import math
import time

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["counters", "compilation_time_metrics", "dynamo_timed", "compile_times", "same",
           "rmse", "tabulate", "reset_counters"]

# counters[group][key] -> int; groups used: "stats", "graph_break", "unimplemented", "frames"
counters = collections.defaultdict(collections.Counter)
# phase name -> seconds of each timed call, in order
compilation_time_metrics = {}


def reset_counters():
    """Forget all counts and timings (ember._dynamo.reset calls this)."""
    counters.clear()
    compilation_time_metrics.clear()


@contextlib.contextmanager
def dynamo_timed(key, phase_name=None, **kwargs):
    """Time a compile phase into compilation_time_metrics[key]; a context manager or a
    decorator (`@dynamo_timed("OutputGraph.call_user_compiler")`). Extra arguments of
    PyTorch's version (event logging) are accepted and ignored."""
    start = time.perf_counter()
    try:
        yield
    finally:
        compilation_time_metrics.setdefault(key, []).append(time.perf_counter() - start)


def tabulate(rows, headers):
    """A table as text: the `tabulate` package's if installed, else comma-separated lines
    (PyTorch's fallback)."""
    try:
        import tabulate as _tabulate
        return _tabulate.tabulate(rows, headers=headers)
    except ImportError:
        return "\n".join(", ".join(map(str, row)) for row in itertools.chain([headers], rows))


def compile_times(repr="str", aggregate=False):
    """Seconds spent in each timed compile phase.

    repr="str": a printable table ("TorchDynamo compilation metrics:" then one row per
    phase); repr="csv": (phase names, values). aggregate=True sums the values of a phase
    (a function split by graph breaks compiles several times).
    """
    def fmt_fn(values, item_fn=str):
        if aggregate:
            return item_fn(sum(values))
        return ", ".join(map(item_fn, values))

    if repr == "str":
        rows = [(k, fmt_fn(v, item_fn=lambda x: f"{x:.4f}"))
                for k, v in compilation_time_metrics.items()]
        return "TorchDynamo compilation metrics:\n" + tabulate(
            rows, headers=("Function", "Runtimes (s)"))
    if repr == "csv":
        values = [fmt_fn(v, item_fn=lambda x: f"{x:.6f}")
                  for v in compilation_time_metrics.values()]
        return list(compilation_time_metrics), values
    return None


# ---------------------------------------------------------------------------- same

def rmse(ref, res):
    """Root mean squared error of two tensors."""
    import ember
    return ember.sqrt(ember.mean(ember.square(ref - res)))


def _is_numpy_scalar(value):
    return isinstance(value, (np.integer, np.floating, np.bool_))


def same(ref, res, fp64_ref=None, cos_similarity=False, tol=1e-4, equal_nan=False,
         exact_dtype=True, relax_numpy_equality=False, ignore_non_fp=False,
         log_error=log.error):
    """True when `res` matches `ref` (nested lists/tuples/dicts of tensors, floats, ints,
    strings, ndarrays): same dtypes (unless exact_dtype=False), values within `tol`, or,
    given a float64 reference `fp64_ref`, an error no worse than `ref`'s (PyTorch's rule:
    res's RMSE against fp64_ref at most a few times ref's)."""
    import ember
    kw = dict(cos_similarity=cos_similarity, tol=tol, equal_nan=equal_nan,
              exact_dtype=exact_dtype, relax_numpy_equality=relax_numpy_equality,
              ignore_non_fp=ignore_non_fp, log_error=log_error)
    if fp64_ref is None:
        fp64_ref = ref
    if isinstance(ref, (list, tuple, collections.deque, ember.Size)):
        if not isinstance(res, (list, tuple, collections.deque)):
            raise AssertionError(f"type mismatch {type(ref)} {type(res)}")
        if len(ref) != len(res):
            log_error("Length mismatch")
            return False
        return all(same(a, b, f, **kw) for a, b, f in zip(ref, res, fp64_ref))
    if isinstance(ref, dict):
        if not isinstance(res, dict):
            raise AssertionError(f"Expected res to be a dict, got {type(res)}")
        if set(ref) != set(res):
            raise AssertionError(f"keys mismatch {set(ref)} == {set(res)}")
        for k in sorted(ref):
            if not same(ref[k], res[k], fp64_ref[k], **kw):
                log_error("Accuracy failed for key name %s", k)
                return False
        return True
    if isinstance(ref, set):
        if not isinstance(res, set):
            raise AssertionError(f"Expected res to be a set, got {type(res)}")
        if set(ref) != set(res):
            raise AssertionError(f"elements mismatch {set(ref)} == {set(res)}")
        return True
    if isinstance(ref, (ember.Tensor, float)):
        return _same_tensor(ref, res, fp64_ref, **kw)
    if isinstance(ref, (str, int, type(None), bool, ember.device)):
        if ignore_non_fp:
            return True
        r = ref == res
        if not r:
            log_error("Accuracy failed (%s): %s != %s", type(ref), ref, res)
        return r
    if _is_numpy_scalar(ref):
        if relax_numpy_equality and not _is_numpy_scalar(res):
            ref = ref.item()
        r = type(ref) is type(res) and ref == res
        if not r:
            log_error("Accuracy failed (numpy): %s != %s", ref, res)
        return r
    if isinstance(ref, np.ndarray):
        return type(ref) is type(res) and same(
            ember.as_tensor(ref), ember.as_tensor(res), fp64_ref, **kw)
    raise RuntimeError(f"unsupported type: {type(ref).__name__}")


def _same_tensor(ref, res, fp64_ref, *, cos_similarity, tol, equal_nan, exact_dtype,
                 relax_numpy_equality, ignore_non_fp, log_error):
    import ember

    def to_tensor(t):
        return t if isinstance(t, ember.Tensor) else ember.tensor(t)

    ref, res, fp64_ref = (to_tensor(v) for v in (ref, res, fp64_ref))
    if ref.is_sparse:
        if not res.is_sparse:
            raise AssertionError("Expected res to be sparse since ref is sparse")
        ref, res = ref.to_dense(), res.to_dense()
    ref, res, fp64_ref = (t.detach() for t in (ref, res, fp64_ref))
    if exact_dtype:
        if ref.dtype != res.dtype:
            log_error("dtype mismatch %s, %s", ref.dtype, res.dtype)
            return False
        if ref.dtype == ember.bool:
            if ignore_non_fp:
                return True
            r = ember.equal(ref, res)
            if not r:
                log_error("Accuracy failed: bool tensor did not match")
            return r
    if ref.shape != res.shape:
        log_error("shape mismatch %s, %s", tuple(ref.shape), tuple(res.shape))
        return False
    if cos_similarity:
        ref = ref.flatten().to(ember.float32)
        res = res.flatten().to(ember.float32)
        if ember.allclose(ref, res, atol=tol, rtol=tol, equal_nan=True):
            return True
        score = ember.nn.functional.cosine_similarity(ref, res, dim=0, eps=1e-6)
        if score < 0.99:
            log.warning("Similarity score=%s", score.item())
        return bool(score >= 0.99)
    if not exact_dtype:
        ref = ref.to(res.dtype)
    if ember.allclose(ref, res, atol=tol, rtol=tol, equal_nan=equal_nan):
        return True
    if fp64_ref.dtype == ember.float64 and res.is_floating_point():
        ref_error = rmse(fp64_ref, ref.to(ember.float64)).item()
        if math.isnan(ref_error):
            log.warning("Found nan in reference. Consider running in higher precision.")
        res_error = rmse(fp64_ref, res.to(ember.float64)).item()
        multiplier = 3.0 if res.dtype in (ember.float16, ember.bfloat16) else 2.0
        if fp64_ref.numel() < 1000 or (ref.ndim == 4 and ref.shape[-1] == ref.shape[-2] == 1) \
                or tol >= 2 * 1e-2:
            multiplier = 3.0
        passes = res_error <= (multiplier * ref_error + tol / 10.0)
        if not passes and equal_nan and math.isnan(ref_error) and math.isnan(res_error):
            passes = True
        if not passes:
            log_error("RMSE (res-fp64): %.5f, (ref-fp64): %.5f and shape=%s. res.dtype: %s, "
                      "multiplier: %f, tol: %f", res_error, ref_error, tuple(res.shape),
                      res.dtype, multiplier, tol)
        return passes
    if ignore_non_fp:
        return True
    log_error("Accuracy failed: allclose not within tol=%s", tol)
    return False
