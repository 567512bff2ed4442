"""Builds a bundled task's ``leaderboard.csv`` from reference solutions.

A build tool of the repository, not part of Podium's package: the leaderboards it writes are
committed with the task folders (``podium/benchmarks/mini/<task>/``), and Podium only reads
them. Run one with ``.venv/bin/python -m tools.leaderboards.<task>`` from the repository root.

The mini tasks' leaderboards are made, not collected: each task's script here names
reference solutions that span the field (constants, rules, weak and strong models) and calls
:func:`main`. A solution gets the prepared ``public`` folder and returns its submission frame;
it never sees the private answers. Each is scored with the task's own ``grade.py``, rounded as
MLE-bench rounds, and the rows are written best first (ties by team name) as
``rank,teamName,score``. Everything the solutions do is seeded, so a rebuild writes the same file.

A leaderboard whose gold and bronze thresholds coincide cannot tell a strong solution from a weak
one; :func:`build` refuses to write it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from podium.benchmarks.grading import medal_thresholds
from podium.benchmarks.task_code import load_task_function
from podium.secret_paths import bundled_tasks

# A reference solution: the prepared public folder in, the submission frame out.
Solution = Callable[[Path], pd.DataFrame]


def task_folder(name: str, suite: str = "mini") -> Path:
    """The bundled task's folder, where its ``leaderboard.csv`` is written."""
    return bundled_tasks(suite) / name


@dataclass(frozen=True)
class Prepared:
    """A task's data prepared into a temporary folder, with its grader loaded."""

    folder: Path
    public: Path
    private: Path
    grade_fn: Callable[[pd.DataFrame, pd.DataFrame], Any]
    answers: pd.DataFrame

    def score(self, solution: Solution) -> float:
        """The solution's score as MLE-bench records it: ``round(grade(...), 5)``."""
        return round(float(self.grade_fn(solution(self.public), self.answers)), 5)


def prepare_into(folder: Path, root: Path) -> Prepared:
    """Run ``folder``'s preparer into ``root`` (from ``folder/raw``) and load its grader."""
    config = _config(folder)
    public, private = root / "public", root / "private"
    public.mkdir(parents=True)
    private.mkdir()
    preparer = str(config.get("preparer") or "prepare:prepare")
    prepare = load_task_function(folder, preparer, "preparer", "(raw, public, private)")
    prepare(folder / "raw", public, private)
    return prepared_data(folder, public, private)


def prepared_data(folder: Path, public: Path, private: Path) -> Prepared:
    """Already prepared data (a loaded task's folders, say) with ``folder``'s grader."""
    config = _config(folder)
    grade_fn = load_task_function(folder, str(config["grader"]["grade_fn"]), "grade_fn", "")
    answers = pd.read_csv(private / Path(config["dataset"]["answers"]).name)
    return Prepared(folder, public, private, grade_fn, answers)


def _config(folder: Path) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    return config


def build(
    prepared: Prepared, entries: Mapping[str, Solution], lower_is_better: bool
) -> pd.DataFrame:
    """Score every entry and rank them; raises ValueError for a collapsed leaderboard."""
    rows = [{"teamName": name, "score": prepared.score(solve)} for name, solve in entries.items()]
    board = pd.DataFrame(rows).sort_values(
        ["score", "teamName"], ascending=[lower_is_better, True], kind="mergesort"
    )
    board.insert(0, "rank", np.arange(1, len(board) + 1))
    board = board.reset_index(drop=True)
    thresholds = medal_thresholds(board["score"].tolist())
    if thresholds.gold == thresholds.bronze:
        raise ValueError(
            f"gold and bronze thresholds are both {thresholds.gold}: add entries between them"
        )
    return board


def describe(board: pd.DataFrame) -> str:
    """One paragraph for the task's NOTES.md: the entries, the score range and the medals."""
    t = medal_thresholds(board["score"].tolist())
    return (
        f"{len(board)} entries, {board['score'].nunique()} distinct scores, from "
        f"{board['score'].iloc[-1]} (last) to {board['score'].iloc[0]} (first); thresholds: "
        f"gold {t.gold}, silver {t.silver}, bronze {t.bronze}, median {t.median}"
    )


def main(
    folder: Path,
    entries: Callable[[], Mapping[str, Solution]],
    lower_is_better: bool,
    threads: int | None = None,
) -> int:
    """What a task's script runs: prepare, score, write, report.

    ``threads`` caps the native thread pools (OpenMP, BLAS). One thread makes histogram
    boosting's sums independent of the machine's core count, and on a busy small machine the
    pools' spinning threads can make a build several times slower.
    """
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    started = time.monotonic()
    with (
        threadpool_limits(limits=threads),
        tempfile.TemporaryDirectory(prefix=f"{folder.name}-leaderboard-") as tmp,
    ):
        board = build(prepare_into(folder, Path(tmp)), entries(), lower_is_better)
    out = folder / "leaderboard.csv"
    board.to_csv(out, index=False)
    print(f"wrote {out} in {time.monotonic() - started:.1f}s: {describe(board)}")
    return 0
