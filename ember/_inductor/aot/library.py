"""The C library around an AotGraph: weights, shape tables, size checks, entry points.

Why apart from the graph walk (codegen.py): this is the ABI the header documents
(ember_model_run and the queries), the same for every program; codegen.py only decides
what the body of ember_model_run computes.
"""
import os

from .codegen import SYM_RE, numel, symbols

__all__ = ["generate", "runtime_source"]


def runtime_source():
    """The text of runtime.c (copied into each generated source: the .so stands alone)."""
    with open(os.path.join(os.path.dirname(__file__), "runtime.c")) as f:
        return f.read()


def _table(name, rows, ctype):
    lines = [f"static const {ctype} {name}_{k}[] = {{{', '.join(map(str, r)) or '0'}}};"
             for k, r in enumerate(rows)]
    refs = ", ".join(f"{name}_{k}" for k in range(len(rows))) or "0"
    lines.append(f"static const {ctype} *const {name}[] = {{{refs}}};")
    return lines


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bind(inputs, ranges, ret):
    """C statements binding each size symbol from the first input dim that is exactly it,
    then checking every input dim (static sizes, repeated symbols, Dim ranges); a refusal
    sets the message and returns `ret`."""
    lines, bound = [], {}
    for k, (_, shape, _) in enumerate(inputs):
        for d, t in enumerate(shape):
            m = SYM_RE.fullmatch(t.strip("()"))
            if m and m.group(0) not in bound:
                bound[m.group(0)] = (k, d)
    syms = symbols(t for _, shape, _ in inputs for t in shape)
    for sym in syms:
        if sym not in bound:
            raise NotImplementedError(f"aot_compile: size {sym[3:]} is not the size of any "
                                      "input dimension (only plain dynamic dims are compiled)")
        k, d = bound[sym]
        lines.append(f"  int64_t {sym} = (input_sizes && input_sizes[{k}]) ? "
                     f"input_sizes[{k}][{d}] : -1;")
        lines.append(f"  if ({sym} < 0) {{ em_fail(\"input {k} (%s) has a dynamic size: "
                     f"input_sizes[{k}] must be given\", em_in_name[{k}]); return {ret}; }}")
        lo, hi = ranges.get(sym[3:], (None, None))
        if lo is not None:
            lines.append(f"  if ({sym} < {lo}) {{ em_fail(\"input {k} (%s) size[{d}] is "
                         f"%lld, below the exported minimum {lo}\", em_in_name[{k}], "
                         f"(long long){sym}); return {ret}; }}")
        if hi is not None:
            lines.append(f"  if ({sym} > {hi}) {{ em_fail(\"input {k} (%s) size[{d}] is "
                         f"%lld, above the exported maximum {hi}\", em_in_name[{k}], "
                         f"(long long){sym}); return {ret}; }}")
    for sym in syms:
        lines.append(f"  (void){sym};")
    for k, (_, shape, _) in enumerate(inputs):
        for d, t in enumerate(shape):
            lines.append(f"  if (input_sizes && input_sizes[{k}] && input_sizes[{k}][{d}] != "
                         f"({t})) {{ em_fail(\"input {k} (%s) size[{d}] is %lld, the "
                         f"compiled program expects %lld\", em_in_name[{k}], "
                         f"(long long)input_sizes[{k}][{d}], (long long)({t})); return {ret}; }}")
    return lines


