"""Prepares the mini US-employment forecasting competition from ``raw/us-employment.csv``.

The raw file is one row per month (January 2006 to December 2015) and one column per BLS
supersector. The competition holds out the last 12 months (2015) of every series: the months
before are the training history, in long format, and the 2015 values are the answers.

Deterministic (no randomness at all): the same raw file always gives byte-identical outputs.
Writes

- ``public/train.csv``: ``date,series,value`` for 2006-01 .. 2014-12 (22 series x 108 months);
- ``public/test.csv``: ``id,date,series`` for 2015-01 .. 2015-12 (22 series x 12 months);
- ``public/sample_submission.csv``: ``id,value`` with every value 0;
- ``private/test.csv``: ``id,value``, the answers.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

RAW_FILE = "us-employment.csv"
N_MONTHS = 120
HORIZON = 12
N_SERIES = 22
# A month-on-month difference of ``nonfarm``, not a series of its own: it is derived from
# another column and crosses zero, where sMAPE is undefined or explodes.
DROPPED = ["nonfarm_change"]


def row_id(series: pd.Series, dates: pd.Series) -> pd.Series:
    """``<series>_<YYYY-MM>``: readable, and unique because each series has one value a month."""
    return series + "_" + dates.str.slice(0, 7)


def prepare(raw: Path, public: Path, private: Path) -> None:
    wide = pd.read_csv(Path(raw) / RAW_FILE, dtype={"month": str})
    if len(wide) != N_MONTHS or not wide["month"].is_monotonic_increasing:
        raise ValueError(f"expected {N_MONTHS} months in order, found {len(wide)} rows")
    wide = wide.drop(columns=DROPPED).rename(columns={"month": "date"})
    series_names = [c for c in wide.columns if c != "date"]
    if len(series_names) != N_SERIES:
        raise ValueError(f"expected {N_SERIES} series, found {len(series_names)}")

    # Long format, series in the raw file's column order, months in order within each series.
    long = wide.melt(id_vars="date", var_name="series", value_name="value")
    long["value"] = long["value"].astype("float64")
    cutoff = wide["date"].iloc[N_MONTHS - HORIZON]  # first forecast month, 2015-01-01
    train = long[long["date"] < cutoff].reset_index(drop=True)
    test = long[long["date"] >= cutoff].reset_index(drop=True)
    test.insert(0, "id", row_id(test["series"], test["date"]))

    public, private = Path(public), Path(private)
    train[["date", "series", "value"]].to_csv(public / "train.csv", index=False)
    test[["id", "date", "series"]].to_csv(public / "test.csv", index=False)
    test[["id"]].assign(value=0).to_csv(public / "sample_submission.csv", index=False)
    test[["id", "value"]].to_csv(private / "test.csv", index=False)
