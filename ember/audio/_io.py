"""load / save / info through soundfile (libsndfile: wav, flac, ogg/vorbis, ...), with
torchaudio's signatures and its soundfile backend's dtype / subtype rules. Saves to a path
are atomic (temporary beside the target, then os.replace)."""
import os
import tempfile
import warnings
from typing import NamedTuple

import numpy as np

import ember

__all__ = ["load", "save", "info", "AudioMetaData", "list_audio_backends",
           "get_audio_backend", "set_audio_backend"]


def _soundfile():
    try:
        import soundfile
    except ImportError as e:
        raise ImportError("ember.audio load/save/info need the 'soundfile' package: pip "
                          "install 'ember[audio]'") from e
    return soundfile


class AudioMetaData(NamedTuple):
    """What info() reports about an audio file."""
    sample_rate: int
    num_frames: int
    num_channels: int
    bits_per_sample: int
    encoding: str


_SUBTYPE_BITS = {"PCM_S8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "PCM_U8": 8,
                 "FLOAT": 32, "DOUBLE": 64, "ULAW": 8, "ALAW": 8, "IMA_ADPCM": 0,
                 "MS_ADPCM": 0, "GSM610": 0, "G721_32": 0, "VORBIS": 0, "OPUS": 0}
_SUBTYPE_ENCODING = {"PCM_S8": "PCM_S", "PCM_16": "PCM_S", "PCM_24": "PCM_S",
                     "PCM_32": "PCM_S", "PCM_U8": "PCM_U", "FLOAT": "PCM_F",
                     "DOUBLE": "PCM_F", "ULAW": "ULAW", "ALAW": "ALAW", "VORBIS": "VORBIS",
                     "OPUS": "OPUS"}
# integer wav read with normalize=False: the native dtype (24-bit comes left-justified
# in int32, as sox did)
_SUBTYPE_DTYPE = {"PCM_S8": "int8", "PCM_U8": "uint8", "PCM_16": "int16", "PCM_24": "int32",
                  "PCM_32": "int32", "FLOAT": "float32", "DOUBLE": "float64"}


def _source(uri, filepath, op):
    """torchaudio 0.x named the first argument `filepath`, 2.x `uri`: accept either."""
    if (uri is None) == (filepath is None):
        raise TypeError(f"{op}() takes the audio file as `uri` (or the older `filepath`), "
                        f"exactly one of them")
    return uri if filepath is None else filepath


def info(uri=None, format=None, buffer_size=4096, backend=None, *, filepath=None):
    """Sample rate, frames, channels, bits per sample and encoding of an audio file."""
    uri = _source(uri, filepath, "info")
    sinfo = _soundfile().info(uri)
    bits = _SUBTYPE_BITS.get(sinfo.subtype, 0)
    encoding = "FLAC" if sinfo.format == "FLAC" else _SUBTYPE_ENCODING.get(sinfo.subtype,
                                                                            "UNKNOWN")
    return AudioMetaData(sinfo.samplerate, sinfo.frames, sinfo.channels, bits, encoding)


def load(uri=None, frame_offset=0, num_frames=-1, normalize=True, channels_first=True,
         format=None, buffer_size=4096, backend=None, *, filepath=None):
    """(waveform, sample_rate): float32 in [-1, 1] shaped (channels, frames) by default;
    normalize=False keeps integer wav samples in their native dtype."""
    uri = _source(uri, filepath, "load")
    sf = _soundfile()
    with sf.SoundFile(uri, "r") as f:
        if normalize or f.format != "WAV":
            dtype = "float32"
        elif f.subtype not in _SUBTYPE_DTYPE:
            raise ValueError(f"Unsupported subtype: {f.subtype}")
        else:
            dtype = _SUBTYPE_DTYPE[f.subtype]
        frames = f._prepare_read(frame_offset, None, num_frames)
        read_as = "int16" if dtype in ("int8", "uint8") else dtype
        data = f.read(frames, read_as, always_2d=True)
        sample_rate = f.samplerate
    if dtype == "int8":
        data = (data >> 8).astype(np.int8)
    elif dtype == "uint8":
        data = ((data >> 8) + 128).astype(np.uint8)
    wav = ember.from_numpy(np.ascontiguousarray(data.T if channels_first else data))
    return wav, sample_rate


