"""Image recipes: a classifier on raw pixels, optionally standardised and reduced with PCA.

Small greyscale images (digits, icons) are classified well enough by classical models on their
pixels: a linear model, k nearest neighbours, a random forest, an RBF support-vector machine
or a small multi-layer perceptron. Drafts try those in turn, each with the pixel handling it
suits (distance- and kernel-based models work on principal components). Improve changes one
choice: a hyperparameter, the number of principal components (or adding / dropping PCA),
standardisation, or the model. Debug falls back to a linear model on few components, then to
a constant prediction. Crossover keeps the fitter parent's model and takes the other's pixel
handling (PCA and standardisation).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from podium.scaffolds.baseline.moves import RecipeMove, one_move
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

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> ImageRecipe:
        return cls(**data)


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


def draft(spec: ImageSpec, index: int, rng: random.Random) -> ImageRecipe:
    """The ``index``-th draft: the families in turn; past the first round, other pixel handling."""
    recipe = _start(DRAFT_ORDER[index % len(DRAFT_ORDER)], spec)
    if index >= len(DRAFT_ORDER):
        recipe = replace(recipe, pca=rng.choice([p for p in PCA_CHOICES if p != recipe.pca]))
    return recipe


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


def improve(parent: ImageRecipe, spec: ImageSpec, rng: random.Random) -> tuple[ImageRecipe, str]:
    """Change one choice of ``parent``: mostly a hyperparameter or the pixel handling."""
    moves: list[tuple[Move, float]] = [(_tune, 0.4), (_pca, 0.3), (_switch, 0.2),
                                       (_standardize, 0.1)]  # fmt: skip
    if parent.family not in TUNING:  # a constant prediction: nothing to tune, change the model
        moves = [(_switch, 1.0)]
    return one_move(moves, parent, spec, rng, _switch)


def crossover(
    fitter: ImageRecipe, other: ImageRecipe, spec: ImageSpec
) -> tuple[ImageRecipe, str] | None:
    """The fitter parent's model and hyperparameters, the other's pixel handling (PCA and
    standardisation); ``None`` when that handling is the fitter parent's already."""
    child = replace(fitter, pca=other.pca, standardize=other.standardize)
    if child == fitter:
        return None
    taken = [f"{other.pca} principal components" if other.pca else "every pixel (no PCA)"]
    if other.standardize != fitter.standardize:
        taken.append("standardised pixels" if other.standardize else "unstandardised pixels")
    return child, f"keep the {fitter.family} model, take {', '.join(taken)} from the other"


def debug(parent: ImageRecipe | None, spec: ImageSpec) -> tuple[ImageRecipe, str]:
    """Fall back to something simpler: a linear model on 30 components, then a constant."""
    simple = replace(_start("logistic", spec), pca=30 if spec.pixels > 30 else 0)
    if parent != simple:
        return simple, "fall back to a plain logistic regression on a few principal components"
    return _start("dummy", spec), "fall back to a constant prediction, which cannot fail"
