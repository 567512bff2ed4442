"""Writes a complete solution for an image-classification task from an image recipe.

The script loads every image with Pillow (greyscale or RGB, resized to the spec's size),
flattens it to pixels in [0, 1], fits a scikit-learn pipeline (standardisation and PCA when
the recipe asks, then the model), validates it on the task's metric (5-fold cross-validation
on small sets, one stratified 20% hold-out beyond, to keep a draft fast), prints
``VALIDATION_METRIC: <value>``, refits on every training image and predicts the sample
submission's ids from the test folder. One-hot label columns (one 1 per row) are read as one
class target whose probabilities fill those columns.
"""

from __future__ import annotations

from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.image_recipe import MODELS, ImageRecipe, holds_out
from podium.scaffolds.baseline.layouts import onehot_line
from podium.scaffolds.baseline.metrics import (
    METRIC_IMPORTS,
    class_constants,
    folds_description,
    folds_source,
    metric_source,
    predict_source,
    submission_source,
)
from podium.scaffolds.baseline.recipe_line import recipe_line
from podium.scaffolds.baseline.specs import ImageSpec
from podium.scaffolds.baseline.tables import read_source

LOAD_FOLDER = """def load(folder, ids):
    \"\"\"Every image as one row of pixels in [0, 1].\"\"\"
    rows = []
    for name in ids:
        with Image.open(f"./input/{folder}/{name}{SUFFIX}") as image:
            image.draft(MODE, SIZE)  # a large JPEG decoded at a fraction of its size: fast
            rows.append(np.asarray(image.convert(MODE).resize(SIZE), dtype=np.float32).ravel())
    return np.stack(rows) / 255.0"""
LOAD_ARCHIVE = """def load(archive, ids):
    \"\"\"Every image as one row of pixels in [0, 1], read from the zip (the input is
    read-only: nothing is extracted); the folders inside do not matter, only file names.\"\"\"
    rows = []
    with zipfile.ZipFile(f"./input/{archive}") as opened:
        members = {n.rsplit("/", 1)[-1]: n for n in opened.namelist() if not n.endswith("/")}
        for name in ids:
            with opened.open(members[f"{name}{SUFFIX}"]) as handle, Image.open(handle) as image:
                image.draft(MODE, SIZE)  # a large JPEG decoded at a fraction of its size: fast
                rows.append(np.asarray(image.convert(MODE).resize(SIZE), dtype=np.float32).ravel())
    return np.stack(rows) / 255.0"""


def describe(spec: ImageSpec, recipe: ImageRecipe) -> str:
    """The plan's sentence: what the generated solution does."""
    params = ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items()) if k != "random_state")
    width, height = spec.size
    pixels = f"{width}x{height} {'greyscale' if spec.mode == 'L' else 'RGB'} pixels"
    handling = ", standardised" if recipe.standardize else ""
    handling += f", reduced to {recipe.pca} principal components" if recipe.pca else ""
    validation = folds_description(holds_out(recipe, spec))
    sizing = f"; fitted on {recipe.sample} sampled training images" if recipe.sample else ""
    return (
        f"{recipe.family.replace('_', ' ')} ({params}) classifying {spec.target} from "
        f"{pixels}{handling}{sizing}; validated with {validation} on {spec.scoring}."
    )


def render(spec: ImageSpec, recipe: ImageRecipe) -> str:
    model = MODELS[recipe.family]
    steps = []
    if recipe.standardize:
        steps.append('("scale", StandardScaler())')
    if recipe.pca:
        steps.append(
            f'("pca", PCA(n_components=max(1, min({recipe.pca}, X.shape[1], len(X) * 4 // 5 - 1)),'
            " random_state=0))"
        )
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(recipe.params.items()))
    steps.append(f'("model", {model.estimator}({params}))')
    folds = folds_source(True, holds_out(recipe, spec))
    constants = class_constants(
        spec.prediction, spec.scoring, spec.classes, spec.columns, "train[TARGET]"
    )
    submission = submission_source(spec.prediction, "sample[ID]", spec.target, "X_test")
    train_read = read_source(spec.train_file, spec.train_format)
    if spec.onehot:
        train_read += "\n" + onehot_line(spec.target, spec.columns)
    sample_read = read_source(spec.sample_file, spec.sample_format)
    imports = "import warnings\n" + ("import zipfile\n" if spec.zipped else "")
    sample = f"\n{budget.sample_line(recipe.sample)}" if recipe.sample else ""
    return f"""{recipe_line("image", recipe.fields())}
{imports}
import numpy as np
import pandas as pd
from PIL import Image
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from {model.module} import {model.estimator}
{METRIC_IMPORTS}

warnings.filterwarnings("ignore", category=ConvergenceWarning)  # a capped number of passes
train = {train_read}{sample}
sample = {sample_read}  # its ids are the test images
ID, TARGET = {spec.id_col!r}, {spec.target!r}
SIZE, MODE, SUFFIX = {spec.size!r}, {spec.mode!r}, {spec.suffix!r}
{constants}


{LOAD_ARCHIVE if spec.zipped else LOAD_FOLDER}


{metric_source(spec.scoring, spec.prediction, spec.classes)}


{predict_source(spec.scoring, spec.prediction, "none")}


X, y = load({spec.train_dir!r}, train[ID]), train[TARGET].to_numpy()
X_test = load({spec.test_dir!r}, sample[ID])
model = Pipeline([{", ".join(steps)}])
{folds}
scores = cross_val_score(model, X, y, cv=folds, scoring=scorer, error_score="raise")
print(f"VALIDATION_METRIC: {{scores.mean():.6f}}")

model.fit(X, y)
{submission}
submission.to_csv("./submission/submission.csv", index=False)
"""
