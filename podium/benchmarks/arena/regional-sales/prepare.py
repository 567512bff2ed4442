"""Prepares the arena regional-sales forecasting competition from ``raw/generate.py``.

The generator draws 840 quarterly series (12 regions x 70 categories) over 40 quarters. The
competition holds out the last ``HORIZON`` quarters of every series: the quarters before are
the training history, in long format, and the held-out sales are the answers.

Deterministic (the generator's numpy seed is fixed): two prepares write byte-identical files.
Writes

- ``public/train.csv``: ``date,series,value``, 840 series x 36 quarters (2015Q1 .. 2023Q4);
- ``public/test.csv``: ``id,date,series``, 840 series x 4 quarters (2024Q1 .. 2024Q4);
- ``public/sample_submission.csv``: ``id,value`` with every value 0;
- ``private/test.csv``: ``id,value``, the answers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

HORIZON = 4
N_SERIES = 840


def load_generator(raw: Path) -> ModuleType:
    """``raw/generate.py`` as a module (raw/ is no package, and is masked from solutions)."""
    spec = importlib.util.spec_from_file_location("regional_sales_generate", raw / "generate.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no generator at {raw / 'generate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(raw: Path, public: Path, private: Path) -> None:
    panel = load_generator(Path(raw)).generate()
    if panel["series"].nunique() != N_SERIES:
        raise ValueError(f"expected {N_SERIES} series, found {panel['series'].nunique()}")
    dates = sorted(panel["date"].unique())
    cutoff = dates[-HORIZON]  # the first quarter to forecast
    train = panel[panel["date"] < cutoff].reset_index(drop=True)
    test = panel[panel["date"] >= cutoff].reset_index(drop=True)
    quarter = (test["date"].str.slice(5, 7).astype(int) + 2) // 3
    test.insert(
        0, "id", test["series"] + "_" + test["date"].str.slice(0, 4) + "Q" + quarter.map(str)
    )

    public, private = Path(public), Path(private)
    train[["date", "series", "value"]].to_csv(public / "train.csv", index=False)
    test[["id", "date", "series"]].to_csv(public / "test.csv", index=False)
    test[["id"]].assign(value=0).to_csv(public / "sample_submission.csv", index=False)
    test[["id", "value"]].to_csv(private / "test.csv", index=False)
