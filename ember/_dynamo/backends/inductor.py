"""The "inductor" backend (ember.compile's default): decompose, fuse, generate C.

Why it goes through AOT autograd: the generated code has no autograd, so graphs whose
inputs require grad need the joint forward/backward graph of AOT autograd
(ember._functorch.aot_autograd); its forward and backward graphs are each compiled by
compile_fx_inner, and so is the inference graph.

`mode=` as torch.compile on CPU: "reduce-overhead" (CUDA graphs in PyTorch, which CPU code
does not use) and "max-autotune" compile as "default" here. `options=` set
ember._inductor.config knobs for this compilation ({"cpp.threads": 1}); an unknown key
raises, as in PyTorch.
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
            if key == "cpp_wrapper":
                if value:
                    raise NotImplementedError(
                        "ember inductor: options={'cpp_wrapper': True} (the whole graph as "
                        "one C function) is not built; the Python wrapper is generated")
                continue
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
    out = ["cpp_wrapper"]
    for k, v in vars(config).items():
        if k.startswith("_") or callable(v) and not isinstance(v, type):
            continue
        if isinstance(v, type):
            out += [f"{k}.{a}" for a in vars(v) if not a.startswith("_")]
        elif not hasattr(v, "__file__"):
            out.append(k)
    return out


@register_backend
def inductor(gm, example_inputs, mode=None, options=None, **kwargs):
    """Compile `gm` to fused C loops around extern (NumPy/BLAS) calls."""
    from ..._inductor.compile_fx import compile_fx_inner

    def inner(g, inputs):
        with _patched(options):
            return compile_fx_inner(g, inputs)
    aot = _aot()
    if aot is not None:
        return aot(gm, example_inputs, fw_compiler=inner, bw_compiler=inner)
    return inner(gm, example_inputs)
