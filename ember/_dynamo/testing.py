"""Test backends and helpers (torch._dynamo.testing): count compiles, keep the graphs.

Why: the usual way to test a capture is to compile with a backend that records what it
was given: `CompileCounter` counts frames (graphs compiled) and ops, `EagerAndRecordGraphs`
keeps each GraphModule to assert on; both then run the graph eagerly, so results still
equal eager. `same` compares compiled and eager results with tolerances.
"""
import re

from .utils import same  # noqa: F401  (torch._dynamo.testing.same)

__all__ = ["CompileCounter", "CompileCounterWithBackend", "EagerAndRecordGraphs", "same",
           "normalize_gm"]


def _count_ops(gm):
    # PyTorch counts every call_* node (call_function, call_method, call_module)
    return sum(1 for node in gm.graph.nodes if "call" in node.op)


class CompileCounter:
    """A backend that counts compiled graphs (`frame_count`) and their ops (`op_count`)
    and runs each graph as it is."""

    def __init__(self):
        self.clear()

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.op_count += _count_ops(gm)
        return gm.forward

    def clear(self):
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend:
    """CompileCounter that also keeps the graphs and compiles them with `backend` (a name or
    a compiler function)."""

    def __init__(self, backend):
        self.backend = backend
        self.clear()

    def __call__(self, gm, example_inputs):
        from .backends.registry import lookup_backend
        self.frame_count += 1
        self.op_count += _count_ops(gm)
        self.graphs.append(gm)
        return lookup_backend(self.backend)(gm, example_inputs)

    def clear(self):
        self.frame_count = 0
        self.op_count = 0
        self.graphs = []


class EagerAndRecordGraphs:
    """backend="eager" that also keeps every graph it was given in `.graphs`."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def strip_comment(code):
    return re.sub(r"(?m)^ *#.*\n?", "", code)


def remove_trailing_space(code):
    return "\n".join([line.rstrip() for line in code.split("\n")])


def _squash_blank_lines(code):
    result, saw_blank = [], False
    for line in code.split("\n"):
        if line.strip() == "":
            if saw_blank:
                continue
            saw_blank = True
        else:
            saw_blank = False
        result.append(line)
    return "\n".join(result)


def normalize_gm(gm_str):
    """Readable-graph text without comment lines (they hold file paths), trailing spaces
    or runs of blank lines, for comparing `gm.print_readable(print_output=False)` with an
    expected string (PyTorch's helper)."""
    return _squash_blank_lines(remove_trailing_space(strip_comment(gm_str)))
