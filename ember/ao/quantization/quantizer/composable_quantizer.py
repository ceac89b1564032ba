"""ComposableQuantizer: several quantizers annotate one graph, in order.

Why: a model may need one backend's recipe for most ops and another's for a few
(an embedding quantizer plus XNNPACK, say). Earlier quantizers win: annotators skip
nodes already marked `_annotated`. Each quantizer's annotations are checked to stay
untouched by the later ones, as PyTorch does.
"""
from .quantizer import Q_ANNOTATION_KEY, Quantizer

__all__ = ["ComposableQuantizer"]


class ComposableQuantizer(Quantizer):
    def __init__(self, quantizers):
        super().__init__()
        self.quantizers = list(quantizers)
        self._graph_annotations = {}

    def _record_and_check(self, gm, quantizer):
        for n in gm.graph.nodes:
            if Q_ANNOTATION_KEY not in n.meta:
                continue
            qa = n.meta[Q_ANNOTATION_KEY]
            if n in self._graph_annotations and id(self._graph_annotations[n]) != id(qa):
                raise RuntimeError(f"Quantizer {type(quantizer).__name__} has changed "
                                   f"annotations on node {n}")
            self._graph_annotations[n] = qa

    def annotate(self, model):
        for quantizer in self.quantizers:
            quantizer.annotate(model)
            self._record_and_check(model, quantizer)
        return model

    def transform_for_annotation(self, model):
        for quantizer in self.quantizers:
            model = quantizer.transform_for_annotation(model)
        return model

    def validate(self, model):
        for quantizer in self.quantizers:
            quantizer.validate(model)
