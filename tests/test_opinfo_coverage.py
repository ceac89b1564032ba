"""scripts/opinfo_coverage.py on a fixed subset of PyTorch's OpInfo database.

Why: the full run (a few minutes) measures the op surface; this subset keeps regressions in
ops that pass every OpInfo sample today from slipping in. Samples are torch's own
(torch.testing._internal), values/dtypes/shapes compared with torch.
"""
import os
import sys

import pytest

pytest.importorskip("expecttest")
pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
opinfo_coverage = pytest.importorskip("opinfo_coverage")

# every sample of these passes today (a spread over the op families and namespaces)
SUBSET = [
    "add", "__radd__", "__rsub__", "div", "pow", "clamp", "exp2", "log10", "isneginf",
    "matmul", "addmm", "einsum", "sum", "mean", "var_mean", "aminmax", "argmin", "cumsum",
    "cat", "view", "reshape", "narrow", "transpose", "rot90", "unfold", "__getitem__",
    "index_put", "masked_fill", "scatter_reduce", "put", "resize_", "where", "nonzero",
    "bucketize", "arange", "linspace", "triu_indices", "polar",
    "linalg.svd", "linalg.solve", "linalg.slogdet", "linalg.lu_factor", "fft.fft",
    "fft.ifftshift", "special.erfcx", "special.bessel_y0", "masked.sum", "masked.argmin",
    "signal.windows.hann", "stft",
    "softmax", "nn.functional.conv2d", "nn.functional.cross_entropy",
    "nn.functional.layer_norm", "nn.functional.embedding", "nn.functional.interpolate",
    "nn.functional.pad", "nn.functional.max_pool2d", "nn.functional.gelu",
    "nn.functional.cosine_similarity",
]


@pytest.mark.slow
def test_opinfo_subset_passes():
    per = opinfo_coverage.measure(set(SUBSET), max_samples=3, workers=2, quiet=True)
    assert sorted(per) == sorted(set(SUBSET))
    bad = {n: (r["passed"], r["total"], next(iter(r["failures"]), ""))
           for n, r in per.items() if r["total"] == 0 or r["passed"] != r["total"]}
    assert not bad, bad
    head = opinfo_coverage.headline(per)
    assert head["op_names_passing_one"] == len(set(SUBSET))


def test_compare_catches_a_wrong_result():
    """The comparison itself: a wrong value, dtype or shape is reported, not passed."""
    import torch

    import ember
    cmp = opinfo_coverage.compare
    t = torch.tensor([1.0, 2.0])
    cmp(ember.tensor([1.0, 2.0]), t, torch.float32, False)
    for e, kind in [(ember.tensor([1.0, 2.5]), "values"), (ember.tensor([1, 2]), "dtype"),
                    (ember.tensor([[1.0, 2.0]]), "shape")]:
        with pytest.raises(AssertionError, match=kind):
            cmp(e, t, torch.float32, False)
