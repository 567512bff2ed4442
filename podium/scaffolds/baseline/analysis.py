"""Reads a task's public files, tells which kind of task it is and what a solution needs.

It reads as an engineer would. Tables are any format ``tables`` reads (CSV with any
separator, TSV, JSON records or lines, Parquet, one zipped table), learnt from their first
``ANALYSIS_ROWS`` rows. The sample submission (a table with 'sample' in its name) gives the
submission's columns; the test table is the one holding some of them but not all (one named
test first): the sample's columns it holds are the keys the submission copies (the id, or
several columns, or none: predictions in the test's row order), the others are predicted, in
any position. What is predicted is one target column, or one probability column per class
(then the target is the training column whose values are those column names); a prediction
column no training table has is the target under another name (the one training column the
test lacks whose values are of the sample's kind). Several prediction columns that are all
training columns are several targets: numbers to regress (one model each), independent 0/1
labels (one binary model each, a probability per column) or one-hot classes (one 1 per row:
one class target, derived in the script, whose probabilities fill the columns); numbers and
classes mixed are refused. A sample other than ``id, target`` is kept as a ``Layout`` the
scripts write their submission from. The kind follows from the layout,
checked in this order:

- image: the sample's ids name image files anywhere under the public folder (file name = id,
  with or without its extension; in folders at any depth or in zips), and no test table holds
  ``MAX_IMAGE_METADATA`` columns or more (then the images are extras of a table task). Every
  training id (from the labels table) and every test id (the sample's) must name one file, each
  set in one folder or zip (the same one or not), or the task is refused naming what is missing;
- series: train and test share a date column (and at most one series column, nothing else),
  and every test date is later than every training date — a forecast;
- text: free-text columns make up at least half of the features;
- tabular: anything else with a train and a test table. Column roles come from the data:
  numbers, low-cardinality categories, dates, free text (list or record cells are left out).

What fits none of these raises ``Unsupported`` with one line saying what the baseline needs.
"""

from __future__ import annotations

import os
import re
import zipfile
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import pandas as pd

from podium.scaffolds.baseline import tables
from podium.scaffolds.baseline.metrics import known_prediction, resolve
from podium.scaffolds.baseline.specs import (
    ImageSpec,
    Layout,
    SeriesSpec,
    Spec,
    TableFormat,
    TextSpec,
)
from podium.scaffolds.baseline.specs import TabularSpec as TabularSpec
from podium.scaffolds.baseline.specs import Unsupported as Unsupported
from podium.submission_check import Invalid, find_sample

MAX_CATEGORIES = 30  # more distinct strings than this (and than 1% of rows): text
MAX_CLASSES = 30  # a numeric target with more distinct values than this: regression
TITLE_PATTERN = r",\s*([^.]+)\."  # "Last, Title. First": the honorific of a name
DATE_PATTERN = re.compile(r"^\s*(\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}/\d{1,2}/\d{4})([ T]\d|$)")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
MAX_IMAGE_METADATA = 10  # a test table with this many other columns: a table task, images extra
MAX_IMAGE_SIDE = 32  # larger images are shrunk to this: pixels are features for sklearn models
TEXT_MIN_CHARS, TEXT_MIN_WORDS = 30, 5  # a column this long on average is prose
ANALYSIS_ROWS = 200_000  # the analysis learns a table from its first rows, never a huge file
HORIZON_PATTERN = re.compile(
    r"\b(?:next|following|coming|upcoming)\s+(\d+)\s+(hour|day|week|month|quarter|year|step|period)s?\b",
    re.I,
)  # "the next 30 days": how far ahead a forecast without a test set predicts
UNIT_DAYS = {"hour": 1 / 24, "day": 1.0, "week": 7.0, "month": 30.44, "quarter": 91.3,
             "year": 365.25}  # fmt: skip


def _tables(public: Path) -> dict[Path, TableFormat]:
    return {p: tables.sniff(p) for p in sorted(public.iterdir()) if tables.is_table(p)}


def _pick(candidates: list[Path], hint: str) -> Path:
    named = [p for p in candidates if hint in p.name.lower()]
    return (named or candidates)[0]


def _head(path: Path, fmt: TableFormat) -> pd.DataFrame:
    """The table's first rows (all of a small one): what the analysis learns the data from, so a
    huge file is never read whole here. A fresh copy of one read per file version: one analysis
    asks for a table several times, and a JSON document can only be read whole."""
    info = path.stat()
    return _read_head(path, fmt, info.st_mtime_ns, info.st_size, ANALYSIS_ROWS).copy()


