"""ember.fx: torch.fx's graph IR, code generation, interpreter and symbolic tracer.

Note: `ember.compile` hands its backends an `ember.fx.GraphModule`; the same classes
serve plain-Python graph transforms (`symbolic_trace`, `Interpreter`, `Transformer`).
"""
from .node import Node, map_arg, map_aggregate, has_side_effect  # noqa: F401
from .graph import Graph, PythonCode  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .proxy import Proxy, Attribute, TraceError  # noqa: F401
from ._symbolic_trace import Tracer, symbolic_trace, wrap, PH, proxy_calls  # noqa: F401
from .interpreter import Interpreter, Transformer  # noqa: F401
from . import passes, subgraph_rewriter  # noqa: F401,E402

__all__ = ["Node", "Graph", "GraphModule", "PythonCode", "map_arg", "map_aggregate",
           "has_side_effect", "Proxy", "Attribute", "TraceError", "Tracer", "symbolic_trace",
           "wrap", "PH", "proxy_calls", "Interpreter", "Transformer"]
