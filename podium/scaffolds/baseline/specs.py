"""What a baseline solution needs to know about a task, one record per kind of task.

``analysis.analyse`` reads the public files and returns one of these; the recipe and codegen
modules of that kind use nothing else. Every spec carries the metric as the generated code
computes it (``scoring``: a key of ``metrics.METRICS``), the kind of predictions the submission
holds (``prediction``: label | proba | classes | value) and its ``kind``. The table kinds also
carry how each file is read (``TableFormat``; ``tables`` writes the reading code) and, when the
sample is not ``id, target``, where the submission's columns come from (``Layout``, written by
``layouts``). ``Unsupported`` is what the analysis raises for a task beyond the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Unsupported(Exception):
    """The task's files fit none of the layouts the baseline knows; the message is the one line
    a user sees, saying what the baseline would need."""


@dataclass(frozen=True)
class TableFormat:
    """How a table is read (``tables`` reads and writes the reading code): ``reader`` is
    csv | json | jsonl | parquet; ``sep`` a CSV's separator."""

    reader: str = "csv"
    sep: str = ","


@dataclass(frozen=True)
class Layout:
    """Where the submission's columns come from, when the sample is not ``id, prediction(s)``
    with the training target's name: ``keys`` are the test columns the submission copies (none:
    predictions in the test's row order), ``outputs`` the sample's prediction columns (one per
    target, or one probability column per class), ``columns`` the sample's column order, and
    ``boolean`` a True/False target the model fits (and submits) as 0/1. ``future`` > 0: there
    is no test table; the script forecasts that many steps after the last training date (the
    one key) and submits ``date, target``. ``onehot``: the outputs are training columns of 0/1
    with one 1 per row, one class each; the script derives the target (the class whose column
    holds the 1) and submits one probability column per class."""

    keys: tuple[str, ...]
    outputs: tuple[str, ...]
    columns: tuple[str, ...]
    boolean: bool = False
    future: int = 0
    onehot: bool = False


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
    dates: tuple[str, ...] = ()  # date-like string columns: year, month, day... features
    timed: tuple[str, ...] = ()  # those of ``dates`` whose time of day varies: an hour feature
    columns: tuple[str, ...] = ()  # the sample's prediction columns when one per class
    transform: str = "none"  # regression target the model fits: none | log | log1p
    classes: int = 0  # distinct target values (classification)
    targets: tuple[str, ...] = ()  # several targets (``target`` the first): one model each
    train_format: TableFormat = field(default_factory=TableFormat)
    test_format: TableFormat = field(default_factory=TableFormat)
    layout: Layout | None = None  # None: the sample is ``id, target`` (or class columns)
    kind: str = "tabular"

    @property
    def features(self) -> tuple[str, ...]:
        return self.numeric + self.categorical + self.text


@dataclass(frozen=True)
class ImageSpec:
    train_file: str  # the table of training ids and labels
    id_col: str
    target: str
    train_dir: str  # a folder or zip under ./input (jpeg/train) of files named <id><suffix>
    test_dir: str  # the same as train_dir when both sets share one folder
    suffix: str  # "" when the ids already carry the file extension
    mode: str  # "L" (greyscale) or "RGB"
    size: tuple[int, int]  # (width, height) every image is resized to
    scoring: str
    prediction: str
    rows: int
    classes: int
    columns: tuple[str, ...] = ()
    sample_file: str = "sample_submission.csv"  # the test ids are the sample's
    train_format: TableFormat = field(default_factory=TableFormat)
    sample_format: TableFormat = field(default_factory=TableFormat)
    zipped: bool = False  # train_dir and test_dir are zip archives (images in any folder)
    onehot: bool = False  # ``columns`` are one-hot training columns; ``target`` is derived
    source: tuple[int, int] = (0, 0)  # (width, height) of the first image as stored (0: unknown)
    kind: str = "image"

    @property
    def pixels(self) -> int:
        return self.size[0] * self.size[1] * (1 if self.mode == "L" else 3)


@dataclass(frozen=True)
class TextSpec:
    train_file: str
    test_file: str
    id_col: str
    target: str
    problem: str
    text: tuple[str, ...]  # free-text columns, joined with a space into one document
    scoring: str
    prediction: str
    rows: int
    classes: int = 0
    columns: tuple[str, ...] = ()
    transform: str = "none"
    train_format: TableFormat = field(default_factory=TableFormat)
    test_format: TableFormat = field(default_factory=TableFormat)
    layout: Layout | None = None  # None: the sample is ``id, target`` (or class columns)
    targets: tuple[str, ...] = ()  # several 0/1 labels (``target`` the first): one model each
    chars: int = 0  # characters per document, the mean over the analysed rows (0: unknown)
    kind: str = "text"


@dataclass(frozen=True)
class SeriesSpec:
    train_file: str
    test_file: str
    id_col: str
    date: str
    series: str | None  # None: a single series
    target: str
    scoring: str
    period: int  # steps in one season (12 for monthly data, 7 for daily, 1: no season)
    horizon: int  # steps to forecast after the last training date
    length: int  # training steps per series
    n_series: int
    nonnegative: bool  # every training value is >= 0: forecasts are clipped at 0
    prediction: str = "value"
    train_format: TableFormat = field(default_factory=TableFormat)
    test_format: TableFormat = field(default_factory=TableFormat)
    layout: Layout | None = None  # None: the sample is ``id, target`` (or class columns)
    kind: str = "series"


Spec = TabularSpec | ImageSpec | TextSpec | SeriesSpec
