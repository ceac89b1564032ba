"""ember.export.aot_compile: an ExportedProgram as a shared library with a C entry point.

Why: deployment without Python (PyTorch Mobile / AOTInductor's role). The whole graph
becomes C (ember/_inductor/aot/: generated pointwise loops + runtime.c's matmul, conv,
pooling, batch_norm, softmax), weights are assembled into the library's .rodata, and the
library links only libm (and libgomp when OpenMP is on). Static shapes, float32.
"""
import os
import re
import subprocess
import tempfile

import numpy as np

from .._atomic_file import atomic_write
from .._inductor import cpp_builder
from .._inductor.aot.codegen import AotGraph
from .._inductor.aot.library import generate
from ._program import ConstantArgument, InputKind, OutputKind

__all__ = ["aot_compile", "HEADER"]

HEADER = """\
/* {stem}.h: C interface of an ember.export.aot_compile'd program ({stem}.so).
 *
 * All tensors are float32, contiguous, row-major. Weights are inside the library.
 * Inputs ({nin}): {ins}
 * Outputs ({nout}): {outs}
 * Dynamic sizes (named sN above) are run-time arguments: {ranges}
 *
 * int ember_model_run(inputs, input_sizes, outputs, output_sizes)
 *   inputs[i]       data of user input i (ember_model_input_shape(i) elements)
 *   input_sizes     input_sizes[i] = input i's sizes, checked against the compiled shapes
 *                   and ranges (a mismatch returns 1, message in ember_model_last_error);
 *                   NULL (or input_sizes[i] NULL) only for inputs without dynamic sizes
 *   outputs[i]      caller-allocated buffer of ember_model_output_shape(i)'s numel floats
 *   output_sizes    NULL, or output_sizes[i] = NULL or room for output i's ndim sizes
 *   returns 0 on success, 1 on bad arguments, 2 when out of memory. Thread-safe: each call
 *   allocates its own intermediates.
 */
#ifndef EMBER_MODEL_{guard}_H
#define EMBER_MODEL_{guard}_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {{
#endif
int ember_model_num_inputs(void);
int ember_model_num_outputs(void);
/* ndim of input/output i (-1 when i is out of range) */
int ember_model_input_ndim(int i);
int ember_model_output_ndim(int i);
/* writes the sizes into `sizes` (when not NULL), returns ndim (-1 when out of range);
   a dynamic size reads -1 */
int ember_model_input_shape(int i, int64_t *sizes);
int ember_model_output_shape(int i, int64_t *sizes);
/* output i's sizes for inputs of sizes input_sizes (as ember_model_run takes them):
   returns ndim, -1 when i is out of range, -2 (message in ember_model_last_error)
   when the input sizes are refused */
int ember_model_output_sizes(const int64_t *const *input_sizes, int i, int64_t *sizes);
const char *ember_model_input_name(int i);
const char *ember_model_output_name(int i);
int ember_model_run(const float *const *inputs, const int64_t *const *input_sizes,
                    float **outputs, int64_t **output_sizes);
/* why the last ember_model_run on this thread failed ("" after a success) */
const char *ember_model_last_error(void);
/* OpenMP threads of later runs (default: OMP_NUM_THREADS or all cores; no-op without
   OpenMP) */
void ember_model_set_num_threads(int n);
#ifdef __cplusplus
}}
#endif
#endif
"""


def _write_text(path, text):
    with atomic_write(path, 0o644) as f:
        f.write(text.encode())


def _state(ep, spec):
    if spec.kind == InputKind.CONSTANT_TENSOR:
        return ep.constants[spec.target]
    if spec.kind == InputKind.BUFFER and spec.persistent is False:
        return ep.constants[spec.target]
    return ep.state_dict[spec.target]


def _options(options):
    opts = {"openmp": True, "march_native": False, "cflags": [], "keep_source": False}
    for k, v in (options or {}).items():
        if k not in opts:
            raise ValueError(f"aot_compile: unknown option {k!r} (known: {sorted(opts)})")
        opts[k] = v
    return opts