@lru_cache(maxsize=4)
def _read_head(path: Path, fmt: TableFormat, mtime_ns: int, size: int, rows: int) -> pd.DataFrame:
    return tables.read(path, fmt, rows=rows)


def _columns(path: Path, fmt: TableFormat) -> list[str]:
    """The table's column names, from as few rows as its format allows."""
    head = tables.read(path, fmt, rows=5) if fmt.reader in ("csv", "jsonl") else _head(path, fmt)
    return [str(c) for c in head.columns]


def _heads(formats: dict[Path, TableFormat]) -> dict[Path, list[str]]:
    """Each table's columns. A file pandas cannot read is left out when its name says neither
    train nor test (a metadata JSON beside the data), and refused otherwise."""
    heads = {}
    for path, fmt in formats.items():
        try:
            heads[path] = _columns(path, fmt)
        except Unsupported:
            if any(hint in path.name.lower() for hint in ("train", "test")):
                raise
    return heads


def _rows(path: Path, fmt: TableFormat, head: pd.DataFrame) -> int:
    return len(head) if len(head) < ANALYSIS_ROWS else tables.count_rows(path, fmt)


@lru_cache(maxsize=8)
def analyse(public: Path, metric_name: str, description: str = "") -> Spec:
    """The task's spec. ``description`` (the task's; else a description.md among the public
    files) is read only when there is no test set and no sample: for a forecast's horizon."""
    found = _tables(public)
    sample_path = _sample(public, found)
    if sample_path is None:
        return _forecast(public, found, description, metric_name)
    sample = tables.read(sample_path, found[sample_path], rows=50)
    sample_cols = tuple(str(c) for c in sample.columns)
    others = {p: fmt for p, fmt in found.items() if p != sample_path}
    heads = _heads(others)
    others = {p: fmt for p, fmt in others.items() if p in heads}
    files = _image_files(public)
    if _is_image_task(files, heads, sample):
        if len(sample_cols) < 2:
            raise Unsupported("the sample submission needs an id column and a prediction column")
        train_path, target = _train_table(heads, others, sample_cols, metric_name)
        train = _head(train_path, others[train_path])
        onehot = target not in train.columns  # derived from one-hot columns (_train_table)
        if onehot:
            train[target] = train[list(sample_cols[1:])].idxmax(axis=1)
        spec = _image(public, files, train, (train_path, sample_path), found, sample_cols,
                      target, metric_name)  # fmt: skip
        return replace(spec, onehot=onehot)
    _ids_in_a_table(heads, sample)
    test_path = _test_table(heads, sample_cols)
    keys = tuple(c for c in sample_cols if c in heads[test_path])
    outputs = tuple(c for c in sample_cols if c not in heads[test_path])
    candidates = [p for p in heads if p != test_path]
    candidates.sort(key=lambda p: "train" not in p.name.lower())
    train_path, target, columns = _train_target(candidates, heads, others, test_path, outputs,
                                                sample)  # fmt: skip
    train, test = _head(train_path, others[train_path]), _head(test_path, others[test_path])
    boolean = pd.api.types.is_bool_dtype(train[target])
    if boolean:
        train[target] = train[target].astype(int)
    standard = len(keys) == 1 and sample_cols[0] == keys[0] and not boolean
    standard = standard and outputs == (columns or (target,))
    layout = None if standard else Layout(keys, outputs, sample_cols, boolean)
    id_col = keys[0] if len(keys) == 1 else ""
    read = Reading(
        (train_path.name, test_path.name),
        (others[train_path], others[test_path]),
        _rows(train_path, others[train_path], train),
        layout,
        train_path,
    )
    return _table_kind(train, test, read, id_col, outputs, target, columns, metric_name)


