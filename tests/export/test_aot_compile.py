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

static int64_t numel(shape_fn f, int i, int64_t *sizes, int *nd) {
  *nd = f(i, sizes);
  int64_t n = 1;
  for (int d = 0; d < *nd; d++) n *= sizes[d];
  return n;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: driver lib.so in.bin out.bin\n"); return 2; }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
  count_fn nin = (count_fn)dlsym(h, "ember_model_num_inputs");
  count_fn nout = (count_fn)dlsym(h, "ember_model_num_outputs");
  shape_fn ishape = (shape_fn)dlsym(h, "ember_model_input_shape");
  shape_fn oshape = (shape_fn)dlsym(h, "ember_model_output_shape");
  run_fn run = (run_fn)dlsym(h, "ember_model_run");
  err_fn err = (err_fn)dlsym(h, "ember_model_last_error");
  if (!nin || !nout || !ishape || !oshape || !run || !err) { fprintf(stderr, "dlsym\n"); return 4; }
  (void)&ember_model_run;   /* the header declares what dlsym found */
  int ni = nin(), no = nout(), nd;
  int64_t sizes[16], wrong[16];
  const float *ins[16]; float *outs[16]; int64_t *osz[16]; const int64_t *isz[16];
  FILE *fi = fopen(argv[2], "rb");
  for (int i = 0; i < ni; i++) {
    int64_t n = numel(ishape, i, sizes, &nd);
    float *buf = malloc(sizeof(float) * n);
    if (fread(buf, sizeof(float), n, fi) != (size_t)n) { fprintf(stderr, "short input\n"); return 5; }
    ins[i] = buf;
  }
  fclose(fi);
  for (int i = 0; i < no; i++) {
    outs[i] = malloc(sizeof(float) * numel(oshape, i, sizes, &nd));
    osz[i] = calloc(16, sizeof(int64_t));
  }
  /* a wrong size is refused with a message */
  ishape(0, wrong);
  wrong[0] += 1;
  isz[0] = wrong;
  for (int i = 1; i < ni; i++) isz[i] = NULL;
  if (run(ins, isz, outs, osz) != 1) { fprintf(stderr, "wrong size accepted\n"); return 6; }
  printf("refused: %s\n", err());
  wrong[0] -= 1;
  int rc = run(ins, isz, outs, osz);
  if (rc != 0) { fprintf(stderr, "run failed: %d %s\n", rc, err()); return 7; }
  FILE *fo = fopen(argv[3], "wb");
  for (int i = 0; i < no; i++) {
    int64_t n = numel(oshape, i, sizes, &nd);
    for (int d = 0; d < nd; d++)
      if (osz[i][d] != sizes[d]) { fprintf(stderr, "output_sizes\n"); return 8; }
    fwrite(outs[i], sizeof(float), n, fo);
  }
  fclose(fo);
  printf("python_loaded=%d\n", python_loaded());
  return 0;
}
"""


def _run_in_c(tmp_path, so, inputs):
    """Build the driver against `so`'s header, run it with no Python, return its stdout."""
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
    r = subprocess.run([exe, so, str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
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
    assert "size[0] is 6, the compiled program expects 5" in stdout


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
