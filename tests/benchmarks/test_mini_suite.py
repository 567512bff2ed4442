"""What every task of the bundled ``mini`` suite promises: recorded, licensed offline data, a
leaderboard that separates weak from strong, public files without answers, and a sample
submission that passes the format check and grades. Task-specific graders: tests/benchmarks/mini/.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from podium.benchmarks import load_folder_task
from podium.benchmarks.folder import FolderTask
from podium.benchmarks.grading import medal_thresholds, read_leaderboard
from podium.submission_check import check
from tests.support import MINI

TASKS = sorted(p.name for p in MINI.iterdir() if (p / "config.yaml").is_file())
MAX_FILE_BYTES = 2 * 1024 * 1024
TASK_TYPES = {
    "tabular-classification", "tabular-regression", "image-classification",
    "text-classification", "time-series-forecasting",
}  # fmt: skip


@pytest.fixture(scope="module", params=TASKS)
def task(request: pytest.FixtureRequest, data_dir: Path) -> FolderTask:
    return load_folder_task(MINI / request.param, data_dir, task_id=f"mini/{request.param}")


def test_the_suite_holds_eight_kinds_of_competition() -> None:
    assert TASKS == [
        "adult", "ames-house-prices", "bike-sharing", "mnist-5k", "rotten-tomatoes",
        "seattle-weather", "titanic", "us-employment",
    ]  # fmt: skip
    types = {yaml.safe_load((MINI / t / "config.yaml").read_text())["task_type"] for t in TASKS}
    assert types == TASK_TYPES


@pytest.mark.parametrize("name", TASKS)
def test_vendored_data_is_recorded_and_licensed(name: str) -> None:
    raw = MINI / name / "raw"
    source = (raw / "SOURCE.md").read_text(encoding="utf-8")
    data = [p for p in raw.iterdir() if not p.name.startswith(("SOURCE", "LICENSE", "convert"))]
    assert data, f"{name} vendors no data file"
    for path in data:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest in source, f"{path.name}'s sha256 is not recorded in SOURCE.md"
    assert re.search(r"licen[cs]e", source, re.IGNORECASE)
    assert re.search(r"\b\d+\.\d+(\.\d+)?\b", source), "SOURCE.md names no package version"
    assert list(raw.glob("LICENSE*")), f"{name} ships no licence text"
    for path in (MINI / name).rglob("*"):
        assert not path.is_file() or path.stat().st_size < MAX_FILE_BYTES, path


@pytest.mark.parametrize("name", TASKS)
def test_the_leaderboard_separates_weak_from_strong(name: str) -> None:
    board = pd.read_csv(MINI / name / "leaderboard.csv")
    scores = read_leaderboard(MINI / name / "leaderboard.csv")
    assert list(board.columns) == ["rank", "teamName", "score"]
    assert 100 <= len(board) < 250 and board["teamName"].is_unique
    assert list(board["rank"]) == list(range(1, len(board) + 1))
    lower = scores[0] < scores[-1]
    assert (
        board["score"].is_monotonic_increasing if lower else board["score"].is_monotonic_decreasing
    )
    t = medal_thresholds(scores)
    assert t.gold != t.silver != t.bronze != t.median  # no collapsed medal
    assert board["score"].nunique() >= 30


def test_public_files_hold_no_answers_and_the_sample_is_valid(task: FolderTask) -> None:
    answers = pd.read_csv(task.answers)
    id_col, *targets = list(answers.columns)
    for csv in task.public_dir.rglob("*.csv"):
        frame = pd.read_csv(csv, nrows=5)
        if "test" in csv.name:
            assert not set(targets) & set(frame.columns), f"{csv.name} holds the answers"
    assert check(task.sample_submission, task.sample_submission) is None
    sample = pd.read_csv(task.sample_submission)
    assert sorted(sample[sample.columns[0]].astype(str)) == sorted(answers[id_col].astype(str))
    report = task.grade(task.sample_submission)
    assert report.valid_submission and report.score is not None and math.isfinite(report.score)
    assert not report.any_medal  # the placeholder must not medal