def _table_kind(
    train: pd.DataFrame,
    test: pd.DataFrame,
    read: Reading,
    id_col: str,
    outputs: tuple[str, ...],
    target: str,
    columns: tuple[str, ...],
    metric_name: str,
) -> Spec:
    """The spec of a task with a test table, of the kind its data call for (see the module's
    docstring): several targets are regressions on a table, independent 0/1 labels (one model
    each) or one-hot columns of one class target (:func:`_several`)."""
    targets: tuple[str, ...] = ()
    if len(outputs) > 1 and not columns:
        several = _several(train, outputs, metric_name)
        if several == "regression":
            return _regressions(train, test, read, id_col, outputs, metric_name)
        if several == "onehot":
            target, columns = _fresh_name(train.columns), outputs
            train[target] = train[list(outputs)].idxmax(axis=1)
            layout = read.layout or Layout((id_col,), outputs, (id_col, *outputs))
            read = replace(read, layout=replace(layout, onehot=True))
        else:
            targets = outputs
    if not columns and not targets:
        series = _series(train, test, read, id_col, target, metric_name)
        if series is not None:
            return series
    features = [
        c
        for c in train.columns
        if c not in (id_col, target) and c in test.columns and not _is_nested(train[c])
    ]
    prose = [c for c in features if _is_prose(train[c])]
    if prose and 2 * len(prose) >= len(features):
        text = _text(train, read, id_col, target, tuple(prose), columns, metric_name)
        return replace(text, targets=targets)
    return replace(_tabular(train, read, id_col, target, features, columns, metric_name),
                   targets=targets)  # fmt: skip


@dataclass(frozen=True)
class Reading:
    """How a table task's files are read, and the sample's layout, for its spec."""

    names: tuple[str, str]  # train, test
    formats: tuple[TableFormat, TableFormat]
    rows: int  # training rows
    layout: Layout | None
    train_path: Path | None = None  # for what a head cannot tell (every series of a long table)

    def fields(self) -> dict[str, Any]:
        return {
            "train_file": self.names[0],
            "test_file": self.names[1],
            "train_format": self.formats[0],
            "test_format": self.formats[1],
            "layout": self.layout,
        }


def _sample(public: Path, found: dict[Path, TableFormat]) -> Path | None:
    """The sample submission, as the submission check finds it (one owner of its name); None
    when there is none."""
    try:
        sample = find_sample(public)
    except Invalid as exc:
        if not any("sample" in p.name.lower() for p in found):
            return None
        raise Unsupported(f"{exc}: the baseline needs one sample submission") from exc
    if sample not in found:
        raise Unsupported(
            f"the sample submission {sample.name} is not a table beside the training data: the "
            "baseline needs it as a CSV in the data folder"
        )
    return sample


def _missing_sample(found: dict[Path, TableFormat], why: str = "") -> str:
    """What the baseline needs when there is no sample submission (``why``: why the one table
    is no forecast either)."""
    names = ", ".join(p.name for p in found) or "none"
    tests = [p for p in found if "test" in p.name.lower()]
    if not tests:
        return (
            f"no test set and no sample submission (tables: {names}): the baseline needs a test "
            "table (or test images) and a sample submission, or, to forecast one dated table, a "
            "description stating the horizon (e.g. 'the next 30 days')"
            + (f"; {why}" if why else "")
        )
    return (
        f"no sample submission (tables: {names}): the baseline needs a table with 'sample' in "
        "its name giving the submission's columns (the id and what is predicted)"
    )


def _forecast(
    public: Path, found: dict[Path, TableFormat], description: str, metric_name: str
) -> SeriesSpec:
    """One table of dated values, no test set, no sample: a forecast of the column the
    description names (or the one numeric column) over the horizon it states."""
    if len(found) != 1 or any("test" in p.name.lower() for p in found):
        raise Unsupported(_missing_sample(found))
    ((path, fmt),) = found.items()
    if not description and (public / "description.md").is_file():
        description = (public / "description.md").read_text(encoding="utf-8", errors="replace")
    horizon = HORIZON_PATTERN.search(description)
    if horizon is None:
        raise Unsupported(_missing_sample(found, "the description states none"))
    train = _head(path, fmt)
    dates = [str(c) for c in train.columns if _is_date(train[c])]
    if len(dates) != 1 or train[dates[0]].duplicated().any():
        raise Unsupported(_missing_sample(found, f"{path.name} is not one series of dates"))
    date = dates[0]
    target = _forecast_target(train, date, description)
    if target is None:
        why = "the description names no one numeric column to forecast"
        raise Unsupported(_missing_sample(found, why))
    seen = pd.to_datetime(train[date])
    days = float(seen.sort_values().diff().dt.total_seconds().median() / 86_400)
    count, unit = int(horizon.group(1)), horizon.group(2).lower()
    steps = count if unit in ("step", "period") else round(count * UNIT_DAYS[unit] / days)
    scoring, _, _ = resolve(metric_name, "regression")
    return SeriesSpec(
        train_file=path.name,
        test_file="",
        train_format=fmt,
        layout=Layout((date,), (target,), (date, target), future=max(1, steps)),
        id_col="",
        date=date,
        series=None,
        target=target,
        scoring=scoring,
        period=_period(days),
        horizon=max(1, steps),
        length=seen.nunique(),
        n_series=1,
        nonnegative=bool((train[target].dropna() >= 0).all()),
    )


