"""What every task of the bundled ``mini`` suite promises: recorded, licensed offline data, a
leaderboard that separates weak from strong and that its script reproduces, deterministic
preparation, public files without answers, a sample submission that passes the format check and
grades, and a reason for every kind of invalid submission. Each task's own test module
(tests/benchmarks/mini/, test_mini_titanic.py) tests its grader's arithmetic and names its
``INVALID`` submissions and its ``CHEAP_ENTRIES``, which are checked here."""

from __future__ import annotations

import hashlib
import importlib
import math
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
import yaml

from podium.benchmarks import load_folder_task
from podium.benchmarks.folder import FolderTask
from podium.benchmarks.grading import medal_thresholds, read_leaderboard
from podium.submission_check import check
from tests.support import MINI, files_under
from tools.leaderboards.builder import Prepared, prepared_data

TASKS = sorted(p.name for p in MINI.iterdir() if (p / "config.yaml").is_file())
MAX_FILE_BYTES = 2 * 1024 * 1024
TASK_TYPES = {
    "tabular-classification", "tabular-regression", "image-classification",
    "text-classification", "time-series-forecasting",
}  # fmt: skip


@cache
def task_tests(name: str) -> ModuleType:
    """The task's own test module (it holds INVALID and CHEAP_ENTRIES)."""
    module = "test_mini_titanic" if name == "titanic" else f"mini.test_{name.replace('-', '_')}"
    return importlib.import_module(f"tests.benchmarks.{module}")


@pytest.fixture(scope="module")
def prepared(data_dir: Path) -> dict[str, Prepared]:
    """Each task prepared once, with its grader and answers loaded."""
    found = {}
    for name in TASKS:
        task = load_folder_task(MINI / name, data_dir, task_id=f"mini/{name}")
        found[name] = prepared_data(task.folder, task.public_dir, task.private_dir)
    return found


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


def test_prepare_is_deterministic(task: FolderTask, tmp_path: Path) -> None:
    again = load_folder_task(task.folder, tmp_path, task_id=task.id)
    assert files_under(task.public_dir.parent) == files_under(again.public_dir.parent)


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


@pytest.mark.parametrize(
    ("name", "kind"), [(name, kind) for name in TASKS for kind in task_tests(name).INVALID]
)
def test_every_kind_of_invalid_submission_is_rejected_with_a_reason(
    name: str, kind: str, prepared: dict[str, Prepared]
) -> None:
    p = prepared[name]
    make, says = task_tests(name).INVALID[kind]
    sample = pd.read_csv(next(p.public.glob("sample_submission*.csv")))
    with pytest.raises(ValueError, match=says) as caught:
        p.grade_fn(make(sample), p.answers)
    assert type(caught.value).__name__ == "InvalidSubmissionError"


@pytest.mark.parametrize("name", TASKS)
def test_the_leaderboard_matches_its_script(name: str, prepared: dict[str, Prepared]) -> None:
    """The cheapest entries, recomputed by the task's builder (tools/leaderboards), give the
    CSV's scores."""
    board = pd.read_csv(MINI / name / "leaderboard.csv").set_index("teamName")["score"]
    solutions = importlib.import_module(builder_module(name)).entries()
    assert set(solutions) == set(board.index)
    for entry in task_tests(name).CHEAP_ENTRIES:
        assert prepared[name].score(solutions[entry]) == board[entry], entry


def builder_module(task: str) -> str:
    """The module of ``tools/leaderboards`` that builds the task's leaderboard."""
    return f"tools.leaderboards.{task.replace('-', '_')}"
