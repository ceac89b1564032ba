"""ember.export.aot_compile: the library runs in a C process with no Python in it.

Each test exports a model, compiles it to a .so + header, builds a small C driver that
dlopens the library (and includes the header, so the header is valid C), feeds inputs from
a binary file and writes the outputs to a file; the outputs match ember's eager outputs.
"""
import ctypes
import os
import subprocess

import numpy as np
import pytest

import ember as torch
import ember.nn as nn
from ember._inductor import cpp_builder

try:
    CC = cpp_builder.find_compiler()
except cpp_builder.CompilerNotFound:
    CC = None

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler on this machine")

DRIVER = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

typedef int (*count_fn)(void);
typedef int (*shape_fn)(int, int64_t *);
typedef int (*run_fn)(const float *const *, const int64_t *const *, float **, int64_t **);
typedef const char *(*err_fn)(void);

static int python_loaded(void) {   /* is any libpython mapped into this process? */
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) if (strstr(line, "libpython")) found = 1;
  fclose(f);
  return found;
}

typedef int (*osizes_fn)(const int64_t *const *, int, int64_t *);

static int64_t prod(const int64_t *sizes, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) n *= sizes[d];
  return n;
}

/* driver lib.so in.bin out.bin [batch]: a dynamic size (-1) becomes `batch` */
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: driver lib.so in.bin out.bin [batch]\n"); return 2; }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
  count_fn nin = (count_fn)dlsym(h, "ember_model_num_inputs");
  count_fn nout = (count_fn)dlsym(h, "ember_model_num_outputs");
  shape_fn ishape = (shape_fn)dlsym(h, "ember_model_input_shape");
  osizes_fn osizes = (osizes_fn)dlsym(h, "ember_model_output_sizes");
  run_fn run = (run_fn)dlsym(h, "ember_model_run");
  err_fn err = (err_fn)dlsym(h, "ember_model_last_error");
  if (!nin || !nout || !ishape || !osizes || !run || !err) { fprintf(stderr, "dlsym\n"); return 4; }
  (void)&ember_model_run;   /* the header declares what dlsym found */
  int ni = nin(), no = nout();
  int64_t isizes[16][16], osz_store[16][16], sizes[16], wrong[16];
  int ind[16];
  const float *ins[16]; float *outs[16]; int64_t *osz[16]; const int64_t *isz[16];
  FILE *fi = fopen(argv[2], "rb");
  for (int i = 0; i < ni; i++) {
    ind[i] = ishape(i, isizes[i]);
    for (int d = 0; d < ind[i]; d++)
      if (isizes[i][d] < 0) isizes[i][d] = argc > 4 ? atoll(argv[4]) : 0;
    isz[i] = isizes[i];
    int64_t n = prod(isizes[i], ind[i]);
    float *buf = malloc(sizeof(float) * n);
    if (fread(buf, sizeof(float), n, fi) != (size_t)n) { fprintf(stderr, "short input\n"); return 5; }
    ins[i] = buf;
  }
  fclose(fi);
  for (int i = 0; i < no; i++) {
    int nd = osizes(isz, i, sizes);
    if (nd < 0) { fprintf(stderr, "output_sizes: %s\n", err()); return 9; }
    outs[i] = malloc(sizeof(float) * prod(sizes, nd));
    osz[i] = osz_store[i];
  }
  /* a wrong (static, last) size is refused with a message */
  memcpy(wrong, isizes[0], sizeof wrong);
  wrong[ind[0] - 1] += 1;
  isz[0] = wrong;
  if (run(ins, isz, outs, osz) != 1) { fprintf(stderr, "wrong size accepted\n"); return 6; }
  printf("refused: %s\n", err());
  isz[0] = isizes[0];
  int rc = run(ins, isz, outs, osz);
  if (rc != 0) { fprintf(stderr, "run failed: %d %s\n", rc, err()); return 7; }
  FILE *fo = fopen(argv[3], "wb");
  for (int i = 0; i < no; i++) {
    int nd = osizes(isz, i, sizes);
    for (int d = 0; d < nd; d++)
      if (osz[i][d] != sizes[d]) { fprintf(stderr, "output_sizes\n"); return 8; }
    fwrite(outs[i], sizeof(float), prod(sizes, nd), fo);
  }
  fclose(fo);
  printf("python_loaded=%d\n", python_loaded());
  return 0;
}
"""


def _run_in_c(tmp_path, so, inputs, batch=None):
    """Build the driver against `so`'s header, run it with no Python, return its stdout
    and its outputs (flat float32); `batch` fills the dynamic sizes."""
    header = os.path.splitext(so)[0] + ".h"
    with open(header) as f:
        (tmp_path / "model.h").write_text(f.read())
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = str(tmp_path / "driver")
    subprocess.run([CC, "-O1", "-I", str(tmp_path), str(tmp_path / "driver.c"), "-o", exe,
                    "-ldl"], check=True, capture_output=True, timeout=120)
    with open(tmp_path / "in.bin", "wb") as f:
        for x in inputs:
            f.write(np.ascontiguousarray(x.numpy(), dtype=np.float32).tobytes())
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_NUM_THREADS": "2"}
    argv = [exe, so, str(tmp_path / "in.bin"), str(tmp_path / "out.bin")]
    r = subprocess.run(argv + ([str(batch)] if batch is not None else []),
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert "python_loaded=0" in r.stdout
    return r.stdout, np.fromfile(tmp_path / "out.bin", dtype=np.float32)


def _check(tmp_path, model, inputs, rtol=1e-5, atol=1e-6):
    model.eval()
    ep = torch.export.export(model, tuple(inputs))
    so = torch.export.aot_compile(ep, str(tmp_path / "lib" / "model.so"))
    assert os.path.exists(so) and os.path.exists(os.path.splitext(so)[0] + ".h")
    stdout, got = _run_in_c(tmp_path, so, inputs)
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, (tuple, list)) else [want]
    flat = np.concatenate([w.numpy().ravel() for w in want])
    np.testing.assert_allclose(got, flat, rtol=rtol, atol=atol)
    return stdout, so


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


def test_mlp_runs_in_c_without_python(tmp_path):
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 16),
                        nn.GELU(), nn.Linear(16, 3), nn.Tanh())
    stdout, _ = _check(tmp_path, mlp, [torch.randn(5, 6)])
    assert "input 0 (input) size[1] is 7, the compiled program expects 6" in stdout


def test_cnn_runs_in_c_without_python(tmp_path):
    torch.manual_seed(1)
    cnn = CNN()
    with torch.no_grad():                   # non-trivial inference statistics
        cnn.bn.running_mean.uniform_(-1, 1)
        cnn.bn.running_var.uniform_(0.5, 2.0)
        cnn.bn.weight.uniform_(0.5, 1.5)
    _check(tmp_path, cnn, [torch.randn(2, 3, 8, 8)])


class Mixed(nn.Module):
    """The rest of the runtime's ops: strided/grouped conv, avg/adaptive pooling, broadcast
    arithmetic, reductions, permute, matmul, log_softmax, two inputs and two outputs."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2, bias=False)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.gap = nn.AdaptiveAvgPool2d((2, 3))
        self.scale = nn.Parameter(torch.randn(8, 1, 1))

    def forward(self, x, y):
        h = torch.sigmoid(self.pool(self.conv(x)) * self.scale + 0.5)
        g = self.gap(h).permute(0, 2, 3, 1)                 # (N, 2, 3, 8)
        m = h.mean(dim=(2, 3)) - h.sum(1).mean(dim=(1, 2), keepdim=True) / 8
        z = torch.matmul(g.reshape(-1, 8), y).t()
        return torch.log_softmax(m, dim=-1), torch.nn.functional.leaky_relu(z, 0.1)


