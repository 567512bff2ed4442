"""What a baseline solution needs to know about a task, one record per kind of task.

``analysis.analyse`` reads the public files and returns one of these; the recipe and codegen
modules of that kind use nothing else. Every spec carries the metric as the generated code
computes it (``scoring``: a key of ``metrics.METRICS``), the kind of predictions the submission
holds (``prediction``: label | proba | classes | value) and its ``kind``.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    kind: str = "tabular"

    @property
    def features(self) -> tuple[str, ...]:
        return self.numeric + self.categorical + self.text


@dataclass(frozen=True)
class ImageSpec:
    train_file: str  # the table of training ids and labels
    id_col: str
    target: str
    train_dir: str  # folders of image files named <id><suffix>
    test_dir: str
    suffix: str  # "" when the ids already carry the file extension
    mode: str  # "L" (greyscale) or "RGB"
    size: tuple[int, int]  # (width, height) every image is resized to
    scoring: str
    prediction: str
    rows: int
    classes: int
    columns: tuple[str, ...] = ()
    sample_file: str = "sample_submission.csv"  # the test ids are the sample's
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
    kind: str = "series"


Spec = TabularSpec | ImageSpec | TextSpec | SeriesSpec
