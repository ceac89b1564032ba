"""Which public PyTorch functions ember lacks, per namespace (needs torch installed).

Usage: python scripts/api_coverage.py [--markdown] [--modules]
Compares torch.<ns> with ember.<ns> for torch, torch.Tensor, torch.linalg, torch.fft,
torch.special, torch.nn, torch.nn.functional, torch.optim; prints what is missing.
Private names, classes of dtypes/storages, CUDA/distributed/quantized/sparse-only
entries and deprecated aliases PyTorch itself hides are left out.

Then module paths: every public module of the installed torch package (found on disk, so
torch's own submodules are not imported), minus private ones (a component starting with
"_"), device-specific ones (cuda, cudnn, mps, xpu, mtia, ...) and distributed internals
(below torch.distributed.<pkg>), and whether `import ember.<path>` works for each -- what
`ember run`'s import hook needs for `import torch.<path>`; and COMMON_PATHS, the paths
programs commonly import, separately. --modules prints only this part.
"""
import importlib
import importlib.util
import inspect
import os
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


DEVICE_PARTS = {"cuda", "cudnn", "cusparselt", "mps", "xpu", "mtia", "miopen", "nccl", "hip",
                "cufft", "cublas", "nvtx", "jiterator", "tunable", "kleidiai", "mha"}


# Toolchains around the runtime API (quantization, graph capture/export, ONNX, packaging,
# benchmarking utilities): counted, but also reported apart from the program-facing paths.
TOOLCHAINS = ("torch.ao", "torch.quantization", "torch.fx", "torch.onnx", "torch.export",
              "torch.package", "torch.nativert", "torch.nn.quantized", "torch.nn.quantizable",
              "torch.nn.intrinsic", "torch.nn.qat", "torch.jit.", "torch.utils.benchmark",
              "torch.utils.tensorboard", "torch.utils.hipify", "torch.utils.data.datapipes",
              "torch.utils.model_dump", "torch.utils.bottleneck", "torch.compiler",
              "torch.contrib", "torch.numa", "torch.utils.viz", "torch.utils.cpp_extension")


# Module paths PyTorch programs commonly import by name (`import torch.X`, `from torch.X import
# Y`), each with a name programs take from it: all must resolve under `ember run`
# (tests/test_module_paths.py checks them).
COMMON_PATHS = {
    "torch.nn.modules.activation": "MultiheadAttention",
    "torch.nn.modules.linear": "Linear",
    "torch.nn.modules.conv": "Conv2d",
    "torch.nn.modules.batchnorm": "_BatchNorm",
    "torch.nn.modules.loss": "_Loss",
    "torch.nn.modules.module": "Module",
    "torch.nn.modules.container": "Sequential",
    "torch.nn.modules.rnn": "LSTM",
    "torch.nn.modules.transformer": "TransformerEncoderLayer",
    "torch.nn.modules.utils": "_pair",
    "torch.nn.parameter": "Parameter",
    "torch.nn.init": "kaiming_uniform_",
    "torch.nn.functional": "cross_entropy",
    "torch.nn.common_types": "_size_2_t",
    "torch.nn.utils.rnn": "pad_sequence",
    "torch.nn.utils.clip_grad": "clip_grad_norm_",
    "torch.nn.utils.parametrize": "register_parametrization",
    "torch.nn.parallel": "DistributedDataParallel",
    "torch.nn.parallel.data_parallel": "DataParallel",
    "torch.serialization": "safe_globals",
    "torch.onnx": "export",
    "torch.onnx.errors": "UnsupportedOperatorError",
    "torch.onnx.utils": "export",
    "torch.export": "export",
    "torch.jit": "script",
    "torch.fx": "symbolic_trace",
    "torch.utils.tensorboard": "SummaryWriter",
    "torch.utils.data": "DataLoader",
    "torch.utils.data.distributed": "DistributedSampler",
    "torch.utils.checkpoint": "checkpoint",
    "torch.utils.dlpack": "from_dlpack",
    "torch.utils.backend_registration": "rename_privateuse1_backend",
    "torch.utils.hooks": "RemovableHandle",
    "torch.autograd": "Function",
    "torch.autograd.variable": "Variable",
    "torch.autograd.functional": "jacobian",
    "torch.autograd.profiler": "record_function",
    "torch.optim.lr_scheduler": "StepLR",
    "torch.optim.optimizer": "Optimizer",
    "torch.amp": "GradScaler",
    "torch.cpu.amp": "autocast",
    "torch.cuda.amp": "GradScaler",
    "torch.distributions": "Normal",
    "torch.distributed": "init_process_group",
    "torch.multiprocessing": "spawn",
    "torch.version": "cuda",
    "torch.hub": "load_state_dict_from_url",
    "torch.testing": "assert_close",
    "torch.profiler": "profile",
    "torch.backends.cudnn": "benchmark",
    "torch.func": "vmap",
    "torch.fft": "rfft",
    "torch.linalg": "norm",
    "torch.special": "erf",
    "torch.random": "manual_seed",
}


