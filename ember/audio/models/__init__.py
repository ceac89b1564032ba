"""ember.audio.models: torchaudio.models architectures."""
from ._wav2letter import Wav2Letter

__all__ = ["Wav2Letter"]