def _forecast_target(train: pd.DataFrame, date: str, description: str) -> str | None:
    """The numeric column the description names (as a word), else the only numeric column."""
    numeric = [str(c) for c in train.columns if c != date and _is_numeric(train[c])]
    named = [c for c in numeric if re.search(rf"\b{re.escape(c)}\b", description, re.I)]
    if len(named) == 1:
        return named[0]
    return numeric[0] if len(numeric) == 1 else None


def _is_numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _ids_in_a_table(heads: dict[Path, list[str]], sample: pd.DataFrame) -> None:
    """Refuses a sample whose first column holds ids (distinct strings) that no table has (and,
    as this runs after the image layouts, that name no image): text-normalization's ``id`` joins
    two test columns, the right-whale challenge's clips are audio files."""
    first = str(sample.columns[0])
    ids = sample[first]
    if any(first in cols for cols in heads.values()) or _is_numeric(ids) or not ids.is_unique:
        return
    raise Unsupported(
        f"the sample submission's ids ({first!r}, e.g. {str(ids.iloc[0])!r}) are in no table and "
        "name no image: the baseline copies the ids it submits from a test table or image files' "
        "names; it does not build them from other columns or read other kinds of file"
    )


def _test_table(heads: dict[Path, list[str]], sample_cols: tuple[str, ...]) -> Path:
    """The table of rows to predict: it has some of the sample's columns (the id, or the columns
    the sample copies) but not all (not what is predicted); one named test first, then the
    narrowest."""
    wanted = set(sample_cols)
    tests = [p for p, cols in heads.items() if wanted & set(cols) and not wanted <= set(cols)]
    if not tests:
        raise Unsupported(
            f"no test table: the baseline needs a table with the sample submission's id column "
            f"({sample_cols[0]!r}) but not its prediction columns, or a test folder of images"
        )
    tests.sort(key=lambda p: ("test" not in p.name.lower(), len(heads[p])))
    return tests[0]


def _train_target(
    candidates: list[Path],
    heads: dict[Path, list[str]],
    formats: dict[Path, TableFormat],
    test_path: Path,
    outputs: tuple[str, ...],
    sample: pd.DataFrame,
) -> tuple[Path, str, tuple[str, ...]]:
    """The training table, its target column and the class columns (when the sample holds one
    probability column per class): the sample's prediction column when a table has it, else
    the table's one column, not in the test table, whose values look like the sample's."""
    if not candidates:
        raise Unsupported("no training table: the baseline needs a table with the target column")
    if len(outputs) == 1:
        having = [p for p in candidates if outputs[0] in heads[p]]
        if having:
            return having[0], outputs[0], ()
        return _renamed(candidates, heads, formats, test_path, outputs[0], sample)
    for path in candidates:
        table = _head(path, formats[path])
        for col in table.columns:
            if _is_nested(table[col]):
                continue
            values = set(table[col].dropna().astype(str).unique())
            if len(values) >= 2 and values <= set(outputs):
                return path, str(col), outputs
    several = [p for p in candidates if set(outputs) <= set(heads[p])]
    if several:
        return several[0], outputs[0], ()  # several targets: each a training column
    raise Unsupported(
        f"the sample submission has {len(outputs)} prediction columns ({', '.join(outputs)}), "
        "and no training column has them as values (one probability column per class) or "
        "names: the baseline needs the target in the training table"
    )


def _several_targets(outputs: tuple[str, ...], where: str = "") -> str:
    shown = ", ".join(outputs[:6]) + (", ..." if len(outputs) > 6 else "")
    return (
        f"the sample submission predicts {len(outputs)} training columns ({shown}){where}: the "
        "baseline fits several targets only when every one is a number to regress or every one "
        "a 0/1 label (one probability column each); it needs that, or one prediction column"
    )


