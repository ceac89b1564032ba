"""C code generation: one C function per group of fused loop nests, with OpenMP.

Why one function per group: the Python runtime then pays one ctypes call for every run of
generated kernels between two extern calls, not one per kernel. Each loop nest is
`#pragma omp parallel for` over its outer dims (when the work is large enough to pay for
threads) and `#pragma omp simd` over the innermost, which GCC/clang vectorize; math
functions are declared with their glibc libmvec SIMD variants so sin/exp/... vectorize
too. Function signature: `void group_N(void **bufs, const int64_t *ints, const double *flts)`.
"""
from .. import _dtype as D
from . import config
from .._symbolic import SymInt
from .ir import SYM_RE, Buffer, cexpr, ctype, is_one, regtype

__all__ = ["GroupCode", "KernelCtx", "prelude", "pointwise_kernel", "reduction_kernel",
           "MATH1", "MATH2"]

# math functions taking one / two floating arguments, declared with SIMD variants
MATH1 = ("sin", "cos", "tan", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
         "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf",
         "erfc", "cbrt")
MATH2 = ("atan2", "pow", "hypot")


def prelude(simd):
    attr = '__attribute__((const, nothrow, simd("notinbranch")))' if simd else \
        "__attribute__((const, nothrow))"
    lines = ["#include <stdint.h>", "#include <stdbool.h>", "#include <string.h>",
             "#include <math.h>", "#include <omp.h>", "",
             "void em_set_threads(int n) { omp_set_num_threads(n); }", ""]
    for f in MATH1:
        lines.append(f'float em_{f}f(float) __asm__("{f}f") {attr};')
        lines.append(f'double em_{f}(double) __asm__("{f}") {attr};')
    for f in MATH2:
        lines.append(f'float em_{f}f(float, float) __asm__("{f}f") {attr};')
        lines.append(f'double em_{f}(double, double) __asm__("{f}") {attr};')
    lines += [
        "static inline float em_bf16_to_f(uint16_t h) {",
        "  uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }",
        "static inline uint16_t em_f_to_bf16(float f) {",
        "  uint32_t u; memcpy(&u, &f, 4);",
        "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);",
        "  u += 0x7fffu + ((u >> 16) & 1u); return (uint16_t)(u >> 16); }",
        "",
    ]
    return "\n".join(lines)


class GroupCode:
    """The parameters and loop nests of one generated C function."""

    def __init__(self, name):
        self.name = name
        self.bufs = []        # Buffers, in argument order
        self.ints = []        # ("sym", name) | ("stride", Buffer, dim) | ("scalar", Scalar)
        self.floats = []      # Scalars
        self.kernels = []     # C text of each loop nest
        self.outputs = []     # Buffers this group writes (allocated by the runtime)
        self._int_names = {}

    def int_param(self, key, cname):
        if cname not in self._int_names:
            self._int_names[cname] = len(self.ints)
            self.ints.append(key)
        return cname

    def source(self):
        head = [f"void {self.name}(void **bufs, const int64_t *ints, const double *flts) {{"]
        for k, b in enumerate(self.bufs):
            head.append(f"  {ctype(b.dtype)} *restrict {b.name} = ({ctype(b.dtype)} *)"
                        f"bufs[{k}];")
        for cname, k in self._int_names.items():
            head.append(f"  const int64_t {cname} = ints[{k}];")
        for k, s in enumerate(self.floats):
            head.append(f"  const double {s.name} = flts[{k}];")
        body = [("  " + ln) for k in self.kernels for ln in k.splitlines()]
        return "\n".join(head + body + ["}", ""])


class KernelCtx:
    """Collects the statements of one loop body; temporaries are SSA names t0, t1..."""

    def __init__(self, group):
        self.group, self.lines, self.cache, self.n = group, [], {}, 0

    def tmp(self, ct, expr):
        name = f"t{self.n}"
        self.n += 1
        self.lines.append(f"{ct} {name} = {expr};")
        return name

    def buffer_param(self, buf):
        if not any(b is buf for b in self.group.bufs):
            self.group.bufs.append(buf)
        return buf.name

    def stride_param(self, buf, d):
        self.buffer_param(buf)
        return self.group.int_param(("stride", buf, d), f"st_{buf.name}_{d}")

    def size(self, n):
        text = cexpr(n)
        for s in SYM_RE.findall(text):
            self.group.int_param(("sym", s), s)
        return text

    def scalar(self, sc):
        if sc.is_float:
            if sc not in self.group.floats:
                self.group.floats.append(sc)
            return sc.name
        return self.group.int_param(("scalar", sc), sc.name)


