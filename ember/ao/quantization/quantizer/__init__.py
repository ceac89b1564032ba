"""Quantizers for pt2e: the base contract and the XNNPACK and x86 Inductor recipes."""
from .quantizer import (DerivedQuantizationSpec, EdgeOrNode, FixedQParamsQuantizationSpec,
                        QuantizationAnnotation, QuantizationSpec, QuantizationSpecBase,
                        Quantizer, SharedQuantizationSpec)

__all__ = ["DerivedQuantizationSpec", "EdgeOrNode", "FixedQParamsQuantizationSpec",
           "QuantizationAnnotation", "QuantizationSpec", "QuantizationSpecBase", "Quantizer",
           "SharedQuantizationSpec"]