def generate(ag, blob_path, weight_offsets, inputs, outputs, ranges):
    """The full C source of the library.

    ag: an AotGraph after emit(); blob_path: the raw weights file assembled into the
    library (.incbin); weight_offsets: {C macro name: float offset}; inputs: [(name, shape
    texts, C name)]; outputs: [(name, shape texts, C pointer expression)]; ranges: {symbol:
    (min, max or None)} of the dynamic sizes."""
    static = lambda shape: [t if t.isdigit() else "-1" for t in shape]  # noqa: E731
    src = [runtime_source(), "", "#define EM_API __attribute__((visibility(\"default\")))",
           "/* weights, assembled into .rodata from the raw float32 file written at build */",
           '__asm__(".section .rodata\\n.balign 64\\n.globl em_weights\\n'
           '.hidden em_weights\\nem_weights:\\n.incbin \\"' + blob_path +
           '\\"\\n.byte 0\\n.previous\\n");',
           "extern const float em_weights[];"]
    for macro, off in weight_offsets.items():
        src.append(f"#define {macro} (em_weights + {off})")
    src += _table("em_in_shape", [static(s) for _, s, _ in inputs], "int64_t")
    src += _table("em_out_shape", [static(s) for _, s, _ in outputs], "int64_t")
    src += [f"static const int em_in_ndim[] = {{{', '.join(str(len(s)) for _, s, _ in inputs)}}};",
            f"static const int em_out_ndim[] = "
            f"{{{', '.join(str(len(s)) for _, s, _ in outputs) or '0'}}};",
            "static const char *const em_in_name[] = {"
            + ", ".join(_c_string(n) for n, _, _ in inputs) + "};",
            "static const char *const em_out_name[] = {"
            + ", ".join(_c_string(n) for n, _, _ in outputs) + "};",
            "static _Thread_local char em_err[512];",
            "__attribute__((format(printf, 1, 2)))",
            "static int em_fail(const char *fmt, ...) {",
            "  va_list ap; va_start(ap, fmt);",
            "  int n = snprintf(em_err, sizeof em_err, \"ember_model_run: \");",
            "  vsnprintf(em_err + n, sizeof em_err - n, fmt, ap); va_end(ap); return 1; }", ""]
    src.append(_API.replace("NIN", str(len(inputs))).replace("NOUT", str(len(outputs))))
    bind = _bind(inputs, ranges, "1")
    sizes = ["EM_API int ember_model_output_sizes(const int64_t *const *input_sizes, int i, "
             "int64_t *sizes) {", *_bind(inputs, ranges, "-2")]
    for k, (_, shape, _) in enumerate(outputs):
        sizes.append(f"  if (i == {k}) {{ if (sizes) {{ " + " ".join(
            f"sizes[{d}] = {t};" for d, t in enumerate(shape)) + f" }} return {len(shape)}; }}")
    sizes += ["  return -1;", "}", ""]
    # the largest im2col scratch: constants folded here, symbolic sizes by a function
    # (a nested macro would expand exponentially)
    scratch = str(max([int(t) for t in ag.scratch if t.isdigit()] + [0]))
    for t in ag.scratch:
        if not t.isdigit():
            scratch = f"em_max64({scratch}, {t})"
    body = ["EM_API int ember_model_run(const float *const *inputs, "
            "const int64_t *const *input_sizes, float **outputs, int64_t **output_sizes) {",
            "  em_err[0] = 0;",
            "  if (!inputs || !outputs) return em_fail(\"inputs and outputs must not be NULL\");",
            f"  for (int i = 0; i < {len(inputs)}; i++)",
            "    if (!inputs[i]) return em_fail(\"input %d (%s) is NULL\", i, em_in_name[i]);",
            *bind,
            f"  const int64_t em_static_n = {ag.static_top};",
            f"  const int64_t em_arena_n = {ag.arena_total()};",
            "  (void)em_static_n;",
            f"  float *em_mem = (float *)malloc(sizeof(float) * (em_arena_n + {scratch} + 16));",
            "  if (!em_mem) { em_fail(\"out of memory\"); return 2; }",
            "  float *em_arena = em_mem;",
            "  float *em_scratch = em_mem + em_arena_n;",
            "  (void)em_arena; (void)em_scratch;"]
    for k, (_, _, cname) in enumerate(inputs):
        body.append(f"  const float *{cname} = inputs[{k}];")
    body += ag.lines
    for k, (_, shape, ptr) in enumerate(outputs):
        body.append(f"  memcpy(outputs[{k}], {ptr}, sizeof(float) * ({numel(shape)}));")
        body.append(f"  if (output_sizes && output_sizes[{k}]) " + "{ " + " ".join(
            f"output_sizes[{k}][{d}] = {t};" for d, t in enumerate(shape)) + " }")
    body += ["  free(em_mem);", "  return 0;", "}", ""]
    return "\n".join(src + sizes + body)


_API = r"""
EM_API int ember_model_num_inputs(void) { return NIN; }
EM_API int ember_model_num_outputs(void) { return NOUT; }
EM_API int ember_model_input_ndim(int i) { return i >= 0 && i < NIN ? em_in_ndim[i] : -1; }
EM_API int ember_model_output_ndim(int i) { return i >= 0 && i < NOUT ? em_out_ndim[i] : -1; }
EM_API int ember_model_input_shape(int i, int64_t *sizes) {
  if (i < 0 || i >= NIN) return -1;
  if (sizes) memcpy(sizes, em_in_shape[i], sizeof(int64_t) * em_in_ndim[i]);
  return em_in_ndim[i];
}
EM_API int ember_model_output_shape(int i, int64_t *sizes) {
  if (i < 0 || i >= NOUT) return -1;
  if (sizes) memcpy(sizes, em_out_shape[i], sizeof(int64_t) * em_out_ndim[i]);
  return em_out_ndim[i];
}
EM_API const char *ember_model_input_name(int i) { return i >= 0 && i < NIN ? em_in_name[i] : 0; }
EM_API const char *ember_model_output_name(int i) {
  return i >= 0 && i < NOUT ? em_out_name[i] : 0;
}
EM_API const char *ember_model_last_error(void) { return em_err; }
EM_API void ember_model_set_num_threads(int n) {
#ifdef _OPENMP
  if (n > 0) omp_set_num_threads(n);
#else
  (void)n;
#endif
}
"""

