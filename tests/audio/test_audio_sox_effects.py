"""ember.audio.sox_effects: against the sox binary where it is installed (the test skips
otherwise), and against sox's documented formulas always."""
import math
import shutil
import subprocess

import numpy as np
import pytest

import ember
from ember.audio.sox_effects import apply_effects_file, apply_effects_tensor, effect_names

SR = 8000


def _signal(n=4000):
    rng = np.random.default_rng(0)
    t = np.arange(n) / SR
    noisy = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(n)
    tonal = 0.3 * np.sin(2 * np.pi * 300 * t) * np.sin(2 * np.pi * 3 * t)  # band-limited
    return np.stack([noisy, tonal]).astype(np.float32)


def _sox(tmp_path, x, effect, out_channels=None):
    sf = pytest.importorskip("soundfile")
    src, dst = tmp_path / "in.wav", tmp_path / "out.wav"
    sf.write(src, x.T, SR, subtype="FLOAT")
    cmd = ["sox", "-V1", str(src), "-e", "floating-point"]
    cmd += ["-c", str(out_channels)] if out_channels else []
    subprocess.run(cmd + [str(dst)] + effect, check=True, capture_output=True, timeout=60)
    y, sr = sf.read(dst, dtype="float32", always_2d=True)
    return y.T, sr


# (effect, atol on the noisy channel, atol on the band-limited channel)
EXACT = [(["gain", "-3"], 1e-6), (["gain", "-n"], 1e-6), (["gain", "-n", "-6"], 1e-6),
         (["vol", "0.5"], 1e-6), (["vol", "-2dB"], 1e-6), (["vol", "0.3", "power"], 1e-6),
         (["fade", "q", "0.1", "0.4", "0.05"], 1e-6), (["fade", "0.05"], 1e-6),
         (["fade", "h", "100s", "0", "300s"], 1e-6), (["fade", "t", "0.1", "-0", "0.2"], 1e-6),
         (["fade", "p", "0.2"], 1e-6),
         (["trim", "0.1", "0.2"], 1e-6), (["trim", "100s", "=300s"], 1e-6),
         (["trim", "-0.1"], 1e-6), (["channels", "1"], 1e-6), (["channels", "3"], 1e-6),
         (["lowpass", "1000"], 1e-5), (["highpass", "500"], 1e-5),
         (["lowpass", "-1", "1000"], 1e-6), (["highpass", "-1", "300"], 1e-6),
         (["lowpass", "1000", "1o"], 1e-5), (["highpass", "800", "200h"], 1e-5),
         (["lowpass", "1.5k", "2q"], 1e-5),
         (["reverb"], 1e-5), (["reverb", "-w", "80", "30", "50", "100", "10", "-3"], 1e-5),
         (["reverb", "30", "70", "20", "0"], 1e-5),
         (["tempo", "1.3"], 1e-6), (["tempo", "0.7"], 1e-6), (["tempo", "-s", "1.1"], 1e-6),
         (["tempo", "-m", "1.5"], 1e-6), (["tempo", "-l", "0.9"], 1e-6),
         (["tempo", "-q", "1.3"], 1e-6), (["tempo", "1.2", "50", "10", "8"], 1e-6),
         (["gain", "20"], 1e-6), (["vol", "3", "amplitude", "0.05"], 1e-6),
         (["vol", "6dB", "0.1"], 1e-6), (["vol", "-2", "amplitude", "0.05"], 1e-6),
         (["vol", "4", "power", "0.02"], 1e-6), (["vol", "8", "amplitude", "0.05"], 1e-6),
         (["bandpass", "1000", "2q"], 1e-5), (["bandpass", "-c", "1k", "200h"], 1e-5),
         (["bandreject", "500", "1o"], 1e-5), (["allpass", "700", "0.5q"], 1e-5),
         (["equalizer", "1000", "1.5q", "6"], 1e-5), (["equalizer", "300", "1o", "-4"], 1e-5),
         (["bass", "5"], 1e-5), (["bass", "-3", "200", "0.7s"], 1e-5), (["treble", "4"], 1e-5),
         (["treble", "-6", "2000", "1q"], 1e-5), (["reverse"], 1e-6),
         (["pad", "0.1", "200s"], 1e-6), (["norm"], 1e-6), (["norm", "-3"], 1e-6),
         (["remix", "1,2"], 1e-6), (["remix", "-"], 1e-6), (["remix", "-m", "1,2"], 1e-6),
         (["remix", "1v0.5,2"], 1e-6), (["remix", "2", "0", "1-2"], 1e-6),
         (["remix", "-p", "1,2"], 1e-6), (["remix", "2v-2", "1,2v0.3"], 1e-6),
         (["echo", "0.8", "0.9", "100", "0.3"], 1e-6),
         (["echo", "0.8", "0.7", "60", "0.4", "17", "0.25"], 1e-6), (["contrast"], 1e-6),
         (["contrast", "30"], 1e-6)]


