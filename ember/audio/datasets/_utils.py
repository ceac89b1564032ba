"""Archive download/extraction and waveform loading shared by the datasets."""
import os
import tarfile

from ember.hub import download_url_to_file

from .._io import load


def _download(url, archive, checksum):
    if not os.path.isfile(archive):
        download_url_to_file(url, archive, hash_prefix=checksum)


def _extract_tar(from_path, to_path=None, overwrite=False):
    """Extract a .tar(.gz) beside it (or into to_path), skipping files already there."""
    to_path = os.path.dirname(from_path) if to_path is None else to_path
    files = []
    with tarfile.open(from_path, "r") as tar:
        for member in tar:
            path = os.path.join(to_path, member.name)
            if member.isfile():
                files.append(path)
                if os.path.exists(path) and not overwrite:
                    continue
            tar.extract(member, to_path, filter="data")     # no absolute/.. paths, no devices
    return files


def _load_waveform(root, filename, exp_sample_rate):
    waveform, sample_rate = load(os.path.join(root, filename))
    if exp_sample_rate != sample_rate:
        raise ValueError(f"sample rate should be {exp_sample_rate}, but got {sample_rate}")
    return waveform
