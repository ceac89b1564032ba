"""Scheduler: walk a prim graph, lower what can be lowered, decide what becomes memory.

Why these rules: a pointwise value read once is inlined into its reader (so a chain of
pointwise ops ending in a reduction is one loop nest); a value read by several consumers,
by an extern call, or returned is realized (written once by its own loop nest); every
reduction is realized. Generated loop nests between two extern calls form one group (one
C function). Graphs with mutations (in-place ops, opaque calls) keep views as real extern
views and realize every pending value before each mutation, so reads happen in eager order.
"""
import operator

from .. import _prims
from .._symbolic import SymInt
from .._tensor import Tensor
from ..ops._registry import OpDef
from . import config
from .codegen_c import GroupCode, pointwise_kernel, reduction_kernel
from .ir import Buffer, Reduction, Scalar, Value, flat, supported_dtype
from .lowering import lower, max_pool2d_values, var_parts

__all__ = ["Scheduler", "Runtime", "ExternStep", "GroupStep"]


class Runtime:
    """A non-tensor value computed by Python at run time (an extern's non-tensor output)."""

    def __init__(self, node):
        self.node = node


class ExternStep:
    def __init__(self, node, outputs):
        self.node, self.outputs = node, outputs   # outputs: env value (Buffer/tuple/Runtime)


class GroupStep:
    def __init__(self, group):
        self.group = group


def _is_pure_helper(node):
    from .._dynamo import output_graph as og
    return node.target in (operator.getitem, og.sym_size)


