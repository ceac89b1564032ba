"""ember.audio.transforms: torchaudio.transforms as ember nn.Modules."""
from ._spectral import *
from ._waveform import *
