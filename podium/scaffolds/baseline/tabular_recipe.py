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
from functools import partial
from typing import Any

from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.moves import RecipeMove, one_move
from podium.scaffolds.baseline.parts import Part, nothing
from podium.scaffolds.baseline.recipe_line import unsized_fields
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
HOLDOUT_ABOVE_ROWS = 50_000  # cross-validate smaller tables; one hold-out split beyond
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
    # Sizing (see :func:`sized`): what a large task gives up to fit a budget.
    holdout: bool = False  # one 20% hold-out split instead of 5 folds, whatever the rows
    sample: int = 0  # validate and fit on at most this many training rows (0: all of them)
    select: int = 0  # keep this many numeric columns, the most related to the target (0: all)

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> Recipe:
        return cls(**{**data, "features": tuple(data.get("features", ()))})

    def fields(self) -> dict[str, Any]:
        """The recipe line's fields: the sizing fields only where they are set, so a recipe
        that gives nothing up is written as before sizing existed."""
        return unsized_fields(self, SIZING)


SIZING = {"holdout": False, "sample": 0, "select": 0}  # the sizing fields and their defaults


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


# --- sizing ----------------------------------------------------------------------------------

ONEHOT_WIDTH = 10  # model columns one one-hot categorical becomes, on average (cardinality unknown)
DATE_WIDTH = 6  # numbers a date column becomes (year ... hour)
ROUNDS = ("n_estimators", "max_iter")  # trees or boosting rounds (a linear model's is no round)
MIN_ROUNDS = 50  # sizing keeps at least this many trees or rounds
MIN_COLUMNS = 100  # ... this many numeric columns
MIN_ROWS = 20_000  # ... this many training rows (unless memory allows fewer)


def holds_out(recipe: Recipe, spec: TabularSpec) -> bool:
    """Whether the script validates on one hold-out split: large tables, or a sized recipe."""
    return recipe.holdout or spec.rows > HOLDOUT_ABOVE_ROWS


def fitted_rows(recipe: Recipe, spec: TabularSpec) -> int:
    return min(spec.rows, recipe.sample) if recipe.sample else spec.rows


def _width(recipe: Recipe, spec: TabularSpec) -> int:
    """The model's input columns, estimated: numbers, date parts, derived features, categories."""
    numeric = len(spec.numeric) + DATE_WIDTH * len(spec.dates) + len(recipe.features)
    if recipe.select:
        numeric = min(numeric, recipe.select)
    per_category = ONEHOT_WIDTH if recipe.encode == "onehot" else 1
    return numeric + per_category * len(spec.categorical)


def seconds(recipe: Recipe, spec: TabularSpec) -> float:
    """The script's cost on one core (``budget``): preparing the rows it fits on, validating
    (5 folds of 80% of them, or one) and the final fit, of one model per target."""
    rows = fitted_rows(recipe, spec)
    fits = (1.8 if holds_out(recipe, spec) else 5.0) * max(1, len(spec.targets))
    width = _width(recipe, spec)
    fit = budget.fit_seconds(recipe.family, recipe.params, rows, width, spec.classes)
    read = budget.read_seconds(rows, len(spec.features) + 2, len(spec.dates), spec.rows - rows)
    return read + fits * fit


def memory_rows(recipe: Recipe, spec: TabularSpec) -> int:
    """The most training rows whose data ``recipe``'s script can hold (``budget``)."""
    strings = len(spec.categorical) + len(spec.text) + len(spec.dates) + 2  # with id and target
    return budget.rows_in_memory(_width(recipe, spec), strings)


def _shrink(
    recipe: Recipe, spec: TabularSpec, limit: float, value: int, floor: int,
    with_value: Callable[[int], Recipe],
) -> Recipe:  # fmt: skip
    """Lower one count (``with_value`` rebuilds the recipe with it) in proportion to the excess
    cost, never below ``floor``, until the recipe costs at most ``limit``."""
    for _ in range(8):
        cost = seconds(recipe, spec)
        if cost <= limit or value <= floor:
            break
        value = max(floor, int(value * min(0.9, limit / cost)))
        recipe = with_value(value)
    return recipe


