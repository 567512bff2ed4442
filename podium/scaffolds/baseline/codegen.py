"""Writes a complete scikit-learn solution from a recipe.

The script reads ./input/, derives features, validates with k-fold cross-validation (a single
hold-out split on large tables), prints ``VALIDATION_METRIC: <value>``, refits on all training
rows and writes ./submission/submission.csv. Its first line carries the recipe, so later
operators can read their parent's choices back from the code alone.
"""

from __future__ import annotations

from podium.scaffolds.baseline.analysis import TITLE_PATTERN, TabularSpec
from podium.scaffolds.baseline.recipe import FAMILIES, Recipe

RECIPE_MARK = "# podium-baseline recipe: "
HOLDOUT_ABOVE_ROWS = 50_000  # cross-validate smaller tables; one hold-out split beyond


def read_recipe(code: str) -> Recipe | None:
    first = code.split("\n", 1)[0]
    if not first.startswith(RECIPE_MARK):
        return None
    try:
        return Recipe.from_json(first[len(RECIPE_MARK) :])
    except (ValueError, TypeError, KeyError):
        return None


def _derived(spec: TabularSpec, recipe: Recipe) -> tuple[list[str], list[str], list[str]]:
    """Code lines of add_features(), and the numeric / categorical columns they add."""
    lines: list[str] = []
    numeric: list[str] = []
    categorical: list[str] = []
    for name in recipe.features:
        if name == "title":
            for col in spec.titled:
                new = f"{col}_title"
                lines.append(
                    f'df["{new}"] = df["{col}"].astype(str).str.extract(r"{TITLE_PATTERN}", '
                    'expand=False).fillna("none")'
                )
                categorical.append(new)
        elif name == "prefix":
            for col in spec.text:
                lines.append(f'df["{col}_prefix"] = df["{col}"].fillna("?").astype(str).str[0]')
                categorical.append(f"{col}_prefix")
        elif name == "text_length":
            for col in spec.text:
                lines.append(f'df["{col}_length"] = df["{col}"].fillna("").astype(str).str.len()')
                numeric.append(f"{col}_length")
        elif name == "count_sum":
            lines.append(f'df["count_sum"] = df[{list(spec.small_ints)!r}].sum(axis=1)')
            numeric.append("count_sum")
        elif name == "missing_flags":
            for col in spec.with_missing:
                lines.append(f'df["{col}_missing"] = df["{col}"].isna().astype(int)')
                numeric.append(f"{col}_missing")
        elif name == "log_skewed":
            for col in spec.skewed:
                lines.append(f'df["{col}_log"] = np.log1p(df["{col}"].clip(lower=0))')
                numeric.append(f"{col}_log")
    return lines, numeric, categorical


def render(spec: TabularSpec, recipe: Recipe) -> str:
    fam = FAMILIES[recipe.family]
    classification = spec.problem == "classification"
    estimator = fam.classifier if classification else fam.regressor
    derived, extra_numeric, extra_categorical = _derived(spec, recipe)
    body = "\n    ".join([*derived, "return df"])
    numeric_steps = [f'("impute", SimpleImputer(strategy="{recipe.impute}"))']
    if recipe.scale:
        numeric_steps.append('("scale", StandardScaler())')
    encoder = (
        'OneHotEncoder(handle_unknown="ignore")'
        if recipe.encode == "onehot"
        else 'OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)'
    )
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(recipe.params.items()))
    sign = "-" if spec.scoring.startswith("neg_") else ""
    predict = (
        "model.predict_proba(X_test)[:, 1]"
        if spec.prediction == "proba"
        else "model.predict(X_test)"
    )
    splitter = "StratifiedKFold" if classification else "KFold"
    if spec.rows > HOLDOUT_ABOVE_ROWS:
        validation = (
            f"folds = list({splitter}(n_splits=5, shuffle=True, random_state=0).split(X, y))[:1]"
        )
    else:
        validation = f"folds = {splitter}(n_splits=5, shuffle=True, random_state=0)"
    return f"""{RECIPE_MARK}{recipe.to_json()}
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from {fam.module} import {estimator}

train = pd.read_csv("./input/{spec.train_file}")
test = pd.read_csv("./input/{spec.test_file}")
ID, TARGET = {spec.id_col!r}, {spec.target!r}
NUMERIC = {list(spec.numeric) + extra_numeric!r}
CATEGORICAL = {list(spec.categorical) + extra_categorical!r}


def add_features(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    {body}


train, test = add_features(train), add_features(test)
for col in CATEGORICAL:  # one type per column; a missing value becomes a category of its own
    train[col], test[col] = train[col].astype(str), test[col].astype(str)

numeric = Pipeline([{", ".join(numeric_steps)}])
categorical = Pipeline([("impute", SimpleImputer(strategy="most_frequent")), ("encode", {encoder})])
parts = [("num", numeric, NUMERIC), ("cat", categorical, CATEGORICAL)]
model = Pipeline([
    ("prepare", ColumnTransformer([p for p in parts if p[2]])),
    ("model", {estimator}({params})),
])

X, y = train[NUMERIC + CATEGORICAL], train[TARGET]
{validation}
scores = cross_val_score(model, X, y, cv=folds, scoring={spec.scoring!r})
print(f"VALIDATION_METRIC: {{{sign}scores.mean():.6f}}")

model.fit(X, y)
X_test = test[NUMERIC + CATEGORICAL]
submission = pd.DataFrame({{ID: test[ID], TARGET: {predict}}})
submission.to_csv("./submission/submission.csv", index=False)
"""
