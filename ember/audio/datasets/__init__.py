"""ember.audio.datasets: torchaudio's speech datasets (local layout; download via ember.hub)."""
from ._speech import LIBRISPEECH, SPEECHCOMMANDS, YESNO

__all__ = ["YESNO", "SPEECHCOMMANDS", "LIBRISPEECH"]
