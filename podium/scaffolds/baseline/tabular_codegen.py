"""Writes a complete scikit-learn solution for a tabular task from a recipe.

The script reads ./input/, derives features, validates with k-fold cross-validation (a single
hold-out split on large tables) using the task's own metric, prints
``VALIDATION_METRIC: <value>``, refits on all training rows and writes
./submission/submission.csv in the sample's columns. Its first line carries the recipe, so
later operators can read their parent's choices back from the code alone. A recipe sized to a
budget (``tabular_recipe.sized``) validates on one split, keeps the numeric columns most
related to the target and samples the training rows it validates and fits on, as its plan
says. Regression on a log metric fits the log of the target (``TransformedTargetRegressor``)
and predicts on the original scale. Several targets (regressions or 0/1 labels) get one copy of
the whole pipeline each, so a column selection reads one target, and validate column by column.
"""

from __future__ import annotations

from podium.scaffolds.baseline.analysis import TITLE_PATTERN
from podium.scaffolds.baseline.layouts import (
    per_target_source,
    read_lines,
    submission_lines,
    target_source,
)
from podium.scaffolds.baseline.metrics import (
    METRIC_IMPORTS,
    class_constants,
    folds_description,
    folds_source,
    metric_source,
    predict_source,
    submission_source,
    transform_source,
)
from podium.scaffolds.baseline.recipe_line import read_line, recipe_line
from podium.scaffolds.baseline.specs import TabularSpec
from podium.scaffolds.baseline.tables import row_sample
from podium.scaffolds.baseline.tabular_recipe import FAMILIES, Recipe, holds_out

DATE_PARTS = ("year", "month", "day", "day_of_week", "day_of_year")


def read_recipe(code: str) -> Recipe | None:
    """The tabular recipe on a solution's first line; None for anything else."""
    found = read_line(code)
    if found is None or found[0] != "tabular":
        return None
    try:
        return Recipe.from_fields(found[1])
    except (ValueError, TypeError, KeyError):
        return None


def describe(spec: TabularSpec, recipe: Recipe) -> str:
    """The plan's sentence: what the generated solution does."""
    params = ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items()) if k != "random_state")
    features = ", ".join(recipe.features) or "none"
    validation = folds_description(holds_out(recipe, spec))
    target = ", ".join(spec.targets) if spec.targets else spec.target
    target = f"log of {target}" if spec.transform != "none" else target
    dates = f", {len(spec.dates)} date" if spec.dates else ""
    return (
        f"{recipe.family.replace('_', ' ')} ({params}) predicting {target} from "
        f"{len(spec.numeric)} numeric{dates} and {len(spec.categorical)} categorical columns; "
        f"{recipe.impute} imputation, {recipe.encode} encoding"
        f"{', scaling' if recipe.scale else ''}; derived features: {features}; "
        f"validated with {validation} on {spec.scoring}{_sizing_words(recipe)}."
    )


def _sizing_words(recipe: Recipe) -> str:
    """What a sized recipe gives up, for the plan's sentence ("" for none)."""
    words = [f"{recipe.sample} sampled rows"] if recipe.sample else []
    if recipe.select:
        words.append(f"the {recipe.select} numeric columns most related to the target")
    return f"; fitted on {' and '.join(words)}" if words else ""


def _sizing_lines(spec: TabularSpec, recipe: Recipe, numeric: int) -> tuple[str, str, str]:
    """Import lines (each after a newline), lines before the data is prepared (each before one)
    and the column-selection step of a sized recipe, to paste where they belong: "" each for an
    unsized recipe of a family other than histogram boosting (rows are sampled as they are read:
    ``layouts.read_lines``).

    Histogram boosting runs on one thread: its OpenMP threads spin on a busy machine (measured:
    a 190,000-row fit took 228 s on 2 busy cores, 9 s on one thread)."""
    select = min(recipe.select, numeric)
    imports = ""
    before = ""
    if recipe.family == "hist_gradient_boosting":
        imports += "\nfrom threadpoolctl import threadpool_limits"
        before += "threadpool_limits(1)  # threads spin on a busy machine: one is faster\n"
    if select:
        imports += "\nfrom sklearn.feature_selection import SelectKBest, f_classif, f_regression"
    score = "f_classif" if spec.problem == "classification" else "f_regression"
    step = f', ("select", SelectKBest({score}, k={select}))' if select else ""
    return imports, before, step


def _dates(spec: TabularSpec) -> tuple[list[str], list[str]]:
    """Code lines turning each date column into numbers, and the columns they add."""
    lines: list[str] = []
    numeric: list[str] = []
    for col in spec.dates:
        parts = DATE_PARTS + (("hour",) if col in spec.timed else ())
        lines.append(f'when = pd.to_datetime(df["{col}"], errors="coerce")')
        for part in parts:
            lines.append(f'df["{col}_{part}"] = when.dt.{part}')
            numeric.append(f"{col}_{part}")
    return lines, numeric


