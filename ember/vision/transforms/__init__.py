"""torchvision.transforms (v1): classes, and `functional` for the same operations as calls."""
from . import functional, v2
from .functional import InterpolationMode
from .transforms import *
