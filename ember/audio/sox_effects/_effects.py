"""apply_effects_tensor / apply_effects_file: sox effect chains ([["gain", "-3"], ...])
computed in NumPy/SciPy with sox's documented semantics (sox itself is not called).

Samples are float in [-1, 1]; as in sox (32-bit integer samples inside) every effect's
output is clipped to [-1, 1]."""
import math
from fractions import Fraction

import numpy as np
import scipy.signal

import ember
from . import _freeverb, _wsola

__all__ = ["apply_effects_tensor", "apply_effects_file", "effect_names",
           "init_sox_effects", "shutdown_sox_effects"]


def _time(spec, rate, what):
    """sox time: '1.5' seconds, '[[hh:]mm:]ss[.frac]', or '1234s' samples -> samples."""
    s = str(spec)
    try:
        if s.endswith("s"):
            return int(s[:-1])
        secs = 0.0
        for part in s.split(":"):
            secs = secs * 60 + float(part)
        return int(secs * rate + 0.5)
    except ValueError:
        raise RuntimeError(f"Invalid effect option: {what}: cannot parse time '{s}'") from None


def _number(s, what, unit=None):
    s = str(s)
    if unit and s.lower().endswith(unit.lower()):
        s = s[:-len(unit)]
    try:
        return float(s)
    except ValueError:
        raise RuntimeError(f"Invalid effect option: {what}: '{s}' is not a number") from None


def _resample(x, rate, new_rate):
    """Band-limited resampling (sinc, Kaiser window) from rate to new_rate."""
    if rate == new_rate:
        return x
    ratio = Fraction(new_rate / rate).limit_denominator(10000)
    up, down = ratio.numerator, ratio.denominator
    n_out = int(x.shape[-1] * new_rate / rate + 0.5)
    y = scipy.signal.resample_poly(x, up, down, axis=-1, window=("kaiser", 10.0))
    if y.shape[-1] < n_out:
        y = np.pad(y, ((0, 0), (0, n_out - y.shape[-1])))
    return y[:, :n_out]


def _gain(x, rate, args):
    """gain [-n] [dB]: scale by dB (after normalising the peak to 0 dBFS with -n)."""
    flags = [a for a in args if a.startswith("-") and not _is_number(a)]
    rest = [a for a in args if a not in flags]
    if set(flags) - {"-n"}:
        raise NotImplementedError(f"ember.audio sox_effects: gain options "
                                  f"{sorted(set(flags) - {'-n'})} (balance/limiter/headroom) "
                                  f"are not implemented; only -n is")
    db = _number(rest[0], "gain") if rest else 0.0
    if "-n" in flags:
        peak = np.abs(x).max()
        if peak > 0:
            x = x / peak
    return x * 10 ** (db / 20), rate


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def _vol(x, rate, args):
    """vol GAIN [TYPE [LIMITERGAIN]]: amplitude (default), power or dB gain; the optional
    limiter (sox's, gain > 1 only) bends samples above (1 - l) / (|g| - l) towards +-1."""
    if not args or len(args) > 3:
        raise RuntimeError("Invalid effect option: vol: usage: GAIN [TYPE [LIMITERGAIN]]")
    g, rest = args[0], list(args[1:])
    kind = "db" if g.lower().endswith("db") else "amplitude"
    if rest and rest[0].lower() in ("amplitude", "power", "db"):
        kind = rest.pop(0).lower()
    if len(rest) > 1:
        raise RuntimeError("Invalid effect option: vol: usage: GAIN [TYPE [LIMITERGAIN]]")
    value = _number(g, "vol", unit="dB")
    if kind == "db":
        gain = 10 ** (value / 20)
    elif kind == "power":
        if value < 0:
            raise RuntimeError("Invalid effect option: vol: power gain must be positive")
        gain = math.sqrt(value)
    else:
        gain = value
    if not rest:
        return x * gain, rate
    limiter = _number(rest[0], "vol")
    if not 0 < limiter < 1 or abs(gain) <= 1:
        raise RuntimeError("Invalid effect option: vol: the limiter gain must be in (0, 1) and "
                           "the gain above 1")
    thr = (1.0 - limiter) / (abs(gain) - limiter)
    y = np.where(x > thr, 1 - limiter * (1 - x), gain * x)      # not sign-flipped, as sox
    return np.where(x < -thr, -(1 - limiter * (1 + x)), y), rate


def _speed(x, rate, args):
    s = args[0]
    factor = 2 ** (_number(s[:-1], "speed") / 1200) if s.endswith("c") else _number(s, "speed")
    return x, rate * factor                 # only the rate changes: follow with `rate`