def sized(recipe: Recipe, spec: TabularSpec, limit: float) -> Recipe | None:
    """``recipe``, giving up as little as it takes to cost at most ``limit`` seconds of one core
    and to hold its data in ``budget.MEMORY_BYTES``; None when even its smallest form does not.

    In order: fewer trees or rounds (down to ``MIN_ROUNDS``), one hold-out split instead of 5
    folds, the most target-related numeric columns (down to ``MIN_COLUMNS``), a sample of the
    training rows (down to ``MIN_ROWS``). A recipe within the limit is returned unchanged, so
    tasks that fit (every bundled one) are written as before sizing existed.
    """
    r = recipe
    cap = memory_rows(r, spec)
    if fitted_rows(r, spec) > cap:
        r = replace(r, sample=cap)
    rounds = next((k for k in ROUNDS if k in r.params and r.family != "linear"), None)
    if rounds is not None and seconds(r, spec) > limit:
        base = r
        r = _shrink(r, spec, limit, int(r.params[rounds]), min(MIN_ROUNDS, r.params[rounds]),
                    lambda v: replace(base, params={**base.params, rounds: v}))  # fmt: skip
    if seconds(r, spec) > limit and not holds_out(r, spec):
        r = replace(r, holdout=True)
    numeric = len(spec.numeric) + DATE_WIDTH * len(spec.dates) + len(r.features)
    if seconds(r, spec) > limit and numeric > MIN_COLUMNS:
        base = r
        r = _shrink(r, spec, limit, r.select or numeric, MIN_COLUMNS,
                    lambda v: replace(base, select=v))  # fmt: skip
    if seconds(r, spec) > limit and fitted_rows(r, spec) > MIN_ROWS:
        base = r
        r = _shrink(r, spec, limit, fitted_rows(r, spec), MIN_ROWS,
                    lambda v: replace(base, sample=v))  # fmt: skip
    return r if seconds(r, spec) <= limit else None


def _plain(family: str, spec: TabularSpec) -> Recipe:
    """A family's cheapest plain recipe: default parameters, ordinal codes for trees."""
    encode = "onehot" if family in ("linear", "knn") else "ordinal"
    scale = FAMILIES[family].needs_scaling
    return Recipe(family, default_params(family, spec), encode=encode, scale=scale)


def affordable(spec: TabularSpec, limit: float) -> tuple[str, ...]:
    """The draft families, in draft order, that some sized form of fits ``limit``; linear when
    none does (a sample of rows always fits it)."""
    order = tuple(f for f in families_for(spec) if sized(_plain(f, spec), spec, limit))
    return order or ("linear",)


def _smallest(recipe: Recipe, spec: TabularSpec) -> Recipe:
    """The least a recipe can cost: sizing's floors, for a task beyond every budget."""
    rows = min(MIN_ROWS, memory_rows(recipe, spec))
    numeric = len(spec.numeric) + DATE_WIDTH * len(spec.dates) + len(recipe.features)
    columns = MIN_COLUMNS if numeric > MIN_COLUMNS else 0
    return replace(recipe, holdout=True, sample=rows if rows < spec.rows else 0, select=columns)


def draft(spec: TabularSpec, index: int, rng: random.Random) -> Recipe:
    """The ``index``-th draft: families in turn, preprocessing and one feature drawn at random.

    Tree ensembles on a table with many categorical columns start with ordinal encoding: one-hot
    columns multiply their fitting time (ames: 4x) for no gain; improve may still try one-hot.
    Families whose every sized form exceeds ``budget.DRAFT_SECONDS`` are left out (boosting
    over 99 classes); the draft is then sized to that budget (:func:`sized`).
    """
    order = affordable(spec, budget.DRAFT_SECONDS)
    family = order[index % len(order)]
    available = [f for f, ok in DERIVED.items() if ok(spec)]
    features = (
        tuple(rng.sample(available, k=min(len(available), rng.choice([0, 1])))) if available else ()
    )
    impute = rng.choice(["median", "mean"])
    encode = rng.choice(["onehot", "ordinal"]) if family not in ("linear", "knn") else "onehot"
    if family not in ("linear", "knn") and len(spec.categorical) > MANY_CATEGORICALS:
        encode = "ordinal"
    recipe = Recipe(
        family=family,
        params=default_params(family, spec),
        impute=impute,
        encode=encode,
        scale=FAMILIES[family].needs_scaling,
        features=features,
    )
    return fitted(recipe, spec, budget.DRAFT_SECONDS)


def fitted(recipe: Recipe, spec: TabularSpec, limit: float) -> Recipe:
    """``recipe`` sized to ``limit``: as it is, else with ordinal codes, else at the floors."""
    plain = replace(recipe, encode="ordinal") if recipe.family not in ("linear", "knn") else recipe
    return sized(recipe, spec, limit) or sized(plain, spec, limit) or _smallest(plain, spec)


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
    if params == r.params or seconds(replace(r, params=params), spec) > budget.GROW_SECONDS:
        return None
    return replace(r, params=params), f"set {name} from {r.params[name]} to {params[name]}"


