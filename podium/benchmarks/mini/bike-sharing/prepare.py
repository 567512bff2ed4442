"""Prepares the mini Bike Sharing Demand competition from the vendored ``raw/Bikeshare.csv``.

Deterministic: the same raw file always gives byte-identical outputs. Writes

- ``public/train.csv``: the hours of days 1-19 of every month, with ``count``;
- ``public/test.csv``: the hours of days 20 to the month's end, without ``count``;
- ``public/sample_submission.csv``: ``id,count`` with every ``count`` 0;
- ``private/test.csv``: ``id,count``, the answers.

The split is Kaggle's Bike Sharing Demand split. The raw file has no calendar date, only the
day of the year 2011 (``day``, 1-365), so the date is rebuilt from it and checked against the
month and weekday columns. ``casual`` and ``registered`` are dropped: they add up to the target
exactly, so keeping them in ``train.csv`` would invite a model that cannot be used on ``test.csv``
and keeping them in ``test.csv`` would give the answer away.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

YEAR = 2011
N_ROWS = 8645
FIRST_TEST_DAY = 20  # of each month, as in Kaggle's Bike Sharing Demand
MONTHS = ["Jan", "Feb", "March", "April", "May", "June"]
MONTHS += ["July", "Aug", "Sept", "Oct", "Nov", "Dec"]  # the raw file's month names, in order
RAW_COLUMNS = [
    *["season", "mnth", "day", "hr", "holiday", "weekday", "workingday", "weathersit"],
    *["temp", "atemp", "hum", "windspeed", "casual", "registered", "bikers"],
]
# The parts of the target (casual + registered = bikers): a leak, dropped.
DROPPED = ["casual", "registered"]
FEATURES = [
    *["date", "season", "mnth", "day", "hr", "holiday", "weekday", "workingday"],
    *["weathersit", "temp", "atemp", "hum", "windspeed"],
]


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = pd.read_csv(Path(raw) / "Bikeshare.csv", dtype={"mnth": str, "weathersit": str})
    if list(frame.columns) != RAW_COLUMNS:
        raise ValueError(f"expected the columns {RAW_COLUMNS}, found {list(frame.columns)}")
    if len(frame) != N_ROWS:
        raise ValueError(f"expected {N_ROWS} hours, found {len(frame)}")
    if not (frame["casual"] + frame["registered"] == frame["bikers"]).all():
        raise ValueError("casual + registered should equal bikers in every row")

    date = pd.Timestamp(f"{YEAR}-01-01") + pd.to_timedelta(frame["day"] - 1, unit="D")
    if not (date.dt.year == YEAR).all():
        raise ValueError(f"day must be a day of {YEAR} (1-365)")
    if not (date.dt.month.map(lambda m: MONTHS[m - 1]) == frame["mnth"]).all():
        raise ValueError("the month rebuilt from day disagrees with mnth")
    if not (((date.dt.day_of_week + 1) % 7) == frame["weekday"]).all():  # raw: Sunday = 0
        raise ValueError("the weekday rebuilt from day disagrees with weekday")
    hours = pd.DataFrame({"date": date, "hr": frame["hr"]})
    if hours.duplicated().any() or not hours.equals(hours.sort_values(["date", "hr"])):
        raise ValueError("expected each hour once, in time order")

    frame = frame.drop(columns=DROPPED).rename(columns={"bikers": "count"})
    frame["date"] = date.dt.strftime("%Y-%m-%d")
    frame.insert(0, "id", np.arange(1, len(frame) + 1))  # in time order, like Kaggle's datetime
    frame = frame[["id", *FEATURES, "count"]]

    in_test = (date.dt.day >= FIRST_TEST_DAY).to_numpy()
    train = frame[~in_test]
    test = frame[in_test]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=["count"]).to_csv(public / "test.csv", index=False)
    test[["id"]].assign(count=0).to_csv(public / "sample_submission.csv", index=False)
    test[["id", "count"]].to_csv(private / "test.csv", index=False)
