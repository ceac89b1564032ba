"""Self-made image tasks for tiny training (no downloads): a pretraining task of drawn
shapes and a different transfer task of textures.

Why generated: the paper pretrains on ImageNet and fine-tunes on small vision sets; here a
pretraining task and a transfer task that shares low-level features but not classes let the
whole pipeline (pretrain -> compile -> sparse fine-tune) run on 2 cores in minutes.
Images are float32 NCHW in [-1, 1]; every sample is a function of (seed, index).
"""
import numpy as np

from .. import from_numpy

__all__ = ["SHAPES", "TEXTURES", "shapes_dataset", "textures_dataset"]

SHAPES = ["disk", "square", "triangle", "cross", "ring", "hbar", "vbar", "diamond"]
TEXTURES = ["stripes_h", "stripes_v", "stripes_diag", "checker", "dots", "noise"]


def _grid(size):
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    return (ys + 0.5) / size, (xs + 0.5) / size


def _shape_mask(kind, size, rng):
    ys, xs = _grid(size)
    r = rng.uniform(0.18, 0.32)
    cy, cx = rng.uniform(r, 1 - r, size=2)
    dy, dx = ys - cy, xs - cx
    if kind == "disk":
        return dy ** 2 + dx ** 2 < r ** 2
    if kind == "square":
        return (abs(dy) < r * 0.8) & (abs(dx) < r * 0.8)
    if kind == "triangle":
        return (dy < r * 0.7) & (dy > -r) & (abs(dx) < (dy + r) * 0.6)
    if kind == "cross":
        return ((abs(dy) < r * 0.25) & (abs(dx) < r)) | ((abs(dx) < r * 0.25) & (abs(dy) < r))
    if kind == "ring":
        d = dy ** 2 + dx ** 2
        return (d < r ** 2) & (d > (0.6 * r) ** 2)
    if kind == "hbar":
        return (abs(dy) < r * 0.3) & (abs(dx) < r)
    if kind == "vbar":
        return (abs(dx) < r * 0.3) & (abs(dy) < r)
    return abs(dy) + abs(dx) < r  # diamond


def _texture(kind, size, rng):
    ys, xs = _grid(size)
    f = rng.uniform(3, 7) * 2 * np.pi
    phase = rng.uniform(0, 2 * np.pi)
    if kind == "stripes_h":
        return np.sin(f * ys + phase) > 0
    if kind == "stripes_v":
        return np.sin(f * xs + phase) > 0
    if kind == "stripes_diag":
        sign = rng.choice([-1, 1])
        return np.sin(f * (ys + sign * xs) / 1.4 + phase) > 0
    if kind == "checker":
        return (np.sin(f * ys + phase) > 0) ^ (np.sin(f * xs + phase) > 0)
    if kind == "dots":
        return (np.sin(f * ys + phase) * np.sin(f * xs + phase)) > 0.5
    return rng.uniform(size=(size, size)) > 0.5


# A small palette: colours then repeat across samples of every class, so a network cannot
# tell samples apart (and memorize them) by their colours instead of learning the pattern.
PALETTE = np.array([[0.9, 0.9, 0.9], [-0.9, -0.9, -0.9], [0.9, -0.6, -0.6],
                    [-0.6, 0.8, -0.6], [-0.6, -0.6, 0.9], [0.8, 0.8, -0.7]], np.float32)


def _render(masks, rng, size):
    """Colour a boolean mask over a background of another palette colour, add noise;
    (3, size, size)."""
    fg, bg = PALETTE[rng.choice(len(PALETTE), size=2, replace=False)][:, :, None, None]
    img = np.where(masks[None], fg, bg)
    img = img + rng.normal(0, 0.15, size=img.shape).astype(np.float32)
    return np.clip(img, -1, 1).astype(np.float32)


def _make(classes, draw, n, size, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(classes), size=n)
    images = np.stack([_render(draw(classes[c], size, rng), rng, size) for c in labels])
    return from_numpy(images), from_numpy(labels.astype(np.int64))


def shapes_dataset(n, size=32, seed=0):
    """(images (n, 3, size, size), labels (n,)) of len(SHAPES) drawn-shape classes."""
    return _make(SHAPES, _shape_mask, n, size, seed)


def textures_dataset(n, size=32, seed=0):
    """(images, labels) of len(TEXTURES) texture classes: the transfer task."""
    return _make(TEXTURES, _texture, n, size, seed)