def test_more_ops_two_outputs(tmp_path):
    torch.manual_seed(2)
    _check(tmp_path, Mixed(), [torch.randn(2, 4, 9, 7), torch.randn(8, 5)])


def test_ctypes_shape_queries(tmp_path):
    torch.manual_seed(3)
    mlp = nn.Sequential(nn.Linear(4, 3)).eval()
    ep = torch.export.export(mlp, (torch.randn(7, 4),))
    so = torch.export.aot_compile(ep, str(tmp_path / "q.so"), options={"openmp": False})
    lib = ctypes.CDLL(so)
    lib.ember_model_input_name.restype = ctypes.c_char_p
    sizes = (ctypes.c_int64 * 4)()
    assert lib.ember_model_num_inputs() == 1 and lib.ember_model_num_outputs() == 1
    assert lib.ember_model_input_shape(0, sizes) == 2 and list(sizes[:2]) == [7, 4]
    assert lib.ember_model_output_shape(0, sizes) == 2 and list(sizes[:2]) == [7, 3]
    assert lib.ember_model_output_shape(1, sizes) == -1
    assert lib.ember_model_input_name(0) == b"input"
    lib.ember_model_set_num_threads(1)             # a no-op here: built without OpenMP
    assert "ember_model_run" in (tmp_path / "q.h").read_text()


