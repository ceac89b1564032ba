"""QConfig: which observers (classes, not instances) quantize a module's activations and
weights; the default configurations PyTorch ships, and `get_default_qconfig(backend)`."""
from collections import namedtuple

import ember
from ... import nn
from .fake_quantize import (default_dynamic_fake_quant, default_fake_quant,
                            default_fused_act_fake_quant, default_fused_wt_fake_quant,
                            default_per_channel_weight_fake_quant, default_weight_fake_quant,
                            FakeQuantize, FusedMovingAvgObsFakeQuantize)
from .observer import (HistogramObserver, MovingAverageMinMaxObserver, NoopObserver,
                       PlaceholderObserver, default_debug_observer,
                       default_dynamic_quant_observer, default_float_qparams_observer,
                       default_float_qparams_observer_4bit, default_observer,
                       default_per_channel_weight_observer, default_placeholder_observer,
                       default_reuse_input_observer, default_weight_observer)

__all__ = [
    "QConfig", "QConfigDynamic", "default_qconfig", "default_debug_qconfig",
    "default_per_channel_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
    "float16_static_qconfig", "per_channel_dynamic_qconfig",
    "float_qparams_weight_only_qconfig", "float_qparams_weight_only_qconfig_4bit",
    "default_qat_qconfig", "default_dynamic_qat_qconfig", "default_weight_only_qconfig",
    "default_activation_only_qconfig", "default_qat_qconfig_v2", "default_reuse_input_qconfig",
    "get_default_qconfig", "get_default_qat_qconfig", "qconfig_equals",
]

SUPPORTED_BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """Observer constructors for activations and weights: each module gets its own
    instances (`MinMaxObserver.with_args(dtype=ember.qint8)`, not `MinMaxObserver()`)."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments to "
                             "constructor if needed")
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """The pre-1.12 dynamic QConfig (PyTorch deprecates it for QConfig)."""

    __slots__ = ()

    def __new__(cls, activation=nn.Identity, weight=nn.Identity):
        if isinstance(weight, nn.Module):
            raise ValueError("QConfigDynamic received observer instance, please pass observer "
                             "class instead. Use MyObserver.with_args(x=1) to override "
                             "arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(weight=default_weight_observer,
                                activation=default_debug_observer)
default_per_channel_qconfig = QConfig(activation=default_observer,
                                      weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=ember.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=ember.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=ember.float16),
                                 weight=PlaceholderObserver.with_args(dtype=ember.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
float_qparams_weight_only_qconfig_4bit = QConfig(activation=default_placeholder_observer,
                                                 weight=default_float_qparams_observer_4bit)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(activation=default_dynamic_fake_quant,
                                      weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=nn.Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=nn.Identity)
default_qat_qconfig_v2 = QConfig(activation=default_fused_act_fake_quant,
                                 weight=default_fused_wt_fake_quant)
default_reuse_input_qconfig = QConfig(activation=default_reuse_input_observer,
                                      weight=NoopObserver)


def _check_backend(backend, version, what, versions):
    if backend not in SUPPORTED_BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of "
                             f"{SUPPORTED_BACKENDS}")
    if version not in versions:
        raise AssertionError(f"Version number: {version} in {what} is not supported. Version "
                             f"number must be {' or '.join(map(str, versions))}")


def get_default_qconfig(backend="x86", version=0):
    """The default post-training QConfig of a backend: histogram activations (reduce_range
    on x86/fbgemm, whose u8 x s8 kernels could saturate), per-channel weights except on
    qnnpack."""
    _check_backend(backend, version, "get_default_qconfig", (0,))
    reduce = backend in ("fbgemm", "x86")
    weight = default_weight_observer if backend == "qnnpack" else \
        default_per_channel_weight_observer
    return QConfig(activation=HistogramObserver.with_args(reduce_range=reduce), weight=weight)


def get_default_qat_qconfig(backend="x86", version=1):
    """The default QAT QConfig of a backend (version 1: fused observer + fake quant)."""
    _check_backend(backend, version, "get_default_qat_qconfig", (0, 1))
    reduce = backend in ("fbgemm", "x86")
    fq = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    act = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                       reduce_range=reduce)
    if backend == "qnnpack":
        weight = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    else:
        weight = default_per_channel_weight_fake_quant
    return QConfig(activation=act, weight=weight)


def qconfig_equals(q1, q2):
    """Whether two QConfigs build the same observers (partials compared by their arguments)."""
    if q1 is None or q2 is None:
        return q1 is q2
    return all(_ctor_equals(getattr(q1, f), getattr(q2, f)) for f in ("activation", "weight"))


def _ctor_equals(a, b):
    pa, pb = getattr(a, "p", None), getattr(b, "p", None)
    if pa is not None and pb is not None:
        return pa.func == pb.func and pa.keywords == pb.keywords and pa.args == pb.args
    return a == b
