"""The "inductor" backend (ember.compile's default): decompose, fuse, generate C.

Why it goes through AOT autograd: the generated code has no autograd, so graphs whose
inputs require grad need the joint forward/backward graph of AOT autograd
(ember._functorch.aot_autograd); its forward and backward graphs are each compiled by
compile_fx_inner, and so is the inference graph.

`mode=` as torch.compile, with CPU meanings (_MODES): "reduce-overhead" runs each graph as
one C call with its intermediates preallocated once per input sizes (cpp_wrapper +
cpu_graphs, where PyTorch uses CUDA graphs); "max-autotune" also times kernel variants
at compile time (config.max_autotune), "max-autotune-no-cudagraphs" without the
preallocation. `options=` set ember._inductor.config knobs for this compilation
({"cpp.threads": 1, "cpp_wrapper": True}); an unknown key raises, as in PyTorch.
"""
import contextlib

from .registry import register_backend


def _aot():
    try:
        from ..._functorch.aot_autograd import aot_module_simplified
    except ImportError:
        return None
    return aot_module_simplified


@contextlib.contextmanager
def _patched(options):
    from ..._inductor import config
    saved = []
    try:
        for key, value in (options or {}).items():
            obj, _, attr = key.rpartition(".")
            owner = getattr(config, obj) if obj else config
            if obj and not isinstance(owner, type) or not hasattr(owner, attr) \
                    or attr.startswith("_"):
                raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                                   f"{sorted(_known(config))}")
            saved.append((owner, attr, getattr(owner, attr)))
            setattr(owner, attr, value)
        yield
    finally:
        for owner, attr, value in reversed(saved):
            setattr(owner, attr, value)


def _known(config):
    out = []
    for k, v in vars(config).items():
        if k.startswith("_") or callable(v) and not isinstance(v, type):
            continue
        if isinstance(v, type):
            out += [f"{k}.{a}" for a in vars(v) if not a.startswith("_")]
        elif not hasattr(v, "__file__"):
            out.append(k)
    return out


# the config knobs each mode sets (torch._inductor.list_mode_options' CPU counterpart)
_MODES = {"default": {},
          "reduce-overhead": {"cpp_wrapper": True, "cpu_graphs": True},
          "max-autotune": {"cpp_wrapper": True, "cpu_graphs": True, "max_autotune": True},
          "max-autotune-no-cudagraphs": {"max_autotune": True}}


@register_backend
def inductor(gm, example_inputs, mode=None, options=None, **kwargs):
    """Compile `gm` to fused C loops around extern (NumPy/BLAS) calls."""
    from ..._inductor.compile_fx import compile_fx_inner

    options = dict(_MODES.get(mode or "default"), **(options or {}))

    def inner(g, inputs):
        with _patched(options):
            return compile_fx_inner(g, inputs)
    aot = _aot()
    if aot is not None:
        return aot(gm, example_inputs, fw_compiler=inner, bw_compiler=inner)
    return inner(gm, example_inputs)
