"""Wav2Letter: torchaudio's state_dict loads into ember's and the outputs agree."""
import numpy as np
import pytest
import torch

import ember
from ember.audio.models import Wav2Letter


@pytest.mark.parametrize("input_type,num_features,shape", [
    ("waveform", 1, (2, 1, 3200)), ("mfcc", 13, (2, 13, 50)),
    ("power_spectrum", 20, (1, 20, 40))])
def test_wav2letter_matches_torchaudio(ta, input_type, num_features, shape):
    torch.manual_seed(0)
    ref = ta.models.Wav2Letter(num_classes=10, input_type=input_type,
                               num_features=num_features).eval()
    mod = Wav2Letter(num_classes=10, input_type=input_type, num_features=num_features).eval()
    sd = ref.state_dict()
    assert list(mod.state_dict()) == list(sd)
    assert [tuple(v.shape) for v in mod.state_dict().values()] == [tuple(v.shape)
                                                                   for v in sd.values()]
    mod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in sd.items()})
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        t = ref(torch.from_numpy(x))
    with ember.no_grad():
        e = mod(ember.tensor(x))
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-4, rtol=1e-4)


def test_wav2letter_trains_and_rejects_bad_input_type():
    ember.manual_seed(0)
    mod = Wav2Letter(num_classes=5, input_type="mfcc", num_features=4)
    out = mod(ember.randn(1, 4, 20))
    out.sum().backward()
    assert mod.acoustic_model[0].weight.grad is not None
    with pytest.raises(ValueError, match="input_type"):
        Wav2Letter(input_type="spectrogram")
