"""Eager-mode quantization: quantize_dynamic, and prepare/convert for QuantStub models.

Note: as PyTorch's eager flow, each module gets a `qconfig` (propagate_qconfig_: from a
spec keyed by module type or qualified name, inherited by children); `convert` swaps every
module whose type is in the mapping for its quantized class via `from_float`, children
first. `prepare` attaches the qconfig's activation observer to the modules it will swap
(a forward hook records their outputs) so `convert` can read their qparams.
"""
import copy
import itertools

import ember
from ... import nn
from . import qconfig as Q
from ._qtensor import quantize_per_channel, quantize_per_tensor
from .fuse_modules import fuse_modules
from .stubs import DeQuantStub, QuantStub

__all__ = ["quantize_dynamic", "propagate_qconfig_", "prepare", "convert", "quantize",
           "fuse_modules",
           "get_default_dynamic_quant_module_mappings",
           "get_default_static_quant_module_mappings"]

_DYNAMIC_TYPES = (nn.Linear, nn.LSTM, nn.GRU)


def get_default_dynamic_quant_module_mappings():
    """Float module type -> dynamic quantized module class."""
    from ..nn.quantized import dynamic as nnqd      # ember.ao.nn imports this package
    return {nn.Linear: nnqd.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear:
            nnqd.Linear, nn.LSTM: nnqd.LSTM, nn.GRU: nnqd.GRU}


def get_default_static_quant_module_mappings():
    """Float module type -> static quantized module class (ember has Linear, Conv2d, their
    fused ReLU forms and the stubs)."""
    from ..nn import intrinsic as nni, quantized as nnq
    from ..nn.intrinsic import quantized as nniq
    return {QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, nn.Linear: nnq.Linear,
            nn.Conv2d: nnq.Conv2d, nni.LinearReLU: nniq.LinearReLU,
            nni.ConvReLU2d: nniq.ConvReLU2d, nnq.FloatFunctional: nnq.QFunctional}


def _quantize_weight(float_wt, observer):
    """The weight quantized with its observer's qparams (per tensor or per channel)."""
    scale, zp = observer.calculate_qparams()
    qscheme = observer.qscheme
    if qscheme in (ember.per_tensor_symmetric, ember.per_tensor_affine):
        return quantize_per_tensor(float_wt, float(scale.reshape(-1)[0]),
                                   int(zp.reshape(-1)[0]), ember.qint8)
    if qscheme in (ember.per_channel_symmetric, ember.per_channel_affine):
        return quantize_per_channel(float_wt, scale.double(), zp.long(), observer.ch_axis,
                                    ember.qint8)
    if qscheme == ember.per_channel_affine_float_qparams:
        return quantize_per_channel(float_wt, scale.double(), zp.float(), observer.ch_axis,
                                    observer.dtype)
    raise ValueError(f"Unexpected qscheme {qscheme}")


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Sets `.qconfig` on every module: its own `.qconfig` if it has one, else the entry
    for its qualified name, else for its type, else its parent's."""
    qconfig_dict = {} if qconfig_dict is None else qconfig_dict
    _propagate(module, qconfig_dict, None, "")


def _propagate(module, spec, parent, prefix):
    qconfig = spec.get(type(module), parent)
    qconfig = spec.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, spec, qconfig, prefix + "." + name if prefix else name)


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    from .fake_quantize import FakeQuantizeBase
    from .observer import ObserverBase
    if isinstance(getattr(module, "activation_post_process", None),
                  (ObserverBase, FakeQuantizeBase)):
        del module.activation_post_process


def _default_dynamic_spec(dtype, types):
    configs = {ember.qint8: Q.default_dynamic_qconfig, ember.float16: Q.float16_dynamic_qconfig}
    if dtype not in configs:
        return None
    return dict(zip(types, itertools.repeat(configs[dtype])))


def quantize_dynamic(model, qconfig_spec=None, dtype=ember.qint8, mapping=None, inplace=False):
    """A copy of `model` (or `model` itself with inplace=True) whose Linear/LSTM/GRU modules
    (or those named in qconfig_spec: a set of types, or a dict of type / qualified name ->
    QConfig) are their dynamic quantized versions."""
    if qconfig_spec is None:
        qconfig_spec = _default_dynamic_spec(dtype, _DYNAMIC_TYPES)
        if qconfig_spec is None:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                             "Provide full qconfig please")
    elif isinstance(qconfig_spec, set):
        qconfig_spec = _default_dynamic_spec(dtype, qconfig_spec)
        if qconfig_spec is None:
            raise RuntimeError(f"Unknown dtype specified for quantize_dynamic: {dtype}")
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def _swap(module, mapping):
    if getattr(module, "qconfig", None) is not None and type(module) in mapping:
        return mapping[type(module)].from_float(module)
    return module


def _convert(module, mapping):
    from ..nn.intrinsic import _FusedModule
    for name, child in list(module.named_children()):
        if not isinstance(child, _FusedModule):        # a fused module is swapped whole
            _convert(child, mapping)
        new = _swap(child, mapping)
        if new is not child:
            setattr(module, name, new)


def convert(module, mapping=None, inplace=False, remove_qconfig=True,
            is_reference=False, convert_custom_config_dict=None,
            use_precomputed_fake_quant=False):
    """Swaps each module with a qconfig whose type is in `mapping` (default: the static
    mappings) for mapping[type].from_float(module), children first."""
    if is_reference:
        raise NotImplementedError("convert(is_reference=True): ember has no reference "
                                  "quantized modules")
    if mapping is None:
        mapping = get_default_static_quant_module_mappings()
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def _observe_output(module, inputs, output):
    return module.activation_post_process(output)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attaches an output observer (qconfig.activation()) to every module convert will
    swap (QuantStub, Linear, Conv2d, fused modules as a whole), after propagating the
    root's qconfig."""
    from ..nn.intrinsic import _FusedModule
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    swappable = tuple(get_default_static_quant_module_mappings())
    _attach_observers(model, swappable, _FusedModule)
    return model


def _attach_observers(module, swappable, fused):
    from ..nn.quantized import FloatFunctional
    for child in module.children():
        if getattr(child, "qconfig", None) is not None and type(child) in swappable \
                and not isinstance(child, DeQuantStub):
            child.activation_post_process = child.qconfig.activation()
            if not isinstance(child, FloatFunctional):     # its methods call the observer
                child.register_forward_hook(_observe_output)
        if not isinstance(child, fused):
            _attach_observers(child, swappable, fused)


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """prepare, run_fn(model, *run_args) to calibrate, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True)
    return model
