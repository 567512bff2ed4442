"""Reads a task's public files, tells which kind of task it is and what a solution needs.

The sample submission names the id column (first) and what is predicted: one target column, or
one probability column per class (then the target is the training column whose values are those
column names). The training file is the table with the target, the test file the one with the
ids but not the target. The kind follows from the layout, checked in this order:

- image: a ``train`` folder of image files named by the training table's ids;
- series: train and test share a date column (and at most one series column, nothing else),
  and every test date is later than every training date — a forecast;
- text: free-text columns make up at least half of the features;
- tabular: anything else with a train and a test table. Column roles come from the data:
  numbers, low-cardinality categories, dates, free text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import cast

import pandas as pd

from podium.scaffolds.baseline.metrics import known_prediction, resolve
from podium.scaffolds.baseline.specs import ImageSpec, SeriesSpec, Spec, TextSpec
from podium.scaffolds.baseline.specs import TabularSpec as TabularSpec

MAX_CATEGORIES = 30  # more distinct strings than this (and than 1% of rows): text
MAX_CLASSES = 30  # a numeric target with more distinct values than this: regression
TITLE_PATTERN = r",\s*([^.]+)\."  # "Last, Title. First": the honorific of a name
DATE_PATTERN = re.compile(r"^\s*(\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}/\d{1,2}/\d{4})([ T]\d|$)")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
MAX_IMAGE_SIDE = 32  # larger images are shrunk to this: pixels are features for sklearn models
TEXT_MIN_CHARS, TEXT_MIN_WORDS = 30, 5  # a column this long on average is prose


class Unsupported(Exception):
    """The task's files fit none of the layouts the baseline knows."""


def _csvs(public: Path) -> list[Path]:
    return sorted(p for p in public.iterdir() if p.suffix.lower() == ".csv" and p.is_file())


def _pick(candidates: list[Path], hint: str) -> Path:
    named = [p for p in candidates if hint in p.name.lower()]
    return (named or candidates)[0]


@lru_cache(maxsize=8)
def analyse(public: Path, metric_name: str) -> Spec:
    files = _csvs(public)
    samples = [p for p in files if "sample" in p.name.lower()]
    if not samples:
        raise Unsupported("no sample submission (a CSV with 'sample' in its name) in the data")
    sample_cols = tuple(str(c) for c in pd.read_csv(samples[0], nrows=5).columns)
    if len(sample_cols) < 2:
        raise Unsupported("the sample submission has fewer than 2 columns")
    heads = {p: [str(c) for c in pd.read_csv(p, nrows=0).columns] for p in files}
    del heads[samples[0]]
    train_path, target = _train_table(heads, sample_cols)
    train = pd.read_csv(train_path)
    columns = sample_cols[1:] if len(sample_cols) > 2 else ()
    train_dir = _image_folder(public, "train")
    if train_dir is not None:
        image_files = (train_path.name, samples[0].name)
        return _image(public, train_dir, train, image_files, sample_cols, target, metric_name)
    id_col = sample_cols[0]
    tests = [p for p, cols in heads.items() if id_col in cols and target not in cols]
    if not tests:
        raise Unsupported(f"no table with the ids {id_col!r} but not the target {target!r}")
    test_path = _pick(tests, "test")
    test = pd.read_csv(test_path)
    names = (train_path.name, test_path.name)
    if not columns:
        series = _series(train, test, names, id_col, target, metric_name)
        if series is not None:
            return series
    features = [c for c in train.columns if c not in (id_col, target) and c in test.columns]
    prose = [c for c in features if _is_prose(train[c])]
    if prose and 2 * len(prose) >= len(features):
        return _text(train, names, id_col, target, tuple(prose), columns, metric_name)
    return _tabular(train, names, id_col, target, features, columns, metric_name)


def _train_table(heads: dict[Path, list[str]], sample_cols: tuple[str, ...]) -> tuple[Path, str]:
    """The training table and its target: the sample's second column, or (one probability
    column per class) the column whose values are the sample's column names."""
    if len(sample_cols) == 2:
        target = sample_cols[1]
        trains = [p for p, cols in heads.items() if target in cols]
        if not trains:
            raise Unsupported(f"no table has the target column {target!r}")
        return _pick(trains, "train"), target
    classes = set(sample_cols[1:])
    for path in sorted(heads, key=lambda p: "train" not in p.name.lower()):
        table = pd.read_csv(path)
        for col in table.columns:
            values = set(table[col].dropna().astype(str).unique())
            if len(values) >= 2 and values <= classes:
                return path, str(col)
    raise Unsupported(
        f"the sample submission has {len(sample_cols)} columns, and no training column has "
        "their names as values (one probability column per class)"
    )


