"""ember.audio.datasets read torchaudio's folder layouts (generated here) and give the same
items as torchaudio's classes on the same files."""
import os
import tarfile

import numpy as np
import pytest

import ember
from ember.audio import datasets

sf = pytest.importorskip("soundfile")


def _tone(path, sr, n=800, seed=0):
    rng = np.random.default_rng(seed)
    x = (0.2 * rng.standard_normal(n)).astype(np.float32)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    sf.write(path, x, sr, subtype="PCM_16")
    return x


def test_yesno(tmp_path):
    for i, name in enumerate(["0_1_1_0_0_1_0_1", "1_1_1_1_0_0_0_0"]):
        _tone(str(tmp_path / "waves_yesno" / f"{name}.wav"), 8000, seed=i)
    ds = datasets.YESNO(tmp_path)
    assert len(ds) == 2
    wav, sr, labels = ds[1]
    assert sr == 8000 and labels == [1, 1, 1, 1, 0, 0, 0, 0] and tuple(wav.shape) == (1, 800)
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.YESNO(tmp_path / "missing")


def _speechcommands(root):
    base = root / "SpeechCommands" / "speech_commands_v0.02"
    files = ["yes/aa11_nohash_0.wav", "yes/bb22_nohash_1.wav", "no/aa11_nohash_2.wav",
             "no/cc33_nohash_0.wav", "_background_noise_/noise.wav"]
    for i, f in enumerate(files):
        _tone(str(base / f), 16000, seed=i)
    (base / "validation_list.txt").write_text("yes/bb22_nohash_1.wav\n")
    (base / "testing_list.txt").write_text("no/cc33_nohash_0.wav\n")
    return base


def test_speechcommands_subsets(tmp_path):
    _speechcommands(tmp_path)
    full = datasets.SPEECHCOMMANDS(tmp_path)
    assert len(full) == 4
    wav, sr, label, speaker, utt = full[0]
    assert (sr, label, speaker, utt) == (16000, "no", "aa11", 2) and wav.dtype == ember.float32
    train = datasets.SPEECHCOMMANDS(tmp_path, subset="training")
    assert [train.get_metadata(i)[2:] for i in range(len(train))] == [("no", "aa11", 2),
                                                                      ("yes", "aa11", 0)]
    assert datasets.SPEECHCOMMANDS(tmp_path, subset="validation")[0][2:] == ("yes", "bb22", 1)
    assert datasets.SPEECHCOMMANDS(tmp_path, subset="testing")[0][2:] == ("no", "cc33", 0)
    with pytest.raises(ValueError, match="subset"):
        datasets.SPEECHCOMMANDS(tmp_path, subset="train")


def test_librispeech(tmp_path):
    chapter = tmp_path / "LibriSpeech" / "dev-clean" / "84" / "121123"
    x = _tone(str(chapter / "84-121123-0001.flac"), 16000)
    _tone(str(chapter / "84-121123-0000.flac"), 16000, seed=3)
    (chapter / "84-121123.trans.txt").write_text("84-121123-0000 GO DO YOU HEAR\n"
                                                 "84-121123-0001 BUT IN LESS THAN FIVE\n")
    ds = datasets.LIBRISPEECH(tmp_path, url="dev-clean")
    assert len(ds) == 2
    wav, sr, text, spk, ch, utt = ds[1]
    assert (sr, text, spk, ch, utt) == (16000, "BUT IN LESS THAN FIVE", 84, 121123, 1)
    np.testing.assert_allclose(wav.numpy()[0], x, atol=1 / 32768)
    with pytest.raises(ValueError, match="Invalid url"):
        datasets.LIBRISPEECH(tmp_path, url="dev")


def test_items_equal_torchaudio_and_loader_batches(ta, tmp_path):
    base = _speechcommands(tmp_path)
    ref = ta.datasets.SPEECHCOMMANDS(tmp_path, subset="training")
    ours = datasets.SPEECHCOMMANDS(tmp_path, subset="training")
    assert [ours.get_metadata(i) for i in range(len(ours))] == [
        ref.get_metadata(i) for i in range(len(ref))]
    loader = ember.utils.data.DataLoader(ours, batch_size=2,
                                         collate_fn=lambda b: ember.stack([w for w, *_ in b]))
    (batch,) = list(loader)
    assert tuple(batch.shape) == (2, 1, 800)
    assert os.path.isdir(base)


def test_extract_tar_is_safe(tmp_path):
    from ember.audio.datasets._utils import _extract_tar
    src = tmp_path / "f.txt"
    src.write_text("x")
    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src, arcname="inner/f.txt")
        tar.add(src, arcname="../escape.txt")
    out = tmp_path / "out"
    with pytest.raises(tarfile.FilterError):
        _extract_tar(str(archive), str(out))
    assert not (tmp_path / "escape.txt").exists()
