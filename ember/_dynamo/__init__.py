"""ember._dynamo: graph capture for ember.compile (torch._dynamo's API).

Note: a bytecode-level symbolic interpreter (DESIGN §7.1; README "How ember.compile
captures"): ember/_dynamo/symbolic_convert.py interprets the user's bytecode, records
registry ops on fake tensors into ember.fx graphs with guards, and splits the function
at graph breaks; ember/_dynamo/runtime.py runs the compiled segments."""
from . import config, exc
from .eval_frame import (compile, OptimizedModule, disable, optimize, explain, mark_dynamic,
                         maybe_mark_dynamic, mark_static)
from .runtime import reset as _reset_caches, is_compiling
from .variables.builder import allow_in_graph
from .backends.registry import register_backend, list_backends, lookup_backend

__all__ = ["compile", "OptimizedModule", "disable", "optimize", "explain", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static", "reset", "is_compiling", "allow_in_graph",
           "register_backend", "list_backends", "lookup_backend", "config", "exc"]


def reset():
    """Forgets every compiled graph, guard and automatic-dynamic observation."""
    _reset_caches()
