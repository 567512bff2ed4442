"""Builds ``leaderboard.csv`` for the mini MNIST competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.mnist_5k

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` and the training PNGs only), scores its
predictions for the test PNGs with ``grade.py`` and writes the leaderboard best first. Everything
is seeded, so a rerun writes the same file.

The entries span the field: constant digits, guesses, rules on how much ink a digit has and how
wide it is, and scikit-learn classifiers from weak to strong on 50 up to all 4,000 training
images, as raw 28 x 28 pixels or averaged down to 14 x 14 or 7 x 7. The solutions read the PNGs
as any submission would; the decoded pixels are kept between entries (``_images``) only so the
whole board builds in about a minute.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.decomposition import PCA
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("mnist-5k")  # where leaderboard.csv goes
SEED = 0
DIGITS = np.arange(10)

# A predictor gets the training images (n x 28 x 28, grey levels 0-1), their labels and the test
# images, and returns one digit per test image.
Predictor = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


# --- reading the data ----------------------------------------------------------------------


@cache
def _images(folder: Path, ids: tuple[int, ...]) -> np.ndarray:
    """The PNGs ``folder/<id>.png`` as one float array (n x 28 x 28) of grey levels 0-1."""
    stack = [np.asarray(Image.open(folder / f"{i}.png"), dtype=np.float64) for i in ids]
    return np.stack(stack) / 255.0


def submission(predict: Predictor, n_train: int | None = None) -> Solution:
    """A predictor as a leaderboard solution: it trains on ``n_train`` training images (a seeded
    random subset; all 4,000 when None) and predicts every test image listed in the sample
    submission."""

    def solve(public: Path) -> pd.DataFrame:
        train = pd.read_csv(public / "train.csv")
        test_ids = pd.read_csv(public / "sample_submission.csv")["id"]
        if n_train is not None:
            train = train.sample(n=n_train, random_state=SEED)
        x_train = _images(public / "train", tuple(int(i) for i in train["id"]))
        x_test = _images(public / "test", tuple(int(i) for i in test_ids))
        labels = predict(x_train, train["label"].to_numpy(), x_test)
        return pd.DataFrame({"id": test_ids, "label": np.asarray(labels, dtype=int)})

    return solve


# --- features ------------------------------------------------------------------------------


def pooled(images: np.ndarray, size: int) -> np.ndarray:
    """Images averaged down to ``size`` x ``size`` blocks (28 must be a multiple), flattened."""
    block = images.shape[1] // size
    n = len(images)
    blocks = images.reshape(n, size, block, size, block).mean(axis=(2, 4))
    return np.asarray(blocks).reshape(n, size * size)


def statistics(images: np.ndarray) -> np.ndarray:
    """Eight numbers per image: total ink, the width and height of the inked box, the centre of
    mass (row, column), and the share of ink in the top, left and central parts."""
    n = len(images)
    ink = images.sum(axis=(1, 2)) + 1e-9
    rows, cols = images.sum(axis=2) > 0.1, images.sum(axis=1) > 0.1
    height = np.array([_extent(r) for r in rows])
    width = np.array([_extent(c) for c in cols])
    grid = np.arange(28)
    centre_row = (images.sum(axis=2) * grid).sum(axis=1) / ink
    centre_col = (images.sum(axis=1) * grid).sum(axis=1) / ink
    top = images[:, :14].sum(axis=(1, 2)) / ink
    left = images[:, :, :14].sum(axis=(1, 2)) / ink
    middle = images[:, 10:18, 10:18].sum(axis=(1, 2)) / ink
    columns = [ink, width, height, centre_row, centre_col, top, left, middle]
    return np.column_stack(columns).reshape(n, len(columns))


def _extent(inked: np.ndarray) -> int:
    where = np.flatnonzero(inked)
    return int(where[-1] - where[0] + 1) if len(where) else 0


_DESKEWED: dict[str, np.ndarray] = {}


def deskewed(images: np.ndarray) -> np.ndarray:
    """The images straightened and centred: each is sheared horizontally so that its ink's
    principal axis is vertical and moved so that its centre of mass is the image's centre (the
    classic "deskewing" of MNIST, from image moments, done with Pillow's affine transform).
    Slanted handwriting is the largest nuisance variation in MNIST; removing it helps every
    pixel-based model. Results are kept by content, as several entries deskew the same images."""
    key = hashlib.sha256(images.tobytes()).hexdigest()
    if key not in _DESKEWED:
        _DESKEWED[key] = np.stack([_deskew(image) for image in images])
    return _DESKEWED[key]


def _deskew(image: np.ndarray) -> np.ndarray:
    rows, cols = np.mgrid[: image.shape[0], : image.shape[1]]
    ink = image.sum()
    if ink == 0:
        return image
    row, col = (rows * image).sum() / ink, (cols * image).sum() / ink
    spread = ((rows - row) ** 2 * image).sum() / ink
    shear = ((rows - row) * (cols - col) * image).sum() / ink / spread if spread else 0.0
    centre = (image.shape[0] - 1) / 2
    # Pillow maps each output pixel (x, y) to the input pixel (x + shear * y + c, y + f).
    affine = (1.0, shear, col - centre - shear * centre, 0.0, 1.0, row - centre)
    straightened = Image.fromarray(image.astype(np.float32)).transform(
        image.shape[::-1], Image.Transform.AFFINE, affine, resample=Image.Resampling.BILINEAR
    )
    return np.asarray(straightened, dtype=np.float64)


FEATURES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "28x28 pixels": lambda images: images.reshape(len(images), -1),
    "14x14 pooled pixels": lambda images: pooled(images, 14),
    "7x7 pooled pixels": lambda images: pooled(images, 7),
    "image statistics": statistics,
    "deskewed 28x28 pixels": lambda images: deskewed(images).reshape(len(images), -1),
    "deskewed 14x14 pooled pixels": lambda images: pooled(deskewed(images), 14),
}


# --- rules ---------------------------------------------------------------------------------


def constant(digit: int) -> Predictor:
    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        return np.full(len(x_test), digit)

    return predict


def most_frequent(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    """The commonest training digit (the smallest on a tie: every digit has 400 images)."""
    return np.full(len(x_test), np.bincount(y_train, minlength=10).argmax())


def random_guess(seed: int, prior: bool) -> Predictor:
    """Uniform guesses, or guesses drawn from the training labels' frequencies."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(seed)
        if prior:
            return rng.choice(y_train, size=len(x_test))
        return rng.integers(0, 10, size=len(x_test))

    return predict


