"""What the capture writes to the `graph_breaks`, `recompiles`, `guards`, `graph_code`
and `dynamic` logs (EMBER_LOGS / TORCH_LOGS, ember._logging.set_logs)."""
import logging
import warnings

from .._logging import getArtifactLogger

_breaks = getArtifactLogger("ember._dynamo", "graph_breaks")
_recompiles = getArtifactLogger("ember._dynamo", "recompiles")
_guards = getArtifactLogger("ember._dynamo", "guards")
_code = getArtifactLogger("ember._dynamo", "graph_code")
_dynamic = logging.getLogger("ember._symbolic")
_debug = logging.getLogger("ember._dynamo")


def graph_break(reason, stack):
    if _breaks.isEnabledFor(logging.DEBUG):
        where = f"{stack[-1].filename}:{stack[-1].lineno} in {stack[-1].name}" if stack else "?"
        _breaks.debug("Graph break: %s\n  at %s", reason, where)


def recompile(code, offset, n):
    _recompiles.debug("Recompiling function %s in %s:%s (entry %d at offset %d)",
                      code.co_name, code.co_filename, code.co_firstlineno, n + 1, offset)


def recompile_limit(code, limit):
    msg = (f"ember._dynamo hit config.cache_size_limit ({limit}) for function "
           f"{code.co_name} in {code.co_filename}:{code.co_firstlineno}; it now runs "
           "eagerly. Raise ember._dynamo.config.cache_size_limit, or make the varying "
           "inputs dynamic (mark_dynamic / dynamic=True).")
    _recompiles.warning(msg)
    warnings.warn(msg, stacklevel=3)


def compiled(seg, code):
    if _guards.isEnabledFor(logging.DEBUG):
        _guards.debug("GUARDS for %s:\n%s", code.co_name, "\n".join(seg.guard_text))
    if seg.gm is not None and _code.isEnabledFor(logging.DEBUG):
        _code.debug("TRACED GRAPH %s\n%s", code.co_name, seg.gm.print_readable(
            print_output=False))
    if seg.gm is not None and _dynamic.isEnabledFor(logging.INFO):
        syms = [n for n in seg.gm.graph.nodes if n.op == "call_function"
                and getattr(n.target, "__name__", "") == "sym_size"]
        if syms:
            _dynamic.info("symbolic sizes in %s: %s", code.co_name,
                           ", ".join(f"{n.args[0]}.size({n.args[1]})" for n in syms))
    _debug.debug("compiled %s: %d ops", code.co_name, seg.ops)


def pinned_static(code, sources):
    if _dynamic.isEnabledFor(logging.INFO):
        _dynamic.info("%s: the captured graph depends on the example sizes of %s; they stay "
                      "static", code.co_name, ", ".join(s.expr() for s in sources))