def _is_toolchain(path):
    return any(path == t.rstrip(".") or path.startswith(t.rstrip(".") + ".")
               for t in TOOLCHAINS)


def torch_module_paths():
    """Public module paths of the installed torch, from its files (nothing imported)."""
    root = importlib.util.find_spec("torch").submodule_search_locations[0]
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        parts = [] if rel == "." else rel.split(os.sep)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("_")
                             and os.path.exists(os.path.join(dirpath, d, "__init__.py")))
        if parts:
            paths.append(parts)
        paths += [parts + [f[:-3]] for f in sorted(filenames)
                  if f.endswith(".py") and not f.startswith("_")]
    keep = []
    for parts in paths:
        if any(p.startswith("_") or p in DEVICE_PARTS for p in parts):
            continue
        if parts[0] == "distributed" and len(parts) > 2:
            continue          # internals of torch.distributed.<pkg>
        keep.append("torch." + ".".join(parts))
    return sorted(set(keep))


def _resolves(path):
    try:
        importlib.import_module("ember" + path[len("torch"):])
        return True
    except ImportError:
        return False
    except Exception as e:  # noqa: BLE001 - a module that fails to import does not resolve
        print(f"  ({path}: importing ember's module raised {type(e).__name__}: {e})",
              file=sys.stderr)
        return False


def module_report(md):
    paths = torch_module_paths()
    groups = {}
    for p in paths:
        groups.setdefault(p.split(".")[1], []).append(p)
    total_have = 0
    lines = []
    for top in sorted(groups, key=lambda g: (-len(groups[g]), g)):
        have = [p for p in groups[top] if _resolves(p)]
        total_have += len(have)
        missing = [p for p in groups[top] if p not in have]
        if md:
            lines.append(f"- **torch.{top}**: {len(have)}/{len(groups[top])}"
                         + (f"; missing: {', '.join(f'`{m}`' for m in missing)}"
                            if missing else ""))
        else:
            lines.append(f"torch.{top}: {len(have)}/{len(groups[top])}"
                         + (f"; missing: {' '.join(missing)}" if missing else ""))
    program = [p for p in paths if not _is_toolchain(p)]
    program_have = sum(_resolves(p) for p in program)
    head = (f"module paths: {total_have}/{len(paths)} resolve in ember "
            f"({100.0 * total_have / len(paths):.1f}%); without the toolchain trees "
            f"(quantization, fx, onnx, export, package, benchmark utils, ...): "
            f"{program_have}/{len(program)} ({100.0 * program_have / len(program):.1f}%)")
    print(("**" + head + "**") if md else head)
    common_missing = [p for p in COMMON_PATHS if not _resolves(p)]
    print(f"commonly imported paths: {len(COMMON_PATHS) - len(common_missing)}/"
          f"{len(COMMON_PATHS)} resolve" + (f"; missing: {' '.join(common_missing)}"
                                             if common_missing else ""))
    for line in lines:
        print(line)


def main():
    md = "--markdown" in sys.argv
    if "--modules" in sys.argv:
        module_report(md)
        return
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
    module_report(md)


if __name__ == "__main__":
    main()