def _rate(x, rate, args):
    args = [a for a in args if a not in ("-q", "-l", "-m", "-h", "-v", "-s", "-I", "-M",
                                         "-L")]
    if args:
        s = args[-1]
        new = _number(s[:-1], "rate") * 1000 if s.lower().endswith("k") else _number(s, "rate")
    else:
        raise RuntimeError("Invalid effect option: rate needs the target sample rate")
    return _resample(x, rate, new), new


# sox tempo.c's profiles: default, -m (music), -s (speech), -l (linear)
_TEMPO_PROFILES = {None: (82, 0, 6.833, 5.587), "-m": (82, 1, 7, 6), "-s": (35, .33, 2.5, 2.14),
                   "-l": (20, 1, 2, 2)}


def _tempo_args(args, what):
    """(factor, segment_ms, search_ms, overlap_ms) the way sox's tempo getopts derives them."""
    profile, vals, quick = None, [], False
    for a in args:
        if a in _TEMPO_PROFILES:
            profile = a
        elif a == "-q":
            quick = True
        else:
            vals.append(_number(a, what))
    if not vals:
        raise RuntimeError(f"Invalid effect option: {what} needs a factor")
    factor = vals[0] if what == "tempo" else 2 ** (-vals[0] / 1200)
    seg_ms, seg_pow, ov_div, search_div = _TEMPO_PROFILES[profile]
    seg = vals[1] if len(vals) > 1 else max(10, seg_ms / max(factor ** seg_pow, 1))
    search = vals[2] if len(vals) > 2 else (0 if profile == "-l" else seg / search_div)
    overlap = vals[3] if len(vals) > 3 else seg / ov_div
    return vals[0], seg, search, min(overlap, seg / 2), quick


def _tempo(x, rate, args):
    factor, seg, search, overlap, quick = _tempo_args(args, "tempo")
    if factor <= 0:
        raise RuntimeError("Invalid effect option: tempo factor must be positive")
    if factor == 1:
        return x, rate
    return _wsola.tempo(x, rate, factor, seg, search, overlap, quick), rate


def _pitch(x, rate, args):
    """pitch [-q] cents: libSoX's pitch is tempo by 1/2**(cents/1200) (printed with %g, as
    sox does) that then declares the rate multiplied by that factor; like `speed`, follow it
    with `rate` to get back to the original rate (the sox command line adds that itself)."""
    if not args or (args[0] == "-q" and len(args) < 2):
        raise RuntimeError("Invalid effect option: pitch needs a shift in cents")
    pos = 1 if args[0] == "-q" else 0
    d = 2 ** (_number(args[pos], "pitch") / 1200)
    tempo_args = list(args)
    tempo_args[pos] = "%g" % (1 / d)
    factor, seg, search, overlap, quick = _tempo_args(tempo_args, "tempo")
    y = x if factor == 1 else _wsola.tempo(x, rate, factor, seg, search, overlap, quick)
    return y, rate / factor


def _reverb(x, rate, args):
    wet_only = bool(args) and args[0] in ("-w", "--wet-only")
    vals = [_number(a, "reverb") for a in (args[1:] if wet_only else args)]
    names = ["reverberance", "hf_damping", "room_scale", "stereo_depth", "pre_delay_ms",
             "wet_gain_db"]
    kw = dict(zip(names, vals))
    return _freeverb.reverb(x, rate, wet_only=wet_only, **kw), rate


def _fade_gain(index, length, kind):
    f = np.clip(index / length, 0.0, 1.0) if length else np.ones_like(index, dtype=float)
    if kind == "t":
        return f
    if kind == "q":
        return np.sin(f * math.pi / 2)
    if kind == "h":
        return (1 - np.cos(f * math.pi)) / 2
    if kind == "l":
        return np.power(0.1, (1 - f) * 5)
    if kind == "p":
        return 1 - (1 - f) * (1 - f)
    raise RuntimeError(f"Invalid effect option: fade: unknown fade type '{kind}'")


