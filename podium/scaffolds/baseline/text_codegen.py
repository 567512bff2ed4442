"""Writes a complete solution for a text task from a text recipe.

The script joins the text columns into one document per row, builds TF-IDF word and/or
character n-grams inside a scikit-learn pipeline (so each validation fold learns its own
vocabulary), fits the linear model, validates on the task's metric (5-fold cross-validation,
one 20% hold-out on large sets), prints ``VALIDATION_METRIC: <value>``, refits on every row and
writes the submission. A linear SVM has no probabilities: when the metric needs them it is
wrapped in ``CalibratedClassifierCV``. Several 0/1 labels (jigsaw's toxicity columns) share the
TF-IDF features and get one model each (``layouts.PER_LABEL``), scored column by column.
"""

from __future__ import annotations

from podium.scaffolds.baseline.layouts import (
    PER_LABEL,
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
from podium.scaffolds.baseline.recipe_line import recipe_line
from podium.scaffolds.baseline.specs import TextSpec
from podium.scaffolds.baseline.tables import row_sample
from podium.scaffolds.baseline.text_recipe import MODELS, TextRecipe, holds_out

CHARS_PER_VALUE = 10
"""A document's characters counted as values of a table (a number in a CSV is about this long),
so a sampled read parses a chunk of about the same size whatever the documents' length."""


def describe(spec: TextSpec, recipe: TextRecipe) -> str:
    """The plan's sentence: what the generated solution does."""
    params = ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items()))
    grams = [f"word n-grams up to {recipe.words}"] if recipe.words else []
    grams += [f"character n-grams of 2 to {recipe.chars}"] if recipe.chars else []
    validation = folds_description(holds_out(recipe, spec))
    target = ", ".join(spec.targets) if spec.targets else spec.target
    given_up = [f"{recipe.sample} sampled documents"] if recipe.sample else []
    given_up += [f"the {recipe.max_features} most frequent n-grams"] if recipe.max_features else []
    sizing = f"; fitted on {' and '.join(given_up)}" if given_up else ""
    return (
        f"{recipe.family.replace('_', ' ')} ({params}) predicting {target} from TF-IDF "
        f"{' and '.join(grams)} of {', '.join(spec.text)} (min_df={recipe.min_df}"
        f"{', sublinear tf' if recipe.sublinear_tf else ''}){sizing}; validated with "
        f"{validation} on {spec.scoring}."
    )


def _vectorizers(recipe: TextRecipe) -> list[str]:
    common = f"min_df={recipe.min_df}, sublinear_tf={recipe.sublinear_tf}"
    if recipe.max_features:  # each vectoriser keeps its share of the most frequent n-grams
        share = recipe.max_features // (bool(recipe.words) + bool(recipe.chars) or 1)
        common += f", max_features={share}"
    parts = []
    if recipe.words:
        parts.append(f'("words", TfidfVectorizer(ngram_range=(1, {recipe.words}), {common}))')
    if recipe.chars:
        parts.append(
            f'("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, {recipe.chars}), '
            f"{common}))"
        )
    return parts or [f'("words", TfidfVectorizer({common}))']


def _per_label(several: bool) -> str:
    """``PerLabel`` (one classifier per 0/1 label, sharing the TF-IDF features) with the blank
    lines before it, for several labels; "" for one target."""
    return f"\n\n{PER_LABEL}\n" if several else ""


def render(spec: TextSpec, recipe: TextRecipe) -> str:
    model = MODELS[recipe.family]
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(recipe.params.items()))
    estimator = f"{model.estimator}({params})"
    if recipe.family == "linear_svm" and spec.prediction != "label":
        estimator = f"CalibratedClassifierCV({estimator}, cv=3)"  # probabilities for the metric
    several = bool(spec.targets)  # one classifier per 0/1 label, scored column by column
    if several:
        estimator = f"PerLabel({estimator})"
    classification = spec.problem == "classification"
    folds = folds_source(classification and not several, holds_out(recipe, spec))
    transform = transform_source(spec.transform)
    constants = class_constants(
        spec.prediction, spec.scoring, spec.classes, spec.columns, "train[TARGET]"
    )
    submission = submission_lines(
        spec.layout,
        spec.prediction,
        "predict(model, X_test)",
        submission_source(spec.prediction, "test[ID]", spec.target, "X_test"),
    )
    width = len(spec.text) + 2 + len(spec.targets) + spec.chars // CHARS_PER_VALUE
    sample = row_sample(recipe.sample, spec.rows, width)
    return f"""{recipe_line("text", recipe.fields())}
import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import FeatureUnion, Pipeline
from {model.module} import {model.estimator}
{METRIC_IMPORTS}

{read_lines(spec, sample)}
ID, TARGET, TEXT = {spec.id_col!r}, {target_source(spec.target, spec.targets)}, {list(spec.text)!r}
{constants}


def documents(df: pd.DataFrame) -> pd.Series:
    \"\"\"One document per row: the text columns joined by a space.\"\"\"
    return df[TEXT].fillna("").astype(str).agg(" ".join, axis=1)
{_per_label(several)}

{metric_source(spec.scoring, spec.prediction, spec.classes, several)}


{predict_source(spec.scoring, spec.prediction, spec.transform, columnwise=several)}


features = FeatureUnion([{", ".join(_vectorizers(recipe))}])
model = Pipeline([("features", features), ("model", {estimator})]){transform}

X, y = documents(train), train[TARGET]
{folds}
scores = cross_val_score(model, X, y, cv=folds, scoring=scorer, error_score="raise")
print(f"VALIDATION_METRIC: {{scores.mean():.6f}}")

model.fit(X, y)
X_test = documents(test)
{submission}
submission.to_csv("./submission/submission.csv", index=False)
"""
