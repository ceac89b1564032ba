"""Which public PyTorch functions ember lacks, per namespace (needs torch installed).

Usage: python scripts/api_coverage.py [--markdown]
Compares torch.<ns> with ember.<ns> for torch, torch.Tensor, torch.linalg, torch.fft,
torch.special, torch.nn, torch.nn.functional, torch.optim; prints what is missing.
Private names, classes of dtypes/storages, CUDA/distributed/quantized/sparse-only
entries and deprecated aliases PyTorch itself hides are left out.
"""
import inspect
import sys

import torch

import ember

NAMESPACES = ["", "Tensor", "linalg", "fft", "special", "nn", "nn.functional", "optim"]
SKIP_PREFIXES = ("_", "cuda", "sparse", "quantize", "q_", "mkldnn", "fbgemm", "cudnn",
                 "miopen", "xpu", "mps", "to_sparse", "is_sparse", "nested", "segment_",
                 "native_", "slow_", "conv_tbc", "vulkan", "fake_quantize", "dequantize",
                 "quantized", "has_", "ccol", "crow", "row_indices", "col_indices", "mtia",
                 "hpu", "ipu", "storage", "untyped", "set_", "get_", "is_")
SKIP = {"Tensor", "Size", "dtype", "device", "Generator", "Stream", "Event", "layout",
        "memory_format", "finfo", "iinfo", "autograd", "jit", "overrides", "utils",
        "testing", "backends", "distributed", "compiler", "export", "onnx", "ao",
        "fx", "library", "ops", "package", "profiler", "futures", "hub", "multiprocessing",
        "serialization", "types", "version", "torch", "classes", "functional",
        "random", "return_types", "amp", "cpu", "nn", "optim", "fft", "linalg",
        "special", "masked", "func", "signal", "accelerator", "mps", "xpu"}


def public(obj, classes=True):
    out = set()
    for name in dir(obj):
        if name in SKIP or name.startswith(SKIP_PREFIXES):
            continue
        if not classes and name[:1].isupper():     # torch's C++ types, legacy *Tensor
            continue
        try:
            v = getattr(obj, name)
        except Exception:
            continue
        if inspect.ismodule(v) or not callable(v):
            continue
        out.add(name)
    return out


def resolve(root, ns):
    obj = root
    for part in filter(None, ns.split(".")):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def main():
    md = "--markdown" in sys.argv
    for ns in NAMESPACES:
        t = resolve(torch, ns)
        e = resolve(ember, ns)
        names = public(t, classes=bool(ns))
        missing = sorted(names) if e is None else sorted(n for n in names if not hasattr(e, n))
        label = "torch" + ("." + ns if ns else "")
        have = len(names) - len(missing)
        if md:
            print(f"- **{label}**: {have}/{len(names)} present; missing ({len(missing)}): "
                  + (", ".join(f"`{m}`" for m in missing) if missing else "none"))
        else:
            print(f"{label}: {have}/{len(names)}; missing: {' '.join(missing)}")


if __name__ == "__main__":
    main()
