"""Format-only submission checks against the sample submission: never a score.

Looks at what any Kaggle submission page checks before scoring: readable CSV, the expected
columns, one row per test id, no missing predictions. It never opens the private answers.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd


@lru_cache(maxsize=16)
def _read_sample(path: Path, mtime_ns: int) -> pd.DataFrame:
    """The sample submission, read once per run (it is checked against every node)."""
    return pd.read_csv(path)


def check_against_sample(submission: Path, sample: Path) -> str | None:
    """``None`` when ``submission`` matches ``sample``'s format, else the first problem found."""
    try:
        sub = pd.read_csv(submission)
    except Exception as exc:
        return f"submission is not a readable CSV ({type(exc).__name__}: {exc})"
    expected = _read_sample(sample, sample.stat().st_mtime_ns)
    missing = [c for c in expected.columns if c not in sub.columns]
    extra = [c for c in sub.columns if c not in expected.columns]
    if missing or extra:
        parts = [
            f"missing columns {missing}" if missing else "",
            f"extra columns {extra}" if extra else "",
        ]
        return "submission has " + " and ".join(p for p in parts if p)
    if len(sub) != len(expected):
        return f"submission has {len(sub)} rows, expected {len(expected)}"
    id_col = expected.columns[0]
    if sub[id_col].duplicated().any():
        return f"submission repeats ids in column {id_col!r}"
    if set(sub[id_col].astype(str)) != set(expected[id_col].astype(str)):
        return f"submission's {id_col!r} values differ from the test set's ids"
    empty = [c for c in expected.columns[1:] if sub[c].isna().any()]
    if empty:
        return f"submission has missing values in {empty}"
    return None