def _wav_subtype(dtype, encoding, bits):
    if not encoding:
        if not bits:
            subtype = {ember.uint8: "PCM_U8", ember.int16: "PCM_16", ember.int32: "PCM_32",
                       ember.float32: "FLOAT", ember.float64: "DOUBLE"}.get(dtype)
            if subtype is None:
                raise ValueError(f"Unsupported dtype for wav: {dtype}")
            return subtype
        return "PCM_U8" if bits == 8 else f"PCM_{bits}"
    if encoding == "PCM_S":
        if bits == 8:
            raise ValueError("wav does not support 8-bit signed PCM encoding.")
        return f"PCM_{bits or 32}"
    if encoding == "PCM_U":
        if bits in (None, 8):
            return "PCM_U8"
        raise ValueError("wav only supports 8-bit unsigned PCM encoding.")
    if encoding == "PCM_F":
        if bits in (None, 32, 64):
            return "DOUBLE" if bits == 64 else "FLOAT"
        raise ValueError("wav only supports 32/64-bit float PCM encoding.")
    if encoding in ("ULAW", "ALAW"):
        if bits in (None, 8):
            return encoding
        raise ValueError(f"wav only supports 8-bit {encoding} encoding.")
    raise ValueError(f"wav does not support {encoding}.")


def _subtype(dtype, ext, encoding, bits):
    if ext == "wav":
        return _wav_subtype(dtype, encoding, bits)
    if ext == "flac":
        if encoding:
            raise ValueError("flac does not support encoding.")
        if not bits:
            return "PCM_16"
        if bits > 24:
            raise ValueError("flac does not support bits_per_sample > 24.")
        return "PCM_S8" if bits == 8 else f"PCM_{bits}"
    if ext in ("ogg", "vorbis"):
        if bits:
            raise ValueError("ogg/vorbis does not support bits_per_sample.")
        if encoding is None or encoding.lower() == "vorbis":
            return "VORBIS"
        if encoding.lower() == "opus":
            return "OPUS"
        raise ValueError(f"Unexpected encoding: {encoding}")
    if ext in ("nis", "nist", "sph"):
        return "PCM_16"
    raise ValueError(f"Unsupported format: {ext}")


def save(uri=None, src=None, sample_rate=None, channels_first=True, format=None,
         encoding=None, bits_per_sample=None, buffer_size=4096, backend=None,
         compression=None, *, filepath=None):
    """Write a (channels, frames) tensor (frames, channels if not channels_first)."""
    uri = _source(uri, filepath, "save")
    if src is None or sample_rate is None:
        raise TypeError("save() missing required arguments: 'src' and 'sample_rate'")
    sf = _soundfile()
    if src.dim() != 2:
        raise ValueError(f"Expected 2D Tensor, got {src.dim()}D.")
    if compression is not None:
        warnings.warn("The argument `compression` is ignored by the soundfile backend.")
    if hasattr(uri, "write"):
        if format is None:
            raise RuntimeError("`format` is required when saving to file object.")
        ext = format.lower()
    else:
        ext = (format or os.fspath(uri).rsplit(".", 1)[-1]).lower()
    if bits_per_sample not in (None, 8, 16, 24, 32, 64):
        raise ValueError("Invalid bits_per_sample.")
    subtype = _subtype(src.dtype, ext, encoding, bits_per_sample)
    sf_format = {"nis": "NIST", "nist": "NIST", "sph": "NIST", "vorbis": "OGG"}.get(ext,
                                                                                  ext.upper())
    data = src.detach().numpy()
    data = data.T if channels_first else data
    if data.dtype == np.uint8:          # libsndfile takes int16 for 8-bit unsigned PCM
        data = (data.astype(np.int16) - 128) << 8
    elif data.dtype == np.int8:
        data = data.astype(np.int16) << 8
    data = np.ascontiguousarray(data)
    if hasattr(uri, "write"):
        sf.write(uri, data, sample_rate, subtype=subtype, format=sf_format)
        return
    path = os.fspath(uri)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as out:
            sf.write(out, data, sample_rate, subtype=subtype, format=sf_format)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def list_audio_backends():
    """The one backend ember has."""
    return ["soundfile"]


def get_audio_backend():
    return "soundfile"


def set_audio_backend(backend):
    """Accepted for old programs; only 'soundfile' (or None) exists in ember."""
    if backend not in (None, "soundfile"):
        raise RuntimeError(f"Backend \"{backend}\" is not one of available backends: "
                           f"['soundfile'].")