def test_unsupported_op_names_it(tmp_path):
    class Cum(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 1)

    ep = torch.export.export(Cum(), (torch.randn(2, 3),))
    with pytest.raises(NotImplementedError, match="cumsum"):
        torch.export.aot_compile(ep, str(tmp_path / "c.so"))
    assert not (tmp_path / "c.so").exists()


def test_float64_and_training_mode_refused(tmp_path):
    ep = torch.export.export(nn.Linear(2, 2).double().eval(), (torch.randn(3, 2).double(),))
    with pytest.raises(NotImplementedError, match="float32"):
        torch.export.aot_compile(ep, str(tmp_path / "d.so"))
    ep = torch.export.export(nn.BatchNorm1d(2).train(), (torch.randn(3, 2),))
    with pytest.raises(NotImplementedError, match="training"):
        torch.export.aot_compile(ep, str(tmp_path / "t.so"))


def test_dynamic_batch_cnn_one_library_many_batches(tmp_path):
    torch.manual_seed(4)
    cnn = CNN().eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    ep = torch.export.export(cnn, (torch.randn(3, 3, 8, 8),), dynamic_shapes={"x": {0: batch}})
    so = torch.export.aot_compile(ep, str(tmp_path / "lib" / "model.so"))
    header = (tmp_path / "lib" / "model.h").read_text()
    assert "x [s0, 3, 8, 8]" in header and "s0 in [2, 64]" in header
    for n in (2, 5, 17):
        x = torch.randn(n, 3, 8, 8)
        _, got = _run_in_c(tmp_path, so, [x], batch=n)
        with torch.no_grad():
            want = cnn(x).numpy().ravel()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_dynamic_batch_range_and_missing_sizes_refused(tmp_path):
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    batch = torch.export.Dim("batch", min=2, max=16)
    ep = torch.export.export(mlp, (torch.randn(3, 4),), dynamic_shapes={"input": {0: batch}})
    so = torch.export.aot_compile(ep, str(tmp_path / "m.so"))
    lib = ctypes.CDLL(so)
    lib.ember_model_last_error.restype = ctypes.c_char_p
    sizes = (ctypes.c_int64 * 2)()
    assert lib.ember_model_input_shape(0, sizes) == 2 and list(sizes) == [-1, 4]
    x = np.random.default_rng(0).standard_normal((20, 4)).astype(np.float32)
    out = np.zeros((20, 2), np.float32)
    ins = (ctypes.c_void_p * 1)(x.ctypes.data)
    outs = (ctypes.c_void_p * 1)(out.ctypes.data)
    assert lib.ember_model_run(ins, None, outs, None) == 1
    assert b"dynamic size: input_sizes[0] must be given" in lib.ember_model_last_error()
    isz = (ctypes.c_int64 * 2)(20, 4)
    isizes = (ctypes.c_void_p * 1)(ctypes.addressof(isz))
    assert lib.ember_model_run(ins, isizes, outs, None) == 1
    assert b"size[0] is 20, above the exported maximum 16" in lib.ember_model_last_error()
    osz = (ctypes.c_int64 * 2)()
    assert lib.ember_model_output_sizes(isizes, 0, osz) == -2
    isz[0] = 9
    assert lib.ember_model_output_sizes(isizes, 0, osz) == 2 and list(osz) == [9, 2]
    assert lib.ember_model_run(ins, isizes, outs, None) == 0
    with torch.no_grad():
        want = mlp(torch.from_numpy(x[:9])).numpy()
    np.testing.assert_allclose(out[:9], want, rtol=1e-5, atol=1e-6)


class Depthwise(nn.Module):
    """mobilenet's block: depthwise (groups == channels) conv, ReLU6, pointwise conv,
    hardswish/hardsigmoid (mobilenet_v3's activations)."""

    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(6, 6, 3, stride=2, padding=1, groups=6)
        self.pw = nn.Conv2d(6, 5, 1, bias=False)
        self.fc = nn.Linear(5, 4)

    def forward(self, x):
        h = self.pw(nn.functional.relu6(self.dw(x)))
        h = nn.functional.hardswish(h) + nn.functional.hardsigmoid(h)
        return self.fc(nn.functional.adaptive_avg_pool2d(h, 1).flatten(1))


