"""ember.audio load/save/info on generated files (sine waves, noise) in tmp dirs; scipy's
wav reader/writer is the independent check for sample values and integer dtypes."""
import io
import os

import numpy as np
import pytest
import scipy.io.wavfile

import ember
import ember.audio as audio

pytest.importorskip("soundfile")


def _sine(channels=2, n=1600, sr=8000):
    t = np.arange(n) / sr
    return np.stack([0.5 * np.sin(2 * np.pi * (220 * (c + 1)) * t)
                     for c in range(channels)]).astype(np.float32)


def test_load_int16_wav_written_by_scipy(tmp_path):
    rng = np.random.default_rng(0)
    pcm = rng.integers(-32768, 32767, size=(1000, 3), dtype=np.int16)
    path = tmp_path / "noise.wav"
    scipy.io.wavfile.write(path, 16000, pcm)
    wav, sr = audio.load(path)
    assert sr == 16000 and wav.dtype == ember.float32 and tuple(wav.shape) == (3, 1000)
    np.testing.assert_array_equal(wav.numpy(), pcm.T.astype(np.float32) / 32768)
    raw, _ = audio.load(str(path), normalize=False, channels_first=False)
    assert raw.dtype == ember.int16 and tuple(raw.shape) == (1000, 3)
    np.testing.assert_array_equal(raw.numpy(), pcm)
    part, _ = audio.load(path, frame_offset=100, num_frames=250)
    np.testing.assert_array_equal(part.numpy(), pcm[100:350].T.astype(np.float32) / 32768)
    assert audio.info(path) == audio.AudioMetaData(16000, 1000, 3, 16, "PCM_S")


@pytest.mark.parametrize("kw,dtype,bits,enc,tol", [
    ({}, np.float32, 32, "PCM_F", 0),
    (dict(encoding="PCM_S", bits_per_sample=16), np.int16, 16, "PCM_S", 1 / 32768),
    (dict(encoding="PCM_S", bits_per_sample=32), np.int32, 32, "PCM_S", 1e-7),
    (dict(encoding="PCM_U", bits_per_sample=8), np.uint8, 8, "PCM_U", 1 / 128),
    (dict(bits_per_sample=64, encoding="PCM_F"), np.float64, 64, "PCM_F", 1e-7)])
def test_wav_save_read_back_by_scipy(tmp_path, kw, dtype, bits, enc, tol):
    x = _sine()
    path = tmp_path / "sine.wav"
    audio.save(path, ember.tensor(x), 8000, **kw)
    sr, data = scipy.io.wavfile.read(path)
    assert sr == 8000 and data.dtype == dtype and data.shape == (1600, 2)
    back, _ = audio.load(path)
    np.testing.assert_allclose(back.numpy(), x, atol=tol + 1e-7)
    assert audio.info(path) == audio.AudioMetaData(8000, 1600, 2, bits, enc)
    if dtype != np.float64:
        raw, _ = audio.load(path, normalize=False)
        assert raw.numpy().dtype == dtype
        np.testing.assert_array_equal(raw.numpy(), data.T)


def test_integer_tensor_saves_in_its_own_width(tmp_path):
    pcm = np.random.default_rng(1).integers(-2000, 2000, size=(1, 500), dtype=np.int16)
    path = tmp_path / "int.wav"
    audio.save(path, ember.tensor(pcm), 22050)
    sr, data = scipy.io.wavfile.read(path)
    assert sr == 22050 and data.dtype == np.int16
    np.testing.assert_array_equal(data, pcm[0])


@pytest.mark.parametrize("ext,bits,enc,tol", [("flac", 16, "FLAC", 1 / 32768),
                                              ("ogg", 0, "VORBIS", 0.05)])
def test_flac_and_ogg_round_trip(tmp_path, ext, bits, enc, tol):
    x = _sine(channels=1, n=4000)
    path = tmp_path / f"sine.{ext}"
    audio.save(str(path), ember.tensor(x), 8000)
    meta = audio.info(str(path))
    assert (meta.sample_rate, meta.num_frames, meta.num_channels, meta.bits_per_sample,
            meta.encoding) == (8000, 4000, 1, bits, enc)
    back, sr = audio.load(str(path))
    assert sr == 8000 and tuple(back.shape) == (1, 4000)
    np.testing.assert_allclose(back.numpy(), x, atol=tol)


def test_save_is_atomic_and_file_objects_work(tmp_path):
    x = _sine()
    path = tmp_path / "a.wav"
    audio.save(path, ember.tensor(x), 8000)
    with pytest.raises(ValueError, match="Invalid bits_per_sample"):
        audio.save(path, ember.tensor(x), 8000, bits_per_sample=12)
    with pytest.raises(ValueError, match="flac does not support bits_per_sample > 24"):
        audio.save(tmp_path / "b.flac", ember.tensor(x), 8000, bits_per_sample=32)
    bad = ember.tensor(np.zeros((2, 1600), np.float16))
    with pytest.raises(ValueError, match="Unsupported dtype"):
        audio.save(path, bad, 8000)          # fails before writing: the old file survives
    np.testing.assert_array_equal(audio.load(path)[0].numpy(), x)
    assert os.listdir(tmp_path) == ["a.wav"]   # no temporaries left behind
    buf = io.BytesIO()
    audio.save(buf, ember.tensor(x), 8000, format="wav")
    buf.seek(0)
    back, sr = audio.load(buf)
    np.testing.assert_array_equal(back.numpy(), x)
    with pytest.raises(RuntimeError, match="format"):
        audio.save(io.BytesIO(), ember.tensor(x), 8000)
    with pytest.raises(ValueError, match="Expected 2D"):
        audio.save(path, ember.tensor(x[0]), 8000)


def test_channels_last_and_ulaw(tmp_path):
    x = _sine(channels=3, n=800)
    path = tmp_path / "u.wav"
    audio.save(path, ember.tensor(np.ascontiguousarray(x.T)), 8000, channels_first=False,
               encoding="ULAW")
    assert audio.info(path) == audio.AudioMetaData(8000, 800, 3, 8, "ULAW")
    back, _ = audio.load(path, channels_first=False)
    assert tuple(back.shape) == (800, 3)
    np.testing.assert_allclose(back.numpy(), x.T, atol=0.02)   # 8-bit mu-law steps
    with pytest.raises(ValueError, match="Unsupported subtype"):
        audio.load(path, normalize=False)


def test_filepath_keyword_of_torchaudio_0x(tmp_path):
    x = _sine()
    path = str(tmp_path / "k.wav")
    audio.save(filepath=path, src=ember.tensor(x), sample_rate=8000)
    wav, sr = audio.load(filepath=path, frame_offset=10, num_frames=20)
    np.testing.assert_array_equal(wav.numpy(), x[:, 10:30])
    assert audio.info(filepath=path).num_frames == 1600
    with pytest.raises(TypeError, match="exactly one"):
        audio.load(path, filepath=path)
