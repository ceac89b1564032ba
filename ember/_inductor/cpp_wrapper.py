"""cpp_wrapper: a scheduled graph as ONE generated C function (options={"cpp_wrapper": True},
and mode="reduce-overhead").

Why: the Python wrapper (wrapper.py) pays Python for every group call, extern call and
allocation: ~2-5 us each, which is most of the time of a small model's step. Here the
generated function `em_graph` does everything between the graph's inputs and outputs: it
calls the fused groups, runs matmul through CBLAS (blas.py: NumPy's OpenBLAS), 2-D
convolution and max pooling (cpp_conv.py), takes views as pointer arithmetic, and runs
gather, scatter_add, index_select, cat, arange and integer floor_divide as C loops. Python
only passes the data pointers and size symbols and wraps the outputs, so a graph costs
one ctypes call.

Memory: buffers the graph returns are allocated by Python (fresh arrays every call);
every other intermediate lives in one arena at offsets computed from the size symbols.
In "default" cpp_wrapper the C function mallocs and frees the arena on each call; with
`config.cpu_graphs` (mode="reduce-overhead", the CPU analogue of CUDA graphs) the arena
is allocated once per input-size tuple and reused. Unlike PyTorch's CUDA graph trees,
outputs are never overwritten by a later call (they are not in the arena), so there is
nothing to warn about when an old output is read; one consequence is that a compiled
graph must not run concurrently in two threads under reduce-overhead (they would share
its arena), as CUDA graphs are not replayed concurrently either.

A graph with an extern that has no C implementation here (grouped or 3-D convolution,
average pooling, sort, random draws, in-place ops, ...) keeps the Python wrapper; the
reason is logged under TORCH_LOGS=output_code (EMBER_LOGS=output_code).
"""
import ctypes

import numpy as np

from .. import _dtype as D
from .._symbolic import SymInt
from .._tensor import wrap
from ..ops._registry import OpDef
from . import autotune, blas, config, cpp_conv
from .ir import Buffer, Scalar, Value, cexpr, contiguous_strides, ctype, flat, is_one, sym_text
from .scheduler import GroupStep, Runtime

__all__ = ["Unsupported", "CppWrapper"]

_VP, _I64, _F64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
_VIEWS = {"alias", "detach", "expand", "permute", "unsqueeze", "squeeze", "view", "select",
          "slice"}
_GEMM_T = {D.float32: ("float", "em_sgemm"), D.float64: ("double", "em_dgemm")}

# CBLAS entry points (ILP64), their setter, and a strided matrix product on top of them
_C_SUPPORT = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef void (*em_sgemm_t)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                           int64_t, const float *, int64_t, float, float *, int64_t);
typedef void (*em_dgemm_t)(int, int, int, int64_t, int64_t, int64_t, double, const double *,
                           int64_t, const double *, int64_t, double, double *, int64_t);
static em_sgemm_t em_sgemm;
static em_dgemm_t em_dgemm;
void em_set_blas(void *s, void *d) { em_sgemm = (em_sgemm_t)s; em_dgemm = (em_dgemm_t)d; }

/* How CBLAS (row-major) reads a rows x cols matrix with element strides (s0, s1):
   as it is (111) or transposed (112) with leading dimension *ld; 0 = needs a copy. */
static int em_blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1, int *t,
                          int64_t *ld) {
  int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  if ((s1 == 1 || cols <= 1) && (rows <= 1 || s0 >= c1)) {
    *t = 111; *ld = rows <= 1 ? c1 : s0; return 1; }
  if ((s0 == 1 || rows <= 1) && (cols <= 1 || s1 >= r1)) {
    *t = 112; *ld = cols <= 1 ? r1 : s1; return 1; }
  return 0;
}
"""

_C_MM = r"""
/* C[M,N] (contiguous) = A[M,K] @ B[K,N], A and B strided */
__attribute__((noinline))
static void em_mm_@T@(int64_t M, int64_t N, int64_t K, const @T@ *A, int64_t sa0,
                      int64_t sa1, const @T@ *B, int64_t sb0, int64_t sb1, @T@ *C) {
  if (M == 0 || N == 0) return;
  if (K == 0) { memset(C, 0, (size_t)(M * N) * sizeof(@T@)); return; }
  int ta, tb; int64_t lda, ldb; @T@ *ca = NULL, *cb = NULL;
  if (!em_blas_layout(M, K, sa0, sa1, &ta, &lda)) {
    ca = (@T@ *)malloc((size_t)(M * K) * sizeof(@T@));
    for (int64_t i = 0; i < M; i++)
      for (int64_t k = 0; k < K; k++) ca[i * K + k] = A[i * sa0 + k * sa1];
    A = ca; ta = 111; lda = K;
  }
  if (!em_blas_layout(K, N, sb0, sb1, &tb, &ldb)) {
    cb = (@T@ *)malloc((size_t)(K * N) * sizeof(@T@));
    for (int64_t k = 0; k < K; k++)
      for (int64_t j = 0; j < N; j++) cb[k * N + j] = B[k * sb0 + j * sb1];
    B = cb; tb = 111; ldb = N;
  }
  @G@(101, ta, tb, M, N, K, 1, A, lda, B, ldb, 0, C, N);
  free(ca); free(cb);
}

