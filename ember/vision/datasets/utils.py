"""Download and integrity helpers (torchvision.datasets.utils) on urllib, gzip and tarfile."""
import gzip
import hashlib
import os
import shutil
import tarfile
import urllib.request
import zipfile

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url",
           "extract_archive", "download_and_extract_archive"]


def calculate_md5(fpath, chunk_size=1024 * 1024):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5, **kwargs):
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None):
    if not os.path.isfile(fpath):
        return False
    return True if md5 is None else check_md5(fpath, md5)


def download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    """Fetch url into root/filename (atomically); urllib's URLError when there is no network."""
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    tmp = fpath + ".part"
    req = urllib.request.Request(url, headers={"User-Agent": "ember.vision"})
    with urllib.request.urlopen(req, timeout=60) as resp, open(tmp, "wb") as out:
        shutil.copyfileobj(resp, out)
    os.replace(tmp, fpath)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Extract .tar(.gz)/.tgz/.zip archives, or decompress a single .gz file."""
    to_path = to_path or os.path.dirname(from_path)
    if from_path.endswith((".tar", ".tar.gz", ".tgz")):
        with tarfile.open(from_path) as tar:
            tar.extractall(to_path, filter="data")
        out = to_path
    elif from_path.endswith(".zip"):
        with zipfile.ZipFile(from_path) as z:
            z.extractall(to_path)
        out = to_path
    elif from_path.endswith(".gz"):
        out = os.path.join(to_path, os.path.basename(from_path)[:-3])
        with gzip.open(from_path, "rb") as src, open(out + ".part", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(out + ".part", out)
    else:
        raise RuntimeError(f"Extraction of {from_path} not supported")
    if remove_finished:
        os.remove(from_path)
    return out


def download_and_extract_archive(url, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished=False):
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)
