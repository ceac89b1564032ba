"""torchvision.datasets: MNIST-family, CIFAR, folders of files, FakeData (read from `root`)."""
from .cifar import *
from .fakedata import *
from .folder import DatasetFolder, ImageFolder
from .mnist import *
from .vision import VisionDataset