def _several(train: pd.DataFrame, outputs: tuple[str, ...], metric_name: str) -> str:
    """How several targets (each a training column) are fitted: ``regression`` (numbers, one
    regression each), ``onehot`` (0/1 columns with one 1 per row: the classes of one target,
    one multi-class model whose probabilities fill the columns) or ``labels`` (independent 0/1
    labels: one binary model each). Anything else (numbers and classes mixed, classes beyond
    0/1) raises ``Unsupported`` saying what the baseline needs."""
    problems = [_problem(train[t], metric_name) for t in outputs]
    if all(p == "regression" for p in problems):
        return "regression"
    if "regression" in problems:
        numbers = [t for t, p in zip(outputs, problems, strict=True) if p == "regression"]
        classes = [t for t in outputs if t not in numbers]
        where = f", numbers ({', '.join(numbers)}) and classes ({', '.join(classes)}) mixed"
        raise Unsupported(_several_targets(outputs, where))
    values = train[list(outputs)]
    if not all(_is_binary(values[t]) for t in outputs):
        raise Unsupported(_several_targets(outputs, ", classes other than 0/1 labels"))
    return "onehot" if bool((values.astype(int).sum(axis=1) == 1).all()) else "labels"


def _is_binary(values: pd.Series) -> bool:
    """0/1 (or True/False) values: a label column of its own."""
    if not pd.api.types.is_numeric_dtype(values):
        return False
    return bool(values.dropna().isin([0, 1]).all()) and not values.isna().any()


def _fresh_name(columns: pd.Index) -> str:
    """A column name the table does not have: the class target derived from one-hot columns."""
    taken = {str(c) for c in columns}
    return next(n for n in ("class", *(f"class_{i}" for i in range(1, len(taken) + 2)))
                if n not in taken)  # fmt: skip


def _regressions(
    train: pd.DataFrame,
    test: pd.DataFrame,
    read: Reading,
    id_col: str,
    targets: tuple[str, ...],
    metric_name: str,
) -> TabularSpec:
    """Several targets (one sample column each): one regression per target, on the features
    the test table shares."""
    features = [c for c in train.columns if c != id_col and c in test.columns]
    features = [c for c in features if not _is_nested(train[c])]
    spec = _tabular(train, read, id_col, targets[0], features, (), metric_name)
    transform = spec.transform
    if transform != "none":  # a log scale needs every target positive (log1p: non-negative)
        values = train[list(targets)]
        fits = bool((values > 0).all().all()) or (
            transform == "log1p" and bool((values >= 0).all().all())
        )
        transform = transform if fits else "none"
    return replace(spec, targets=targets, transform=transform)


def _renamed(
    candidates: list[Path],
    heads: dict[Path, list[str]],
    formats: dict[Path, TableFormat],
    test_path: Path,
    output: str,
    sample: pd.DataFrame,
) -> tuple[Path, str, tuple[str, ...]]:
    """The target submitted under another name: the one training column not in the test table
    whose values are of the sample's kind (numbers or strings)."""
    numeric = pd.api.types.is_numeric_dtype(sample[output])
    for path in candidates:
        table = _head(path, formats[path])
        extra = [c for c in table.columns if c not in heads[test_path]]
        fitting = [
            str(c)
            for c in extra
            if not _is_nested(table[c]) and pd.api.types.is_numeric_dtype(table[c]) == numeric
        ]
        if len(fitting) == 1:
            return path, fitting[0], ()
        if len(fitting) > 1:
            raise Unsupported(
                f"the sample submission predicts {output!r}, which no table has, and "
                f"{path.name} has {len(fitting)} columns it could be ({', '.join(fitting[:5])}): "
                f"the baseline needs the target named {output!r} in the training table"
            )
    raise Unsupported(
        f"no table has the target column {output!r} (the sample submission's prediction "
        "column), nor one column the test table lacks: the baseline needs the target in the "
        "training table"
    )