@pytest.mark.skipif(shutil.which("sox") is None, reason="the sox binary is not installed")
@pytest.mark.parametrize("effect,atol", EXACT, ids=[" ".join(e) for e, _ in EXACT])
def test_matches_sox_binary(tmp_path, effect, atol):
    x = _signal()
    ref, sr = _sox(tmp_path, x, effect)
    out, out_sr = apply_effects_tensor(ember.tensor(x), SR, [effect])
    assert out.dtype == ember.float32 and out_sr == sr
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, atol=atol)


@pytest.mark.skipif(shutil.which("sox") is None, reason="the sox binary is not installed")
def test_mono_reverb_becomes_stereo_like_sox(tmp_path):
    x = _signal()[1:]
    ref, _ = _sox(tmp_path, x, ["reverb", "60"], out_channels=2)
    out, _ = apply_effects_tensor(ember.tensor(x), SR, [["reverb", "60"]])
    assert tuple(out.shape) == ref.shape == (2, 4000)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5)


@pytest.mark.skipif(shutil.which("sox") is None, reason="the sox binary is not installed")
@pytest.mark.parametrize("effect", [["rate", "16000"], ["rate", "6k"], ["pitch", "300"],
                                    ["pitch", "-q", "-500"]])
def test_resampling_effects_close_to_sox_on_band_limited_audio(tmp_path, effect):
    """sox's `rate` filter is its own design: the same on band-limited content, a few
    percent apart near Nyquist (the noisy channel). The sox command line follows pitch with
    a `rate` back to the input rate; the library (torchaudio) needs it spelled out."""
    x = _signal()
    ref, sr = _sox(tmp_path, x, effect)
    chain = [effect] + ([["rate", str(SR)]] if effect[0] == "pitch" else [])
    out, out_sr = apply_effects_tensor(ember.tensor(x), SR, chain)
    assert out_sr == sr and tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy()[1], ref[1], atol=2e-3)   # edges: filter tails
    np.testing.assert_allclose(out.numpy()[0], ref[0], atol=0.06)


def test_formulas_without_sox():
    x = _signal(2000)
    e = ember.tensor(x)
    out, sr = apply_effects_tensor(e, SR, [["gain", "-6"]])
    np.testing.assert_allclose(out.numpy(), x * 10 ** (-6 / 20), atol=1e-7)
    out, sr = apply_effects_tensor(e, SR, [["speed", "1.5"]])
    assert sr == 12000 and np.array_equal(out.numpy(), x)    # speed only changes the rate
    out, sr = apply_effects_tensor(e, SR, [["speed", "1.5"], ["rate", str(SR)]])
    assert sr == SR and out.shape[-1] == round(2000 / 1.5)
    out, _ = apply_effects_tensor(e, SR, [["channels", "1"]])
    np.testing.assert_allclose(out.numpy()[0], x.mean(0), atol=1e-7)
    out, _ = apply_effects_tensor(e, SR, [["fade", "t", "1000s"]])
    np.testing.assert_allclose(out.numpy()[:, :1000], x[:, :1000] * np.arange(1000) / 1000,
                               atol=1e-7)
    out, _ = apply_effects_tensor(e, SR, [["trim", "0.05", "0.1"]])
    np.testing.assert_array_equal(out.numpy(), x[:, 400:1200])
    out, _ = apply_effects_tensor(e, SR, [["vol", "10"]])
    assert float(out.abs().max()) == 1.0                      # clipped like sox
    out, _ = apply_effects_tensor(e, SR, [["tempo", "2"]])
    assert out.shape[-1] == 1000
    out, sr = apply_effects_tensor(e, SR, [["pitch", "1200"]])   # an octave: tempo 0.5
    assert sr == 2 * SR and out.shape[-1] == 4000
    # a lowpass at 200 Hz keeps the 300 Hz tone's energy well below the input's
    out, _ = apply_effects_tensor(e, SR, [["lowpass", "100"]])
    assert float((out[1] ** 2).sum()) < 0.1 * float((e[1] ** 2).sum())
    tl, _ = apply_effects_tensor(ember.tensor(np.ascontiguousarray(x.T)), SR,
                                 [["gain", "-1"]], channels_first=False)
    assert tuple(tl.shape) == (2000, 2)