def _store(buf, val):
    if buf.dtype == D.bfloat16:
        return f"em_f_to_bf16({val})"
    if buf.dtype == D.float16:
        return f"(_Float16)({val})"
    return val


def _omp_extra():
    t = config.cpp.threads
    return f" num_threads({t})" if t and t > 0 else ""


def _par_if(ctx, work):
    return f"if(parallel: {ctx.size(work)} > {config.parallel_threshold})"


def _loops(ctx, dims, shape, var, par_pragma, inner_pragma, body, indent="", simd_outer=True):
    """Nested for loops over `dims` (each `for var{d}`), the outer ones under `par_pragma`
    (collapsed), the innermost under `inner_pragma`."""
    out = []
    ind = indent
    for k, d in enumerate(dims):
        if k == 0 and par_pragma:
            if len(dims) == 1 and simd_outer:
                out.append(f"{ind}#pragma omp parallel for simd {par_pragma}")
            elif len(dims) == 1:
                out.append(f"{ind}#pragma omp parallel for {par_pragma}")
            else:
                coll = f" collapse({len(dims) - 1})" if len(dims) > 2 else ""
                out.append(f"{ind}#pragma omp parallel for{coll} {par_pragma}")
        elif k == len(dims) - 1 and inner_pragma:
            out.append(f"{ind}#pragma omp simd {inner_pragma}".rstrip())
        out.append(f"{ind}for (int64_t {var}{d} = 0; {var}{d} < {ctx.size(shape[d])}; "
                   f"{var}{d}++) {{")
        ind += "  "
    out += [ind + ln for ln in body]
    for _ in dims:
        ind = ind[:-2]
        out.append(ind + "}")
    return out


def pointwise_kernel(group, buf, value):
    """out[idx] = value[idx] over buf's shape: one loop nest."""
    ctx = KernelCtx(group)
    shape = value.shape
    idx = ["0" if is_one(n) else f"i{d}" for d, n in enumerate(shape)]
    val = value.load(ctx, idx)
    ctx.buffer_param(buf)
    body = ctx.lines + [f"{buf.name}[{buf.offset(ctx, idx)}] = {_store(buf, val)};"]
    dims = [d for d, n in enumerate(shape) if not is_one(n)]
    numel = value.numel()
    par = _par_if(ctx, numel) + _omp_extra()
    lines = [f"{{  /* {buf.name}: pointwise {list(map(str, shape))} */"]
    if not dims:
        lines += ["  " + ln for ln in body]
    else:
        lines += _loops(ctx, dims, shape, "i", par, "", body, "  ")
    lines.append("}")
    group.kernels.append("\n".join(lines))


_RED_CLAUSE = {"sum": "+", "prod": "*", "amax": "max", "amin": "min", "any": "|", "all": "&"}


def _acc_type(rtype, dt):
    if rtype in ("any", "all"):
        return "int"
    if rtype in ("sum", "prod") and dt.is_floating_point:
        if dt == D.float64 or config.cpp.fp32_sum_in_double:
            return "double"
        return "float"
    return regtype(dt)


def _init(rtype, dt, acc_t):
    if rtype == "sum":
        return "0"
    if rtype == "prod":
        return "1"
    if rtype == "any":
        return "0"
    if rtype == "all":
        return "1"
    big = {"float": "INFINITY", "double": "INFINITY", "int64_t": "INT64_MAX",
           "int32_t": "INT32_MAX", "int16_t": "INT16_MAX", "int8_t": "INT8_MAX",
           "uint8_t": "UINT8_MAX", "bool": "1"}[acc_t]
    small = {"float": "-INFINITY", "double": "-INFINITY", "int64_t": "INT64_MIN",
             "int32_t": "INT32_MIN", "int16_t": "INT16_MIN", "int8_t": "INT8_MIN",
             "uint8_t": "0", "bool": "0"}[acc_t]
    return small if rtype == "amax" else big


