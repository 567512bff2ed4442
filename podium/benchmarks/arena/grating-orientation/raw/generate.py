"""Generates the grating-orientation images: the whole stated process, seeded (see SOURCE.md).

Each image is a sinusoidal grating (stripes) whose orientation is the class, 0, 30, ..., 150
degrees, jittered by up to 12 degrees, with a random spatial frequency, phase and contrast, plus
a weaker second grating at a uniformly random orientation (a distractor) and strong Gaussian
pixel noise, on a mid-grey background. The class is drawn uniformly at random.
"""

from __future__ import annotations

import numpy as np

SEED = 20260602
SIDE = 16  # pixels per side
CLASSES = ["deg000", "deg030", "deg060", "deg090", "deg120", "deg150"]
ANGLES = np.array([0.0, 30.0, 60.0, 90.0, 120.0, 150.0])
N_IMAGES = 7500
JITTER = 12.0  # degrees either side of the class's orientation
FREQUENCY = (0.08, 0.30)  # cycles per pixel
CONTRAST = (0.15, 0.40)  # the grating's amplitude (grey levels 0-1)
DISTRACTOR = 0.8  # the second grating's amplitude is up to this share of the first's
NOISE = 0.45  # standard deviation of the pixel noise

_ROWS, _COLS = np.mgrid[:SIDE, :SIDE] - (SIDE - 1) / 2


def generate(n: int = N_IMAGES, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images (uint8, n x 16 x 16, grey levels 0-255) and their class indices."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), n)
    angle = np.deg2rad(ANGLES[labels] + rng.uniform(-JITTER, JITTER, n))
    frequency = rng.uniform(*FREQUENCY, n)
    phase = rng.uniform(0, 2 * np.pi, n)
    contrast = rng.uniform(*CONTRAST, n)
    images = 0.5 + _grating(angle, frequency, phase, contrast)
    other = _grating(
        rng.uniform(0, np.pi, n),
        rng.uniform(*FREQUENCY, n),
        rng.uniform(0, 2 * np.pi, n),
        contrast * rng.uniform(0, DISTRACTOR, n),
    )
    images = images + other + rng.normal(0.0, NOISE, images.shape)
    return np.round(np.clip(images, 0.0, 1.0) * 255).astype(np.uint8), labels


def _grating(
    angle: np.ndarray, frequency: np.ndarray, phase: np.ndarray, amplitude: np.ndarray
) -> np.ndarray:
    """Stripes varying along ``angle``: amplitude * sin(2 pi f (x cos a + y sin a) + phase)."""
    a, f = angle[:, None, None], frequency[:, None, None]
    along = np.cos(a) * _COLS[None] + np.sin(a) * _ROWS[None]
    out: np.ndarray = amplitude[:, None, None] * np.sin(
        2 * np.pi * f * along + phase[:, None, None]
    )
    return out