def test_errors_and_names(tmp_path):
    e = ember.tensor(_signal(500))
    with pytest.raises(RuntimeError, match="Invalid effect name"):
        apply_effects_tensor(e, SR, [["nosuch"]])
    with pytest.raises(NotImplementedError, match="chorus"):
        apply_effects_tensor(e, SR, [["chorus", "0.7", "0.9", "55", "0.4", "0.25", "2", "-t"]])
    with pytest.raises(RuntimeError, match="limiter"):
        apply_effects_tensor(e, SR, [["vol", "0.5", "amplitude", "0.05"]])
    with pytest.raises(NotImplementedError, match="-l"):
        apply_effects_tensor(e, SR, [["gain", "-l", "6"]])
    with pytest.raises(RuntimeError, match="not a number"):
        apply_effects_tensor(e, SR, [["gain", "loud"]])
    with pytest.raises(ValueError, match="2D"):
        apply_effects_tensor(e[0], SR, [["gain", "1"]])
    assert {"gain", "vol", "speed", "tempo", "rate", "pitch", "reverb", "fade", "trim",
            "channels", "lowpass", "highpass"} <= set(effect_names())


def test_apply_effects_file(tmp_path):
    pytest.importorskip("soundfile")
    import ember.audio as audio
    x = _signal(1600)
    path = tmp_path / "x.wav"
    audio.save(path, ember.tensor(x), SR)
    out, sr = apply_effects_file(str(path), [["gain", "-2"], ["channels", "1"]])
    assert sr == SR and tuple(out.shape) == (1, 1600)
    np.testing.assert_allclose(out.numpy()[0], (x * 10 ** (-0.1)).mean(0), atol=1e-6)
    assert math.isfinite(float(out.sum()))


def test_integer_input_is_read_as_pcm():
    pcm = (_signal(800) * 32767).astype(np.int16)
    out, _ = apply_effects_tensor(ember.tensor(pcm), SR, [["gain", "0"]])
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), pcm / 32768.0, atol=1e-7)


@pytest.mark.skipif(shutil.which("sox") is None, reason="the sox binary is not installed")
@pytest.mark.parametrize("cents,rate", [("1200", 16000), ("-1200", 4000)])
def test_pitch_is_tempo_plus_rate_change_like_libsox(tmp_path, cents, rate):
    """With the output rate equal to the one pitch declares, sox adds no `rate`: the data
    is libSoX's pitch output itself."""
    sf = pytest.importorskip("soundfile")
    x = _signal()
    src, dst = tmp_path / "in.wav", tmp_path / "out.wav"
    sf.write(src, x.T, SR, subtype="FLOAT")
    subprocess.run(["sox", "-V1", str(src), "-e", "floating-point", "-r", str(rate), str(dst),
                    "pitch", cents], check=True, capture_output=True, timeout=60)
    ref, ref_sr = sf.read(dst, dtype="float32", always_2d=True)
    out, sr = apply_effects_tensor(ember.tensor(x), SR, [["pitch", cents]])
    assert sr == ref_sr == rate and tuple(out.shape) == ref.T.shape
    np.testing.assert_allclose(out.numpy(), ref.T, atol=1e-6)