/* the same product as plain loops (i, k, j; j vectorized): faster than a BLAS call for
   tiny shapes, where BLAS's dispatch dominates (max-autotune picks per call site) */
__attribute__((noinline))
static void em_mm_loops_@T@(int64_t M, int64_t N, int64_t K, const @T@ *A, int64_t sa0,
                            int64_t sa1, const @T@ *B, int64_t sb0, int64_t sb1, @T@ *C) {
  for (int64_t i = 0; i < M; i++) {
    @T@ *restrict c = C + i * N;
    for (int64_t j = 0; j < N; j++) c[j] = 0;
    for (int64_t k = 0; k < K; k++) {
      const @T@ a = A[i * sa0 + k * sa1];
      const @T@ *b = B + k * sb0;
      #pragma omp simd
      for (int64_t j = 0; j < N; j++) c[j] += a * b[j * sb1];
    }
  }
}
"""


def _mm_code(tname):
    return _C_MM.replace("@T@", tname).replace(
        "@G@", {"float": "em_sgemm", "double": "em_dgemm"}[tname])


class Unsupported(Exception):
    """This graph cannot be one C function (the message says why); it keeps the Python
    wrapper."""


class _T:
    """A tensor as C sees it: memory `root` (a Buffer) + element offset, shape, strides."""

    __slots__ = ("root", "off", "shape", "strides", "dtype")

    def __init__(self, root, off, shape, strides, dtype):
        self.root, self.off, self.shape, self.strides, self.dtype = \
            root, off, list(shape), list(strides), dtype

    @classmethod
    def whole(cls, b):
        return cls(b, 0, b.shape, contiguous_strides(b.shape), b.dtype)

    def is_whole(self):
        return _same(self.off, 0) and self.root is not None and \
            _same_list(self.shape, self.root.shape) and self.contiguous()

    def contiguous(self):
        return all(is_one(n) or _same(s, c) for n, s, c in
                   zip(self.shape, self.strides, contiguous_strides(self.shape)))

    def ptr(self):
        base = f"(({ctype(self.dtype)} *)p_{self.root.name})"
        return base if _same(self.off, 0) else f"({base} + {cexpr(self.off)})"


def _same(a, b):
    return str(a) == str(b)


def _same_list(a, b):
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def _py(n):
    return f"({sym_text(n)})" if isinstance(n, SymInt) else str(int(n))


def _tup(items):
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _view_strides(old, st, new):
    """Strides of `new` viewing a tensor of shape `old` and strides `st` (PyTorch's
    computeStride: dims merge only where they are laid out contiguously)."""
    if any(isinstance(x, SymInt) for x in (*old, *st, *new)):
        raise Unsupported("view of a non-contiguous tensor with symbolic sizes")
    old, st, new = [int(x) for x in old], [int(x) for x in st], [int(x) for x in new]
    out = [0] * len(new)
    if not old:
        return [1] * len(new)
    vd, base, tn, vn = len(new) - 1, st[-1], 1, 1
    for td in range(len(old) - 1, -1, -1):
        tn *= old[td]
        if td == 0 or (old[td - 1] != 1 and st[td - 1] != tn * base):
            while vd >= 0 and (vn < tn or new[vd] == 1):
                out[vd] = vn * base
                vn *= new[vd]
                vd -= 1
            if vn != tn:
                raise Unsupported("view of a tensor whose layout it cannot keep")
            if td > 0:
                base, tn, vn = st[td - 1], 1, 1
    if vd != -1:
        raise Unsupported("view of a tensor whose layout it cannot keep")
    return out


def _view(op, t, args, out_shape):
    """The _T of view op `op` applied to `t` (its other arguments `args`)."""
    shape, st, off = list(t.shape), list(t.strides), t.off
    nd = len(shape)
    if op in ("alias", "detach"):
        return _T(t.root, off, shape, st, t.dtype)
    if op == "permute":
        dims = [d % max(nd, 1) for d in args[0]]
        return _T(t.root, off, [shape[d] for d in dims], [st[d] for d in dims], t.dtype)
    if op == "expand":
        lead = len(out_shape) - nd
        new = [0] * lead + [0 if is_one(n) and not is_one(o) else s
                            for n, s, o in zip(shape, st, out_shape[lead:])]
        return _T(t.root, off, out_shape, new, t.dtype)
    if op == "unsqueeze":
        d = args[0] % (nd + 1)
        inner = st[d] * shape[d] if d < nd else 1
        return _T(t.root, off, shape[:d] + [1] + shape[d:], st[:d] + [inner] + st[d:], t.dtype)
    if op == "squeeze":
        dims = args[0] if isinstance(args[0], (list, tuple)) else [args[0]]
        gone = {d % max(nd, 1) for d in dims if nd and is_one(shape[d % nd])}
        keep = [d for d in range(nd) if d not in gone]
        return _T(t.root, off, [shape[d] for d in keep], [st[d] for d in keep], t.dtype)
    if op == "view":
        if t.contiguous():
            return _T(t.root, off, out_shape, contiguous_strides(out_shape), t.dtype)
        return _T(t.root, off, out_shape, _view_strides(shape, st, out_shape), t.dtype)
    dim = args[0] % max(nd, 1)
    if op == "select":
        index = args[1]
        if not isinstance(index, int) or isinstance(index, SymInt) or isinstance(
                shape[dim], SymInt) and index < 0:
            raise Unsupported("select by a symbolic or negative index")
        index = index + int(shape[dim]) if index < 0 else index
        return _T(t.root, off + index * st[dim], shape[:dim] + shape[dim + 1:],
                  st[:dim] + st[dim + 1:], t.dtype)
    start = args[1] if len(args) > 1 and args[1] is not None else 0
    step = args[3] if len(args) > 3 else 1
    if any(isinstance(a, SymInt) or not isinstance(a, int) for a in (start, step)) \
            or start < 0 or step < 1:
        raise Unsupported("slice with a symbolic or negative start or step")
    if not isinstance(shape[dim], SymInt):
        start = min(start, int(shape[dim]))
    new_st = st[:dim] + [st[dim] * step] + st[dim + 1:]
    return _T(t.root, off + start * st[dim], out_shape, new_st, t.dtype)


class CppWrapper:
    """Generated C source (`source`) and the Python caller (`python(lib)`) of a schedule."""

    def __init__(self, sched, out_node, arena_cached):
        self.s, self.out_node, self.cached = sched, out_node, arena_cached
        self.t = {}                 # Buffer -> _T
        self.lines = []             # body of em_graph
        self.pre = []               # ExternSteps run in Python before the C call
        self.kinds = {}             # root Buffer -> "in" | "attr" | "out" | "tmp"
        self.needs = set()          # C support pieces used ("mm_float", ...)
        self.nerr = 0
        self.choices = {}           # max-autotune: matmul output name -> "blas" | "loops"
        self.conv_needs, self.pool_needs = set(), set()
        self._walk()
        self.returns = self._returns()
        self.source = self._source()

    # ------------------------------------------------------------------ the walk
    def _arg_t(self, a):
        v = self.s.env[a] if hasattr(a, "op") else a
        if isinstance(v, Value) and not isinstance(v, Buffer):
            v = v.buffer
        if not isinstance(v, Buffer) or v not in self.t:
            raise Unsupported(f"an argument of type {type(v).__name__} reaches an extern")
        return self.t[v]

    def _walk(self):
        s = self.s
        for v in s.inputs:
            if isinstance(v, Buffer):
                self.kinds[v] = "in"
                self.t[v] = _T.whole(v)
        for b, _ in s.attrs:
            if b is not None:
                self.kinds[b] = "attr"
                self.t[b] = _T.whole(b)
        for st in s.steps:
            if isinstance(st, GroupStep):
                self._group(st.group)
            else:
                self._extern(st)

    def _new_root(self, b):
        self.kinds[b] = "tmp"
        self.t[b] = _T.whole(b)
        return self.t[b]

    def _group(self, g):
        for b in g.outputs:
            self._new_root(b)
        ptrs = []
        for b in g.bufs:
            t = self.t.get(b)
            if t is None:
                raise Unsupported(f"group {g.name} reads {b.name}, which C does not hold")
            if not b.dynamic_strides and not t.contiguous():
                raise Unsupported(f"{b.name} is not contiguous where a kernel assumes it")
            ptrs.append(f"(void *){t.ptr()}")
        ints = []
        for key in g.ints:
            if key[0] == "sym":
                ints.append(key[1])
            elif key[0] == "stride":
                ints.append(cexpr(self.t[key[1]].strides[key[2]]))
            else:
                ints.append(f"(int64_t){key[1].name}")
        flts = [s_.name for s_ in g.floats]
        self.lines.append(
            f"{{ void *b[] = {{{', '.join(ptrs) or '0'}}}; "
            f"int64_t iv[] = {{{', '.join(ints) or '0'}}}; "
            f"double fv[] = {{{', '.join(flts) or '0'}}}; {g.name}(b, iv, fv); }}")

    def _extern(self, st):
        n, out = st.node, st.outputs
        op = n.target
        if isinstance(out, Runtime):
            self._runtime(st)
            return
        if not isinstance(op, OpDef) or n.kwargs:
            raise Unsupported(f"extern {getattr(op, '__name__', op)} has no C implementation")
        name = op.name
        if name == "max_pool2d_with_indices":
            self._pool(out, n)
            return
        if name == "split_with_sizes" and isinstance(out, tuple):
            self._split(out, self._arg_t(n.args[0]), n.args[2] if len(n.args) > 2 else 0)
            return
        if not isinstance(out, Buffer):
            raise Unsupported(f"extern {op.name} has several outputs")
        if name in _VIEWS:
            src = self._arg_t(n.args[0])
            self.t[out] = _view(name, src, list(n.args[1:]), list(out.shape))
            if not out.dynamic_strides and not self.t[out].contiguous():
                raise Unsupported(f"{name} result is assumed contiguous")
        elif name == "matmul":
            self._matmul(out, self._arg_t(n.args[0]), self._arg_t(n.args[1]))
        elif name == "arange" and len(n.args) == 4:
            self._arange(out, *n.args[:3])
        elif name == "floor_divide" and hasattr(n.args[0], "op") and not hasattr(n.args[1], "op"):
            self._floor_divide(out, self._arg_t(n.args[0]), n.args[1])
        elif name == "cat":
            self._cat(out, [self._arg_t(a) for a in n.args[0]],
                      n.args[1] if len(n.args) > 1 else 0)
        elif name == "index_select":
            self._index_select(out, self._arg_t(n.args[0]), n.args[1],
                               self._arg_t(n.args[2]))
        elif name == "convolution":
            self._conv(out, n)
        elif name == "gather" and n.args[3:] in ((), (False,)):
            self._gather(out, self._arg_t(n.args[0]), n.args[1], self._arg_t(n.args[2]))
        elif name == "scatter_add":
            self._scatter_add(out, self._arg_t(n.args[0]), n.args[1],
                              self._arg_t(n.args[2]), self._arg_t(n.args[3]))
        else:
            raise Unsupported(f"extern {name} has no C implementation")

    def _runtime(self, st):
        """A Python call that computes no tensor (entering no_grad, a context manager):
        it runs before the C call, which reads no global state."""
        n = st.node
        for a in flat((n.args, n.kwargs)):
            v = self.s.env.get(a) if hasattr(a, "op") else None
            if isinstance(v, (Value, tuple, list)):
                raise Unsupported(f"{n.name} passes a tensor to Python")
        if any(not isinstance(self.s.env.get(u), Runtime) for u in n.users):
            raise Unsupported(f"{n.name}'s Python value is used by the graph's tensors")
        self.pre.append(st)

    # ------------------------------------------------------------------ C externs
    def _matmul(self, out, a, b):
        if a.dtype not in _GEMM_T or a.dtype != b.dtype or out.dtype != a.dtype:
            raise Unsupported(f"matmul of {a.dtype} has no CBLAS routine")
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise Unsupported("matmul of a vector")
        if blas.gemm_addresses() is None:
            raise Unsupported("NumPy's OpenBLAS (CBLAS) was not found")
        c = self._new_root(out)
        tname = _GEMM_T[a.dtype][0]
        self.needs.add(tname)
        nb = len(out.shape) - 2
        M, N, K = out.shape[-2], out.shape[-1], a.shape[-1]

        def batch_off(t, d):     # offset of batch index i{d} in t (broadcast: 0)
            k = d - (nb - (len(t.shape) - 2))
            if k < 0 or is_one(t.shape[k]):
                return None
            return f"i{d}*{cexpr(t.strides[k])}"
        loops, offs = [], {"a": [], "b": [], "c": []}
        for d in range(nb):
            loops.append(f"for (int64_t i{d} = 0; i{d} < {cexpr(out.shape[d])}; i{d}++)")
            for key, t in (("a", a), ("b", b), ("c", c)):
                o = batch_off(t, d)
                if o:
                    offs[key].append(o)

        def p(t, key):
            return f"{t.ptr()}" + "".join(f" + {o}" for o in offs[key])
        kernel = f"em_mm_{tname}"
        if (config.max_autotune or config.max_autotune_gemm) \
                and self._tunable_mm(a, b, M, N, K):
            choice = autotune.tune_matmul(
                _C_SUPPORT + _mm_code(tname), tname, int(M), int(N), int(K),
                (int(a.strides[-2]), int(a.strides[-1])),
                (int(b.strides[-2]), int(b.strides[-1])))
            self.choices[out.name] = choice
            if choice == "loops":
                kernel = f"em_mm_loops_{tname}"
        call = (f"{kernel}({cexpr(M)}, {cexpr(N)}, {cexpr(K)}, {p(a, 'a')}, "
                f"{cexpr(a.strides[-2])}, {cexpr(a.strides[-1])}, {p(b, 'b')}, "
                f"{cexpr(b.strides[-2])}, {cexpr(b.strides[-1])}, {p(c, 'c')});")
        self.lines.append(" ".join(loops + [call]))

    def _split(self, outs, src, dim):
        """split_with_sizes: each piece is a view (its offset along `dim`)."""
        dim %= max(len(src.shape), 1)
        start = 0
        for b in outs:
            t = _T(src.root, src.off + start * src.strides[dim], b.shape, src.strides,
                   src.dtype)
            if not b.dynamic_strides and not t.contiguous():
                raise Unsupported("split_with_sizes piece is assumed contiguous")
            self.t[b] = t
            start = start + b.shape[dim]

    def _arange(self, out, start, step, n):
        """arange.start_step_n with integer start and step (exact in every dtype)."""
        if any(isinstance(v, (SymInt, bool)) or not isinstance(v, int) for v in (start, step)) \
                or out.dtype in (D.bool, D.float16, D.bfloat16):
            raise Unsupported("arange with symbolic or fractional bounds")
        o = self._new_root(out)
        self.lines.append(f"for (int64_t j = 0; j < {cexpr(n)}; j++) "
                          f"(({ctype(o.dtype)} *)p_{o.root.name})[j] = "
                          f"({ctype(o.dtype)})({start} + j * {step});")

    def _floor_divide(self, out, a, b):
        """An integer tensor floor-divided by a nonzero integer constant (Python's rounding)."""
        if isinstance(b, (SymInt, bool)) or not isinstance(b, int) or b == 0 \
                or a.dtype not in (D.int64, D.int32, D.int16, D.int8) or out.dtype != a.dtype:
            raise Unsupported("floor_divide other than an integer tensor by a constant")
        o = self._new_root(out)
        ct = ctype(o.dtype)
        heads, off = self._index_loops(o)
        self.lines.append(" ".join(heads + [
            f"{{ const {ct} x = (({ct} *)p_{a.root.name})[{off(a)}]; {ct} q = x / {b}; "
            f"if ((x % {b} != 0) && ((x < 0) != ({b} < 0))) q -= 1; "
            f"(({ct} *)p_{o.root.name})[{off(o)}] = q; }}"]))

    def _cat(self, out, parts, dim):
        """cat: each input copied (through its strides) into its slab of the output."""
        o = self._new_root(out)
        dim %= max(len(o.shape), 1)
        ct = ctype(o.dtype)
        start = 0
        for t in parts:
            if len(t.shape) != len(o.shape):
                continue                   # a legacy empty (0,) input adds nothing
            if t.dtype != o.dtype:
                raise Unsupported("cat of mixed dtypes")
            slab = _T(o.root, start * o.strides[dim], t.shape, o.strides, o.dtype)
            heads, off = self._index_loops(t)
            self.lines.append(" ".join(heads + [
                f"(({ct} *)p_{o.root.name})[{off(slab)}] = "
                f"(({ct} *)p_{t.root.name})[{off(t)}];"]))
            start = start + t.shape[dim]

    def _index_select(self, out, src, dim, idx):
        nd = len(src.shape)
        if nd == 0 or len(idx.shape) > 1 or idx.dtype not in (D.int64, D.int32):
            raise Unsupported("index_select of a 0-d tensor or by a 2-D index")
        dim %= nd
        o = self._new_root(out)
        ct = ctype(o.dtype)
        istride = cexpr(idx.strides[0]) if idx.shape else "0"
        parts = []
        for d in range(nd):
            parts.append(f"for (int64_t j{d} = 0; j{d} < {cexpr(o.shape[d])}; j{d}++) {{")
            if d == dim:
                self.nerr += 1
                parts.append(
                    f"int64_t ix = (int64_t)(({ctype(idx.dtype)} *)p_{idx.root.name})"
                    f"[{cexpr(idx.off)} + j{d}*{istride}]; if (ix < 0 || ix >= "
                    f"{cexpr(src.shape[d])}) {{ rc = 3; goto done; }}")
        soff = " + ".join([cexpr(src.off)] + [
            f"{'ix' if d == dim else f'j{d}'}*{cexpr(src.strides[d])}" for d in range(nd)])
        ooff = " + ".join(f"j{d}*{cexpr(o.strides[d])}" for d in range(nd))
        parts.append(f"(({ct} *)p_{o.root.name})[{ooff}] = (({ct} *)p_{src.root.name})"
                     f"[{soff}];")
        self.lines.append(" ".join(parts) + " }" * nd)

    def _contiguous(self, t, name):
        """t itself when contiguous, else a contiguous copy in the arena."""
        if t.contiguous():
            return t
        c = self._new_root(Buffer(name, t.shape, t.dtype))
        heads, off = self._index_loops(c)
        ct = ctype(t.dtype)
        self.lines.append(" ".join(heads + [
            f"(({ct} *)p_{c.root.name})[{off(c)}] = (({ct} *)p_{t.root.name})[{off(t)}];"]))
        return c

    @staticmethod
    def _ints(xs, n):
        xs = list(xs) * n if len(xs) == 1 else list(xs)
        if len(xs) != n or any(isinstance(v, SymInt) or not isinstance(v, int) for v in xs):
            raise Unsupported("a convolution or pooling with symbolic or malformed parameters")
        return xs

    def _conv(self, out, n):
        x, w = self._arg_t(n.args[0]), self._arg_t(n.args[1])
        stride, padding, dilation, transposed, _, groups = n.args[3:9]
        if groups != 1 or len(x.shape) != 4 or x.dtype not in _GEMM_T \
                or w.dtype != x.dtype or out.dtype != x.dtype:
            raise Unsupported("convolution other than 2-D, groups=1, float32/float64")
        if blas.gemm_addresses() is None:
            raise Unsupported("NumPy's OpenBLAS (CBLAS) was not found")
        tname = _GEMM_T[x.dtype][0]
        self.conv_needs.add(tname)
        w = self._contiguous(w, f"{out.name}_w")
        b = "NULL"
        if n.args[2] is not None:
            b = self._contiguous(self._arg_t(n.args[2]), f"{out.name}_b").ptr()
        o = self._new_root(out)
        self.nerr += 1                  # (an allocation failure jumps to the exit)
        self.lines.append(cpp_conv.conv_call(
            tname, x, w.ptr(), b, o, w.shape[2:], self._ints(stride, 2),
            self._ints(padding, 2), self._ints(dilation, 2), bool(transposed), cexpr))

    def _pool(self, outs, n):
        x = self._arg_t(n.args[0])
        args = list(n.args[1:]) + [None] * (6 - len(n.args))
        kernel, stride, padding, dilation = args[0], args[1] or args[0], args[2], args[3]
        if len(x.shape) != 4 or x.dtype not in _GEMM_T or n.kwargs:
            raise Unsupported("max_pool2d of a 3-D input or of an integer dtype")
        tname = _GEMM_T[x.dtype][0]
        self.pool_needs.add(tname)
        o, idx = self._new_root(outs[0]), self._new_root(outs[1])
        self.lines.append(cpp_conv.pool_call(
            tname, x, o, idx, self._ints(kernel, 2), self._ints(stride, 2),
            self._ints(padding if padding is not None else [0], 2),
            self._ints(dilation if dilation is not None else [1], 2), cexpr))

    @staticmethod
    def _tunable_mm(a, b, m, n, k):
        sizes = [m, n, k, *a.strides[-2:], *b.strides[-2:]]
        if any(isinstance(x, SymInt) for x in sizes):
            return False
        return int(m) * int(n) * int(k) <= config.max_autotune_loops_matmul_flops

    def _index_loops(self, idx):
        """Nested loops over index's shape: (loop headers, offset of position in a _T)."""
        nd = len(idx.shape)
        heads = [f"for (int64_t j{d} = 0; j{d} < {cexpr(idx.shape[d])}; j{d}++)"
                 for d in range(nd)]

        def off(t, dim=None, ix=None):
            terms = [cexpr(t.off)] if not _same(t.off, 0) else []
            for d in range(nd):
                i = ix if d == dim else f"j{d}"
                terms.append(f"{i}*{cexpr(t.strides[d])}")
            return " + ".join(terms) or "0"
        return heads, off

    def _checked_index(self, idx, off, dim, size):
        self.nerr += 1
        return (f"int64_t ix = (int64_t)(({ctype(idx.dtype)} *)p_{idx.root.name})[{off(idx)}];"
                f" if (ix < 0 || ix >= {cexpr(size)}) {{ err[0] = ix; err[1] = {dim}; "
                f"err[2] = {cexpr(size)}; rc = 1; goto done; }}")

    def _gather(self, out, src, dim, idx):
        nd = len(idx.shape)
        if nd == 0 or len(src.shape) != nd or idx.dtype not in (D.int64, D.int32):
            raise Unsupported("gather of a 0-d tensor or with unmatched ranks")
        dim %= nd
        o = self._new_root(out)
        heads, off = self._index_loops(idx)
        src_base = f"(({ctype(src.dtype)} *)p_{src.root.name})"
        body = (f"{{ {self._checked_index(idx, off, dim, src.shape[dim])} "
                f"(({ctype(o.dtype)} *)p_{o.root.name})[{off(o)}] = "
                f"{src_base}[{off(src, dim, 'ix')}]; }}")
        self.lines.append(" ".join(heads + [body]))

    def _scatter_add(self, out, self_t, dim, idx, src):
        nd = len(idx.shape)
        if nd == 0 or len(self_t.shape) != nd or len(src.shape) != nd \
                or idx.dtype not in (D.int64, D.int32) \
                or self_t.dtype in (D.float16, D.bfloat16, D.bool) or src.dtype != self_t.dtype:
            raise Unsupported("scatter_add of this rank or dtype")
        dim %= nd
        o = self._new_root(out)
        ct = ctype(o.dtype)
        copy_heads, copy_off = self._index_loops(o)
        self.lines.append(" ".join(copy_heads + [
            f"(({ct} *)p_{o.root.name})[{copy_off(o)}] = "
            f"(({ct} *)p_{self_t.root.name})[{copy_off(self_t)}];"]))
        heads, off = self._index_loops(idx)
        body = (f"{{ {self._checked_index(idx, off, dim, o.shape[dim])} "
                f"(({ct} *)p_{o.root.name})[{off(o, dim, 'ix')}] += "
                f"(({ct} *)p_{src.root.name})[{off(src)}]; }}")
        self.lines.append(" ".join(heads + [body]))

    # ------------------------------------------------------------------ outputs
    def _returns(self):
        """Python expression of each returned value; marks returned roots as outputs."""
        out = []
        input_index = {v: i for i, v in enumerate(self.s.inputs) if isinstance(v, Buffer)}
        for a in self.out_node.args[0]:
            if a is None:
                out.append("None")
                continue
            if not hasattr(a, "op"):
                raise Unsupported("a constant output")
            v = self.s.env[a]
            if isinstance(v, Value) and not isinstance(v, Buffer):
                v = v.buffer
            if isinstance(v, (SymInt, int)) and not isinstance(v, bool):
                out.append(_py(v))
                continue
            if isinstance(v, Scalar):
                out.append(v.name)
                continue
            if not isinstance(v, Buffer) or v not in self.t:
                raise Unsupported(f"output {a.name} is not a tensor C holds")
            t = self.t[v]
            kind = self.kinds[t.root]
            if kind in ("in", "attr"):
                if v is not t.root:
                    raise Unsupported(f"output {a.name} is a view of an input")
                out.append(f"inputs[{input_index[v]}]" if kind == "in"
                           else f"t_{v.name}")
                continue
            self.kinds[t.root] = "out"
            out.append(("view", t) if not t.is_whole() else ("whole", t.root))
        return out

    # ------------------------------------------------------------------ C source
    def _source(self):
        roots = [b for b, k in self.kinds.items()]
        self.ptr_roots = [b for b in roots if self.kinds[b] in ("in", "attr", "out")]
        self.tmp_roots = [b for b in roots if self.kinds[b] == "tmp"]
        syms = [f"ks_{sym}" for sym, _, _ in self.s.sym_src]
        self.float_inputs = [v for v in self.s.inputs if isinstance(v, Scalar)]
        head = []
        for k, sname in enumerate(syms):
            head.append(f"const int64_t {sname} = syms[{k}];")
        for k, sc in enumerate(self.float_inputs):
            head.append(f"const double {sc.name} = fin[{k}];")
        for k, b in enumerate(self.ptr_roots):
            head.append(f"char *p_{b.name} = (char *)ptrs[{k}];")
        layout = ["int64_t total = 0;"]
        for k, b in enumerate(self.tmp_roots):
            n = 1
            for x in b.shape:
                n = n * x
            layout.append(f"offs[{k}] = total; total += ((({cexpr(n)}) * "
                          f"{b.dtype.itemsize} + 63) / 64) * 64;")
        nt = max(len(self.tmp_roots), 1)
        sym_decl = [f"const int64_t {sname} = syms[{k}];" for k, sname in enumerate(syms)]
        parts = [_C_SUPPORT]
        for tname in sorted(self.needs):
            parts.append(_mm_code(tname))
        for tname in sorted(self.conv_needs):
            parts.append(cpp_conv.conv_code(tname, _GEMM_T[D.float32 if tname == "float"
                                                           else D.float64][1]))
        for tname in sorted(self.pool_needs):
            parts.append(cpp_conv.pool_code(tname))
        parts.append("static int64_t em_layout(const int64_t *syms, int64_t *offs) {\n  "
                     + "\n  ".join(sym_decl + layout + ["(void)syms; (void)offs;",
                                                        "return total;"]) + "\n}")
        parts.append("int64_t em_arena_bytes(const int64_t *syms) {\n"
                     f"  int64_t offs[{nt}]; return em_layout(syms, offs);\n}}")
        body = [f"int64_t offs[{nt}];", "int64_t total = em_layout(syms, offs);",
                "int rc = 0;", "char *own = NULL;",
                "if (!arena && total) { own = arena = (char *)malloc((size_t)total); "
                "if (!own) return 2; }"]
        body += [f"char *p_{b.name} = arena + offs[{k}];"
                 for k, b in enumerate(self.tmp_roots)]
        body += ["(void)err; (void)total; (void)fin;"] + self.lines
        body += (["done:"] if self.nerr else []) + ["free(own);", "return rc;"]
        # the glue is compiled at -O1: at -O3 a large graph's em_graph costs the C compiler
        # as long as all its kernels (LSTM LM step: 9 of 22 s); the heavy helpers it calls
        # are noinline functions compiled at -O3
        parts.append('__attribute__((optimize("O1"))) '
                     "int em_graph(void **ptrs, const int64_t *syms, const double *fin, "
                     "char *arena, int64_t *err) {\n  "
                     + "\n  ".join(head + body) + "\n}")
        return "\n".join(parts) + "\n"

    # ------------------------------------------------------------------ Python side
    def python(self, lib, gen_factory):
        """(python source, call(inputs, gm, getattr_path)): binds inputs, allocates the
        returned buffers, makes the one C call, wraps the outputs."""
        addr = blas.gemm_addresses()
        if self.needs or self.conv_needs:
            lib.em_set_blas(_VP(addr[0]), _VP(addr[1]))
        fn = lib.em_graph
        fn.argtypes = [_VP, _VP, _VP, _VP, _VP]
        fn.restype = ctypes.c_int
        g = gen_factory()
        glob = g.glob
        glob.update({"FN": fn, "ERR": (_I64 * 3)(), "addr": _addr, "raise_rc": _raise_rc,
                     "np": np, "VP": _VP, "I64": _I64, "F64": _F64, "ndarray": np.ndarray})
        lines = []
        for i, v in enumerate(self.s.inputs):
            if isinstance(v, Buffer):
                lines.append(f"{v.name} = ascontig(inputs[{i}]._data)")
            elif isinstance(v, Scalar):
                lines.append(f"{v.name} = float(inputs[{i}])")
            elif isinstance(v, Runtime):
                lines.append(f"{g.runtime_name(v.node)} = inputs[{i}]")
        for b, name in self.s.attrs:
            if b is not None:
                lines.append(f"t_{b.name} = getattr_path(gm, {name!r})")
                lines.append(f"{b.name} = ascontig(t_{b.name}._data)")
        for sym, i, d in self.s.sym_src:
            lines.append(f"ks_{sym} = int(inputs[{i}])" if d is None
                         else f"ks_{sym} = inputs[{i}]._data.shape[{d}]")
        for st in self.pre:
            g.lines = []
            g.extern(st)
            lines += [ln.strip() for ln in g.lines]
        for b in self.ptr_roots:
            if self.kinds[b] == "out":
                shape = _tup([_py(n) for n in b.shape])
                lines.append(f"{b.name} = np.empty({shape}, {g.const(b.dtype.np)})")
        ptrs = ", ".join(f"addr({b.name})" for b in self.ptr_roots)
        syms = ", ".join(f"ks_{sym}" for sym, _, _ in self.s.sym_src)
        flts = ", ".join(sc.name for sc in self.float_inputs)
        if self.cached:
            glob.update({"ARENAS": {}, "arena_for": _arena_for, "SIZE": lib.em_arena_bytes})
            lib.em_arena_bytes.argtypes = [_VP]
            lib.em_arena_bytes.restype = ctypes.c_int64
            lines.append(f"sv = (I64 * {max(len(self.s.sym_src), 1)})({syms})")
            lines.append(f"arena = ARENAS.get(({syms}{',' if syms else ''}))")
            lines.append("if arena is None:")
            lines.append(f"    arena = arena_for(ARENAS, ({syms}{',' if syms else ''}), SIZE, sv)")
            arena = "arena"
            svar = "sv"
        else:
            arena, svar = "None", f"(I64 * {max(len(self.s.sym_src), 1)})({syms})"
        lines.append(f"rc = FN((VP * {max(len(self.ptr_roots), 1)})({ptrs}), {svar}, "
                     f"(F64 * {max(len(self.float_inputs), 1)})({flts}), {arena}, ERR)")
        lines.append("if rc:")
        lines.append("    raise_rc(rc, ERR)")
        rets = []
        for r in self.returns:
            if isinstance(r, str):
                rets.append(r)
            elif r[0] == "whole":
                rets.append(f"wrap({r[1].name}, {g.const(r[1].dtype)})")
            else:
                t = r[1]
                isz = t.dtype.itemsize
                shape = _tup([_py(n) for n in t.shape])
                strides = _tup([f"{_py(s_)}*{isz}" for s_ in t.strides])
                rets.append(f"wrap(ndarray({shape}, {g.const(t.dtype.np)}, "
                            f"buffer={t.root.name}, offset={_py(t.off)}*{isz}, "
                            f"strides={strides}), {g.const(t.dtype)})")
        lines.append(f"return {_tup(rets)}")
        src = "def call(inputs, gm, getattr_path):\n" + "".join(f"    {ln}\n" for ln in lines)
        ns = dict(glob, wrap=wrap)
        exec(compile(src, "<ember inductor cpp_wrapper>", "exec"), ns)  # noqa: S102
        return src, ns["call"]


_CB, _ADDRESSOF = ctypes.c_char.from_buffer, ctypes.addressof


def _addr(a):
    """The data address of a contiguous array (c_char.from_buffer: ~0.3 us, a quarter of
    `a.ctypes.data`); empty or read-only arrays take the slow path."""
    try:
        return _ADDRESSOF(_CB(a))
    except (TypeError, ValueError):
        return a.ctypes.data


def _arena_for(arenas, key, size_fn, sv):
    """The arena's address for this size tuple, allocated once (reduce-overhead); the
    array itself stays alive in `arenas` under (key, "array")."""
    arena = np.empty(max(int(size_fn(sv)), 1), np.uint8)
    arenas[(key, "array")] = arena
    arenas[key] = address = _addr(arena)
    return address


def _raise_rc(rc, err):
    """The eager kernels' errors for what the C code found wrong."""
    if rc == 1:
        raise RuntimeError(f"index {err[0]} is out of bounds for dimension {err[1]} with "
                           f"size {err[2]}")
    if rc == 3:
        raise IndexError("index out of range in self")
    raise MemoryError("ember inductor: the compiled graph could not allocate its buffers")
