"""ember.audio.functional: torchaudio.functional (spectral features, filters, resampling)."""
from ._filtering import *
from ._resample import *
from ._spectral import *
from ._misc import *
from ._effects import *
