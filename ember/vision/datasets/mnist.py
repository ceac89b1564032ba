"""MNIST-format datasets (MNIST, FashionMNIST, KMNIST) read from the standard idx files."""
import codecs
import gzip
import os
from urllib.error import URLError

import numpy as np

from ... import from_numpy
from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "read_image_file", "read_label_file"]

_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype(">i2"), 12: np.dtype(">i4"),
              13: np.dtype(">f4"), 14: np.dtype(">f8")}


def _open(path):
    """The idx file itself, or its .gz when only the download archive is there."""
    if not os.path.isfile(path) and os.path.isfile(path + ".gz"):
        return gzip.open(path + ".gz", "rb")
    return open(path, "rb")


def read_sn3_pascalvincent_tensor(path, strict=True):
    """Parse an idx file: magic (type code, ndim), big-endian sizes, then the data."""
    with _open(path) as f:
        data = f.read()
    magic = int(codecs.encode(data[0:4], "hex"), 16)
    nd, ty = magic % 256, magic // 256
    if not (1 <= nd <= 3 and ty in _IDX_TYPES):
        raise ValueError(f"{path} is not an idx file (magic {magic:#x})")
    sizes = [int(codecs.encode(data[4 * (i + 1):4 * (i + 2)], "hex"), 16) for i in range(nd)]
    arr = np.frombuffer(data, dtype=_IDX_TYPES[ty], offset=4 * (nd + 1))
    if strict and arr.size != int(np.prod(sizes)):
        raise ValueError(f"{path}: expected {int(np.prod(sizes))} values, found {arr.size}")
    return arr.astype(arr.dtype.newbyteorder("=")).reshape(sizes)


def read_label_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != np.uint8 or x.ndim != 1:
        raise ValueError(f"{path}: labels should be a 1-d uint8 idx file")
    return from_numpy(x.astype(np.int64))


def read_image_file(path):
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != np.uint8 or x.ndim != 3:
        raise ValueError(f"{path}: images should be a 3-d uint8 idx file")
    return from_numpy(np.ascontiguousarray(x))


class MNIST(VisionDataset):
    """Handwritten digits; files under root/MNIST/raw (idx files, plain or .gz)."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        split = "train" if self.train else "t10k"
        self.data = read_image_file(os.path.join(self.raw_folder, f"{split}-images-idx3-ubyte"))
        self.targets = read_label_file(os.path.join(self.raw_folder,
                                                    f"{split}-labels-idx1-ubyte"))

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        return self._transform_pair(img, target)

    def __len__(self):
        return len(self.data)

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self):
        return {_class: i for i, _class in enumerate(self.classes)}

    def _check_exists(self):
        for name, _ in self.resources:
            path = os.path.join(self.raw_folder, os.path.splitext(name)[0])
            if not (check_integrity(path) or check_integrity(path + ".gz")):
                return False
        return True

    def download(self):
        """Fetch the .gz files from the mirrors (RuntimeError naming the file when offline)."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}",
                                                 download_root=self.raw_folder,
                                                 filename=filename, md5=md5)
                except (RuntimeError, URLError, OSError) as e:
                    errors.append(e)
                    continue
                break
            else:
                s = f"Error downloading {filename}:\n"
                for mirror, err in zip(self.mirrors, errors):
                    s += f"Tried {mirror}, got:\n{str(err)}\n"
                raise RuntimeError(s)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's article images in MNIST's format; files under root/FashionMNIST/raw."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST; files under root/KMNIST/raw."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
