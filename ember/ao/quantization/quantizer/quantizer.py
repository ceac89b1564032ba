"""The quantizer contract of PyTorch 2 export quantization (pt2e).

Why: a backend says how to quantize a captured graph by writing a
QuantizationAnnotation into `node.meta["quantization_annotation"]`: which input edges
and which output get an observer, and with what spec. prepare_pt2e reads only these
annotations, so a user-written Quantizer plugs in with no other hooks.
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from ....fx import Node

__all__ = ["Quantizer", "QuantizationSpecBase", "QuantizationSpec",
           "FixedQParamsQuantizationSpec", "EdgeOrNode", "SharedQuantizationSpec",
           "DerivedQuantizationSpec", "QuantizationAnnotation", "Q_ANNOTATION_KEY"]

Q_ANNOTATION_KEY = "quantization_annotation"


class QuantizationSpecBase(ABC):  # noqa: B024
    """Base of the specs that say how one tensor (an input edge or an output) is
    quantized."""


@dataclass(eq=True, frozen=True)
class QuantizationSpec(QuantizationSpecBase):
    """dtype, range and scheme of a tensor plus the observer (or fake-quant) class that
    measures it."""

    dtype: object
    observer_or_fake_quant_ctr: Callable
    quant_min: Optional[int] = None
    quant_max: Optional[int] = None
    qscheme: Optional[object] = None
    ch_axis: Optional[int] = None
    is_dynamic: bool = False

    def __post_init__(self):
        if (self.quant_min is not None and self.quant_max is not None
                and self.quant_min > self.quant_max):
            raise ValueError(f"quant_min {self.quant_min} must be <= quant_max "
                             f"{self.quant_max}.")
        if self.ch_axis is not None and self.ch_axis < 0:
            raise ValueError("Ch_axis is < 0.")


@dataclass(eq=True, frozen=True)
class FixedQParamsQuantizationSpec(QuantizationSpecBase):
    """A tensor with known scale/zero_point (sigmoid's output, for example)."""

    dtype: object
    scale: float
    zero_point: int
    quant_min: Optional[int] = None
    quant_max: Optional[int] = None
    qscheme: Optional[object] = None
    is_dynamic: bool = False


# An input edge (producer node, consumer node) or a node's output.
EdgeOrNode = Union[tuple, Node]


@dataclass(eq=True, frozen=True)
class SharedQuantizationSpec(QuantizationSpecBase):
    """Use the same observer (so the same qparams) as another edge or output."""

    edge_or_node: EdgeOrNode


@dataclass(eq=True, frozen=True)
class DerivedQuantizationSpec(QuantizationSpecBase):
    """qparams computed from other observers (bias scale = input scale * weight scale)."""

    derived_from: list
    derive_qparams_fn: Callable
    dtype: object
    quant_min: Optional[int] = None
    quant_max: Optional[int] = None
    qscheme: Optional[object] = None
    ch_axis: Optional[int] = None
    is_dynamic: bool = False


@dataclass
class QuantizationAnnotation:
    """How one node's inputs (`input_qspec_map`: input node -> spec) and output are
    quantized. `allow_implicit_sharing` lets an input edge share the producer's output
    observer when their specs agree; `_annotated` marks nodes a quantizer claimed."""

    input_qspec_map: dict = field(default_factory=dict)
    output_qspec: Optional[QuantizationSpecBase] = None
    allow_implicit_sharing: bool = True
    _annotated: bool = False


class Quantizer(ABC):
    """A backend's quantization rules: annotate the graph, then check it."""

    def transform_for_annotation(self, model):
        """Optional rewrite before annotation (e.g. decompose an op the backend cannot
        quantize whole)."""
        return model

    @abstractmethod
    def annotate(self, model):
        pass

    @abstractmethod
    def validate(self, model):
        pass

    def prepare_obs_or_fq_callback(self, model, edge_or_node_to_obs_or_fq):
        """Called with the observers made per sharing group, before they are inserted;
        may adjust them."""
        return
