"""Issue 16's proof: plain PyTorch training scripts, run once under PyTorch and once under
`ember run` from the same initial weights (the torch run saves them with --init, the ember run
loads them), must print the same loss at every step.

Each case names the tolerance and why: losses drift by float32 rounding that compounds with
depth and steps (different summation orders in NumPy vs PyTorch kernels).

By hand (from an empty folder; the torch run needs the shims in _torch_side/ on PYTHONPATH):
    PYTHONPATH=tests/programs/_torch_side python tests/programs/dcgan.py --init i.pt --data d1
    python -m ember run tests/programs/dcgan.py --init i.pt --data d2
"""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_STEP = re.compile(r"^step (\d+) loss (\S+)$", re.M)
TIMEOUT = 240


def _env(torch_side):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if torch_side:
        paths.insert(0, os.path.join(HERE, "_torch_side"))
    paths.append(ROOT)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


class EmberGap(AssertionError):
    """The ember run stopped at something ember does not provide (the hook's message)."""


def _run(cmd, torch_side, cwd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(torch_side), cwd=cwd,
                       timeout=TIMEOUT)
    side = "torch" if torch_side else "ember"
    if p.returncode and not torch_side and "ember does not provide" in p.stderr:
        raise EmberGap(p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, f"{side} run failed ({p.returncode}):\n{p.stdout[-3000:]}\n" \
                              f"{p.stderr[-6000:]}"
    steps = [(int(n), float(x)) for n, x in _STEP.findall(p.stdout)]
    assert steps, f"{side} run printed no 'step N loss X' lines:\n{p.stdout[-2000:]}"
    return steps, p.stdout


_ORACLE = os.environ.get("EMBER_TORCHAUDIO_ORACLE",
                         os.path.join(ROOT, ".venv", "torchaudio-oracle"))


def _skip_without_oracles(name):
    """The PyTorch run of a program needs the package it imports (the test extra has them;
    torchaudio is the Makefile's --no-deps oracle copy)."""
    src = open(os.path.join(HERE, name)).read()
    if "torchvision" in src and importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    if "torchaudio" in src and not os.path.isdir(os.path.join(_ORACLE, "torchaudio")):
        pytest.skip(f"torchaudio oracle not installed in {_ORACLE} (see the Makefile)")
    for mod in ("soundfile", "PIL"):
        if f"import {mod}" in src or f"from {mod} " in src:
            pytest.importorskip(mod)


def run_both(name, tmp_path, extra=(), script=None):
    script = script or os.path.join(HERE, name)
    init = str(tmp_path / "init.pt")
    outs = {}
    for side, cmd in (("torch", [sys.executable, script]),
                      ("ember", [sys.executable, "-m", "ember", "run", script])):
        work = tmp_path / side
        work.mkdir()
        args = ["--init", init, "--data", str(work / "data"), *extra]
        outs[side] = _run(cmd + args, side == "torch", str(work))
        assert os.path.exists(init)
    return outs["torch"], outs["ember"]


def compare(t, e, rtol, atol=1e-6):
    assert [n for n, _ in t] == [n for n, _ in e], (t, e)
    tl = np.array([x for _, x in t])
    el = np.array([x for _, x in e])
    assert np.all(np.isfinite(tl)), tl
    np.testing.assert_allclose(el, tl, rtol=rtol, atol=atol,
                               err_msg=f"per-step losses differ:\ntorch {tl}\nember {el}")
    assert len(set(np.round(tl, 6))) > 1, "the loss never changed: the program did not train"
    rel = np.max(np.abs(el - tl) / np.maximum(np.abs(tl), atol))
    print(f"{len(tl)} steps, max relative loss difference {rel:.2e} (rtol {rtol:g})")


# (script, rtol, why, marks)
CASES = [
    ("image_folder_cnn.py", 1e-4, "2 conv layers, 6 SGD steps", ()),
    ("dcgan.py", 1e-3, "two nets, BatchNorm, Adam; G's loss depends on D's updated weights",
     ()),
    ("vae_mnist.py", 1e-4, "MLP VAE, reparameterisation noise from NumPy", ()),
    ("word_language_model.py", 1e-4, "2-layer LSTM, SGD with clipping; `import torch.onnx`",
     ()),
    ("transformer_lm.py", 3e-4, "2-layer TransformerEncoder, softmax over a 40-token vocab",
     ()),
    ("speech_commands.py", 3e-4, "MelSpectrogram + log + 1-d CNN; the FFT's rounding differs",
     ()),
    # one full-suite run (2 xdist workers, loaded machine) saw 1.5e-4 at step 1 growing to
    # 1.3e-3 at step 3, other runs 3e-7: the 1x1 layer4 maps make it ill-conditioned (torch's
    # own float32 vs float64 runs differ by 6% in gradients by step 3)
    ("finetune_resnet18.py", 3e-3, "resnet18: 20 layers deep, BatchNorm in train mode",
     (pytest.mark.slow,)),
    ("gcn_sparse.py", 1e-4, "2-layer GCN, sparse mm", ()),
    ("per_sample_grads.py", 1e-4, "vmap(grad) of a small MLP, DP-SGD style clipping", ()),
    ("spawn_dataloader.py", 1e-4, "small MLP; loader workers are spawn processes",
     (pytest.mark.slow,)),
    ("time_sequence_lbfgs.py", 1e-6, "float64 LSTMCell with LBFGS (line search is sensitive, "
                                     "float64 keeps it identical)", ()),
    ("super_resolution.py", 1e-4, "3 convs + PixelShuffle, Adam", ()),
    ("siamese_network.py", 1e-4, "shared CNN tower, BCELoss, Adadelta", ()),
    ("actor_critic.py", 1e-4, "actions drawn from the policy with NumPy uniforms", ()),
    ("compiled_training.py", 1e-4, "torch.compile'd CNN (aot_eager) and loss (a graph break), "
                                   "a smaller last batch", ()),
]


@pytest.mark.parametrize("name,rtol", [
    pytest.param(n, r, marks=m, id=n[:-3]) for n, r, _, m in CASES])
def test_program(name, rtol, tmp_path):
    _skip_without_oracles(name)
    (t, _), (e, eout) = run_both(name, tmp_path)
    compare(t, e, rtol)


def test_tensorboard_event_file(tmp_path):
    """The TensorBoard loop (small MLP, Adam: rtol 1e-4) matches step by step, and its event
    file exists in both runs and holds the logged scalars and histograms."""
    pytest.importorskip("tensorboard")
    (t, tout), (e, eout) = run_both("tensorboard_loop.py", tmp_path)
    compare(t, e, 1e-4)
    for side in ("torch", "ember"):
        logdir = tmp_path / side / "data" / "runs" / "mlp"
        files = [f for d, _, fs in os.walk(logdir) for f in fs if "tfevents" in f]
        assert files, f"{side}: no event file under {logdir}"
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        acc = EventAccumulator(str(logdir)).Reload()
        assert "train/loss" in acc.Tags()["scalars"], acc.Tags()
        assert "fc1.weight" in acc.Tags()["histograms"], acc.Tags()
        got = [ev.value for ev in acc.Scalars("train/loss")]
        want = [x for _, x in (t if side == "torch" else e)]
        np.testing.assert_allclose(got, want, rtol=1e-6)
