"""sox's `tempo` (libSoX tempo.c): WSOLA time stretching. Each segment is placed where its
start best matches (least squared difference) the tail of the previous one, within a
search window, and cross-faded linearly over the overlap."""
import numpy as np


def _params(rate, factor, segment_ms, search_ms, overlap_ms):
    segment = int(rate * segment_ms / 1000 + 0.5)
    search = int(rate * search_ms / 1000 + 0.5)
    overlap = max(int(rate * overlap_ms / 1000 + 4.5), 16)
    overlap &= ~7
    if overlap * 2 > segment:
        overlap -= 8
    return segment, search, overlap


def _diff(win, tail, i, overlap):
    return float(((win[:, i:i + overlap] - tail) ** 2).sum())


def _best_offset(win, tail, search, overlap, quick):
    """Start (within search) whose overlap best matches the tail; quick=True is sox's
    coarse-to-fine search (steps 64, 16, 4, 1 around the middle), else exhaustive."""
    if search <= 1:
        return 0
    if not quick:
        frames = np.lib.stride_tricks.sliding_window_view(win[:, :search + overlap - 1],
                                                          overlap, axis=1)
        return int(np.argmin(((frames - tail[:, None, :]) ** 2).sum(axis=(0, 2))))
    best = prev = (search + 1) >> 1
    least = _diff(win, tail, best, overlap)
    step = 64
    while step:
        for k in (-1, 1):
            j = 1
            while j < 4 or step == 64:
                i = prev + k * j * step
                if i < 0 or i >= search:
                    break
                d = _diff(win, tail, i, overlap)
                if d < least:
                    least, best = d, i
                j += 1
        prev = best
        step >>= 2
    return best


def tempo(x, rate, factor, segment_ms=82.0, search_ms=14.68, overlap_ms=12.0, quick=False):
    """x: (channels, frames) -> (channels, round(frames / factor)) at the same pitch."""
    channels, n_in = x.shape
    segment, search, overlap = _params(rate, factor, segment_ms, search_ms, overlap_ms)
    n_out = int(n_in / factor + 0.5)
    fade = np.arange(overlap) / overlap
    out, tail = [], None
    pos, segments, skip_total = 0, 0, 0
    # the input is padded with silence, as sox's flush feeds zeros until the output is full
    need = n_out + segment + search
    # and sox primes its input with search/2 zeros, so the first segment starts at sample 0
    sig = np.concatenate([np.zeros((channels, search // 2)), x,
                          np.zeros((channels, int(need * factor) + 2 * (segment + search)))],
                         axis=1)
    produced = 0
    while produced < n_out:
        win = sig[:, pos:pos + segment + search]
        if segments == 0:
            offset = search // 2
            out.append(win[:, offset:offset + overlap])
        else:
            offset = _best_offset(win, tail, search, overlap, quick)
            out.append(tail * (1 - fade) + win[:, offset:offset + overlap] * fade)
        out.append(win[:, offset + overlap:offset + segment - overlap])
        tail = win[:, offset + segment - overlap:offset + segment].copy()
        segments += 1
        skip = int(factor * segments * (segment - overlap) + 0.5) - skip_total
        skip_total += skip
        pos += skip
        produced += segment - overlap
    return np.concatenate(out, axis=1)[:, :n_out]
