"""ember.audio: what `import torchaudio` programs use (io, functional, transforms,
sox_effects, models), on ember ops."""
from . import functional
