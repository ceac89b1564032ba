"""torchvision.transforms (v1): classes, and `functional` for the same operations as calls."""
from . import functional
from .functional import InterpolationMode
from .transforms import *