def aot_compile(ep, path=None, options=None):
    """Compile ExportedProgram `ep` to shared library `path` (default: a fresh file in a
    temporary directory) and write its C header beside it (`<stem>.h`). Returns the
    library's path.

    options: openmp (True: -fopenmp, links libgomp), march_native (False: portable code),
    cflags (extra compiler flags), keep_source (True: also write `<stem>.c`).
    Raises NotImplementedError naming the op or case the C runtime lacks, and
    ember._inductor.cpp_builder.CompilerNotFound without a C compiler."""
    from ._program import ExportedProgram
    if not isinstance(ep, ExportedProgram):
        raise TypeError("ember.export.aot_compile: expected an ExportedProgram (from "
                        f"ember.export.export), got {type(ep).__name__}")
    opts = _options(options)
    cc = cpp_builder.find_compiler()
    sig = ep.graph_signature
    for spec in sig.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            raise NotImplementedError(f"aot_compile: {spec.kind.name} outputs (state updates "
                                      "of a training-mode program; export the model after "
                                      ".eval())")
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    inputs, weights, arrays = [], {}, {}
    for spec in sig.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            if isinstance(spec.arg, ConstantArgument):
                continue          # baked into the graph at export
            node = nodes[spec.arg.name]
            inputs.append((spec.arg.name, node, f"in_{len(inputs)}"))
            continue
        if spec.kind not in (InputKind.PARAMETER, InputKind.BUFFER,
                             InputKind.CONSTANT_TENSOR):
            raise NotImplementedError(f"aot_compile: graph input kind {spec.kind.name}")
        node = nodes[spec.arg.name]
        if not node.users:
            continue
        arr = np.ascontiguousarray(_state(ep, spec).detach().numpy())
        if arr.dtype != np.float32:
            raise NotImplementedError(f"aot_compile: {spec.target} is {arr.dtype}; the C "
                                      "runtime is float32 only")
        weights[node.name] = f"W{len(weights)}"
        arrays[weights[node.name]] = arr
    ag = AotGraph(ep.graph_module, {n: c for n, _, c in inputs}, weights, arrays)
    in_info = [(name, ag_shape, c) for (name, node, c), ag_shape in
               zip(inputs, [_in_shape(node) for _, node, _ in inputs])]
    ag.emit()
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    outs = out_node.args[0] if isinstance(out_node.args[0], (list, tuple)) \
        else [out_node.args[0]]
    out_info, it = [], iter(outs)
    for spec in sig.output_specs:
        if isinstance(spec.arg, ConstantArgument):
            raise NotImplementedError("aot_compile: a constant (non-tensor) user output")
        val = next(it)
        out_info.append((val.name, ag.shape_of(val), ag._val(val)))
    ranges = {str(k): (v.lower, None if v.upper == float("inf") else int(v.upper))
              for k, v in (ep.range_constraints or {}).items()}
    # only the weights the code reads (a linear's weight is read in its transposed copy,
    # batch_norm's weight and running_var as one folded scale)
    text = "\n".join(ag.lines + [p for _, _, p in out_info])
    used = set(re.findall(r"\bW[TS]?\d+\b", text))
    blobs, offset = [], 0
    for macro, arr in arrays.items():
        if macro in used:
            blobs.append((macro, offset, arr))
            offset += (arr.size + 15) // 16 * 16
    return _build(cc, opts, path, ag, blobs, in_info, out_info, ranges)


def _in_shape(node):
    from .._inductor.aot.codegen import _static_shape
    return _static_shape(node)


def _pretty(shape):
    return "[" + ", ".join(t.strip("()").replace("ks_", "") for t in shape) + "]"


def _build(cc, opts, path, ag, blobs, in_info, out_info, ranges):
    if path is None:
        path = os.path.join(tempfile.mkdtemp(prefix="ember_aot_"), "model.so")
    path = os.path.abspath(os.fspath(path))
    stem = os.path.splitext(path)[0]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ember_aot_build_") as d:
        blob = os.path.join(d, "weights.bin")
        data = bytearray()
        for _, off, arr in blobs:
            data += bytes(4 * off - len(data)) + arr.tobytes()
        with open(blob, "wb") as f:
            f.write(bytes(data))
        src = generate(ag, blob, {m: off for m, off, _ in blobs}, in_info, out_info,
                       ranges)
        c_path = os.path.join(d, "model.c")
        with open(c_path, "w") as f:
            f.write(src)
        tmp_so = os.path.join(d, "model.so")
        cmd = [cc, "-O3", "-fPIC", "-shared", "-fvisibility=hidden", "-fno-math-errno",
               "-std=gnu11", *(["-fopenmp"] if opts["openmp"] else []),
               *(["-march=native"] if opts["march_native"] else []), *opts["cflags"],
               c_path, "-o", tmp_so, "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise cpp_builder.CompileError(f"aot_compile: C compilation failed "
                                           f"({' '.join(cmd)}):\n{r.stderr[-4000:]}")
        os.replace(tmp_so, path)
        if opts["keep_source"]:
            _write_text(stem + ".c", src)
    guard = "".join(ch if ch.isalnum() else "_" for ch in os.path.basename(stem)).upper()
    _write_text(stem + ".h", HEADER.format(
        stem=os.path.basename(stem), nin=len(in_info), nout=len(out_info), guard=guard,
        ins=", ".join(f"{n} {_pretty(s)}" for n, s, _ in in_info),
        outs=", ".join(f"{n} {_pretty(s)}" for n, s, _ in out_info),
        ranges=", ".join(f"{k} in [{lo}, {'inf' if hi is None else hi}]"
                         for k, (lo, hi) in ranges.items()) or "none"))
    return path