def _derived(spec: TabularSpec, recipe: Recipe) -> tuple[list[str], list[str], list[str]]:
    """Code lines of add_features(), and the numeric / categorical columns they add."""
    lines: list[str] = []
    numeric: list[str] = []
    categorical: list[str] = []

    def add(new: str, expression: str, columns: list[str]) -> None:
        """One derived column: the line that computes it, and its name among ``columns`` (the
        name the code writes is the one the pipeline reads)."""
        lines.append(f'df["{new}"] = {expression}')
        columns.append(new)

    for name in recipe.features:
        if name == "title":
            for col in spec.titled:
                title = f'str.extract(r"{TITLE_PATTERN}", expand=False).fillna("none")'
                add(f"{col}_title", f'df["{col}"].astype(str).{title}', categorical)
        elif name == "prefix":
            for col in spec.text:
                add(f"{col}_prefix", f'df["{col}"].fillna("?").astype(str).str[0]', categorical)
        elif name == "text_length":
            for col in spec.text:
                add(f"{col}_length", f'df["{col}"].fillna("").astype(str).str.len()', numeric)
        elif name == "count_sum":
            add("count_sum", f"df[{list(spec.small_ints)!r}].sum(axis=1)", numeric)
        elif name == "missing_flags":
            for col in spec.with_missing:
                add(f"{col}_missing", f'df["{col}"].isna().astype(int)', numeric)
        elif name == "log_skewed":
            for col in spec.skewed:
                add(f"{col}_log", f'np.log1p(df["{col}"].clip(lower=0))', numeric)
    return lines, numeric, categorical


def render(spec: TabularSpec, recipe: Recipe) -> str:
    fam = FAMILIES[recipe.family]
    classification = spec.problem == "classification"
    estimator = fam.classifier if classification else fam.regressor
    date_lines, date_numeric = _dates(spec)
    derived, extra_numeric, extra_categorical = _derived(spec, recipe)
    body = "\n    ".join([*date_lines, *derived, "return df"])
    numeric = list(spec.numeric) + date_numeric + extra_numeric
    sizing_import, before_fit, select_step = _sizing_lines(spec, recipe, len(numeric))
    sample = row_sample(recipe.sample, spec.rows, len(spec.features) + 2)  # with id and target
    numeric_steps = [f'("impute", SimpleImputer(strategy="{recipe.impute}")){select_step}']
    if recipe.scale:
        numeric_steps.append('("scale", StandardScaler())')
    encoder = (
        'OneHotEncoder(handle_unknown="ignore")'
        if recipe.encode == "onehot"
        else 'OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)'
    )
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(recipe.params.items()))
    several = bool(spec.targets)  # one model per target, scored column by column
    validation = folds_source(classification and not several, holds_out(recipe, spec))
    constants = class_constants(
        spec.prediction, spec.scoring, spec.classes, spec.columns, "train[TARGET]"
    )
    transform = transform_source(spec.transform)
    submission = submission_lines(
        spec.layout,
        spec.prediction,
        "predict(model, X_test)",
        submission_source(spec.prediction, "test[ID]", spec.target, "X_test"),
    )
    return f"""{recipe_line("tabular", recipe.fields())}
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.impute import SimpleImputer
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from {fam.module} import {estimator}{sizing_import}
{METRIC_IMPORTS}

{read_lines(spec, sample)}
ID, TARGET = {spec.id_col!r}, {target_source(spec.target, spec.targets)}
NUMERIC = {numeric!r}
CATEGORICAL = {list(spec.categorical) + extra_categorical!r}
{constants}


def add_features(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    {body}


{metric_source(spec.scoring, spec.prediction, spec.classes, several)}


{predict_source(spec.scoring, spec.prediction, spec.transform, columnwise=several)}


{before_fit}train, test = add_features(train), add_features(test)
for col in CATEGORICAL:  # one type per column; a missing value becomes a category of its own
    train[col], test[col] = train[col].astype(str), test[col].astype(str)

numeric = Pipeline([{", ".join(numeric_steps)}])
categorical = Pipeline([("impute", SimpleImputer(strategy="most_frequent")), ("encode", {encoder})])
parts = [("num", numeric, NUMERIC), ("cat", categorical, CATEGORICAL)]
model = Pipeline([
    ("prepare", ColumnTransformer([p for p in parts if p[2]])),
    ("model", {estimator}({params})),
]){transform}{per_target_source(spec.targets, classification)}

X, y = train[NUMERIC + CATEGORICAL], train[TARGET]
{validation}
scores = cross_val_score(model, X, y, cv=folds, scoring=scorer, error_score="raise")
print(f"VALIDATION_METRIC: {{scores.mean():.6f}}")

model.fit(X, y)
X_test = test[NUMERIC + CATEGORICAL]
{submission}
submission.to_csv("./submission/submission.csv", index=False)
"""
