"""`ember run` maps `import torchaudio` to ember.audio: an unmodified torchaudio program runs,
and its MFCCs equal torchaudio's on the same audio."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    import torch
    import torchaudio
    import torchaudio.functional as AF
    import torchaudio.transforms as T
    from torchaudio.models import Wav2Letter

    path, out = sys.argv[1], sys.argv[2]
    sr = 8000
    t = torch.arange(0, 4000) / sr
    wave = (0.4 * torch.sin(2 * 3.14159 * 440 * t)).unsqueeze(0)
    torchaudio.save(path, wave, sr)
    meta = torchaudio.info(path)
    wav, rate = torchaudio.load(path)
    mfcc = T.MFCC(sample_rate=rate, n_mfcc=13, melkwargs={"n_fft": 256, "n_mels": 23})(wav)
    down = AF.resample(wav, rate, 4000)
    fx, fx_sr = torchaudio.sox_effects.apply_effects_tensor(wav, rate, [["tempo", "1.25"]])
    logits = Wav2Letter(num_classes=5, input_type="mfcc", num_features=13)(mfcc)
    assert (meta.sample_rate, meta.num_frames, meta.num_channels) == (8000, 4000, 1)
    assert tuple(down.shape) == (1, 2000) and tuple(fx.shape) == (1, 3200) and fx_sr == 8000
    assert tuple(logits.shape) == (1, 5, 17)
    assert type(wav).__module__.startswith("ember")
    np.save(out, mfcc.detach().numpy())
''')


def test_ember_run_torchaudio_program(ta, tmp_path):
    pytest.importorskip("soundfile")
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    wav, out = tmp_path / "a.wav", tmp_path / "mfcc.npy"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]))
    proc = subprocess.run([sys.executable, "-m", "ember", "run", str(script), str(wav), str(out)],
                          capture_output=True, text=True, timeout=120, env=env,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    import soundfile
    data, sr = soundfile.read(wav, dtype="float32", always_2d=True)
    ref = ta.transforms.MFCC(sample_rate=sr, n_mfcc=13,
                             melkwargs={"n_fft": 256, "n_mels": 23})(torch.from_numpy(data.T))
    np.testing.assert_allclose(np.load(out), ref.numpy(), atol=5e-3, rtol=1e-3)