def _switch_family(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str]:
    """Another strong family with its defaults, sized to ``budget.GROW_SECONDS`` (the parent's
    sizing kept); linear when no strong family fits that budget."""
    options = {}
    for f in STRONG:
        if f != r.family and f in families_for(spec):
            new = replace(r, family=f, params=default_params(f, spec),
                          scale=FAMILIES[f].needs_scaling)  # fmt: skip
            options[f] = sized(new, spec, budget.GROW_SECONDS)
    choices = [f for f, new in options.items() if new is not None]
    if not choices:
        new = fitted(_plain("linear", spec), spec, budget.GROW_SECONDS)
        return new, f"switch the model from {r.family} to linear"
    family = rng.choice(choices)
    return options[family] or r, f"switch the model from {r.family} to {family}"


def _grow(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str] | None:
    """Take back part of what sizing gave up: twice the rows or columns, or 5 folds again, when
    the result still fits ``budget.GROW_SECONDS`` and memory."""
    options: list[tuple[Recipe, str]] = []
    if r.sample:
        rows = 0 if r.sample * 2 >= spec.rows else r.sample * 2
        options.append((replace(r, sample=rows), f"fit on {rows or 'all'} training rows"))
    if r.select:
        numeric = len(spec.numeric) + DATE_WIDTH * len(spec.dates) + len(r.features)
        columns = 0 if r.select * 2 >= numeric else r.select * 2
        options.append((replace(r, select=columns), f"keep {columns or 'all'} numeric columns"))
    if r.holdout and spec.rows <= HOLDOUT_ABOVE_ROWS:
        options.append((replace(r, holdout=False), "validate with 5-fold cross-validation"))
    fits = [
        (new, why) for new, why in options
        if seconds(new, spec) <= budget.GROW_SECONDS
        and fitted_rows(new, spec) <= memory_rows(new, spec)
    ]  # fmt: skip
    return rng.choice(fits) if fits else None


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
    """Change one choice of ``parent``; derived features first while some are left. A sized
    parent may also take back part of what it gave up (:func:`_grow`); no move makes a node
    exceed ``budget.GROW_SECONDS`` or, wider, its memory (its rows are then sampled)."""
    moves: list[tuple[Move, float]] = [
        (_add_feature, 0.5), (_tune, 0.3), (_switch_family, 0.1), (_preprocessing, 0.1),
    ]  # fmt: skip
    if parent.holdout or parent.sample or parent.select:  # a sized recipe may grow back
        moves.append((_grow, 0.3))
    child, why = one_move(moves, parent, spec, rng, _switch_family)
    cap = memory_rows(child, spec)  # one-hot columns or derived features widen every row
    if fitted_rows(child, spec) > cap:
        return replace(child, sample=cap), f"{why}, on {cap} sampled rows to fit in memory"
    return child, why


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
    if seconds(child, spec) > budget.GROW_SECONDS:  # one-hot or more features cost too much
        child = fitted(child, spec, budget.GROW_SECONDS)
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
    return fitted(recipe, spec, budget.DRAFT_SECONDS), why


# --- ablate and refine -----------------------------------------------------------------------


def _refine_model(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str]:
    """The model block's refine: one hyperparameter tuned, else another strong family."""
    return _tune(r, spec, rng) or _switch_family(r, spec, rng)


def _next_feature(r: Recipe, spec: TabularSpec, rng: random.Random) -> tuple[Recipe, str] | None:
    """The derived features' refine: the next one the data offers (in ``DERIVED``'s order)."""
    missing = [f for f, ok in DERIVED.items() if ok(spec) and f not in r.features]
    if not missing:
        return None
    return replace(r, features=(*r.features, missing[0])), f"add the derived feature '{missing[0]}'"


def parts(r: Recipe, spec: TabularSpec) -> list[Part[Recipe]]:
    """What an ablation of ``r`` takes out, one at a time (:mod:`parts`): the model (replaced
    by a constant prediction; by a plain linear model, with the one-hot codes and scaling it
    needs), the derived features, the scaling, one-hot encoding (ordinal codes instead)."""
    model = partial(_refine_model, r, spec)
    found: list[Part[Recipe]] = []
    if r.family != "dummy":
        constant = replace(r, family="dummy", params=default_params("dummy", spec))
        found.append(Part("constant model", constant, "a constant prediction", model, model=True))
    if r.family not in ("linear", "dummy"):
        linear = replace(r, family="linear", params=default_params("linear", spec),
                         encode="onehot", scale=True)  # fmt: skip
        found.append(Part("plain linear model", linear, "a plain linear model", model, model=True))
    if r.features:
        found.append(Part("no derived features", replace(r, features=()),
                          "no derived features", partial(_next_feature, r, spec)))  # fmt: skip
    if r.scale:
        found.append(Part("no scaling", replace(r, scale=False), "unscaled numbers", nothing))
    if r.encode == "onehot" and spec.categorical and r.family not in ("linear", "knn"):
        ordinal = replace(r, encode="ordinal")
        found.append(Part("ordinal codes instead of one-hot", ordinal, "ordinal codes", nothing))
    return found
