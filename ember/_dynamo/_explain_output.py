"""What `ember._dynamo.explain(fn)(*args)` returns, with PyTorch's fields and text layout.

Why: explain is how users find out why a function compiled into several graphs: how many
graphs and breaks, each break's reason with the user's file and line, the ops of each graph
and the guards. PyTorch keeps these classes in torch._dynamo.backends.debugging and
torch._dynamo.output_graph; `str()` prints the same layout as PyTorch so that tutorials'
output reads the same.
"""
from dataclasses import dataclass

__all__ = ["ExplainOutput", "BreakReason", "GraphCompileReason", "ExplainWithBackend"]


@dataclass
class GraphCompileReason:
    """Why one graph was compiled: at a break (`graph_break=True`), the reason and the
    user's stack (a list of traceback.FrameSummary, innermost last)."""

    reason: str
    user_stack: list
    graph_break: bool = True


BreakReason = GraphCompileReason


@dataclass
class ExplainOutput:
    """The result of explain: graphs (ember.fx.GraphModule), counts, break reasons, the ops
    of each graph (node targets), the guards and the compile times text."""

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list = None
    out_guards: list = None
    compile_times: str = None

    def __str__(self):
        output = f"Graph Count: {self.graph_count}\n"
        output += f"Graph Break Count: {self.graph_break_count}\n"
        output += f"Op Count: {self.op_count}\n"
        output += "Break Reasons:\n"
        for idx, break_reason in enumerate(self.break_reasons):
            output += f"  Break Reason {idx + 1}:\n"
            output += f"    Reason: {break_reason.reason}\n"
            output += "    User Stack:\n"
            for frame_summary in break_reason.user_stack:
                output += f"      {frame_summary}\n"
        if self.ops_per_graph is not None:
            output += "Ops per Graph:\n"
            for idx, ops in enumerate(self.ops_per_graph):
                output += f"  Ops {idx + 1}:\n"
                for op in ops:
                    output += f"    {op}\n"
        if self.out_guards is not None:
            output += "Out Guards:\n"
            for i, guard in enumerate(self.out_guards):
                output += f"  Guard {i + 1}:\n"
                # a graph's whole guard set (a list of texts): one guard per line
                text = ("\n    ".join(map(str, guard)) if isinstance(guard, (list, tuple))
                        else str(guard))
                output += f"    {text}" + ("" if text.endswith("\n") else "\n")
        if self.compile_times is not None:
            output += f"Compile Times: {self.compile_times}\n"
        return output


def _explain_graph_detail(gm, graphs, op_count, ops_per_graph, break_reasons):
    """Add one compiled graph to explain's running totals (PyTorch's helper of this name):
    the graph, its call_function targets, and its compile reason if it ended at a break
    (`gm.compile_subgraph_reason`, set by the capture)."""
    graphs.append(gm)
    ops = [node.target for node in gm.graph.nodes if node.op == "call_function"]
    op_count += len(ops)
    ops_per_graph.append(ops)
    reason = getattr(gm, "compile_subgraph_reason", None)
    if reason is not None and reason.graph_break:
        break_reasons.append(reason)
    return gm, graphs, op_count, ops_per_graph, break_reasons


class ExplainWithBackend:
    """A backend that records what explain reports, then compiles with `backend`:

        eb = ExplainWithBackend("eager")
        ember.compile(fn, backend=eb)(x)
        print(eb.output())
    """

    def __init__(self, backend):
        from .backends.registry import lookup_backend
        self.backend = lookup_backend(backend)
        self.graphs = []
        self.op_count = 0
        self.break_reasons = []

    def __call__(self, gm, example_inputs):
        gm, self.graphs, self.op_count, _, self.break_reasons = _explain_graph_detail(
            gm, self.graphs, self.op_count, [], self.break_reasons)
        return self.backend(gm, example_inputs)

    def output(self):
        graph_count = len(self.graphs)
        return ExplainOutput(self.graphs, graph_count, graph_count - 1, self.break_reasons,
                             self.op_count)
