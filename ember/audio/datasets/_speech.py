"""torchaudio's YESNO, SPEECHCOMMANDS and LIBRISPEECH: the same folder layouts, items and
subsets, on ember.utils.data.Dataset."""
import os
from pathlib import Path

from ember.utils.data import Dataset

from .._io import load
from ._utils import _download, _extract_tar, _load_waveform

__all__ = ["YESNO", "SPEECHCOMMANDS", "LIBRISPEECH"]

_YESNO_URL = "http://www.openslr.org/resources/1/waves_yesno.tar.gz"
_YESNO_SHA = "c3f49e0cca421f96b75b41640749167b52118f232498667ca7a5f9416aef8e73"


class YESNO(Dataset):
    """60 recordings of 8 'yes'/'no' words: items (waveform, sample_rate, labels)."""

    def __init__(self, root, url=_YESNO_URL, folder_in_archive="waves_yesno", download=False):
        root = Path(root)
        archive = root / os.path.basename(url)
        self._path = root / folder_in_archive
        if download and not os.path.isdir(self._path):
            _download(url, str(archive), _YESNO_SHA if url == _YESNO_URL else None)
            _extract_tar(str(archive))
        if not os.path.isdir(self._path):
            raise RuntimeError("Dataset not found. Please use `download=True` to download it.")
        self._walker = sorted(str(p.stem) for p in Path(self._path).glob("*.wav"))

    def __getitem__(self, n):
        fileid = self._walker[n]
        waveform, sample_rate = load(os.path.join(self._path, fileid + ".wav"))
        return waveform, sample_rate, [int(c) for c in fileid.split("_")]

    def __len__(self):
        return len(self._walker)


_SC_SHA = {
    "http://download.tensorflow.org/data/speech_commands_v0.01.tar.gz":
        "743935421bb51cccdb6bdd152e04c5c70274e935c82119ad7faeec31780d811d",
    "http://download.tensorflow.org/data/speech_commands_v0.02.tar.gz":
        "af14739ee7dc311471de98f5f9d2c9191b18aedfe957f4a6ff791c709868ff58"}
_HASH_DIVIDER, _EXCEPT_FOLDER = "_nohash_", "_background_noise_"


def _load_list(root, *filenames):
    out = []
    for name in filenames:
        with open(os.path.join(root, name)) as f:
            out += [os.path.normpath(os.path.join(root, line.strip())) for line in f]
    return out


class SPEECHCOMMANDS(Dataset):
    """Google Speech Commands: items (waveform, sample_rate, label, speaker_id,
    utterance_number); subset 'training' / 'validation' / 'testing' from the list files."""

    def __init__(self, root, url="speech_commands_v0.02", folder_in_archive="SpeechCommands",
                 download=False, subset=None):
        if subset is not None and subset not in ("training", "validation", "testing"):
            raise ValueError("When `subset` is not None, it must be one of ['training', "
                             "'validation', 'testing'].")
        if url in ("speech_commands_v0.01", "speech_commands_v0.02"):
            url = "http://download.tensorflow.org/data/" + url + ".tar.gz"
        root = os.fspath(root)
        self._archive = os.path.join(root, folder_in_archive)
        archive = os.path.join(root, os.path.basename(url))
        self._path = os.path.join(self._archive, os.path.basename(url).rsplit(".", 2)[0])
        if download:
            if not os.path.isdir(self._path):
                _download(url, archive, _SC_SHA.get(url))
                _extract_tar(archive, self._path)
        elif not os.path.exists(self._path):
            raise RuntimeError(f"The path {self._path} doesn't exist. Please check the ``root`` "
                               f"path or set `download=True` to download it")
        if subset == "validation":
            self._walker = _load_list(self._path, "validation_list.txt")
        elif subset == "testing":
            self._walker = _load_list(self._path, "testing_list.txt")
        else:
            walker = sorted(str(p) for p in Path(self._path).glob("*/*.wav"))
            walker = [w for w in walker if _HASH_DIVIDER in w and _EXCEPT_FOLDER not in w]
            if subset == "training":
                excludes = set(_load_list(self._path, "validation_list.txt",
                                          "testing_list.txt"))
                walker = [w for w in walker if os.path.normpath(w) not in excludes]
            self._walker = walker

    def get_metadata(self, n):
        """(relative path, sample_rate, label, speaker_id, utterance_number) without audio."""
        relpath = os.path.relpath(self._walker[n], self._archive)
        reldir, filename = os.path.split(relpath)
        label = os.path.split(reldir)[1]
        speaker = os.path.splitext(os.path.splitext(filename)[0])[0]
        speaker_id, utterance = speaker.split(_HASH_DIVIDER)
        return relpath, 16000, label, speaker_id, int(utterance)

    def __getitem__(self, n):
        meta = self.get_metadata(n)
        return (_load_waveform(self._archive, meta[0], meta[1]),) + meta[1:]

    def __len__(self):
        return len(self._walker)


_LS_SUBSETS = ["dev-clean", "dev-other", "test-clean", "test-other", "train-clean-100",
               "train-clean-360", "train-other-500"]


class LIBRISPEECH(Dataset):
    """LibriSpeech: items (waveform, sample_rate, transcript, speaker_id, chapter_id,
    utterance_id) from <root>/LibriSpeech/<url>/<speaker>/<chapter>/*.flac + trans.txt."""

    _ext_txt, _ext_audio = ".trans.txt", ".flac"

    def __init__(self, root, url="train-clean-100", folder_in_archive="LibriSpeech",
                 download=False):
        if url not in _LS_SUBSETS:
            raise ValueError(f"Invalid url '{url}' given; please provide one of {_LS_SUBSETS}.")
        self._url = url
        root = os.fspath(root)
        self._archive = os.path.join(root, folder_in_archive)
        self._path = os.path.join(self._archive, url)
        if not os.path.isdir(self._path):
            if not download:
                raise RuntimeError(f"Dataset not found at {self._path}. Please set "
                                   f"`download=True` to download the dataset.")
            archive = os.path.join(root, url + ".tar.gz")
            _download("http://www.openslr.org/resources/12/" + url + ".tar.gz", archive, None)
            _extract_tar(archive)
        self._walker = sorted(str(p.stem) for p in Path(self._path).glob("*/*/*"
                                                                         + self._ext_audio))

    def get_metadata(self, n):
        """(relative path, sample_rate, transcript, speaker, chapter, utterance)."""
        speaker, chapter, utterance = self._walker[n].split("-")
        fileid = f"{speaker}-{chapter}-{utterance}"
        text = os.path.join(self._archive, self._url, speaker, chapter,
                            f"{speaker}-{chapter}{self._ext_txt}")
        with open(text) as f:
            for line in f:
                fid, transcript = line.strip().split(" ", 1)
                if fid == fileid:
                    break
            else:
                raise FileNotFoundError(f"Translation not found for {fileid}")
        path = os.path.join(self._url, speaker, chapter, fileid + self._ext_audio)
        return path, 16000, transcript, int(speaker), int(chapter), int(utterance)

    def __getitem__(self, n):
        meta = self.get_metadata(n)
        return (_load_waveform(self._archive, meta[0], meta[1]),) + meta[1:]

    def __len__(self):
        return len(self._walker)