def nearest_mean(columns: list[int]) -> Predictor:
    """The digit whose average training value of the chosen statistics (standardised) is nearest:
    e.g. "a digit with little ink is a 1"."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        train, test = statistics(x_train)[:, columns], statistics(x_test)[:, columns]
        mean, std = train.mean(axis=0), train.std(axis=0) + 1e-9
        train, test = (train - mean) / std, (test - mean) / std
        centres = np.stack([train[y_train == d].mean(axis=0) for d in DIGITS])
        distances = ((test[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        return np.asarray(DIGITS[distances.argmin(axis=1)])

    return predict


def thin_is_one(max_width: int, otherwise: int) -> Predictor:
    """Hand-written: a digit at most ``max_width`` pixels wide is a 1, any other ``otherwise``."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        width = statistics(x_test)[:, 1]
        return np.where(width <= max_width, 1, otherwise)

    return predict


STATISTICS = ["ink", "width", "height", "centre row", "centre column", "top", "left", "middle"]
NEAREST_MEAN_RULES: dict[str, list[int]] = {
    "ink": [0],
    "width": [1],
    "ink+width": [0, 1],
    "ink+width+height": [0, 1, 2],
    "ink+width+top+left": [0, 1, 5, 6],
    "all eight image statistics": list(range(8)),
}


# --- models --------------------------------------------------------------------------------


def model(make: Callable[[], Any], features: str, scale: bool = False) -> Predictor:
    """A scikit-learn classifier (made fresh for every fit) on one of FEATURES."""
    featurize = FEATURES[features]

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        estimator = make_pipeline(StandardScaler(), make()) if scale else make()
        estimator.fit(featurize(x_train), y_train)
        return np.asarray(estimator.predict(featurize(x_test)))

    return predict


TINY = [50, 200, 1000, None]
ALL = [50, 100, 200, 500, 1000, 2000, None]
FEW = [500, 2000, None]
PIXELS, POOLED_14, POOLED_7, STATS, DESKEWED, DESKEWED_14 = (
    "28x28 pixels",
    "14x14 pooled pixels",
    "7x7 pooled pixels",
    "image statistics",
    "deskewed 28x28 pixels",
    "deskewed 14x14 pooled pixels",
)

