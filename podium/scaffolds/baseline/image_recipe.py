"""Image recipes: a classifier on raw pixels, optionally standardised and reduced with PCA.

Small greyscale images (digits, icons) are classified well enough by classical models on their
pixels: a linear model, k nearest neighbours, a random forest, an RBF support-vector machine
or a small multi-layer perceptron. Drafts try those in turn, each with the pixel handling it
suits (distance- and kernel-based models work on principal components). Improve changes one
choice: a hyperparameter, the number of principal components (or adding / dropping PCA),
standardisation, or the model. Debug falls back to a linear model on few components, then to
a constant prediction. Crossover keeps the fitter parent's model and takes the other's pixel
handling (PCA and standardisation).

Many images are sized (:func:`sized`, issue 39): a draft costs at most
``budget.DRAFT_SECONDS``, a later node ``budget.GROW_SECONDS``, and the pixels a script holds
stay within ``budget.MEMORY_BYTES``; a sized recipe may grow back (:func:`_grow`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.moves import RecipeMove, one_move
from podium.scaffolds.baseline.parts import Part, nothing
from podium.scaffolds.baseline.recipe_line import unsized_fields
from podium.scaffolds.baseline.specs import ImageSpec


@dataclass(frozen=True)
class ImageModel:
    module: str
    estimator: str
    params: dict[str, Any]
    pca: int = 0  # principal components the family starts with (0: raw pixels)
    standardize: bool = False


MODELS: dict[str, ImageModel] = {
    "logistic": ImageModel("sklearn.linear_model", "LogisticRegression",
                           {"C": 0.1, "max_iter": 300}, pca=100),
    "knn": ImageModel("sklearn.neighbors", "KNeighborsClassifier",
                      {"n_neighbors": 5, "weights": "distance"}, pca=40),
    "random_forest": ImageModel("sklearn.ensemble", "RandomForestClassifier",
                                {"n_estimators": 150, "random_state": 0}),
    "svc": ImageModel("sklearn.svm", "SVC", {"C": 5.0, "gamma": "scale"}, pca=50),
    "mlp": ImageModel("sklearn.neural_network", "MLPClassifier",
                      {"hidden_layer_sizes": [128], "alpha": 0.0001, "max_iter": 40,
                       "random_state": 0}),
    "dummy": ImageModel("sklearn.dummy", "DummyClassifier", {"strategy": "most_frequent"}),
}  # fmt: skip
DRAFT_ORDER = ("logistic", "knn", "random_forest", "svc", "mlp")
PCA_CHOICES = (0, 30, 50, 100)


@dataclass(frozen=True)
class ImageRecipe:
    family: str
    params: dict[str, Any] = field(default_factory=dict)
    pca: int = 0  # principal components kept (0: every pixel)
    standardize: bool = False
    # Sizing (see :func:`sized`): what many images give up to fit a budget.
    holdout: bool = False  # one 20% hold-out split instead of 5 folds, whatever the images
    sample: int = 0  # load, validate and fit at most this many training images (0: all of them)

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> ImageRecipe:
        return cls(**data)

    def fields(self) -> dict[str, Any]:
        return unsized_fields(self, SIZING)


SIZING = {"holdout": False, "sample": 0}  # the sizing fields and their defaults
HOLDOUT_ABOVE_ROWS = 2_000  # cross-validate fewer images; one hold-out split beyond
MIN_ROWS = 2_000  # sizing keeps at least this many images (unless memory allows fewer)
TEST_SHARE = 0.25  # test images per training image, to load and predict (the sample's unknown)


def default_params(family: str, spec: ImageSpec) -> dict[str, Any]:
    params = dict(MODELS[family].params)
    if family == "svc" and spec.prediction != "label":
        params["probability"] = True  # probabilities from Platt scaling
    if family == "dummy" and spec.prediction != "label":
        params["strategy"] = "prior"
    return params


def _start(family: str, spec: ImageSpec) -> ImageRecipe:
    model = MODELS[family]
    return ImageRecipe(family, default_params(family, spec), model.pca, model.standardize)


# --- sizing ----------------------------------------------------------------------------------


def holds_out(recipe: ImageRecipe, spec: ImageSpec) -> bool:
    """Whether the script validates on one hold-out split: many images, or a sized recipe."""
    return recipe.holdout or spec.rows > HOLDOUT_ABOVE_ROWS


def fitted_rows(recipe: ImageRecipe, spec: ImageSpec) -> int:
    return min(spec.rows, recipe.sample) if recipe.sample else spec.rows


def seconds(recipe: ImageRecipe, spec: ImageSpec) -> float:
    """The script's cost on one core: loading the training and test images, fitting 5 folds of
    80% of the training images (or one) and the final fit."""
    rows = fitted_rows(recipe, spec)
    fits = 1.8 if holds_out(recipe, spec) else 5.0
    stored = spec.source[0] * spec.source[1]
    read = budget.image_read_seconds(int(rows + TEST_SHARE * spec.rows), spec.pixels, stored)
    fit = budget.image_fit_seconds(
        recipe.family, recipe.params, rows, spec.pixels, recipe.pca, spec.classes
    )
    return read + fits * fit


def memory_rows(spec: ImageSpec) -> int:
    """The most training images whose pixels (with the test images') fit the memory budget."""
    room = budget.MEMORY_BYTES - budget.image_bytes(int(TEST_SHARE * spec.rows), spec.pixels)
    return max(int(room // budget.image_bytes(1, spec.pixels)), MIN_ROWS)


def sized(recipe: ImageRecipe, spec: ImageSpec, limit: float) -> ImageRecipe:
    """``recipe``, giving up as little as it takes to cost at most ``limit`` seconds of one core
    and to hold its pixels in ``budget.MEMORY_BYTES``; at sizing's floors when even that does
    not fit. In order: a sample of the images that fits memory, one hold-out split instead of 5
    folds, a sample down to ``MIN_ROWS`` images. A recipe within the limit is returned
    unchanged, so tasks that fit (every bundled one) are written as before sizing existed."""
    r = recipe
    cap = memory_rows(spec)
    if fitted_rows(r, spec) > cap:
        r = replace(r, sample=cap)
    if seconds(r, spec) > limit and not holds_out(r, spec):
        r = replace(r, holdout=True)
    floor = min(MIN_ROWS, spec.rows)
    for _ in range(8):
        rows, cost = fitted_rows(r, spec), seconds(r, spec)
        if cost <= limit or rows <= floor:
            break
        r = replace(r, sample=max(floor, int(rows * min(0.9, (limit / cost) ** 0.5))))
    return r


def draft(spec: ImageSpec, index: int, rng: random.Random) -> ImageRecipe:
    """The ``index``-th draft: the families in turn; past the first round, other pixel
    handling; sized to ``budget.DRAFT_SECONDS``."""
    recipe = _start(DRAFT_ORDER[index % len(DRAFT_ORDER)], spec)
    if index >= len(DRAFT_ORDER):
        recipe = replace(recipe, pca=rng.choice([p for p in PCA_CHOICES if p != recipe.pca]))
    return sized(recipe, spec, budget.DRAFT_SECONDS)


# --- improve ---------------------------------------------------------------------------------

Move = RecipeMove[ImageRecipe, ImageSpec]

TUNING: dict[str, list[tuple[str, float, float, float]]] = {
    # family → (parameter, factor, lowest, highest); one is applied per improve
    "logistic": [("C", 0.3, 1e-4, 100), ("C", 3, 1e-4, 100)],
    "knn": [("n_neighbors", 1.6, 1, 50), ("n_neighbors", 0.6, 1, 50)],
    "random_forest": [("n_estimators", 2, 50, 600)],
    "svc": [("C", 3, 0.01, 300), ("C", 0.3, 0.01, 300)],
    "mlp": [("alpha", 10, 1e-6, 1), ("alpha", 0.1, 1e-6, 1), ("max_iter", 2, 20, 200)],
}  # fmt: skip


def _tune(r: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str] | None:
    moves = [m for m in TUNING.get(r.family, []) if m[0] in r.params]
    if r.family == "mlp":
        moves.append(("hidden_layer_sizes", 2, 32, 512))
    if not moves:
        return None
    name, factor, low, high = rng.choice(moves)
    params = dict(r.params)
    value = params[name]
    if name == "hidden_layer_sizes":
        params[name] = [int(min(max(value[0] * factor, low), high))]
    else:
        new = min(max(value * factor, low), high)
        params[name] = round(new) if isinstance(value, int) else round(new, 6)
    if params == r.params:
        return None
    return replace(r, params=params), f"set {name} from {value} to {params[name]}"


def _pca(r: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str] | None:
    options = [p for p in PCA_CHOICES if p != r.pca and p < spec.pixels]
    if not options:
        return None
    pca = rng.choice(options)
    why = f"keep {pca} principal components" if pca else "drop PCA: use every pixel"
    return replace(r, pca=pca), why


def _standardize(r: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str]:
    why = "standardise each pixel" if not r.standardize else "stop standardising pixels"
    return replace(r, standardize=not r.standardize), why


def _switch(r: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str]:
    family = rng.choice([f for f in DRAFT_ORDER if f != r.family])
    new = replace(r, family=family, params=default_params(family, spec))
    return new, f"switch the model from {r.family} to {family}"


def _grow(r: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str] | None:
    """Take back part of what sizing gave up: twice the images, or 5 folds again, when the
    result still fits ``budget.GROW_SECONDS`` and memory."""
    options: list[tuple[ImageRecipe, str]] = []
    if r.sample:
        rows = 0 if r.sample * 2 >= spec.rows else r.sample * 2
        options.append((replace(r, sample=rows), f"fit on {rows or 'all'} training images"))
    if r.holdout and spec.rows <= HOLDOUT_ABOVE_ROWS:
        options.append((replace(r, holdout=False), "validate with 5-fold cross-validation"))
    fits = [(new, why) for new, why in options if sized(new, spec, budget.GROW_SECONDS) == new]
    return rng.choice(fits) if fits else None


def improve(parent: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str]:
    """Change one choice of ``parent``: mostly a hyperparameter or the pixel handling. A sized
    parent may also take back part of what it gave up (:func:`_grow`); a child beyond
    ``budget.GROW_SECONDS`` or memory is sized."""
    moves: list[tuple[Move, float]] = [(_tune, 0.4), (_pca, 0.3), (_switch, 0.2),
                                       (_standardize, 0.1)]  # fmt: skip
    if parent.family not in TUNING:  # a constant prediction: nothing to tune, change the model
        moves = [(_switch, 1.0)]
    if parent.holdout or parent.sample:  # a sized recipe may grow back
        moves.append((_grow, 0.3))
    child, why = one_move(moves, parent, spec, rng, _switch)
    return sized(child, spec, budget.GROW_SECONDS), why


def crossover(
    fitter: ImageRecipe, other: ImageRecipe, spec: ImageSpec
) -> tuple[ImageRecipe, str] | None:
    """The fitter parent's model and hyperparameters, the other's pixel handling (PCA and
    standardisation); ``None`` when that handling is the fitter parent's already."""
    child = sized(replace(fitter, pca=other.pca, standardize=other.standardize), spec,
                  budget.GROW_SECONDS)  # fmt: skip
    if child == fitter:
        return None
    taken = [f"{other.pca} principal components" if other.pca else "every pixel (no PCA)"]
    if other.standardize != fitter.standardize:
        taken.append("standardised pixels" if other.standardize else "unstandardised pixels")
    return child, f"keep the {fitter.family} model, take {', '.join(taken)} from the other"


def debug(parent: ImageRecipe | None, spec: ImageSpec) -> tuple[ImageRecipe, str]:
    """Fall back to something simpler: a linear model on 30 components, then a constant."""
    simple = replace(_start("logistic", spec), pca=30 if spec.pixels > 30 else 0)
    simple = sized(simple, spec, budget.DRAFT_SECONDS)
    if parent != simple:
        return simple, "fall back to a plain logistic regression on a few principal components"
    dummy = sized(_start("dummy", spec), spec, budget.DRAFT_SECONDS)
    return dummy, "fall back to a constant prediction, which cannot fail"


# --- ablate and refine -----------------------------------------------------------------------


def _refine_model(r: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str]:
    """The model block's refine: one hyperparameter tuned, else another family."""
    return _tune(r, spec, rng) or _switch(r, spec, rng)


def _more_components(
    r: ImageRecipe, spec: ImageSpec, rng: random.Random
) -> tuple[ImageRecipe, str] | None:
    """PCA's refine: the next larger number of components (fewer than the pixels)."""
    more = [p for p in PCA_CHOICES if p > r.pca and p < spec.pixels]
    if not more:
        return None
    return replace(r, pca=more[0]), f"keep {more[0]} principal components instead of {r.pca}"


def parts(r: ImageRecipe, spec: ImageSpec) -> list[Part[ImageRecipe]]:
    """What an ablation of ``r`` takes out, one at a time (:mod:`parts`): the model (replaced
    by a constant prediction; by a plain logistic regression), PCA (every pixel instead),
    standardisation."""
    model = partial(_refine_model, r, spec)
    found: list[Part[ImageRecipe]] = []
    if r.family != "dummy":  # a constant needs no pixel handling: the cheapest variant
        constant = replace(r, family="dummy", params=default_params("dummy", spec), pca=0,
                           standardize=False)  # fmt: skip
        found.append(Part("constant model", constant, "a constant prediction", model, model=True))
    if r.family not in ("logistic", "dummy"):
        logistic = replace(r, family="logistic", params=default_params("logistic", spec))
        found.append(
            Part("plain logistic model", logistic, "a logistic regression", model, model=True)
        )
    if r.pca:
        found.append(Part("no pca", replace(r, pca=0), "every pixel",
                          partial(_more_components, r, spec)))  # fmt: skip
    if r.standardize:
        plain = replace(r, standardize=False)
        found.append(Part("no standardisation", plain, "raw pixel values", nothing))
    return found
