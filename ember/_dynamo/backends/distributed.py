"""DDPOptimizer (torch._dynamo.backends.distributed): graphs of a DDP-wrapped module are
split at gradient-bucket boundaries.

Why: a backend that compiles the backward (aot_eager, inductor) turns the forward into one
autograd node, so every parameter's gradient would appear at the very end of backward and
DDP could not start any all-reduce early. Split into pieces holding about one bucket of
parameters each (in reverse use order, as DDP fills buckets), each piece is its own node:
the last piece's gradients are ready first and their bucket's all-reduce overlaps the rest
of backward, as in eager DDP."""
import logging

from ...fx.passes.split_module import split_module
from ...fx import Interpreter

log = logging.getLogger(__name__)

__all__ = ["DDPOptimizer"]


def _param_bytes(node):
    src = node.meta.get("source") or ""
    val = node.meta.get("val")
    if "_parameters[" not in src or val is None or not getattr(val, "requires_grad", False):
        return 0
    return int(val.numel()) * val.element_size()


class DDPOptimizer:
    def __init__(self, bucket_bytes_cap, backend_compile_fn, first_bucket_cap=None):
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_cap = bucket_bytes_cap if first_bucket_cap is None \
            else first_bucket_cap
        self.backend = backend_compile_fn
        self.buckets = []          # per split: parameter names (for tests and logs)

    def compile_fn(self, gm, example_inputs):
        """Partition by bucket, compile each piece with the backend on first call."""
        bucket_of = self._assign(gm)
        if len(set(bucket_of.values())) <= 1:
            return self.backend(gm, example_inputs)
        split = split_module(gm, gm, lambda n: bucket_of.get(n.name, 0))
        log.debug("DDPOptimizer split the graph into %d pieces", len(self.buckets))
        return _CompilePieces(split, self.backend).run

    def _assign(self, gm):
        """Walk the ops backwards adding the bytes of the parameters each one uses (first
        use from the end: DDP's bucket order) to the current bucket; a full bucket closes
        after that op. Pieces are numbered in forward order."""
        counted, names = set(), [[]]
        bucket, current, filled, cap = {}, 0, 0, self.first_bucket_cap
        ops = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
        for n in reversed(ops):
            bucket[n.name] = current
            for a in n.all_input_nodes:
                size = _param_bytes(a) if a.op == "placeholder" else 0
                if size and a not in counted:
                    counted.add(a)
                    names[-1].append(a.meta.get("source"))
                    filled += size
            if filled >= cap and n is not ops[0]:
                current, filled, cap = current + 1, 0, self.bucket_bytes_cap
                names.append([])
        self.buckets = [b for b in reversed(names) if b]
        return {k: current - v for k, v in bucket.items()}


class _CompilePieces(Interpreter):
    """Runs the split graph, compiling each piece with its real inputs the first time."""

    def __init__(self, split, backend):
        super().__init__(split)
        self.backend = backend
        self.compiled = {}
        self.single = {}              # piece -> it returned one value (not a tuple)
        for name, sub in split.named_children():
            out = [n for n in sub.graph.nodes if n.op == "output"][0]
            self.single[name] = not isinstance(out.args[0], (tuple, list))
            if self.single[name]:     # backends take graphs returning a tuple
                out.args = ((out.args[0],),)
                sub.recompile()

    def call_module(self, target, args, kwargs):
        fn = self.compiled.get(target)
        if fn is None:
            sub = self.fetch_attr(target)
            fn = self.compiled[target] = self.backend(sub, list(args))
        out = fn(*args)
        return out[0] if self.single[target] else tuple(out)
