"""torchvision.ops: box utilities, nms, roi_align and the layers torchvision's models share."""
from .boxes import *
from .focal_loss import *
from .misc import *
from .roi_align import *
from .stochastic_depth import *
