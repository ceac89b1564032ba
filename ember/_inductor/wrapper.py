"""The Python wrapper: one generated Python function that runs a scheduled graph.

Why generated code (PyTorch inductor's "wrapper codegen") rather than an interpreter over
steps: a compiled call of a small model makes ~10 C and extern calls, and walking a step
list with per-argument type tests costs more than the kernels. The generated function is
straight-line: bind the input arrays and size symbols, allocate each group's outputs,
call the group through ctypes, call extern kernels on the arrays directly (registry
kernels take and return NumPy arrays), and wrap the returned arrays as Tensors.
Externs that need Tensors (in-place ops, random draws, views that are returned, non-registry
callables) go through the ordinary dispatch path.
"""
import ctypes
import math
import re

import numpy as np

from .._symbolic import SymInt
from .._tensor import wrap
from ..ops._registry import OpDef
from .ir import Buffer, Scalar, Value, flat, sym_text
from .scheduler import ExternStep, GroupStep, Runtime

__all__ = ["generate_wrapper", "python_gen"]

_VP, _I64, _F64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double


def _ascontig(a):
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _py_size(n):
    return f"({sym_text(n)})" if isinstance(n, SymInt) else str(int(n))


class _Gen:
    def __init__(self, sched, lib, out_node, output_views):
        self.s, self.lib = sched, lib
        self.lines = []
        self.glob = {"wrap": wrap, "ascontig": _ascontig, "np": np, "VP": _VP, "I64": _I64,
                     "F64": _F64}
        self.nconst = 0
        self.tensor_vars = set()
        self.out_node = out_node
        self.output_views = output_views
        self.nrt = 0
        self.rt_names = {}

    def const(self, obj):
        for k, v in self.glob.items():
            if v is obj and k.startswith("c_"):
                return k
        name = f"c_{self.nconst}"
        self.nconst += 1
        self.glob[name] = obj
        return name

    def emit(self, line):
        self.lines.append("    " + line)

    # -------------------------------------------------------------- values
    def bind_array(self, b, src):
        """b.name = the array of Tensor expression `src` (contiguous when b assumes it)."""
        self.emit(f"{b.name} = {src}._data" if b.dynamic_strides
                  else f"{b.name} = ascontig({src}._data)")

    def tensor(self, b):
        t = f"t_{b.name}"
        if t not in self.tensor_vars:
            self.emit(f"{t} = wrap({b.name}, {self.const(b.dtype)})")
            self.tensor_vars.add(t)
        return t

    def runtime_name(self, node):
        if node not in self.rt_names:
            self.rt_names[node] = f"rv{self.nrt}"
            self.nrt += 1
        return self.rt_names[node]

    def expr(self, a, tensors):
        """Python expression for argument `a` (graph node, container or constant); tensor
        values as Tensors when `tensors`, else as arrays."""
        if hasattr(a, "op"):
            return self.value(self.s.env[a], tensors)
        if isinstance(a, (list, tuple)):
            inner = ", ".join(self.expr(x, tensors) for x in a)
            if isinstance(a, list):
                return f"[{inner}]"
            return f"({inner}{',' if len(a) == 1 else ''})"
        return self.literal(a)

    def value(self, v, tensors):
        if isinstance(v, (tuple, list)):
            inner = ", ".join(self.value(x, tensors) for x in v)
            return f"({inner}{',' if len(v) == 1 else ''})"
        if isinstance(v, Value):
            b = v if isinstance(v, Buffer) else v.buffer
            if b is None:
                raise AssertionError("inductor wrapper: an unrealized value reached Python")
            return self.tensor(b) if tensors else b.name
        if isinstance(v, Runtime):
            return self.runtime_name(v.node)
        if isinstance(v, Scalar):
            return v.name
        return self.literal(v)

    def literal(self, a):
        if isinstance(a, SymInt):
            return _py_size(a)
        if a is None or isinstance(a, (bool, str)):
            return repr(a)
        if isinstance(a, int):
            return str(int(a))
        if isinstance(a, float) and math.isfinite(a):
            return repr(a)
        return self.const(a)

    # -------------------------------------------------------------- steps
    def group(self, g):
        fn = getattr(self.lib, g.name)
        fn.argtypes = [_VP, _VP, _VP]
        fn.restype = None
        for b in g.outputs:
            shape = ", ".join(_py_size(n) for n in b.shape)
            self.emit(f"{b.name} = np.empty(({shape}{',' if len(b.shape) == 1 else ''}), "
                      f"{self.const(b.dtype.np)})")
        ptrs = ", ".join(f"{b.name}.ctypes.data" for b in g.bufs)
        ints = []
        for key in g.ints:
            if key[0] == "sym":
                ints.append(key[1])
            elif key[0] == "stride":
                b, d = key[1], key[2]
                ints.append(f"{b.name}.strides[{d}] // {b.name}.itemsize")
            else:
                ints.append(f"int({key[1].name})")
        flts = [f"float({s.name})" for s in g.floats]
        self.emit(f"{self.const(fn)}((VP * {max(len(g.bufs), 1)})({ptrs}), "
                  f"(I64 * {max(len(ints), 1)})({', '.join(ints)}), "
                  f"(F64 * {max(len(flts), 1)})({', '.join(flts)}))")

    def extern(self, st):
        n = st.node
        op = n.target
        fast = (isinstance(op, OpDef) and type(op).run_kernel is OpDef.run_kernel
                and type(op)._execute is OpDef._execute and "cpu" in op.kernels
                and not n.kwargs
                and not (op.tags & {"inplace", "random", "nondeterministic"})
                and not op.check and not (op.view and n in self.output_views))
        o = st.outputs
        if fast:
            args = ", ".join(self.expr(a, False) for a in n.args)
            call = f"{self.const(op.kernels['cpu'])}({args})"
            if isinstance(o, Buffer):
                self.emit(f"{o.name} = {call}" if o.dynamic_strides
                          else f"{o.name} = ascontig({call})")
                self.tensor_vars.discard(f"t_{o.name}")
                return
            if isinstance(o, tuple):
                tmp = f"x_{o[0].name}"
                self.emit(f"{tmp} = {call}")
                for k, b in enumerate(o):
                    self.emit(f"{b.name} = {tmp}[{k}]" if b.dynamic_strides
                              else f"{b.name} = ascontig({tmp}[{k}])")
                return
        args = [self.expr(a, True) for a in n.args]
        args += [f"{k}={self.expr(v, True)}" for k, v in n.kwargs.items()]
        call = f"{self.const(op)}({', '.join(args)})"
        if isinstance(o, Buffer):
            t = f"t_{o.name}"
            self.emit(f"{t} = {call}")
            self.tensor_vars.add(t)
            self.bind_array(o, t)
        elif isinstance(o, tuple):
            tmp = f"x_{o[0].name}"
            self.emit(f"{tmp} = {call}")
            for k, b in enumerate(o):
                self.emit(f"t_{b.name} = {tmp}[{k}]")
                self.tensor_vars.add(f"t_{b.name}")
                self.bind_array(b, f"t_{b.name}")
        else:
            self.emit(f"{self.runtime_name(o.node)} = {call}")
        if not isinstance(op, OpDef) or "inplace" in op.tags:
            # a mutation may have replaced a Tensor's array: re-read the arrays
            for a in flat(n.args):
                v = self.s.env.get(a) if hasattr(a, "op") else None
                if isinstance(v, Buffer) and f"t_{v.name}" in self.tensor_vars:
                    self.bind_array(v, f"t_{v.name}")

    def build(self, groups_by_name):
        s = self.s
        k = 0
        for i, v in enumerate(s.inputs):
            if isinstance(v, Buffer):
                self.emit(f"t_{v.name} = inputs[{i}]")
                self.tensor_vars.add(f"t_{v.name}")
                self.bind_array(v, f"t_{v.name}")
            elif isinstance(v, Scalar):
                self.emit(f"{v.name} = inputs[{i}]")
            elif isinstance(v, Runtime):
                self.emit(f"{self.runtime_name(v.node)} = inputs[{i}]")
            k += 1
        for b, name in s.attrs:
            if b is not None:
                self.emit(f"t_{b.name} = getattr_path(gm, {name!r})")
                self.tensor_vars.add(f"t_{b.name}")
                self.bind_array(b, f"t_{b.name}")
        for sym, i, d in s.sym_src:
            self.emit(f"ks_{sym} = int(inputs[{i}])" if d is None
                      else f"ks_{sym} = inputs[{i}]._data.shape[{d}]")
        for st in s.steps:
            if isinstance(st, GroupStep):
                self.group(st.group)
            elif isinstance(st, ExternStep):
                self.extern(st)
        outs = [self.expr(a, True) for a in self.out_node.args[0]]
        self.emit(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        src = "def call(inputs, gm, getattr_path):\n" + "\n".join(_free_dead(self.lines)) + "\n"
        return src


def python_gen(sched, out_node):
    """A code generator for Python statements of `sched` (cpp_wrapper's calls that stay in
    Python)."""
    return _Gen(sched, None, out_node, sched.output_views)


def generate_wrapper(sched, lib, out_node):
    """(python source, callable(inputs, gm, getattr_path) -> tuple)."""
    g = _Gen(sched, lib, out_node, sched.output_views)
    src = g.build(None)
    ns = dict(g.glob)
    exec(compile(src, "<ember inductor wrapper>", "exec"), ns)   # noqa: S102 (our own code)
    return src, ns["call"]


_NAME = re.compile(r"\b(?:t_|x_)?(?:in|buf|ext|attr)\d+\b")


def _free_dead(lines):
    """`del` each buffer/tensor name after the straight-line statement that reads it last,
    so NumPy frees intermediates as soon as they are dead (inductor's buffer freeing; an
    array still viewed by a live extern result stays alive through that view)."""
    last = {}
    for i, ln in enumerate(lines[:-1]):          # the return line keeps its names
        for name in _NAME.findall(ln):
            last[name] = i
    keep = set(_NAME.findall(lines[-1])) if lines else set()
    dead = {}
    for name, i in last.items():
        if name not in keep:
            dead.setdefault(i, []).append(name)
    out = []
    for i, ln in enumerate(lines):
        out.append(ln)
        if i in dead:
            out.append(f"    del {', '.join(sorted(dead[i]))}")
    return out


