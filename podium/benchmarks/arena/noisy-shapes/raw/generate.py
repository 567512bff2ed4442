"""Generates the noisy-shapes images: the whole stated process, seeded (see SOURCE.md).

Each image is one of six outline or filled shapes (disk, ring, square, frame, triangle, plus),
drawn at a random size, rotation and position near the centre, on a 2x finer grid and averaged
down (anti-aliasing), on a random background level with a random ink level, with a few random
thin strokes over it (clutter), sometimes a flat rectangle hiding part of it (an occluder),
a light Gaussian blur and Gaussian pixel noise. The class is drawn uniformly at random.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter

SEED = 20260601
SIDE = 16  # pixels per side
FINE = 2  # sub-pixels per pixel and side when drawing
CLASSES = ["disk", "ring", "square", "frame", "triangle", "plus"]
N_IMAGES = 7500
CHUNK = 500
NOISE = 0.2  # standard deviation of the pixel noise (grey levels 0-1)
STROKES = 1  # clutter strokes tried per image, each kept with probability 1/2
OCCLUDED = 0.15  # share of images with a flat rectangle over part of them
SHIFT = 2.0  # the shape's centre lies within this many pixels of the image's centre
RADIUS = (3.5, 6.5)
WIDTH = (1.2, 2.0)  # the thickness of rings, frames and the plus's arms
BLUR = 0.6

_FINE_SIDE = SIDE * FINE
_CENTRES = (np.arange(_FINE_SIDE) + 0.5) / FINE
GRID_X, GRID_Y = np.meshgrid(_CENTRES, _CENTRES, indexing="xy")


def generate(n: int = N_IMAGES, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images (uint8, n x 16 x 16, grey levels 0-255) and their class indices."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), n)
    radius = rng.uniform(*RADIUS, n)
    width = rng.uniform(*WIDTH, n)
    centre_x = SIDE / 2 + rng.uniform(-SHIFT, SHIFT, n)
    centre_y = SIDE / 2 + rng.uniform(-SHIFT, SHIFT, n)
    angle = rng.uniform(0, 2 * np.pi, n)
    shapes = np.concatenate(
        [
            _shapes(labels[s], centre_x[s], centre_y[s], radius[s], angle[s], width[s])
            for s in (slice(i, i + CHUNK) for i in range(0, n, CHUNK))
        ]
    )
    ink = rng.uniform(0.5, 1.0, n)[:, None, None]
    background = rng.uniform(0.0, 0.3, n)[:, None, None]
    images = background + (ink - background) * shapes
    strokes = np.concatenate([_strokes(min(CHUNK, n - i), rng) for i in range(0, n, CHUNK)])
    images = np.maximum(images, strokes * rng.uniform(0.3, 0.9, n)[:, None, None])
    occluded = rng.random(n) < OCCLUDED
    corner = rng.integers(0, SIDE - 4, (n, 2))
    extent = rng.integers(3, 7, (n, 2))
    level = rng.uniform(0.0, 0.4, n)
    for i in np.flatnonzero(occluded):
        (row, col), (height, wide) = corner[i], extent[i]
        images[i, row : row + height, col : col + wide] = level[i]
    images = gaussian_filter(images, (0, BLUR, BLUR))
    images = images + rng.normal(0.0, NOISE, images.shape)
    return np.round(np.clip(images, 0.0, 1.0) * 255).astype(np.uint8), labels


def _down(fine: np.ndarray) -> np.ndarray:
    """Fine masks averaged down to pixels: the share of each pixel a shape covers."""
    out: np.ndarray = fine.reshape(len(fine), SIDE, FINE, SIDE, FINE).mean(axis=(2, 4))
    return out


def _shapes(
    labels: np.ndarray,
    cx: np.ndarray,
    cy: np.ndarray,
    radius: np.ndarray,
    angle: np.ndarray,
    width: np.ndarray,
) -> np.ndarray:
    dx, dy = GRID_X[None] - cx[:, None, None], GRID_Y[None] - cy[:, None, None]
    cos, sin = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    u, v = cos * dx + sin * dy, -sin * dx + cos * dy
    r, w = radius[:, None, None], width[:, None, None]
    distance = np.hypot(dx, dy)
    half, box = 0.85 * r, np.maximum(np.abs(u), np.abs(v))
    triangle = np.ones_like(u, dtype=bool)
    for k in range(3):
        side = angle[:, None, None] + 2 * np.pi * k / 3
        triangle &= np.cos(side) * dx + np.sin(side) * dy <= 0.55 * r
    arm = 0.6 * w + 0.4
    masks = [
        distance <= r,
        (distance <= r) & (distance >= r - w),
        box <= half,
        (box <= half) & (box >= half - w),
        triangle,
        ((np.abs(u) <= r) & (np.abs(v) <= arm)) | ((np.abs(v) <= r) & (np.abs(u) <= arm)),
    ]
    fine = np.zeros_like(u)
    for k, mask in enumerate(masks):
        fine = np.where((labels == k)[:, None, None], mask, fine)
    return _down(fine)


def _strokes(n: int, rng: np.random.Generator) -> np.ndarray:
    """Thin random line segments (clutter), as pixel coverage."""
    drawn = np.zeros((n, _FINE_SIDE, _FINE_SIDE), dtype=bool)
    for _ in range(STROKES):
        kept = rng.random(n) < 0.5
        x0, y0, x1, y1 = (rng.uniform(0, SIDE, n)[:, None, None] for _ in range(4))
        thickness = rng.uniform(0.3, 0.6, n)[:, None, None]
        px, py, vx, vy = GRID_X[None] - x0, GRID_Y[None] - y0, x1 - x0, y1 - y0
        along = np.clip((px * vx + py * vy) / (vx * vx + vy * vy + 1e-9), 0, 1)
        near = np.hypot(px - along * vx, py - along * vy) <= thickness
        drawn |= near & kept[:, None, None]
    return _down(drawn)
