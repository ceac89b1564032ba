"""Every registry op's sample (tests/registry_samples) compiled by the inductor equals eager.

Why batched: one compiled function runs ~40 samples, so a cold run compiles a few C files,
not hundreds. Covered: the samples' own dtypes with static and dynamic sizes, and float32
copies of the float64 samples (the float code paths and libmvec math). Random and
in-place ops and ops with data-dependent output shapes are left out (their own tests).
"""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.ops._registry import REGISTRY

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from registry_samples import SAMPLES  # noqa: E402

pytestmark = pytest.mark.skipif(
    not any(__import__("shutil").which(c) for c in ("cc", "gcc", "clang")),
    reason="no C compiler")

SKIP_TAGS = {"random", "inplace", "dynamic_output_shape"}
NAMES = sorted(n for n in SAMPLES if not REGISTRY[n].tags & SKIP_TAGS and n != "empty")
CHUNK = 60
CHUNKS = range((len(NAMES) + CHUNK - 1) // CHUNK)


def _flat(o):
    if isinstance(o, (tuple, list)):
        for x in o:
            yield from _flat(x)
    else:
        yield o


def _prepare(name, f32):
    fn, inputs = SAMPLES[name]()
    inputs = [i.detach() if isinstance(i, ember.Tensor) else i for i in inputs]
    if f32:
        inputs = [i.float() if isinstance(i, ember.Tensor) and i.dtype == ember.float64
                  else i for i in inputs]
    return fn, inputs


def _clone(xs):
    return [x.clone() if isinstance(x, ember.Tensor) else x for x in xs]


def _compare(name, got, want, f32):
    for a, b in zip(_flat(got), _flat(want)):
        if not isinstance(b, ember.Tensor):
            continue
        assert isinstance(a, ember.Tensor), f"{name}: {type(a).__name__}"
        assert a.dtype == b.dtype, f"{name}: dtype {a.dtype} != {b.dtype}"
        assert tuple(a.shape) == tuple(b.shape), f"{name}: shape {a.shape} != {b.shape}"
        an, bn = a.numpy(), b.numpy()
        if not b.dtype.is_floating_point:
            assert np.array_equal(an, bn) or np.allclose(an, bn, equal_nan=True), name
        else:
            tol = 1e-2 if b.dtype in (ember.float16, ember.bfloat16) else \
                2e-4 if f32 or b.dtype == ember.float32 else 1e-6
            np.testing.assert_allclose(an.astype(np.float64), bn.astype(np.float64),
                                       rtol=tol, atol=tol, equal_nan=True, err_msg=name)


def _straight_line(fns):
    """def run_all(a): o0 = f0(*a[0]); ...; return (o0, ...): one straight-line frame (a
    loop or comprehension would be captured per iteration; each result in its own local
    because a graph break inside a half-built tuple loses the order, see the report)."""
    ns = {f"f{k}": f for k, f in enumerate(fns)}
    ns["ember"] = ember
    lines = [f"        o{k} = f{k}(*a[{k}])" for k in range(len(fns))]
    outs = ", ".join(f"o{k}" for k in range(len(fns)))
    src = "def run_all(a):\n    with ember.no_grad():\n" + "\n".join(lines) + \
        f"\n    return ({outs},)\n"
    exec(compile(src, "<samples>", "exec"), ns)     # noqa: S102 (test code)
    return ns["run_all"]


@pytest.mark.parametrize("variant", ["static", "dynamic", "float32"])
@pytest.mark.parametrize("chunk", CHUNKS)
def test_samples_compiled_equal_eager(chunk, variant):
    f32 = variant == "float32"
    cases = []
    for name in NAMES[chunk * CHUNK:(chunk + 1) * CHUNK]:
        fn, inputs = _prepare(name, f32)
        try:
            with ember.no_grad():
                want = fn(*_clone(inputs))
        except Exception:       # noqa: BLE001  (an invalid float32 copy: eager refuses it)
            continue
        cases.append((name, fn, inputs, want))
    run_all = _straight_line([c[1] for c in cases])
    ember._dynamo.reset()
    compiled = ember.compile(run_all, backend="inductor",
                             dynamic=True if variant == "dynamic" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = compiled([_clone(c[2]) for c in cases])
    for (name, _, _, want), g in zip(cases, got):
        _compare(name, g, want, f32)