class Scheduler:
    def __init__(self, gm):
        self.gm = gm
        self.nodes = list(gm.graph.nodes)
        self.order = {n: i for i, n in enumerate(self.nodes)}
        self.env, self.steps, self.group = {}, [], None
        self.inputs = []          # per placeholder: Buffer | SymInt/int | Scalar | None
        self.attrs = []           # (Buffer, attribute name)
        self.nbuf = 0
        self.ngroups = 0
        self.kernel_count = 0
        self.impure = any(self._impure(n) for n in self.nodes)
        self.output_views = set()
        out = next(n for n in self.nodes if n.op == "output")
        for a in flat(out.args[0]):
            if hasattr(a, "op") and isinstance(a.target, OpDef) and "view" in a.target.tags:
                self.output_views.add(a)

    # ------------------------------------------------------------------ helpers
    def _impure(self, n):
        if n.op != "call_function":
            return False
        if isinstance(n.target, OpDef):
            return bool(n.target.tags & {"inplace", "random"})
        return not _is_pure_helper(n)

    def _new_buffer(self, prefix, shape, dtype, strides=None, kind="computed"):
        b = Buffer(f"{prefix}{self.nbuf}", shape, dtype, strides, kind)
        self.nbuf += 1
        return b

    def _ext_buffer(self, fake, prefix, kind):
        strides = None
        if fake.is_contiguous():
            strides = Buffer("x", fake.shape, fake.dtype).strides
        return self._new_buffer(prefix, list(fake.shape), fake.dtype, strides, kind)

    def _cur_group(self):
        if self.group is None:
            self.group = GroupCode(f"group_{self.ngroups}")
            self.ngroups += 1
            self.steps.append(GroupStep(self.group))
        return self.group

    def realize(self, v):
        """Memory for value v: a Buffer, writing it with a new loop nest if needed."""
        if isinstance(v, Buffer):
            return v
        if v.buffer is not None:
            return v.buffer
        buf = self._new_buffer("buf", v.shape, v.dtype)
        g = self._cur_group()
        if isinstance(v, Reduction):
            reduction_kernel(g, buf, v)
        else:
            pointwise_kernel(g, buf, v)
        g.outputs.append(buf)
        self.kernel_count += 1
        v.buffer = buf
        return buf

    def _has_later_users(self, n, i):
        return any(self.order[u] > i for u in n.users)

    # ------------------------------------------------------------------ the walk
    def run(self):
        k = 0
        for i, n in enumerate(self.nodes):
            if n.op == "placeholder":
                self.env[n] = self._placeholder(n, k)
                k += 1
            elif n.op == "get_attr":
                t = _getattr(self.gm, n.target)
                b = self._ext_buffer(t, "attr", "input") if isinstance(t, Tensor) else None
                self.attrs.append((b, n.target))
                self.env[n] = b if b is not None else t
            elif n.op == "call_function":
                if self._impure(n):
                    self._flush(i)
                self.env[n] = self._call(n)
            elif n.op == "output":
                outs = []
                for a in flat(n.args[0]):
                    v = self.env.get(a) if hasattr(a, "op") else None
                    if isinstance(v, Value):
                        self.realize(v)
                    outs.append(v)
            else:
                raise NotImplementedError(f"inductor: graph node op {n.op!r}")
        return self

    def _flush(self, i):
        for m, v in list(self.env.items()):
            if isinstance(v, Value) and not isinstance(v, Buffer) and v.buffer is None \
                    and self._has_later_users(m, i):
                self.realize(v)

    def _placeholder(self, n, k):
        v = n.meta.get("val")
        if isinstance(v, Tensor):
            b = self._ext_buffer(v, "in", "input")
            self.inputs.append(b)
            return b
        if isinstance(v, (SymInt, int)) and not isinstance(v, bool):
            self.inputs.append(v)
            return v
        if isinstance(v, float):
            s = Scalar(f"f{k}", True)
            self.inputs.append(s)
            return s
        r = Runtime(n)
        self.inputs.append(r)
        return r

    def _arg(self, a):
        if hasattr(a, "op"):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self._arg(x) for x in a)
        return a

    def _lowerable(self, n, args):
        op = n.target
        if not isinstance(op, OpDef) or "prim" not in op.tags or _prims.is_extern(op):
            return False
        if "view" in op.tags and (self.impure or n in self.output_views
                                  or self._view_for_extern(n, args)):
            return False
        fake = n.meta.get("val")
        if not isinstance(fake, Tensor) or not supported_dtype(fake.dtype):
            return False
        for a in flat(args):
            if isinstance(a, Runtime) or isinstance(a, Tensor):
                return False
            if isinstance(a, Value) and not supported_dtype(a.dtype):
                return False
        if n.kwargs:
            return False
        return True

    @staticmethod
    def _indices_unused(n):
        return all(u.target is operator.getitem and (u.args[1] == 0 or not u.users)
                   for u in n.users)

    def _view_for_extern(self, n, args):
        """A view of memory read by an extern call is the real (free) NumPy view, not a
        copy (linear's transposed weight going to matmul)."""
        src = args[0] if args else None
        if not (isinstance(src, Buffer) or (isinstance(src, Value) and src.buffer is not None)):
            return False
        return self._feeds_extern(n)

    def _feeds_extern(self, n, depth=0):
        """Whether a user of `n` (directly, or through a chain of views) is an extern call."""
        for u in n.users:
            op = u.target
            if u.op != "call_function":
                continue
            if not isinstance(op, OpDef) or "prim" not in op.tags or _prims.is_extern(op):
                return True
            if "view" in op.tags and depth < 8 and self._feeds_extern(u, depth + 1):
                return True
        return False

    def _call(self, n):
        from .._dynamo import output_graph as og
        if n.target is og.sym_size:
            return n.args[0].meta["val"].shape[n.args[1]]
        if n.target is operator.getitem:
            base = self.env[n.args[0]]
            if isinstance(base, (tuple, list)):
                return base[n.args[1]]
        args = self._arg(n.args)
        if isinstance(n.target, OpDef) and n.target.name == "max_pool2d_with_indices" \
                and not n.kwargs and self._indices_unused(n) \
                and not any(isinstance(a, (Runtime, Tensor)) for a in flat(args)):
            src = args[0]
            if isinstance(src, Value) and src.buffer is None and src.cost > 0:
                # each input element is read by up to kernel-size windows: compute it once
                self.realize(src)
            v = max_pool2d_values(n, list(args))
            if v is not None and supported_dtype(v.dtype):
                return (self.realize(v), None)
        if isinstance(n.target, OpDef) and n.target.name == "var" and self._lowerable(n, args):
            parts = var_parts(n, list(args))
            if parts is not None:
                first, second, finish = parts
                total = self.realize(first())
                return finish(self.realize(second(total)))
        if self._lowerable(n, args):
            v = lower(n, list(args))
            if v is not None:
                if isinstance(v, Reduction):
                    return self.realize(v)
                users = len(n.users)
                if v.cost > 0 and users > 1 and (
                        v.cost > config.realize_cost_threshold
                        or users > config.realize_reads_threshold):
                    self.realize(v)
                return v
        return self._extern(n)

    def _extern(self, n):
        for a in flat(self._arg((n.args, tuple(n.kwargs.values())))):
            if isinstance(a, Value):
                self.realize(a)
        self.group = None
        val = n.meta.get("val")
        if isinstance(val, Tensor):
            out = self._ext_buffer(val, "ext", "extern")
        elif isinstance(val, (tuple, list)) and val and all(
                isinstance(t, Tensor) for t in val):
            out = tuple(self._ext_buffer(t, "ext", "extern") for t in val)
        else:
            out = Runtime(n)
        self.steps.append(ExternStep(n, out))
        return out


def _getattr(mod, target):
    for part in target.split("."):
        mod = getattr(mod, part)
    return mod