def test_depthwise_conv_block(tmp_path):
    torch.manual_seed(5)
    _check(tmp_path, Depthwise(), [torch.randn(3, 6, 11, 10)])


@pytest.mark.slow
def test_resnet18_matches_ember(tmp_path):
    models = pytest.importorskip("ember.vision.models")
    torch.manual_seed(6)
    m = models.resnet18(num_classes=10).eval()
    x = torch.randn(2, 3, 32, 32)
    ep = torch.export.export(m, (x,))
    lib = ctypes.CDLL(torch.export.aot_compile(ep, str(tmp_path / "r.so")))
    out = np.zeros((2, 10), np.float32)
    xi = np.ascontiguousarray(x.numpy())
    assert lib.ember_model_run((ctypes.c_void_p * 1)(xi.ctypes.data), None,
                               (ctypes.c_void_p * 1)(out.ctypes.data), None) == 0
    with torch.no_grad():
        want = m(x).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_transformer_encoder_in_c(tmp_path):
    """layer_norm, select (the packed q/k/v), 4-D matmul, softmax, permutes."""
    torch.manual_seed(7)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    _check(tmp_path, nn.TransformerEncoder(layer, 2), [torch.randn(2, 5, 16)])


class ZeroDimReductions(nn.Module):
    def forward(self, x):
        s = x.sum()
        return s.sum(), s.mean(0), (s * 2).sum(-1)


def test_reductions_of_a_0d_tensor(tmp_path):
    _check(tmp_path, ZeroDimReductions(), [torch.randn(3, 4)])


_FLASH = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu


class Attention(nn.Module):
    """PyTorch's flash-for-cpu attention op (what MultiheadAttention runs): causal with more
    keys than queries, grouped-query heads, an explicit scale."""

    def forward(self, q, k, v):
        return _FLASH(q, k, v, is_causal=True)[0], _FLASH(q, k, v, scale=0.3)[0]


def test_sdpa_in_c(tmp_path):
    torch.manual_seed(9)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 7, 8), torch.randn(2, 2, 7, 8)
    want = [torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                             enable_gqa=True),
            torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.3,
                                                             enable_gqa=True)]
    for w, got in zip(want, Attention()(q, k, v)):
        np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    _check(tmp_path, Attention(), [q, k, v], rtol=1e-4, atol=1e-5)   # online softmax order


def test_sdpa_with_mask_names_the_missing_case(tmp_path):
    class Masked(nn.Module):
        def forward(self, q, k, v, m):
            return _FLASH(q, k, v, attn_mask=m)[0]
    args = (torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4),
            torch.randn(3, 3))
    ep = torch.export.export(Masked().eval(), args)
    with pytest.raises(NotImplementedError, match="attn_mask"):
        torch.export.aot_compile(ep, str(tmp_path / "m.so"))


class Slices(nn.Module):
    def forward(self, x, y):
        z = torch.cat([x[:, 1:3], y.expand(2, 2, 4), x[:, -2:]], dim=1)
        return z[:, ::2], x.select(1, -1)


def test_slice_select_expand_cat(tmp_path):
    torch.manual_seed(8)
    _check(tmp_path, Slices(), [torch.randn(2, 5, 4), torch.randn(1, 2, 4)], rtol=0, atol=0)


class Conv1dNet(nn.Module):
    """conv1d (strided, then depthwise dilated), rounding division, maximum: 3 outputs."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(3, 4, 5, stride=2, padding=2)
        self.c2 = nn.Conv1d(4, 4, 3, groups=4, dilation=2)

    def forward(self, x):
        h = self.c2(self.c(x))
        return (torch.div(h, 0.3, rounding_mode="floor"),
                torch.div(h, 0.3, rounding_mode="trunc"), torch.maximum(h, h * 0.5))


def test_conv1d_and_rounding_division(tmp_path):
    torch.manual_seed(9)
    _check(tmp_path, Conv1dNet(), [torch.randn(2, 3, 17)])


def test_missing_compiler_is_a_clear_error(tmp_path, monkeypatch):
    from ember._inductor import config
    monkeypatch.setattr(config.cpp, "cxx", str(tmp_path / "no-such-cc"))
    ep = torch.export.export(nn.Linear(2, 2).eval(), (torch.randn(3, 2),))
    with pytest.raises(cpp_builder.CompilerNotFound, match="no C compiler found"):
        torch.export.aot_compile(ep, str(tmp_path / "x.so"))