def _fade(x, rate, args):
    kind = "l"
    if args and args[0] in ("q", "h", "t", "l", "p"):
        kind, args = args[0], args[1:]
    if not args:
        raise RuntimeError("Invalid effect option: fade needs a fade-in length")
    n = x.shape[-1]
    fade_in = _time(args[0], rate, "fade")
    stop = _time(args[1], rate, "fade") if len(args) > 1 else n
    stop = n if stop == 0 else min(stop, n)
    fade_out = _time(args[2], rate, "fade") if len(args) > 2 else (fade_in if len(args) > 1
                                                                    else 0)
    x = x[:, :stop].copy()
    idx = np.arange(stop)
    if fade_in:
        x[:, :fade_in] *= _fade_gain(idx[:fade_in], fade_in, kind)
    if fade_out:
        start = max(stop - fade_out, 0)
        x[:, start:] *= _fade_gain(stop - idx[start:], fade_out, kind)
    return x, rate


def _trim(x, rate, args):
    n = x.shape[-1]
    positions = []
    for i, a in enumerate(args):
        if a.startswith("="):
            positions.append(_time(a[1:], rate, "trim"))
        elif a.startswith("-"):
            positions.append(n - _time(a[1:], rate, "trim"))
        elif i == 0:
            positions.append(_time(a, rate, "trim"))
        else:
            positions.append(positions[-1] + _time(a, rate, "trim"))
    if not positions:
        raise RuntimeError("Invalid effect option: trim needs a start position")
    start = positions[0]
    end = positions[1] if len(positions) > 1 else n
    if len(positions) > 2:
        raise NotImplementedError("ember.audio sox_effects: trim with more than two "
                                  "positions is not implemented")
    return x[:, max(start, 0):max(end, 0)], rate


def _channels(x, rate, args):
    out = int(_number(args[0], "channels"))
    c = x.shape[0]
    if out < 1:
        raise RuntimeError("Invalid effect option: channels must be >= 1")
    if out >= c:
        return x[[j % c for j in range(out)]], rate
    return np.stack([x[j::out].mean(axis=0) for j in range(out)]), rate


def _width_alpha(w0, freq, width, what, A=1.0, default_kind="q"):
    w = str(width)
    kind = w[-1].lower() if w[-1].isalpha() else default_kind
    value = _number(w[:-1] if w[-1].isalpha() else w, what)
    if kind == "s":
        return math.sin(w0) / 2 * math.sqrt((A + 1 / A) * (1 / value - 1) + 2)
    if kind == "q":
        return math.sin(w0) / (2 * value)
    if kind == "o":
        return math.sin(w0) * math.sinh(math.log(2.0) / 2 * value * w0 / math.sin(w0))
    if kind in ("h", "k"):
        value *= 1000 if kind == "k" else 1
        return math.sin(w0) / (2 * freq / value)
    raise RuntimeError(f"Invalid effect option: {what}: unknown width type '{kind}'")


def _pass_filter(x, rate, args, high):
    what = "highpass" if high else "lowpass"
    poles = 2
    if args and args[0] in ("-1", "-2"):
        poles, args = int(args[0][1:]), args[1:]
    if not args:
        raise RuntimeError(f"Invalid effect option: {what} needs a frequency")
    s = args[0]
    freq = _number(s[:-1], what) * 1000 if s.lower().endswith("k") else _number(s, what)
    w0 = 2 * math.pi * freq / rate
    if poles == 1:
        a1 = -math.exp(-w0)
        b = [(1 - a1) / 2, -(1 - a1) / 2] if high else [1 + a1, 0.0]
        return scipy.signal.lfilter(b, [1.0, a1], x, axis=-1), rate
    alpha = _width_alpha(w0, freq, args[1] if len(args) > 1 else f"{math.sqrt(0.5)}q", what)
    c = math.cos(w0)
    b0 = (1 + c) / 2 if high else (1 - c) / 2
    b = [b0, -(1 + c) if high else 1 - c, b0]
    a = [1 + alpha, -2 * c, 1 - alpha]
    return scipy.signal.lfilter(b, a, x, axis=-1), rate


def _freq(s, what):
    return _number(s[:-1], what) * 1000 if s.lower().endswith("k") else _number(s, what)


