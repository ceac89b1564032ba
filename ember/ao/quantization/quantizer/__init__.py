"""Quantizers for pt2e: the base contract and the XNNPACK and x86 Inductor recipes."""
from .composable_quantizer import ComposableQuantizer
from .quantizer import (DerivedQuantizationSpec, EdgeOrNode, FixedQParamsQuantizationSpec,
                        QuantizationAnnotation, QuantizationSpec, QuantizationSpecBase,
                        Quantizer, SharedQuantizationSpec)

__all__ = ["ComposableQuantizer", "DerivedQuantizationSpec", "EdgeOrNode",
           "FixedQParamsQuantizationSpec",
           "QuantizationAnnotation", "QuantizationSpec", "QuantizationSpecBase", "Quantizer",
           "SharedQuantizationSpec"]
