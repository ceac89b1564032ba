"""Semantic segmentation models (torchvision.models.segmentation)."""
from .fcn import *
from .deeplabv3 import *
from .lraspp import *