def _train_table(
    heads: dict[Path, list[str]],
    formats: dict[Path, TableFormat],
    sample_cols: tuple[str, ...],
    metric_name: str,
) -> tuple[Path, str]:
    """The labels table of an image task and its target: the sample's second column, or (one
    probability column per class) the column whose values are the sample's column names, or
    a new column's name when the table holds the class columns one-hot (the caller derives it)."""
    if len(sample_cols) == 2:
        target = sample_cols[1]
        trains = [p for p, cols in heads.items() if target in cols]
        if not trains:
            raise Unsupported(
                f"no table has the target column {target!r}: the baseline needs a labels table "
                "with the image ids and that column"
            )
        return _pick(trains, "train"), target
    classes = set(sample_cols[1:])
    for path in sorted(heads, key=lambda p: "train" not in p.name.lower()):
        table = _head(path, formats[path])
        for col in table.columns:
            values = set(table[col].dropna().astype(str).unique())
            if len(values) >= 2 and values <= classes:
                return path, str(col)
    for path in sorted(heads, key=lambda p: "train" not in p.name.lower()):
        if classes <= set(heads[path]):
            return path, _onehot_target(_head(path, formats[path]), sample_cols[1:], metric_name)
    raise Unsupported(
        f"the sample submission has {len(sample_cols)} columns, and no training column has "
        "their names as values (one probability column per class)"
    )


def _onehot_target(train: pd.DataFrame, columns: tuple[str, ...], metric_name: str) -> str:
    """The name of the class target of an image task's one-hot label columns; other several
    targets are refused (the baseline classifies each image into one class)."""
    several = _several(train, columns, metric_name)
    if several != "onehot":
        shown = ", ".join(columns[:6]) + (", ..." if len(columns) > 6 else "")
        what = "numbers to regress" if several == "regression" else "independent 0/1 labels"
        raise Unsupported(
            f"the sample submission predicts {len(columns)} labels-table columns ({shown}), "
            f"{what}: the baseline classifies each image into one class; it needs one-hot "
            "columns (one 1 per row) or one prediction column"
        )
    return _fresh_name(train.columns)


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
    read: Reading,
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
        **read.fields(),
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
        rows=read.rows,
        dates=tuple(dates),
        timed=tuple(c for c in dates if _has_time(train[c])),
        columns=columns,
        transform=transform if problem == "regression" else "none",
        classes=int(y.nunique()) if problem == "classification" else 0,
    )


def _document_chars(train: pd.DataFrame, prose: tuple[str, ...]) -> int:
    """Mean characters of a document (the text columns joined): what sizing's cost of TF-IDF
    n-grams grows with."""
    lengths = train[list(prose)].fillna("").astype(str).agg(" ".join, axis=1).str.len()
    return round(float(lengths.mean())) if len(lengths) else 0


def _text(
    train: pd.DataFrame,
    read: Reading,
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
        **read.fields(),
        id_col=id_col,
        target=target,
        problem=problem,
        text=prose,
        scoring=scoring,
        prediction=prediction,
        rows=read.rows,
        classes=int(y.nunique()) if problem == "classification" else 0,
        columns=columns,
        transform=transform if problem == "regression" else "none",
        chars=_document_chars(train, prose),
    )


