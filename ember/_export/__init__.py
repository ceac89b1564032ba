"""ember._export.capture_pre_autograd_graph: PyTorch 2.1's capture for pt2e quantization.

Why: pt2e quantization rewrites a graph whose weights are attributes of the graph
module (get_attr nodes), not inputs, so observers can sit on weights and convert can
fold them into int8 constants. The capture is ember.export's (one capture for
compile, export and quantization), then "unlifted": parameter and buffer
placeholders become get_attr nodes on a GraphModule that shares the model's tensors.

Train/eval: the graph is captured with every module in eval mode (BatchNorm reads its
running statistics, dropout is the identity). When the model was training,
BatchNorm nodes are switched to batch statistics (their eager kernel then updates
the running statistics in place, as the module does); move_exported_model_to_eval/
train flip that switch. Dropout is not kept in the graph (a documented difference
from PyTorch, whose captured graph keeps it).
"""
from ._unlift import capture_pre_autograd_graph, unlift_exported_program

__all__ = ["capture_pre_autograd_graph", "unlift_exported_program"]
