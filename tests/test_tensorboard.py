"""ember.utils.tensorboard.SummaryWriter: real event files, read back with TensorBoard's own
EventAccumulator (values, steps, images, text, histograms, hparams)."""
import io
import os

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter

pytest.importorskip("tensorboard")
PIL = pytest.importorskip("PIL.Image")
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator)


def _load(path):
    acc = EventAccumulator(str(path), size_guidance={"images": 0, "scalars": 0,
                                                     "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_scalars_histogram_text_and_images_round_trip(tmp_path):
    with SummaryWriter(log_dir=tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss/train", ember.tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.5, global_step=3, walltime=1234.5)
        values = ember.tensor(np.random.RandomState(0).randn(1000).astype(np.float32))
        w.add_histogram("weights", values, global_step=7)
        w.add_histogram("weights_auto", values, global_step=1, bins="auto")
        w.add_text("notes", "hello *tensorboard*", global_step=2)
        img = np.random.RandomState(1).rand(3, 6, 5).astype(np.float32)
        w.add_image("img", ember.tensor(img), 0)
        w.add_image("img_hwc_u8", (img.transpose(1, 2, 0) * 255).astype(np.uint8), 0,
                    dataformats="HWC")
        w.add_images("batch", ember.tensor(np.random.RandomState(2).rand(10, 1, 4, 3)), 0)
    acc = _load(tmp_path)
    tags = acc.Tags()
    assert set(tags["scalars"]) == {"loss/train", "lr"}
    s = acc.Scalars("loss/train")
    assert [e.step for e in s] == list(range(5))
    np.testing.assert_allclose([e.value for e in s], [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5], rtol=1e-6)
    (lr,) = acc.Scalars("lr")
    assert lr.step == 3 and lr.wall_time == 1234.5 and lr.value == 0.5
    (h,) = acc.Histograms("weights")
    v = values.numpy().astype(np.float64)
    assert h.step == 7 and h.histogram_value.num == 1000
    assert h.histogram_value.min == pytest.approx(v.min())
    assert h.histogram_value.sum == pytest.approx(v.sum(), rel=1e-6)
    assert h.histogram_value.sum_squares == pytest.approx(v.dot(v), rel=1e-6)
    assert sum(h.histogram_value.bucket) == 1000
    (ha,) = acc.Histograms("weights_auto")
    counts, _ = np.histogram(v, bins="auto")
    assert sum(ha.histogram_value.bucket) == 1000 and max(ha.histogram_value.bucket) == \
        counts.max()
    (t,) = acc.Tensors("notes/text_summary")
    assert t.step == 2 and t.tensor_proto.string_val[0].decode() == "hello *tensorboard*"
    (im,) = acc.Images("img")
    assert (im.height, im.width) == (6, 5)
    decoded = np.asarray(PIL.open(io.BytesIO(im.encoded_image_string)))
    np.testing.assert_array_equal(decoded, (img.transpose(1, 2, 0) * 255).astype(np.uint8))
    (im2,) = acc.Images("img_hwc_u8")
    np.testing.assert_array_equal(np.asarray(PIL.open(io.BytesIO(im2.encoded_image_string))),
                                  decoded)
    (grid,) = acc.Images("batch")
    assert (grid.height, grid.width) == (8, 24)          # 10 images, 8 per row


def test_add_scalars_and_hparams_write_sub_runs(tmp_path):
    w = SummaryWriter(log_dir=str(tmp_path))
    for step in range(3):
        w.add_scalars("run", {"a": step, "b": 2.0 * step}, step)
    w.add_hparams({"lr": 0.1, "bsize": 4, "opt": "sgd", "nesterov": True},
                  {"hparam/accuracy": 0.9}, run_name="hp")
    w.flush()
    w.close()
    b = _load(tmp_path / "run_b")
    assert [e.value for e in b.Scalars("run")] == [0.0, 2.0, 4.0]
    hp = _load(tmp_path / "hp")
    assert hp.Scalars("hparam/accuracy")[0].value == pytest.approx(0.9)
    from tensorboard.plugins.hparams import plugin_data_pb2
    meta = hp.SummaryMetadata("_hparams_/session_start_info")
    data = plugin_data_pb2.HParamsPluginData.FromString(meta.plugin_data.content)
    hps = data.session_start_info.hparams
    assert hps["lr"].number_value == 0.1 and hps["opt"].string_value == "sgd"
    assert hps["nesterov"].bool_value is True and hps["bsize"].number_value == 4
    exp = plugin_data_pb2.HParamsPluginData.FromString(
        hp.SummaryMetadata("_hparams_/experiment").plugin_data.content).experiment
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/accuracy"]
    with pytest.raises(ValueError, match="value should be one of"):
        SummaryWriter(log_dir=str(tmp_path / "x")).add_hparams({"f": [1]}, {})


def test_default_log_dir_errors_and_graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    import socket
    w = SummaryWriter(comment="_exp")
    logdir = w.get_logdir()
    assert logdir.startswith("runs" + os.sep) and logdir.endswith(socket.gethostname() + "_exp")
    with pytest.raises(NotImplementedError, match="add_graph"):
        w.add_graph(ember.nn.Linear(2, 2), ember.zeros(1, 2))
    with pytest.raises(ValueError, match="no element"):
        w.add_histogram("empty", ember.zeros(0))
    w.close()
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(logdir))


def test_torch_utils_tensorboard_through_ember_run(tmp_path):
    """`from torch.utils.tensorboard import SummaryWriter` in an `ember run` program."""
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.tensorboard import SummaryWriter\n"
        f"w = SummaryWriter({str(tmp_path / 'tb')!r})\n"
        "for i in range(3):\n"
        "    w.add_scalar('x', torch.tensor(i * 2.0), i)\n"
        "w.close()\n")
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [e.value for e in _load(tmp_path / "tb").Scalars("x")] == [0.0, 2.0, 4.0]
