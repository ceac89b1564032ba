"""ember.audio.sox_effects: torchaudio.sox_effects without libsox (NumPy/SciPy effects)."""
from ._effects import (apply_effects_file, apply_effects_tensor, effect_names,
                       init_sox_effects, shutdown_sox_effects)

__all__ = ["apply_effects_tensor", "apply_effects_file", "effect_names", "init_sox_effects",
           "shutdown_sox_effects"]