def reduction_kernel(group, buf, red):
    """buf[idx] = reduce(red.src[...]) : outer loops over kept dims, inner over reduced."""
    ctx = KernelCtx(group)
    src = red.src
    rdims = [d for d in red.red_dims if not is_one(src.shape[d])]
    kdims = [d for d in range(len(src.shape)) if d not in red.red_dims
             and not is_one(src.shape[d])]
    sidx = ["0" if is_one(n) else (f"r{d}" if d in red.red_dims else f"i{d}")
            for d, n in enumerate(src.shape)]
    val = src.load(ctx, sidx)
    rt, out_dt = red.rtype, red.dtype
    acc_t = _acc_type(rt, out_dt)
    floating = acc_t in ("float", "double")
    has_nan = rt in ("amax", "amin") and floating
    if rt in ("any", "all"):
        v = f"({val} != 0)"
    else:
        v = f"({acc_t})({val})"
    upd = {"sum": f"acc += {v};", "prod": f"acc *= {v};",
           "amax": f"{{ {acc_t} v_ = {v}; acc = v_ > acc ? v_ : acc; }}",
           "amin": f"{{ {acc_t} v_ = {v}; acc = v_ < acc ? v_ : acc; }}",
           "any": f"acc |= {v};", "all": f"acc &= {v};"}[rt]
    if has_nan:
        upd = upd[:-1] + f" nan_ |= ({val} != {val}); }}"
    clause = f"reduction({_RED_CLAUSE[rt]}:acc)" + (" reduction(|:nan_)" if has_nan else "")
    body = ctx.lines + [upd]
    # out index: keepdim output has the src rank; else the kept dims only
    kept_all = [d for d in range(len(src.shape)) if d not in red.red_dims]
    if len(buf.shape) == len(src.shape):
        oidx = ["0" if d in red.red_dims else sidx[d] for d in range(len(src.shape))]
    else:
        oidx = [sidx[d] for d in kept_all]
    ctx.buffer_param(buf)
    final = "acc"
    if has_nan:
        final = f"(nan_ ? ({acc_t})NAN : acc)"
    store = f"{buf.name}[{buf.offset(ctx, oidx)}] = {_store(buf, f'({regtype(out_dt)})' + final)};"
    decl = [f"{acc_t} acc = {_init(rt, out_dt, acc_t)};"] + (["int nan_ = 0;"] if has_nan else [])
    lines = [f"{{  /* {buf.name}: {rt} over dims {red.red_dims} of "
             f"{list(map(str, src.shape))} */"]
    work = src.numel()
    # a float sum accumulated in double: float partial sums (full SIMD width), each added to
    # the double, are as accurate as a cascade sum and as fast as a float one
    fbody = ctx.lines + [f"accb += {v.replace('(double)', '(float)')};"] \
        if rt == "sum" and acc_t == "double" and out_dt != D.float64 else None
    if not kdims and len(rdims) == 1 and fbody is not None:
        # blocked sum: one float partial sum per 4096-element block
        d = rdims[0]
        n = ctx.size(src.shape[d])
        lines += ["  " + ln for ln in decl] + [
            f"  #pragma omp parallel for {_par_if(ctx, work)}{_omp_extra()} {clause}",
            f"  for (int64_t rb = 0; rb < {n}; rb += 4096) {{",
            f"    const int64_t re = rb + 4096 < {n} ? rb + 4096 : {n};",
            "    float accb = 0;",
            "    #pragma omp simd reduction(+:accb)",
            f"    for (int64_t r{d} = rb; r{d} < re; r{d}++) {{"]
        lines += ["      " + ln for ln in fbody] + ["    }", "    acc += accb;", "  }",
                                                  "  " + store]
    elif not kdims:
        inner = _loops(ctx, rdims, src.shape, "r",
                       _par_if(ctx, work) + _omp_extra() + " " + clause if rdims else "",
                       clause, body, "  ")
        lines += ["  " + ln for ln in decl] + inner + ["  " + store]
    else:
        last = src.shape[rdims[-1]] if rdims else None
        if fbody is not None and rdims and not isinstance(last, SymInt) and int(last) <= 4096:
            # one float partial sum per run of the short innermost reduced dim
            inner_loop = _loops(ctx, rdims[-1:], src.shape, "r", "", "reduction(+:accb)",
                                fbody)
            body2 = ["float accb = 0;"] + inner_loop + ["acc += accb;"]
            inner = decl + (_loops(ctx, rdims[:-1], src.shape, "r", "", "", body2)
                            if len(rdims) > 1 else body2) + [store]
        else:
            inner = decl + _loops(ctx, rdims, src.shape, "r", "", clause, body) + [store]
        lines += _loops(ctx, kdims, src.shape, "i",
                        _par_if(ctx, work) + _omp_extra(), "", inner, "  ", simd_outer=False)
    lines.append("}")
    group.kernels.append("\n".join(lines))


def is_buffer(v):
    return isinstance(v, Buffer)
