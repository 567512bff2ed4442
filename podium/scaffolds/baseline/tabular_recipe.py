"""Tabular recipes: the choices a baseline solution is made of, and how the operators change them.

A recipe names a model family and its hyperparameters, the preprocessing (imputation, encoding,
scaling) and the derived features. Drafts try different families; improve changes one choice
of its parent (a derived feature, a hyperparameter, the family, the preprocessing); debug falls
back to something simpler; crossover takes the model from the fitter parent and the data
handling from the other (see :func:`crossover`). The search keeps only what the validation
metric rewards.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from podium.scaffolds.baseline.moves import RecipeMove, one_move
from podium.scaffolds.baseline.specs import TabularSpec


@dataclass(frozen=True)
class Family:
    module: str
    classifier: str
    regressor: str
    classifier_params: dict[str, Any]
    regressor_params: dict[str, Any]
    needs_scaling: bool = False


FAMILIES: dict[str, Family] = {
    "gradient_boosting": Family(
        "sklearn.ensemble", "GradientBoostingClassifier", "GradientBoostingRegressor",
        {"n_estimators": 100, "learning_rate": 0.1, "max_depth": 3},
        {"n_estimators": 100, "learning_rate": 0.1, "max_depth": 3},
    ),
    "random_forest": Family(
        "sklearn.ensemble", "RandomForestClassifier", "RandomForestRegressor",
        {"n_estimators": 200, "min_samples_leaf": 1},
        {"n_estimators": 100, "min_samples_leaf": 1, "max_features": 0.5},  # sklearn's 1.0: slow
    ),
    "linear": Family(
        "sklearn.linear_model", "LogisticRegression", "Ridge",
        {"C": 1.0, "max_iter": 2000}, {"alpha": 1.0}, needs_scaling=True,
    ),
    "hist_gradient_boosting": Family(
        "sklearn.ensemble", "HistGradientBoostingClassifier", "HistGradientBoostingRegressor",
        {"max_iter": 200, "learning_rate": 0.1, "max_leaf_nodes": 31},
        {"max_iter": 200, "learning_rate": 0.1, "max_leaf_nodes": 31},
    ),
    "extra_trees": Family(
        "sklearn.ensemble", "ExtraTreesClassifier", "ExtraTreesRegressor",
        {"n_estimators": 200, "min_samples_leaf": 2},
        {"n_estimators": 100, "min_samples_leaf": 2, "max_features": 0.5},
    ),
    "knn": Family(
        "sklearn.neighbors", "KNeighborsClassifier", "KNeighborsRegressor",
        {"n_neighbors": 15}, {"n_neighbors": 15}, needs_scaling=True,
    ),
    "decision_tree": Family(
        "sklearn.tree", "DecisionTreeClassifier", "DecisionTreeRegressor",
        {"max_depth": 5}, {"max_depth": 5},
    ),
    "dummy": Family(
        "sklearn.dummy", "DummyClassifier", "DummyRegressor",
        {"strategy": "most_frequent"}, {"strategy": "mean"},
    ),
}  # fmt: skip
DRAFT_ORDER = ("gradient_boosting", "random_forest", "linear", "hist_gradient_boosting",
               "extra_trees", "knn", "decision_tree")  # fmt: skip
STRONG = ("gradient_boosting", "random_forest", "hist_gradient_boosting", "extra_trees")
LARGE_TABLE_ROWS = 10_000
MANY_CATEGORICALS = 10  # more categorical columns than this: trees draft with ordinal encoding
SEEDED = {"gradient_boosting", "random_forest", "extra_trees", "decision_tree",
          "hist_gradient_boosting"}  # fmt: skip

# Derived features: name → whether the data offers what it needs. Ordered by how often they
# help on tabular data; improve tries them mostly in this order.
DERIVED: dict[str, Callable[[TabularSpec], bool]] = {
    "title": lambda s: bool(s.titled),  # honorific from a "Last, Title. First" name column
    "prefix": lambda s: bool(s.text),  # first character of text columns (cabin deck, ticket)
    "count_sum": lambda s: len(s.small_ints) >= 2,  # e.g. siblings + parents = family size
    "missing_flags": lambda s: bool(s.with_missing),
    "log_skewed": lambda s: bool(s.skewed),
    "text_length": lambda s: bool(s.text),
}


@dataclass(frozen=True)
class Recipe:
    family: str
    params: dict[str, Any] = field(default_factory=dict)
    impute: str = "median"
    encode: str = "onehot"
    scale: bool = False
    features: tuple[str, ...] = ()

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> Recipe:
        return cls(**{**data, "features": tuple(data.get("features", ()))})


def default_params(family: str, spec: TabularSpec) -> dict[str, Any]:
    fam = FAMILIES[family]
    params = dict(
        fam.classifier_params if spec.problem == "classification" else fam.regressor_params
    )
    if family in SEEDED:
        params["random_state"] = 0
    if family == "dummy" and spec.prediction in ("proba", "classes"):
        params["strategy"] = "prior"  # class frequencies, not a hard 0/1
    return params


def families_for(spec: TabularSpec) -> tuple[str, ...]:
    """Histogram boosting only pays on large tables (and its threads thrash on small ones)."""
    if spec.rows >= LARGE_TABLE_ROWS:
        return (
            "hist_gradient_boosting",
            *(f for f in DRAFT_ORDER if f != "hist_gradient_boosting"),
        )
    return tuple(f for f in DRAFT_ORDER if f != "hist_gradient_boosting")


def draft(spec: TabularSpec, index: int, rng: random.Random) -> Recipe:
    """The ``index``-th draft: families in turn, preprocessing and one feature drawn at random.

    Tree ensembles on a table with many categorical columns start with ordinal encoding: one-hot
    columns multiply their fitting time (ames: 4x) for no gain; improve may still try one-hot.
    """
    order = families_for(spec)
    family = order[index % len(order)]
    available = [f for f, ok in DERIVED.items() if ok(spec)]
    features = (
        tuple(rng.sample(available, k=min(len(available), rng.choice([0, 1])))) if available else ()
    )
    impute = rng.choice(["median", "mean"])
    encode = rng.choice(["onehot", "ordinal"]) if family not in ("linear", "knn") else "onehot"
    if family not in ("linear", "knn") and len(spec.categorical) > MANY_CATEGORICALS:
        encode = "ordinal"
    return Recipe(
        family=family,
        params=default_params(family, spec),
        impute=impute,
        encode=encode,
        scale=FAMILIES[family].needs_scaling,
        features=features,
    )


# --- improve ---------------------------------------------------------------------------------

Move = RecipeMove[Recipe, TabularSpec]


def _add_feature(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str] | None:
    missing = [f for f, ok in DERIVED.items() if ok(spec) and f not in r.features]
    if not missing:
        return None
    name = missing[0] if rng.random() < 0.7 else rng.choice(missing)
    return replace(r, features=(*r.features, name)), f"add the derived feature '{name}'"


def _scaled(value: Any, factor: float, low: float, high: float) -> Any:
    new = min(max(value * factor, low), high)
    return round(new) if isinstance(value, int) else round(new, 6)


TUNING: dict[str, list[tuple[str, float, float, float]]] = {
    # family → (parameter, factor, lowest, highest); one is applied per improve
    "gradient_boosting": [("n_estimators", 2, 50, 800), ("learning_rate", 0.5, 0.01, 0.3),
                          ("max_depth", 0.67, 2, 8), ("max_depth", 1.5, 2, 8)],
    "random_forest": [("min_samples_leaf", 3, 1, 20), ("min_samples_leaf", 3, 1, 20),
                      ("n_estimators", 2, 100, 800), ("max_features", 1.6, 0.2, 1.0)],
    "extra_trees": [("min_samples_leaf", 2, 1, 20), ("min_samples_leaf", 2, 1, 20),
                    ("n_estimators", 2, 100, 800), ("max_features", 1.6, 0.2, 1.0)],
    "hist_gradient_boosting": [("learning_rate", 0.5, 0.01, 0.3), ("max_leaf_nodes", 0.5, 7, 63)],
    "linear": [("C", 0.3, 1e-3, 1e3), ("C", 3, 1e-3, 1e3), ("alpha", 3, 1e-3, 1e3),
               ("alpha", 0.3, 1e-3, 1e3)],
    "knn": [("n_neighbors", 1.5, 3, 75), ("n_neighbors", 0.67, 3, 75)],
    "decision_tree": [("max_depth", 0.67, 2, 12), ("max_depth", 0.67, 2, 12),
                      ("max_depth", 1.5, 2, 12)],
}  # fmt: skip


def _tune(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str] | None:
    moves = [m for m in TUNING.get(r.family, []) if m[0] in r.params]
    if not moves:
        return None
    name, factor, low, high = rng.choice(moves)
    params = dict(r.params)
    params[name] = _scaled(params[name], factor, low, high)
    if name == "learning_rate":  # a smaller step needs more of them
        for rounds in ("n_estimators", "max_iter"):
            if rounds in params:
                params[rounds] = min(int(params[rounds] * 2), 1000)
    if params == r.params:
        return None
    return replace(r, params=params), f"set {name} from {r.params[name]} to {params[name]}"


def _switch_family(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str]:
    family = rng.choice([f for f in STRONG if f != r.family and f in families_for(spec)])
    new = replace(r, family=family, params=default_params(family, spec),
                  scale=FAMILIES[family].needs_scaling)  # fmt: skip
    return new, f"switch the model from {r.family} to {family}"


def _preprocessing(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str] | None:
    options = []
    if spec.categorical and r.family not in ("linear", "knn"):
        encode = "ordinal" if r.encode == "onehot" else "onehot"
        options.append((replace(r, encode=encode), f"encode categories with {encode} encoding"))
    if spec.with_missing:
        impute = "mean" if r.impute == "median" else "median"
        options.append((replace(r, impute=impute), f"impute missing numbers with the {impute}"))
    return rng.choice(options) if options else None


def improve(parent: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str]:
    """Change one choice of ``parent``; derived features first while some are left."""
    moves: list[tuple[Move, float]] = [
        (_add_feature, 0.5), (_tune, 0.3), (_switch_family, 0.1), (_preprocessing, 0.1),
    ]  # fmt: skip
    return one_move(moves, parent, spec, rng, _switch_family)


def crossover(fitter: Recipe, other: Recipe, spec: TabularSpec) -> tuple[Recipe, str] | None:
    """Combine two parents: the model from ``fitter``, the data handling from ``other``.

    The child keeps the fitter parent's family, hyperparameters and scaling (scaling belongs to
    the family); it takes the other parent's imputation and category encoding (one-hot stays
    for linear and k-NN models, which need it); its derived features are the fitter parent's
    followed by the other's that it lacks (those the data offers). ``None`` when the other
    parent has nothing to add, i.e. the child would be the fitter parent again.
    """
    encode = "onehot" if fitter.family in ("linear", "knn") else other.encode
    added = tuple(
        f for f in other.features if f not in fitter.features and f in DERIVED and DERIVED[f](spec)
    )
    child = replace(fitter, impute=other.impute, encode=encode, features=(*fitter.features, *added))
    if child == fitter:
        return None
    taken = [f"{child.impute} imputation"] if child.impute != fitter.impute else []
    taken += [f"{child.encode} encoding"] if child.encode != fitter.encode else []
    taken += [f"the derived feature '{f}'" for f in added]
    return child, f"keep the {fitter.family} model, take {', '.join(taken)} from the other"


def debug(parent: Recipe | None, spec: TabularSpec) -> tuple[Recipe, str]:
    """Fall back to something simpler: a plain linear model, then a constant prediction."""
    if parent is None or parent.family != "linear" or parent.features:
        family = "linear"
        why = "fall back to a plain linear model without derived features"
    else:
        family = "dummy"
        why = "fall back to a constant prediction, which cannot fail"
    recipe = Recipe(family=family, params=default_params(family, spec), impute="median",
                    encode="onehot", scale=family == "linear")  # fmt: skip
    return recipe, why
