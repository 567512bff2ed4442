"""Reads a tabular task's public files and works out what a solution needs to know.

The sample submission names the id column (first) and the target (second); the training file is
the table that has the target, the test file the one that has the ids but not the target. Column
roles come from the data: numbers, low-cardinality categories, free text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

import pandas as pd

MAX_CATEGORIES = 30  # more distinct strings than this: treated as text, not a category
MAX_CLASSES = 30  # a numeric target with more distinct values than this: regression
TITLE_PATTERN = r",\s*([^.]+)\."  # "Last, Title. First": the honorific of a name

# Task metric name → (sklearn scoring, prediction kind). Kinds: label, proba, value.
METRICS: dict[str, tuple[str, str]] = {
    "accuracy": ("accuracy", "label"),
    "f1": ("f1", "label"),
    "auc": ("roc_auc", "proba"),
    "roc_auc": ("roc_auc", "proba"),
    "log_loss": ("neg_log_loss", "proba"),
    "logloss": ("neg_log_loss", "proba"),
    "rmse": ("neg_root_mean_squared_error", "value"),
    "mse": ("neg_mean_squared_error", "value"),
    "mae": ("neg_mean_absolute_error", "value"),
    "r2": ("r2", "value"),
}


class NotTabular(Exception):
    """The task's files do not look like one train table, one test table and a sample."""


@dataclass(frozen=True)
class TabularSpec:
    train_file: str
    test_file: str
    id_col: str
    target: str
    problem: str  # "classification" | "regression"
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    text: tuple[str, ...]
    titled: tuple[str, ...]  # text columns holding names with an honorific ("Smith, Mr. John")
    with_missing: tuple[str, ...]  # feature columns with missing values in train
    small_ints: tuple[str, ...]  # non-negative integer columns with few values (counts)
    skewed: tuple[str, ...]  # positive numeric columns with a long right tail
    scoring: str
    prediction: str
    rows: int

    @property
    def features(self) -> tuple[str, ...]:
        return self.numeric + self.categorical + self.text


def _csvs(public: Path) -> list[Path]:
    return sorted(p for p in public.iterdir() if p.suffix.lower() == ".csv" and p.is_file())


def _pick(candidates: list[Path], hint: str) -> Path:
    named = [p for p in candidates if hint in p.name.lower()]
    return (named or candidates)[0]


def _scoring(metric_name: str, problem: str) -> tuple[str, str]:
    key = metric_name.lower().replace(" ", "_").replace("-", "_")
    if key in METRICS:
        return METRICS[key]
    return ("accuracy", "label") if problem == "classification" else METRICS["rmse"]


@lru_cache(maxsize=8)
def analyse(public: Path, metric_name: str) -> TabularSpec:
    files = _csvs(public)
    samples = [p for p in files if "sample" in p.name.lower()]
    if not samples:
        raise NotTabular("no sample submission (a CSV with 'sample' in its name) in the data")
    sample_cols = list(pd.read_csv(samples[0], nrows=5).columns)
    if len(sample_cols) != 2:
        raise NotTabular(f"the sample submission has {len(sample_cols)} columns; baseline needs 2")
    id_col, target = sample_cols
    heads = {p: list(pd.read_csv(p, nrows=0).columns) for p in files if p not in samples}
    trains = [p for p, cols in heads.items() if target in cols]
    tests = [p for p, cols in heads.items() if id_col in cols and target not in cols]
    if not trains or not tests:
        raise NotTabular(f"no table with the target {target!r} and one with ids but no target")
    train_path, test_path = _pick(trains, "train"), _pick(tests, "test")
    train = pd.read_csv(train_path)
    test_cols = set(heads[test_path])
    y = train[target]
    regression = pd.api.types.is_numeric_dtype(y) and y.nunique() > MAX_CLASSES
    problem = "regression" if regression else "classification"
    numeric, categorical, text = [], [], []
    for col in train.columns:
        if col in (id_col, target) or col not in test_cols:
            continue
        values = train[col]
        if pd.api.types.is_numeric_dtype(values):
            numeric.append(col)
        elif values.nunique() <= MAX_CATEGORIES:
            categorical.append(col)
        else:
            text.append(col)
    features = numeric + categorical + text
    scoring, prediction = _scoring(metric_name, problem)
    return TabularSpec(
        train_file=train_path.name,
        test_file=test_path.name,
        id_col=id_col,
        target=target,
        problem=problem,
        numeric=tuple(numeric),
        categorical=tuple(categorical),
        text=tuple(text),
        titled=tuple(c for c in text if _has_titles(train[c])),
        with_missing=tuple(c for c in features if train[c].isna().any()),
        small_ints=tuple(c for c in numeric if _is_small_count(train[c])),
        skewed=tuple(c for c in numeric if _is_skewed(train[c])),
        scoring=scoring,
        prediction=prediction,
        rows=len(train),
    )


def _has_titles(values: pd.Series) -> bool:
    found = values.astype(str).str.extract(TITLE_PATTERN, expand=False)
    return bool(found.notna().mean() > 0.5)


def _is_small_count(values: pd.Series) -> bool:
    """Looks like a count (0, 1, 2, ...): such columns are worth summing (e.g. family size)."""
    v = values.dropna()
    return bool(len(v)) and bool((v == v.round()).all()) and v.min() == 0 and v.max() <= 20


def _is_skewed(values: pd.Series) -> bool:
    v = values.dropna()
    return bool(len(v) > 10) and v.min() >= 0 and v.nunique() > 20 and cast(float, v.skew()) > 2
