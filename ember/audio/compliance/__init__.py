"""ember.audio.compliance: torchaudio.compliance (Kaldi-compatible features)."""
from . import kaldi

__all__ = ["kaldi"]