def _biquad_effect(x, rate, args, kind):
    """sox's two-pole filters (biquads.c, Audio-EQ-Cookbook): bandpass [-c], bandreject,
    allpass, equalizer, bass, treble."""
    csg = kind == "bandpass" and args and args[0] == "-c"
    args = args[1:] if csg else args
    if kind in ("bass", "treble"):
        if not args:
            raise RuntimeError(f"Invalid effect option: {kind} needs a gain")
        gain = _number(args[0], kind)
        freq = _freq(args[1], kind) if len(args) > 1 else (100.0 if kind == "bass" else 3000.0)
        width = args[2] if len(args) > 2 else "0.5s"
    else:
        need = 3 if kind == "equalizer" else 2
        if len(args) < need:
            raise RuntimeError(f"Invalid effect option: {kind} needs frequency and width"
                               + (" and gain" if need == 3 else ""))
        freq, width = _freq(args[0], kind), args[1]
        gain = _number(args[2], kind) if kind == "equalizer" else 0.0
    w0 = 2 * math.pi * freq / rate
    A = math.exp(gain / 40 * math.log(10))
    alpha = _width_alpha(w0, freq, width, kind, A, "s" if kind in ("bass", "treble") else "q")
    c = math.cos(w0)
    if kind == "bandpass":
        t = math.sin(w0) / 2 if csg else alpha
        b, a = [t, 0.0, -t], [1 + alpha, -2 * c, 1 - alpha]
    elif kind == "bandreject":
        b, a = [1.0, -2 * c, 1.0], [1 + alpha, -2 * c, 1 - alpha]
    elif kind == "allpass":
        b, a = [1 - alpha, -2 * c, 1 + alpha], [1 + alpha, -2 * c, 1 - alpha]
    elif kind == "equalizer":
        b, a = [1 + alpha * A, -2 * c, 1 - alpha * A], [1 + alpha / A, -2 * c, 1 - alpha / A]
    else:
        sg = 1 if kind == "bass" else -1
        t = 2 * math.sqrt(A) * alpha
        b = [A * ((A + 1) - sg * (A - 1) * c + t), sg * 2 * A * ((A - 1) - sg * (A + 1) * c),
             A * ((A + 1) - sg * (A - 1) * c - t)]
        a = [(A + 1) + sg * (A - 1) * c + t, -sg * 2 * ((A - 1) + sg * (A + 1) * c),
             (A + 1) + sg * (A - 1) * c - t]
    return scipy.signal.lfilter(b, a, x, axis=-1), rate


def _pad(x, rate, args):
    """pad [start [end]]: silence before and after (the @position form is not supported)."""
    if any("@" in a for a in args):
        raise NotImplementedError("ember.audio sox_effects: pad at a position (len@pos) is "
                                  "not implemented")
    before = _time(args[0], rate, "pad") if args else 0
    after = _time(args[1], rate, "pad") if len(args) > 1 else 0
    return np.pad(x, ((0, 0), (before, after))), rate


def _remix(x, rate, args):
    """remix [-a|-m|-p] OUT_SPEC...: each out spec mixes input channels ('1,3', '2-3',
    '-', '1v0.5', '0' for silence); automatic mode (-a, default) divides by the number of
    inputs (-p: its square root) unless a volume is given in that spec."""
    mode = "a"
    while args and args[0] in ("-a", "-m", "-p"):
        mode, args = args[0][1], args[1:]
    if not args:
        raise RuntimeError("Invalid effect option: remix needs at least one output spec")
    c = x.shape[0]
    outs = []
    for spec in args:
        pairs, volume_given = [], False
        for item in (spec.split(",") if spec != "-" else ["1-"]):
            chan, _, vol = item.partition("v")
            volume_given |= bool(vol)
            mult = _number(vol, "remix") if vol else 1.0
            if chan == "0":
                continue
            if "-" in chan:
                lo, _, hi = chan.partition("-")
                channels = range(int(lo or 1), int(hi or c) + 1)
            else:
                channels = [int(chan)]
            for ch in channels:
                if not 1 <= ch <= c:
                    raise RuntimeError(f"Invalid effect option: remix: input channel {ch} "
                                       f"does not exist ({c} channels)")
                pairs.append((ch - 1, mult))
        out = np.zeros(x.shape[-1])
        n = len(pairs)
        scale = 1.0
        if n and not volume_given and mode != "m":
            scale = 1 / n if mode == "a" else 1 / math.sqrt(n)
        for ch, mult in pairs:
            out = out + x[ch] * mult * scale
        outs.append(out)
    return np.stack(outs), rate


def _echo(x, rate, args):
    """echo gain-in gain-out <delay-ms decay>...: y = gain_out * (gain_in * x + sum decay_j
    * x[n - delay_j]); the output runs on for the longest delay (sox's drain)."""
    if len(args) < 4 or len(args) % 2:
        raise RuntimeError("Invalid effect option: echo: usage: gain-in gain-out delay decay "
                           "[ delay decay ... ]")
    gain_in, gain_out = _number(args[0], "echo"), _number(args[1], "echo")
    taps = [(int(_number(d, "echo") * rate / 1000), _number(k, "echo"))
            for d, k in zip(args[2::2], args[3::2])]
    longest = max(d for d, _ in taps)
    src = np.pad(x, ((0, 0), (0, longest)))
    y = src * gain_in
    for d, k in taps:
        y[:, d:] += k * src[:, :src.shape[-1] - d]
    return y * gain_out, rate