# (model name, factory, whether features are standardised, feature sets, training sizes)
MODELS: list[tuple[str, Callable[[], Any], bool, list[str], list[int | None]]] = [
    ("nearest centroid", NearestCentroid, False, [PIXELS, POOLED_14, POOLED_7], TINY),
    ("1-NN", partial(KNeighborsClassifier, n_neighbors=1), False, [PIXELS, POOLED_7], ALL),
    ("3-NN", partial(KNeighborsClassifier, n_neighbors=3), False, [PIXELS, POOLED_14], ALL),
    ("3-NN", partial(KNeighborsClassifier, n_neighbors=3), False, [DESKEWED], [200, 1000, None]),
    ("5-NN", partial(KNeighborsClassifier, n_neighbors=5), False, [POOLED_14], ALL),
    ("5-NN scaled", partial(KNeighborsClassifier, n_neighbors=5), True, [STATS], TINY),
    ("gaussian naive bayes", GaussianNB, False, [PIXELS, POOLED_7, STATS], TINY),
    (
        "decision tree depth=8",
        partial(DecisionTreeClassifier, max_depth=8, random_state=SEED),
        False,
        [POOLED_14, STATS],
        TINY,
    ),
    (
        "logistic regression C=0.1",
        partial(LogisticRegression, C=0.1, max_iter=300),
        True,
        [PIXELS, POOLED_14, POOLED_7, STATS],
        TINY,
    ),
    (
        "logistic regression C=0.1",
        partial(LogisticRegression, C=0.1, max_iter=300),
        True,
        [DESKEWED_14],
        [None],
    ),
    (
        "random forest 100 trees",
        partial(RandomForestClassifier, n_estimators=100, random_state=SEED, n_jobs=1),
        False,
        [PIXELS, POOLED_7, STATS],
        TINY,
    ),
    (
        "random forest 100 trees",
        partial(RandomForestClassifier, n_estimators=100, random_state=SEED, n_jobs=1),
        False,
        [DESKEWED_14],
        [None],
    ),
    (
        "extra trees 100 trees",
        partial(ExtraTreesClassifier, n_estimators=100, random_state=SEED, n_jobs=1),
        False,
        [POOLED_14],
        ALL,
    ),
    ("SVC rbf C=1", partial(SVC, C=1.0), False, [PIXELS, POOLED_14, POOLED_7], TINY),
    ("SVC rbf C=3", partial(SVC, C=3.0), False, [PIXELS, POOLED_14], FEW),
    ("SVC rbf C=10", partial(SVC, C=10.0), False, [PIXELS, POOLED_14], FEW),
    ("SVC rbf C=10", partial(SVC, C=10.0), False, [DESKEWED, DESKEWED_14], FEW),
    (
        "MLP 100 hidden",
        partial(MLPClassifier, hidden_layer_sizes=(100,), max_iter=200, random_state=SEED),
        False,
        [PIXELS, POOLED_14],
        TINY,
    ),
    (
        "PCA 40 + 5-NN distance-weighted",
        lambda: make_pipeline(
            PCA(n_components=40, random_state=SEED),
            KNeighborsClassifier(n_neighbors=5, weights="distance"),
        ),
        False,
        [PIXELS],
        [200, 1000, None],
    ),
    (
        "PCA 40 + 5-NN distance-weighted",
        lambda: make_pipeline(
            PCA(n_components=40, random_state=SEED),
            KNeighborsClassifier(n_neighbors=5, weights="distance"),
        ),
        False,
        [DESKEWED],
        [1000, None],
    ),
    (
        "PCA 50 + SVC rbf C=10",
        lambda: make_pipeline(PCA(n_components=50, random_state=SEED), SVC(C=10.0)),
        False,
        [PIXELS],
        FEW,
    ),
]


# --- the entries ---------------------------------------------------------------------------


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Solution] = {
        f"constant: every image is a {digit}": submission(constant(digit)) for digit in range(10)
    }
    found["prior: the commonest training digit"] = submission(most_frequent)
    for seed in range(5):
        found[f"random guess uniform seed={seed}"] = submission(random_guess(seed, prior=False))
    for seed in range(3):
        found[f"random guess from training labels seed={seed}"] = submission(
            random_guess(100 + seed, prior=True)
        )
    for max_width, otherwise in ((6, 0), (8, 0), (8, 8)):
        name = f"rule: at most {max_width} pixels wide is a 1, else {otherwise}"
        found[name] = submission(thin_is_one(max_width, otherwise))
    for name, columns in NEAREST_MEAN_RULES.items():
        found[f"rule: nearest digit by mean {name}"] = submission(nearest_mean(columns))
    for model_name, make, scale, feature_sets, sizes in MODELS:
        for features in feature_sets:
            for size in sizes:
                images = f"{size} images" if size else "all 4000 images"
                team = f"{model_name} on {features}, {images}"
                if team in found:
                    raise ValueError(f"two entries are named {team!r}")
                found[team] = submission(model(make, features, scale), size)
    return found


if __name__ == "__main__":
    # One thread: on a small shared machine the threaded BLAS spins and runs many times slower.
    sys.exit(builder.main(HERE, entries, lower_is_better=False, threads=1))
