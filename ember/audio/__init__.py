"""ember.audio: what `import torchaudio` programs use (load/save/info through soundfile,
functional, transforms, sox_effects, models), on ember ops."""
from . import compliance, datasets, functional, models, sox_effects, transforms
from ._io import (AudioMetaData, get_audio_backend, info, list_audio_backends, load, save,
                  set_audio_backend)

__version__ = "2.11.0"
