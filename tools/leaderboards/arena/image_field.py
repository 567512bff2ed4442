"""The reference field shared by arena's generated image competitions (16 x 16 greyscale PNGs).

A task module (``noisy_shapes``, ``grating_orientation``) names its task (:class:`ImageTask`)
and calls :func:`entries`; ``tools.leaderboards.builder`` scores them. The field is the same
grid for every task that uses it, chosen from modelling sense only (never from where a baseline
lands), and follows arena's field rule: at least 1,000 entries, so that MLE-bench's medal rules
put bronze at the top 10 % (the ~270-entry v1 field put it at the top 38 %, where a first draft
medals). It holds:

- constants, the training prior and seeded random guesses;
- naive rules: the class whose mean of a few image statistics is nearest;
- scikit-learn models over a ladder of eight representations, from raw to engineered: raw
  pixels, 20 or 50 principal components of the pixels (PCA fitted on the training images),
  4 x 4 block means (8 x 8), twelve image statistics, pixels centred on their centre of
  brightness, histograms of gradient orientations (whole image and quadrants) and the
  magnitudes of the 2-D Fourier transform (invariant to where the pattern sits);
- each model family as a factorial grid (:func:`model_grid`) over the two or three settings that
  matter most for it, from the library default to what a careful modeller tries. The cheap
  families (nearest centroid, k-NN, Gaussian naive Bayes, a tree, logistic regression) are
  trained on 250, 500, 1,000 or all 2,500 training images; the slow ones (random forests, extra
  trees, RBF SVCs, an MLP) on all images, and histogram gradient boosting on the narrow
  representations (at most 64 columns) only, to keep the build to minutes on one thread.

Engineered feature sets and distance- or kernel-based models are standardised. A task scored on
labels gets each model's ``predict``; a task scored on probabilities gets ``predict_proba`` (the
SVC with Platt scaling), unclipped, as a naive entrant would submit it. Everything is seeded.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.metaestimators import available_if

from tools.leaderboards.builder import Solution

SEED = 0
SIDE = 16


@dataclass(frozen=True)
class ImageTask:
    """What the field needs to know about a task: its target column, its classes (in the
    submission's column order) and whether it is scored on probabilities."""

    target: str
    classes: tuple[str, ...]
    proba: bool


# A predictor gets the training images (n x 16 x 16, grey levels 0-1), their class indices and
# the test images, and returns a probability per test image and class (n_test x n_classes);
# label tasks submit each row's most probable class.
Predictor = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


# --- reading the data ----------------------------------------------------------------------


@cache
def _images(folder: Path, ids: tuple[int, ...]) -> np.ndarray:
    """The PNGs ``folder/<id>.png`` as one float array (n x 16 x 16) of grey levels 0-1."""
    stack = [np.asarray(Image.open(folder / f"{i}.png"), dtype=np.float64) for i in ids]
    return np.stack(stack) / 255.0


def submission(task: ImageTask, predict: Predictor, n_train: int | None = None) -> Solution:
    """A predictor as a leaderboard solution, trained on ``n_train`` training images (a seeded
    random subset; all of them when None), predicting every test image of the sample."""

    def solve(public: Path) -> pd.DataFrame:
        train = pd.read_csv(public / "train.csv")
        test_ids = pd.read_csv(public / "sample_submission.csv")["id"]
        if n_train is not None:
            train = train.sample(n=n_train, random_state=SEED)
        x_train = _images(public / "train", tuple(int(i) for i in train["id"]))
        x_test = _images(public / "test", tuple(int(i) for i in test_ids))
        y_train = train[task.target].map(task.classes.index).to_numpy()
        proba = predict(x_train, y_train, x_test)
        if task.proba:
            frame = pd.DataFrame(proba, columns=list(task.classes))
            return pd.concat([pd.DataFrame({"id": test_ids}), frame], axis=1)
        labels = np.asarray(task.classes)[proba.argmax(axis=1)]
        return pd.DataFrame({"id": test_ids, task.target: labels})

    return solve


# --- features ------------------------------------------------------------------------------


def pixels(images: np.ndarray) -> np.ndarray:
    return images.reshape(len(images), -1)


def pooled(images: np.ndarray) -> np.ndarray:
    """4 x 4 block means: 8 x 8 numbers."""
    n = len(images)
    return np.asarray(images.reshape(n, 8, 2, 8, 2).mean(axis=(2, 4))).reshape(n, 64)


STATISTICS = [
    "mean", "std", "min", "max", "centre row", "centre column", "row spread", "column spread",
    "centre minus mean", "border mean", "horizontal gradient", "vertical gradient",
]  # fmt: skip


def statistics(images: np.ndarray) -> np.ndarray:
    """Twelve numbers per image (``STATISTICS``): grey-level summaries, where the brightness
    lies and how spread it is, the centre against the border, and how strongly the grey levels
    change across and down the image."""
    n = len(images)
    flat = images.reshape(n, -1)
    weight = np.clip(images - np.median(flat, axis=1)[:, None, None], 0, None) + 1e-9
    total = weight.sum(axis=(1, 2))
    grid = np.arange(SIDE)
    row = (weight.sum(axis=2) * grid).sum(axis=1) / total
    col = (weight.sum(axis=1) * grid).sum(axis=1) / total
    row_spread = (weight.sum(axis=2) * (grid - row[:, None]) ** 2).sum(axis=1) / total
    col_spread = (weight.sum(axis=1) * (grid - col[:, None]) ** 2).sum(axis=1) / total
    border = np.concatenate(
        [images[:, 0], images[:, -1], images[:, 1:-1, 0], images[:, 1:-1, -1]], axis=1
    ).mean(axis=1)
    columns = [
        flat.mean(axis=1), flat.std(axis=1), flat.min(axis=1), flat.max(axis=1), row, col,
        row_spread, col_spread, images[:, 6:10, 6:10].mean(axis=(1, 2)) - flat.mean(axis=1),
        border, np.abs(np.diff(images, axis=2)).mean(axis=(1, 2)),
        np.abs(np.diff(images, axis=1)).mean(axis=(1, 2)),
    ]  # fmt: skip
    return np.column_stack(columns)


def centred(images: np.ndarray) -> np.ndarray:
    """Each image minus its median, moved (whole pixels, wrapping round) so that its centre of
    brightness is the image's centre: where a pattern sits stops mattering to a pixel model."""
    stats = statistics(images)
    middle = (SIDE - 1) / 2
    out = np.empty_like(images)
    for i, image in enumerate(images):
        shift = (round(middle - stats[i, 4]), round(middle - stats[i, 5]))
        out[i] = np.roll(image - np.median(image), shift, axis=(0, 1))
    return out.reshape(len(images), -1)


def gradient_histograms(images: np.ndarray, bins: int = 9) -> np.ndarray:
    """Histograms of gradient orientation (0-180 degrees, ``bins`` bins), weighted by the
    gradient's strength, over the whole image and over each quadrant, each summing to one: the
    classic edge-direction descriptor (HOG without its overlapping blocks)."""
    d_rows, d_cols = np.gradient(images, axis=(1, 2))
    strength = np.hypot(d_rows, d_cols)
    angle = np.mod(np.arctan2(d_rows, d_cols), np.pi)
    which = np.minimum((angle / np.pi * bins).astype(int), bins - 1)
    half = SIDE // 2
    cells = [
        (slice(None), slice(None)),
        (slice(0, half), slice(0, half)),
        (slice(0, half), slice(half, None)),
        (slice(half, None), slice(0, half)),
        (slice(half, None), slice(half, None)),
    ]
    features = []
    for rows, cols in cells:
        w, b = strength[:, rows, cols].reshape(len(images), -1), which[:, rows, cols]
        b = b.reshape(len(images), -1)
        hist = np.stack([(w * (b == k)).sum(axis=1) for k in range(bins)], axis=1)
        features.append(hist / (hist.sum(axis=1, keepdims=True) + 1e-9))
    return np.concatenate(features, axis=1)


def fourier(images: np.ndarray) -> np.ndarray:
    """log(1 + |FFT|) of each mean-subtracted image over half the frequency plane (16 x 9):
    the strength of each spatial frequency and direction, whatever the pattern's position."""
    centred_levels = images - images.mean(axis=(1, 2), keepdims=True)
    spectrum = np.abs(np.fft.rfft2(centred_levels))
    return np.log1p(spectrum).reshape(len(images), -1)


# name -> (featurizer, whether models standardise it, principal components kept or None). A
# PCA representation is fitted inside each model's pipeline on its training images only.
FEATURES: dict[str, tuple[Callable[[np.ndarray], np.ndarray], bool, int | None]] = {
    "pixels": (pixels, False, None),
    "8x8 block means": (pooled, False, None),
    "image statistics": (statistics, True, None),
    "centred pixels": (centred, False, None),
    "gradient-orientation histograms": (gradient_histograms, True, None),
    "Fourier magnitudes": (fourier, True, None),
    "20 principal components of pixels": (pixels, False, 20),
    "50 principal components of pixels": (pixels, False, 50),
}
# The representations of at most 64 columns, for the slowest-to-fit family (boosting).
NARROW = [
    "8x8 block means",
    "image statistics",
    "gradient-orientation histograms",
    "20 principal components of pixels",
    "50 principal components of pixels",
]


# --- rules ---------------------------------------------------------------------------------


def constant(n_classes: int, k: int, weight: float = 1.0) -> Predictor:
    """Every image is class ``k``: probability ``weight`` on it, the rest shared evenly."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        row = np.full(n_classes, (1 - weight) / max(1, n_classes - 1))
        row[k] = weight
        return np.tile(row, (len(x_test), 1))

    return predict


def prior(n_classes: int) -> Predictor:
    """Each class's share of the training images (its argmax: the commonest class)."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        shares = np.bincount(y_train, minlength=n_classes) / len(y_train)
        return np.tile(shares, (len(x_test), 1))

    return predict


def random_guess(n_classes: int, seed: int, from_prior: bool) -> Predictor:
    """A random class per image (uniform, or drawn from the training labels), given
    probability 0.5 and the rest shared: a guess that hedges."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(seed)
        if from_prior:
            picked = rng.choice(y_train, size=len(x_test))
        else:
            picked = rng.integers(0, n_classes, len(x_test))
        proba = np.full((len(x_test), n_classes), 0.5 / (n_classes - 1))
        proba[np.arange(len(x_test)), picked] = 0.5
        return proba

    return predict


def nearest_mean(n_classes: int, columns: list[int]) -> Predictor:
    """The class whose mean of the chosen statistics (standardised) is nearest, with
    probabilities from a softmax of minus the squared distances."""

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        train, test = statistics(x_train)[:, columns], statistics(x_test)[:, columns]
        mean, std = train.mean(axis=0), train.std(axis=0) + 1e-9
        train, test = (train - mean) / std, (test - mean) / std
        centres = np.stack([train[y_train == k].mean(axis=0) for k in range(n_classes)])
        distance = ((test[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        logits = -(distance - distance.min(axis=1, keepdims=True))
        proba = np.exp(logits)
        return np.asarray(proba / proba.sum(axis=1, keepdims=True))

    return predict


RULES: dict[str, list[int]] = {
    "brightness and contrast": [0, 1],
    "centre against border": [8, 9],
    "gradients across and down": [10, 11],
    "where the brightness lies": [4, 5, 6, 7],
    "all twelve image statistics": list(range(12)),
}


# --- models --------------------------------------------------------------------------------


_FEATURES_CACHE: dict[tuple[str, str], np.ndarray] = {}


def featurized(features: str, images: np.ndarray) -> np.ndarray:
    """``FEATURES[features]`` of ``images``, kept by content: many entries featurize the same
    training subsets and test images, and the build should take minutes, not tens."""
    key = (features, hashlib.sha256(images.tobytes()).hexdigest())
    if key not in _FEATURES_CACHE:
        _FEATURES_CACHE[key] = FEATURES[features][0](images)
    return _FEATURES_CACHE[key]


class ScaledGammaSVC(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """An RBF SVC whose gamma is ``gamma_factor`` times scikit-learn's default (``"scale"``:
    one over the number of columns times their variance), so one grid of factors means the same
    thing on 12 columns as on 256. ``predict_proba`` exists only with Platt scaling
    (``probability=True``)."""

    def __init__(
        self,
        C: float = 1.0,
        gamma_factor: float = 1.0,
        probability: bool = False,
        random_state: int | None = None,
    ) -> None:
        self.C = C
        self.gamma_factor = gamma_factor
        self.probability = probability
        self.random_state = random_state

    def fit(self, x: np.ndarray, y: np.ndarray) -> ScaledGammaSVC:
        variance = float(np.var(x)) or 1.0
        gamma = self.gamma_factor / (x.shape[1] * variance)
        self.svc_ = SVC(
            C=self.C, gamma=gamma, probability=self.probability, random_state=self.random_state
        ).fit(x, y)
        self.classes_ = self.svc_.classes_
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.svc_.predict(x))

    @available_if(lambda self: bool(self.probability))  # type: ignore[untyped-decorator]
    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.svc_.predict_proba(x))


def model(n_classes: int, make: Callable[[], Any], features: str, scale: bool) -> Predictor:
    """A scikit-learn classifier (made fresh for every fit) on one of ``FEATURES``; its
    probabilities in class order (a class it never saw gets 0), or one-hot predictions for a
    model that has no ``predict_proba``. A PCA representation standardises the pixels first
    when the model wants standardised inputs, then projects them."""
    _, engineered, components = FEATURES[features]

    def predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
        steps: list[Any] = [StandardScaler()] if scale or engineered else []
        if components is not None:
            steps.append(PCA(n_components=components, random_state=SEED))
        estimator = make_pipeline(*steps, make()) if steps else make()
        with warnings.catch_warnings():  # unconverged MLPs, SVC's Platt deprecation
            warnings.simplefilter("ignore", category=ConvergenceWarning)
            warnings.simplefilter("ignore", category=FutureWarning)
            warnings.filterwarnings("ignore", message=".*zero standard deviation")  # a centroid
            estimator.fit(featurized(features, x_train), y_train)
        test = featurized(features, x_test)
        out = np.zeros((len(x_test), n_classes))
        if hasattr(estimator, "predict_proba"):  # False for an SVC without Platt scaling
            out[:, estimator.classes_] = estimator.predict_proba(test)
        else:
            out[np.arange(len(x_test)), estimator.predict(test)] = 1.0
        return out

    return predict


SMALL = [250, 500, 1000, None]
LARGE = [None]

# A family: (name, factory of the settings, the settings' grid, whether to standardise every
# representation, representations, training sizes). Its entries are the grid's full product.
Family = tuple[str, Callable[..., Any], dict[str, list[Any]], bool, list[str], list[Any]]


def model_grid(proba: bool) -> list[Family]:
    """The model families and their factorial grids: the two or three settings that matter most
    for each family, from scikit-learn's default to what a careful modeller tries. Cheap
    families are trained on every size (a learning curve), slow ones on all images."""
    every = list(FEATURES)
    return [
        ("nearest centroid", NearestCentroid, {"metric": ["euclidean", "manhattan"]}, False,
         every, SMALL),
        ("k-NN", KNeighborsClassifier,
         {"n_neighbors": [1, 5, 15, 25], "weights": ["uniform", "distance"]}, False, every,
         SMALL),
        ("gaussian naive bayes", GaussianNB, {"var_smoothing": [1e-9, 1e-5, 1e-2]}, False, every,
         SMALL),
        ("decision tree", partial(DecisionTreeClassifier, random_state=SEED),
         {"max_depth": [4, 8, 16, None], "min_samples_leaf": [1, 10]}, False, every, SMALL),
        ("logistic regression", partial(LogisticRegression, max_iter=500),
         {"C": [0.001, 0.01, 0.1, 1.0, 10.0]}, True, every, SMALL),
        ("random forest 100 trees",
         partial(RandomForestClassifier, n_estimators=100, random_state=SEED, n_jobs=1),
         {"max_features": ["sqrt", "log2"], "min_samples_leaf": [1, 3, 10]}, False, every,
         LARGE),
        ("extra trees 100 trees",
         partial(ExtraTreesClassifier, n_estimators=100, random_state=SEED, n_jobs=1),
         {"max_features": ["sqrt", "log2"], "min_samples_leaf": [1, 3, 10]}, False, every,
         LARGE),
        ("gradient boosting 100 rounds",
         partial(HistGradientBoostingClassifier, max_iter=100, random_state=SEED),
         {"learning_rate": [0.05, 0.1, 0.2], "max_leaf_nodes": [15, 31]}, False, NARROW,
         LARGE),
        ("SVC rbf", partial(ScaledGammaSVC, probability=proba, random_state=SEED),
         {"C": [1.0, 10.0], "gamma_factor": [0.3, 1.0, 3.0]}, True, every, LARGE),
        ("MLP 100 epochs",
         partial(MLPClassifier, max_iter=100, random_state=SEED),
         {"hidden_layer_sizes": [(50,), (100,)], "alpha": [1e-4, 1e-2, 1.0]}, True, every,
         LARGE),
    ]  # fmt: skip


def settings(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of a factorial grid, in a fixed order. A 1-NN ignores its weights, so
    k = 1 is kept with uniform weights only (the distance-weighted twin would be a duplicate)."""
    combos = [dict(zip(grid, values, strict=True)) for values in product(*grid.values())]
    return [c for c in combos if not (c.get("n_neighbors") == 1 and c["weights"] == "distance")]