def _contrast(x, rate, args):
    """contrast [amount=75]: sin(x*pi/2 + amount/750 * sin(x*2pi)) (sox, torchaudio)."""
    amount = _number(args[0], "contrast") if args else 75.0
    d = x * (math.pi / 2)
    return np.sin(d + amount / 750.0 * np.sin(d * 4)), rate


_EFFECTS = {"gain": _gain, "vol": _vol, "speed": _speed, "rate": _rate, "tempo": _tempo,
            "pitch": _pitch, "reverb": _reverb, "fade": _fade, "trim": _trim,
            "channels": _channels,
            "lowpass": lambda x, r, a: _pass_filter(x, r, a, False),
            "highpass": lambda x, r, a: _pass_filter(x, r, a, True),
            "reverse": lambda x, r, a: (x[:, ::-1].copy(), r), "pad": _pad, "remix": _remix,
            "echo": _echo, "contrast": _contrast,
            "norm": lambda x, r, a: _gain(x, r, ["-n"] + list(a))}
for _name in ("bandpass", "bandreject", "allpass", "equalizer", "bass", "treble"):
    _EFFECTS[_name] = (lambda kind: lambda x, r, a: _biquad_effect(x, r, a, kind))(_name)
# effects sox has that ember does not compute (so programs get a clear error)
_SOX_ONLY = {"band", "bend", "biquad", "chorus", "compand", "dcshift", "deemph",
             "delay", "dither", "divide", "downsample", "earwax", "echos", "fir",
             "flanger", "hilbert", "loudness", "mcompand", "oops", "overdrive", "phaser",
             "repeat", "riaa", "silence", "sinc", "stat", "stats", "swap", "synth",
             "tremolo", "upsample", "vad"}


def effect_names():
    """The effect names apply_effects_tensor computes."""
    return sorted(_EFFECTS)


def init_sox_effects():
    """Kept for old programs: nothing to initialise (sox is not used)."""


def shutdown_sox_effects():
    """Kept for old programs: nothing to shut down."""


def apply_effects_tensor(tensor, sample_rate, effects, channels_first=True):
    """Apply a sox effect chain to a (channels, frames) tensor -> (tensor, sample_rate)."""
    if tensor.dim() != 2:
        raise ValueError(f"apply_effects_tensor expects a 2D tensor, got {tensor.dim()}D "
                         f"of shape {tuple(tensor.shape)}")
    arr = tensor.detach().numpy()
    x = arr.astype(np.float64)
    if np.issubdtype(arr.dtype, np.integer):      # integer PCM -> [-1, 1) as sox reads it
        info = np.iinfo(arr.dtype)
        x = x / -info.min if info.min < 0 else (x - (info.max + 1) / 2) / ((info.max + 1) / 2)
    elif arr.dtype == np.bool_:
        raise TypeError("apply_effects_tensor expects a float or integer PCM tensor, got bool")
    x = x if channels_first else x.T
    rate = float(sample_rate)
    for effect in effects:
        if not effect:
            raise RuntimeError("Invalid effect option: empty effect")
        name, args = str(effect[0]), [str(a) for a in effect[1:]]
        fn = _EFFECTS.get(name)
        if fn is None:
            if name in _SOX_ONLY:
                raise NotImplementedError(f"ember.audio sox_effects: the sox effect '{name}' "
                                          f"is not implemented (supported: {effect_names()})")
            raise RuntimeError(f"Invalid effect name: {name}")
        x, rate = fn(x, rate, args)
        x = np.clip(x, -1.0, 1.0)
    out = np.ascontiguousarray(x if channels_first else x.T).astype(
        np.float64 if arr.dtype == np.float64 else np.float32)
    return ember.from_numpy(out), int(rate)


def apply_effects_file(path, effects, normalize=True, channels_first=True, format=None):
    """Load an audio file (ember.audio.load) and apply a sox effect chain to it."""
    if not normalize:
        raise NotImplementedError("ember.audio sox_effects.apply_effects_file: normalize=False "
                                  "(integer output) is not implemented; results are float32")
    from .._io import load
    wav, sr = load(path, normalize=True, format=format)
    out, sr = apply_effects_tensor(wav, sr, effects)
    return (out if channels_first else out.t().contiguous()), sr