def _problem(y: pd.Series, metric_name: str) -> str:
    """Regression or classification: what the metric scores when it is known (a regression
    metric on a numeric target), else a numeric target with many values is a regression."""
    numeric = pd.api.types.is_numeric_dtype(y)
    scored = known_prediction(metric_name)
    if scored in ("label", "proba"):
        return "classification"
    regression = numeric and (scored == "value" or y.nunique() > MAX_CLASSES)
    return "regression" if regression else "classification"


def _tabular(
    train: pd.DataFrame,
    names: tuple[str, str],
    id_col: str,
    target: str,
    features: list[str],
    columns: tuple[str, ...],
    metric_name: str,
) -> TabularSpec:
    y = train[target]
    problem = "classification" if columns else _problem(y, metric_name)
    numeric, categorical, text, dates = [], [], [], []
    most_categories = max(MAX_CATEGORIES, len(train) // 100)
    for col in features:
        values = train[col]
        if pd.api.types.is_numeric_dtype(values):
            numeric.append(col)
        elif _is_date(values):
            dates.append(col)
        elif values.nunique() <= most_categories:
            categorical.append(col)
        else:
            text.append(col)
    scoring, prediction, transform = resolve(metric_name, problem, bool(columns))
    if transform == "log" and not bool((y > 0).all()):
        transform = "log1p" if bool((y >= 0).all()) else "none"
    return TabularSpec(
        train_file=names[0],
        test_file=names[1],
        id_col=id_col,
        target=target,
        problem=problem,
        numeric=tuple(numeric),
        categorical=tuple(categorical),
        text=tuple(text),
        titled=tuple(c for c in text if _has_titles(train[c])),
        with_missing=tuple(c for c in numeric + categorical + text if train[c].isna().any()),
        small_ints=tuple(c for c in numeric if _is_small_count(train[c])),
        skewed=tuple(c for c in numeric if _is_skewed(train[c])),
        scoring=scoring,
        prediction=prediction,
        rows=len(train),
        dates=tuple(dates),
        timed=tuple(c for c in dates if _has_time(train[c])),
        columns=columns,
        transform=transform if problem == "regression" else "none",
        classes=int(y.nunique()) if problem == "classification" else 0,
    )


def _text(
    train: pd.DataFrame,
    names: tuple[str, str],
    id_col: str,
    target: str,
    prose: tuple[str, ...],
    columns: tuple[str, ...],
    metric_name: str,
) -> TextSpec:
    y = train[target]
    problem = "classification" if columns else _problem(y, metric_name)
    scoring, prediction, transform = resolve(metric_name, problem, bool(columns))
    if transform == "log" and not bool((y > 0).all()):
        transform = "none"
    return TextSpec(
        train_file=names[0],
        test_file=names[1],
        id_col=id_col,
        target=target,
        problem=problem,
        text=prose,
        scoring=scoring,
        prediction=prediction,
        rows=len(train),
        classes=int(y.nunique()) if problem == "classification" else 0,
        columns=columns,
        transform=transform if problem == "regression" else "none",
    )


def _series(
    train: pd.DataFrame,
    test: pd.DataFrame,
    names: tuple[str, str],
    id_col: str,
    target: str,
    metric_name: str,
) -> SeriesSpec | None:
    """A forecast: test = (id, date[, series]) strictly after train = (date[, series], target)."""
    if not pd.api.types.is_numeric_dtype(train[target]):
        return None
    shared = [c for c in test.columns if c != id_col]
    if any(c not in train.columns for c in shared):
        return None
    dates = [c for c in shared if _is_date(train[c]) and _is_date(test[c])]
    if len(dates) != 1 or len(shared) > 2:
        return None
    date = dates[0]
    series = next((c for c in shared if c != date), None)
    if set(train.columns) - {id_col, date, target, series}:
        return None  # other columns are features known in advance: a tabular task
    if series is not None and not _is_series_key(train, test, date, series):
        return None
    seen, asked = pd.to_datetime(train[date]), pd.to_datetime(test[date])
    if asked.min() <= seen.max():
        return None
    steps = sorted(set(seen) | set(asked))
    days = pd.Series(sorted(set(seen))).diff().dt.total_seconds().median() / 86_400
    scoring, _, _ = resolve(metric_name, "regression")
    return SeriesSpec(
        train_file=names[0],
        test_file=names[1],
        id_col=id_col,
        date=date,
        series=series,
        target=target,
        scoring=scoring,
        period=_period(float(days)),
        horizon=len(steps) - seen.nunique(),
        length=seen.nunique(),
        n_series=int(train[series].nunique()) if series else 1,
        nonnegative=bool((train[target].dropna() >= 0).all()),
    )


def _is_series_key(train: pd.DataFrame, test: pd.DataFrame, date: str, series: str) -> bool:
    """Names series: few values, each with many dates (one row per date), none new in test."""
    names = train[series].nunique()
    return (
        names * 4 <= len(train)
        and not train.duplicated([date, series]).any()
        and bool(test[series].isin(train[series]).all())
    )


def _period(days: float) -> int:
    """Steps in one season, from the typical gap between dates (1: no season to use)."""
    for low, high, period in ((0.03, 0.05, 24), (0.9, 1.1, 7), (6.5, 7.5, 52), (27, 32, 12),
                              (88, 93, 4)):  # fmt: skip
        if low <= days <= high:
            return period
    return 1


def _image_folder(public: Path, hint: str) -> Path | None:
    for folder in sorted(p for p in public.iterdir() if p.is_dir() and hint in p.name.lower()):
        first = next((p for p in folder.iterdir() if p.is_file()), None)
        if first is not None and first.suffix.lower() in IMAGE_SUFFIXES:
            return folder
    return None


def _image(
    public: Path,
    train_dir: Path,
    train: pd.DataFrame,
    files: tuple[str, str],
    sample_cols: tuple[str, ...],
    target: str,
    metric_name: str,
) -> ImageSpec:
    from PIL import Image

    id_col = sample_cols[0]
    test_dir = _image_folder(public, "test")
    if id_col not in train.columns or test_dir is None:
        raise Unsupported(f"image folders need {id_col!r} in the training table and a test folder")
    columns = sample_cols[1:] if len(sample_cols) > 2 else ()
    if not columns and _problem(train[target], metric_name) == "regression":
        raise Unsupported("the baseline model classifies images; it does not regress on them")
    first = str(train[id_col].iloc[0])
    suffixes = ("", *IMAGE_SUFFIXES, *(s.upper() for s in IMAGE_SUFFIXES))
    suffix = next((s for s in suffixes if (train_dir / f"{first}{s}").is_file()), None)
    if suffix is None:
        raise Unsupported(f"no image file for the training id {first!r} in {train_dir.name}/")
    with Image.open(train_dir / f"{first}{suffix}") as image:
        mode = "L" if image.mode in ("1", "L", "LA", "I", "I;16", "F") else "RGB"
        width, height = image.size
    shrink = min(1.0, MAX_IMAGE_SIDE / max(width, height))
    scoring, prediction, _ = resolve(metric_name, "classification", bool(columns))
    return ImageSpec(
        train_file=files[0],
        id_col=id_col,
        target=target,
        train_dir=train_dir.name,
        test_dir=test_dir.name,
        suffix=suffix,
        mode=mode,
        size=(max(1, round(width * shrink)), max(1, round(height * shrink))),
        scoring=scoring,
        prediction=prediction,
        rows=len(train),
        classes=int(train[target].nunique()),
        columns=columns,
        sample_file=files[1],
    )


def _is_date(values: pd.Series) -> bool:
    if pd.api.types.is_numeric_dtype(values):
        return False
    head = values.dropna().astype(str).head(200)
    return bool(len(head)) and bool(head.map(lambda v: bool(DATE_PATTERN.match(v))).all())


def _has_time(values: pd.Series) -> bool:
    parsed = pd.to_datetime(values, errors="coerce")
    return bool((parsed.dt.hour.fillna(0) != 0).any())


def _is_prose(values: pd.Series) -> bool:
    if pd.api.types.is_numeric_dtype(values):
        return False
    text = values.dropna().astype(str).head(2000)
    if not len(text):
        return False
    words = text.str.count(r"\S+").mean()
    return bool(text.str.len().mean() >= TEXT_MIN_CHARS and words >= TEXT_MIN_WORDS)


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