def _series(
    train: pd.DataFrame,
    test: pd.DataFrame,
    read: Reading,
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
    known, names = _series_values(train, read, date, series)
    if series is not None and not _is_series_key(train, test, (date, series), read.rows, names):
        return None
    seen, asked = pd.to_datetime(known), pd.to_datetime(test[date])
    if asked.min() <= seen.max():
        return None
    steps = sorted(set(seen) | set(asked))
    days = pd.Series(sorted(set(seen))).diff().dt.total_seconds().median() / 86_400
    scoring, _, _ = resolve(metric_name, "regression")
    return SeriesSpec(
        **read.fields(),
        id_col=id_col,
        date=date,
        series=series,
        target=target,
        scoring=scoring,
        period=_period(float(days)),
        horizon=len(steps) - seen.nunique(),
        length=seen.nunique(),
        n_series=len(names) if names is not None else 1,
        nonnegative=bool((train[target].dropna() >= 0).all()),
    )


def _series_values(
    train: pd.DataFrame, read: Reading, date: str, series: str | None
) -> tuple[pd.Series, pd.Series | None]:
    """The distinct dates and series names of the whole training table: from the head when it
    is the whole table, else from one pass over the file's two columns (a long table sorted by
    series holds only its first series in the head)."""
    if read.rows <= len(train) or read.train_path is None:
        names = pd.Series(train[series].unique()) if series else None
        return pd.Series(train[date].unique()), names
    found = tables.distinct(read.train_path, read.formats[0], [date, *([series] if series else [])])
    return found[date], found.get(series) if series else None


def _is_series_key(
    train: pd.DataFrame,
    test: pd.DataFrame,
    keys: tuple[str, str],
    rows: int,
    names: pd.Series | None,
) -> bool:
    """``keys[1]`` names series: few values (``names``, of the whole table's ``rows``), each
    with many dates (one row per date, as far as the head shows), none new in test."""
    date, series = keys
    if names is None:
        return False
    return (
        len(names) * 4 <= rows
        and not train.duplicated([date, series]).any()
        and bool(test[series].isin(names).all())
    )


def _period(days: float) -> int:
    """Steps in one season, from the typical gap between dates (1: no season to use)."""
    for low, high, period in ((0.03, 0.05, 24), (0.9, 1.1, 7), (6.5, 7.5, 52), (27, 32, 12),
                              (88, 93, 4)):  # fmt: skip
        if low <= days <= high:
            return period
    return 1


@dataclass(frozen=True)
class Images:
    """Where a task's images are: the folder or zip archive (images in any folder inside) that
    holds every training image, the one that holds every test image (the same one when they
    share it: plant-pathology's ``images/``), and the suffix the ids need to name the files."""

    train: str  # a folder (e.g. "jpeg/train"; "." the public folder itself) or a .zip, relative
    test: str
    zipped: bool
    suffix: str  # "" when the ids already carry the file extension


Place = tuple[str, bool, str]  # a folder or zip (relative to the public folder), zipped, suffix
ImageFiles = dict[str, list[Place]]  # an id (a file's name, or its name without the suffix) → where


def _image_files(public: Path) -> ImageFiles:
    """Every image file under the public folder, at any depth, in folders and in zips, by the
    ids that name it (``a.jpg`` is named by ``a.jpg`` and by ``a``)."""
    found: ImageFiles = {}

    def add(name: str, place: str, zipped: bool) -> None:
        suffix = Path(name).suffix
        if suffix.lower() in IMAGE_SUFFIXES:
            found.setdefault(name, []).append((place, zipped, ""))
            found.setdefault(name[: -len(suffix)], []).append((place, zipped, suffix))

    for folder, _, names in sorted(os.walk(public)):
        where = Path(folder).relative_to(public).as_posix()
        for name in sorted(names):
            add(name, where, False)
            if name.lower().endswith(".zip"):
                archive = f"{name}" if where == "." else f"{where}/{name}"
                for member in _image_members(public / archive):
                    add(member, archive, True)
    return found


def _image_members(archive: Path) -> list[str]:
    """An archive's image files, by file name (the folders inside do not matter)."""
    try:
        with zipfile.ZipFile(archive) as opened:
            names = opened.namelist()
    except (zipfile.BadZipFile, OSError):
        return []
    return [
        Path(n).name
        for n in names
        if Path(n).suffix.lower() in IMAGE_SUFFIXES and not n.startswith("__MACOSX/")
    ]


def _locate(files: ImageFiles, ids: pd.Series, kind: str, source: str) -> Place:
    """The one folder or zip holding an image file for every id, and the suffix that names them;
    a folder's file before a zip's (an archive extracted beside itself). Raises Unsupported,
    naming what is missing, when an id names no file or several, or the files are scattered
    (``kind``: training | test; ``source``: where the ids come from, for the message)."""
    names = ids.astype(str)
    places: dict[Place, int] = {}
    missing = []
    for name in names:
        found = files.get(name, [])
        found = [p for p in found if not p[1]] or found
        if len(found) > 1:
            shown = ", ".join(f"{p[0]}/{name}{p[2]}" for p in found[:3])
            raise Unsupported(
                f"the {kind} id {name!r} ({source}) names {len(found)} image files ({shown}): the "
                "baseline needs one image file per id"
            )
        if found:
            places[found[0]] = places.get(found[0], 0) + 1
        else:
            missing.append(name)
    if missing:
        raise Unsupported(
            f"{len(missing)} of {len(names)} {kind} ids ({source}) name no image file under the "
            f"data folder (e.g. {', '.join(repr(m) for m in missing[:3])}): the baseline needs "
            "one image file per id, named <id> or <id>.<extension>, in a folder or zip"
        )
    if len(places) > 1:
        most = sorted(places.items(), key=lambda item: -item[1])
        shown = ", ".join(f"{p[0]}/*{p[2]} ({n})" for p, n in most)
        raise Unsupported(
            f"the {kind} images ({source}) lie in {len(places)} places ({shown}): the baseline "
            "needs them in one folder or zip, named alike"
        )
    return next(iter(places))


def _images(
    files: ImageFiles, train: pd.DataFrame, train_name: str, sample: pd.DataFrame
) -> Images:
    """Where the training table's ids and the sample's ids (the test images) are."""
    id_col = str(sample.columns[0])
    train_at = _locate(files, train[id_col], "training", f"{train_name}'s {id_col!r}")
    test_at = _locate(files, sample[id_col], "test", f"the sample submission's {id_col!r}")
    if (train_at[1], train_at[2]) != (test_at[1], test_at[2]):

        def said(place: Place) -> str:
            return f"{place[0]}/*{place[2]}" + (" (zipped)" if place[1] else "")

        raise Unsupported(
            f"the training images are {said(train_at)} and the test images {said(test_at)}: "
            "the baseline needs both named alike and both in folders or both in zips"
        )
    return Images(train_at[0], test_at[0], train_at[1], train_at[2])


def _is_image_task(files: ImageFiles, heads: dict[Path, list[str]], sample: pd.DataFrame) -> bool:
    """Whether the sample's ids name image files, and no table of rows to predict holds as many
    as ``MAX_IMAGE_METADATA`` columns besides the sample's: then the pixels are the data. A
    test table with more columns is a table task whose images are extras (leaf-classification's
    192 shape features, measured on its leaf images)."""
    id_col = str(sample.columns[0])
    if not files or not any(str(i) in files for i in sample[id_col].head(50)):
        return False
    outputs = set(map(str, sample.columns[1:]))
    tests = [cols for cols in heads.values() if id_col in cols and not outputs & set(cols)]
    return all(len(set(cols) - set(map(str, sample.columns))) < MAX_IMAGE_METADATA
               for cols in tests)  # fmt: skip


def _first_image(public: Path, images: Images, first: str) -> Any:
    """The first training image, opened."""
    from PIL import Image

    name = f"{first}{images.suffix}"
    if not images.zipped:
        image = Image.open(public / images.train / name)
        image.load()
        return image
    with zipfile.ZipFile(public / images.train) as archive:
        member = next(n for n in archive.namelist() if Path(n).name == name)
        with archive.open(member) as handle:
            image = Image.open(handle)
            image.load()
    return image


def _image(
    public: Path,
    files: ImageFiles,
    train: pd.DataFrame,
    paths: tuple[Path, Path],
    formats: dict[Path, TableFormat],
    sample_cols: tuple[str, ...],
    target: str,
    metric_name: str,
) -> ImageSpec:
    id_col = sample_cols[0]
    if id_col not in train.columns:
        raise Unsupported(
            f"the labels table {paths[0].name} has no {id_col!r} column (the sample submission's "
            "first column): the baseline needs the training images' ids there"
        )
    columns = sample_cols[1:] if len(sample_cols) > 2 else ()
    if not columns and _problem(train[target], metric_name) == "regression":
        raise Unsupported("the baseline model classifies images; it does not regress on them")
    sample = _head(paths[1], formats[paths[1]])
    images = _images(files, train, paths[0].name, sample)
    with _first_image(public, images, str(train[id_col].iloc[0])) as image:
        mode = "L" if image.mode in ("1", "L", "LA", "I", "I;16", "F") else "RGB"
        width, height = image.size
    shrink = min(1.0, MAX_IMAGE_SIDE / max(width, height))
    scoring, prediction, _ = resolve(metric_name, "classification", bool(columns))
    return ImageSpec(
        train_file=paths[0].name,
        id_col=id_col,
        target=target,
        train_dir=images.train,
        test_dir=images.test,
        suffix=images.suffix,
        mode=mode,
        size=(max(1, round(width * shrink)), max(1, round(height * shrink))),
        source=(width, height),
        scoring=scoring,
        prediction=prediction,
        rows=_rows(paths[0], formats[paths[0]], train),
        classes=int(train[target].nunique()),
        columns=columns,
        sample_file=paths[1].name,
        train_format=formats[paths[0]],
        sample_format=formats[paths[1]],
        zipped=images.zipped,
    )


def _is_nested(values: pd.Series) -> bool:
    """Cells holding lists or records (JSON): no feature the baseline's models read."""
    head = values.dropna().head(50)
    return bool(len(head)) and bool(head.map(lambda v: isinstance(v, list | dict)).any())


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
