"""ember.vision.datasets on small files written here in the standard formats (idx, CIFAR
pickles, folders of PNGs); compared with torchvision reading the same files where it can."""
import gzip
import os
import pickle
import struct

import numpy as np
import pytest
from tv_oracle import to_np, torchvision

import ember
import ember.vision.datasets as D
import ember.vision.transforms as T

PIL = pytest.importorskip("PIL.Image")


def _idx(arr):
    code = {np.uint8: 8}[arr.dtype.type]
    head = struct.pack(">HBB", 0, code, arr.ndim) + b"".join(struct.pack(">I", s)
                                                              for s in arr.shape)
    return head + arr.tobytes()


def _write_mnist(root, name, n_train=7, n_test=5, gz_only=False):
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw)
    rng = np.random.RandomState(0)
    data = {}
    for split, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
        labels = rng.randint(0, 10, n).astype(np.uint8)
        data[split] = (imgs, labels)
        for kind, arr in (("images-idx3", imgs), ("labels-idx1", labels)):
            path = os.path.join(raw, f"{split}-{kind}-ubyte")
            with gzip.open(path + ".gz", "wb") as f:
                f.write(_idx(arr))
            if not gz_only:
                with open(path, "wb") as f:
                    f.write(_idx(arr))
    return data


@pytest.mark.parametrize("cls", ["MNIST", "FashionMNIST"])
def test_mnist_matches_torchvision(tmp_path, cls):
    data = _write_mnist(str(tmp_path), cls)
    tv = torchvision()
    for train in (True, False):
        ours = getattr(D, cls)(str(tmp_path), train=train)
        ref = getattr(tv.datasets, cls)(str(tmp_path), train=train)
        assert len(ours) == len(ref) == (7 if train else 5)
        assert ours.data.dtype == ember.uint8 and ours.targets.dtype == ember.int64
        np.testing.assert_array_equal(to_np(ours.data), ref.data.numpy())
        np.testing.assert_array_equal(to_np(ours.targets), ref.targets.numpy())
        img, target = ours[3]
        rimg, rtarget = ref[3]
        assert img.mode == "L" and target == rtarget
        np.testing.assert_array_equal(np.asarray(img), np.asarray(rimg))
        assert ours.classes == ref.classes and ours.class_to_idx == ref.class_to_idx
    np.testing.assert_array_equal(to_np(ours.data), data["t10k"][0])
    assert "Split: Test" in repr(ours)


def test_mnist_reads_gz_only_and_applies_transforms(tmp_path):
    data = _write_mnist(str(tmp_path), "MNIST", gz_only=True)
    ds = D.MNIST(str(tmp_path), transform=T.ToTensor(), target_transform=lambda t: t + 100)
    x, y = ds[2]
    assert tuple(x.shape) == (1, 28, 28) and x.dtype == ember.float32
    np.testing.assert_allclose(to_np(x)[0], data["train"][0][2] / 255.0, rtol=1e-6)
    assert y == int(data["train"][1][2]) + 100
    loader = ember.utils.data.DataLoader(ds, batch_size=4)
    xb, yb = next(iter(loader))
    assert tuple(xb.shape) == (4, 1, 28, 28) and tuple(yb.shape) == (4,)


def test_missing_data_and_offline_download_errors(tmp_path, monkeypatch):
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True"):
        D.MNIST(str(tmp_path))
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        D.CIFAR10(str(tmp_path))
    from urllib.error import URLError

    def offline(*a, **k):
        raise URLError("network is unreachable")
    monkeypatch.setattr("urllib.request.urlopen", offline)
    with pytest.raises(RuntimeError, match="Error downloading train-images-idx3-ubyte.gz"):
        D.MNIST(str(tmp_path), download=True)
    with pytest.raises(URLError):
        D.CIFAR10(str(tmp_path), download=True)


def _write_cifar(root, hundred=False):
    rng = np.random.RandomState(1)
    folder = os.path.join(root, "cifar-100-python" if hundred else "cifar-10-batches-py")
    os.makedirs(folder)
    key = "fine_labels" if hundred else "labels"
    names = ["train"] if hundred else [f"data_batch_{i}" for i in range(1, 6)]
    written = {}
    for name in names + (["test"] if hundred else ["test_batch"]):
        data = rng.randint(0, 256, (3, 3072)).astype(np.uint8)
        labels = rng.randint(0, 100 if hundred else 10, 3).tolist()
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump({"data": data, key: labels}, f)
        written[name] = (data, labels)
    meta_name, meta_key = ("meta", "fine_label_names") if hundred else ("batches.meta",
                                                                        "label_names")
    with open(os.path.join(folder, meta_name), "wb") as f:
        pickle.dump({meta_key: [f"c{i}" for i in range(100 if hundred else 10)]}, f)
    return written


@pytest.mark.parametrize("hundred", [False, True])
def test_cifar_reads_python_pickles(tmp_path, hundred):
    written = _write_cifar(str(tmp_path), hundred)
    cls = D.CIFAR100 if hundred else D.CIFAR10
    train = cls(str(tmp_path))
    test = cls(str(tmp_path), train=False)
    assert len(train) == (3 if hundred else 15) and len(test) == 3
    first = written["train" if hundred else "data_batch_1"]
    img, label = train[1]
    assert img.size == (32, 32) and img.mode == "RGB" and label == first[1][1]
    # CHW rows of the pickle become HWC pixels
    np.testing.assert_array_equal(np.asarray(img), first[0][1].reshape(3, 32, 32)
                                  .transpose(1, 2, 0))
    assert train.data.shape == ((3 if hundred else 15), 32, 32, 3)
    assert train.class_to_idx["c3"] == 3


def test_image_folder_matches_torchvision(tmp_path):
    rng = np.random.RandomState(2)
    for cls, n in (("cat", 2), ("dog", 3)):
        os.makedirs(tmp_path / cls / "sub")
        for i in range(n):
            where = tmp_path / cls / ("sub" if i == 2 else "") / f"{i}.png"
            PIL.fromarray(rng.randint(0, 256, (5, 6, 3)).astype(np.uint8)).save(where)
        (tmp_path / cls / "notes.txt").write_text("not an image")
    ours = D.ImageFolder(str(tmp_path), transform=T.ToTensor())
    ref = torchvision().datasets.ImageFolder(str(tmp_path))
    assert ours.classes == ref.classes == ["cat", "dog"]
    assert ours.samples == ref.samples and ours.targets == ref.targets
    x, y = ours[4]
    np.testing.assert_allclose(to_np(x), np.asarray(ref[4][0]).transpose(2, 0, 1) / 255.0,
                               rtol=1e-6)
    assert y == 1
    custom = D.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), extensions=".txt")
    assert len(custom) == 2 and custom[0] == ("not an image", 0)
    os.makedirs(tmp_path / "empty_class")
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty_class"):
        D.ImageFolder(str(tmp_path))
    assert len(D.ImageFolder(str(tmp_path), allow_empty=True)) == 5


def test_fake_data_is_deterministic_per_index():
    ds = D.FakeData(size=4, image_size=(3, 8, 10), num_classes=3, transform=T.ToTensor())
    a, ya = ds[2]
    ember.manual_seed(123)
    b, yb = ds[2]
    assert tuple(a.shape) == (3, 8, 10) and 0 <= ya < 3 and ya == yb
    np.testing.assert_array_equal(to_np(a), to_np(b))
    with pytest.raises(IndexError):
        ds[4]
    assert len(ds) == 4