def describe_settings(chosen: dict[str, Any]) -> str:
    """``name=value`` pairs for a team name (a tuple of layer sizes as its sizes)."""
    shown = {k: ",".join(map(str, v)) if isinstance(v, tuple) else v for k, v in chosen.items()}
    return " ".join(f"{k}={v}" for k, v in shown.items())


# --- the entries ---------------------------------------------------------------------------


def entries(task: ImageTask, n_train: int) -> dict[str, Solution]:
    """Every reference solution of ``task`` (``n_train`` training images in all), by team
    name."""
    k = len(task.classes)
    found: dict[str, Solution] = {}
    for index, name in enumerate(task.classes):
        found[f"constant: every image is {name}"] = submission(task, constant(k, index))
        if task.proba:
            found[f"constant: 0.5 on {name}"] = submission(task, constant(k, index, 0.5))
    found["prior: the training classes' shares"] = submission(task, prior(k))
    for seed in range(5):
        found[f"random guess uniform seed={seed}"] = submission(
            task, random_guess(k, seed, from_prior=False)
        )
    for seed in range(3):
        found[f"random guess from training labels seed={seed}"] = submission(
            task, random_guess(k, 100 + seed, from_prior=True)
        )
    for name, columns in RULES.items():
        found[f"rule: nearest class by mean {name}"] = submission(task, nearest_mean(k, columns))
    for model_name, make, grid, scale, feature_sets, sizes in model_grid(task.proba):
        for chosen in settings(grid):
            factory = partial(make, **chosen)
            for features in feature_sets:
                for size in sizes:
                    images = f"{size} images" if size else f"all {n_train} images"
                    team = f"{model_name} {describe_settings(chosen)} on {features}, {images}"
                    if team in found:
                        raise ValueError(f"two entries are named {team!r}")
                    found[team] = submission(task, model(k, factory, features, scale), size)
    return found
