"""ember.optim: PyTorch's optimizers, learning-rate schedulers and SWA utilities."""
from . import lr_scheduler, swa_utils  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .sparse_adam import SparseAdam

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "SparseAdam", "Adamax", "ASGD", "SGD",
           "RAdam", "Rprop", "RMSprop", "Optimizer", "NAdam", "LBFGS", "lr_scheduler",
           "swa_utils"]
