"""What every task of a bundled suite (``arena``, ``mini``: ``SUITES``) promises: recorded, licensed
offline data (or a generator with its stated process), a leaderboard that separates weak from
strong and that its script reproduces, deterministic preparation, public files without answers,
a sample submission that passes the format check and grades, and a reason for every kind of
invalid submission. Each task's own test module (tests/benchmarks/<suite>/,
test_mini_titanic.py) tests its grader's arithmetic and names its ``INVALID`` submissions and
its ``CHEAP_ENTRIES``, which are checked here."""

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
from podium.secret_paths import bundled_tasks
from podium.submission_check import check
from tests.support import files_under
from tools.leaderboards.builder import Prepared, prepared_data

SUITES = ("arena", "mini")
TASKS = [
    f"{suite}/{p.name}"
    for suite in SUITES
    for p in sorted(bundled_tasks(suite).iterdir())
    if (p / "config.yaml").is_file()
]
# How many entries a suite's leaderboards hold (MLE-bench's medal rules are by team count).
# The arena's fields follow its rule of at least 1000 entries: MLE-bench's usual team count,
# where bronze is the top 10 % (with 250-999 teams bronze is the top 100, where a first draft
# medals).
BOARD_SIZES = {"arena": range(1000, 2000), "mini": range(100, 250)}
MAX_FILE_BYTES = 2 * 1024 * 1024
GENERATOR = "generate.py"  # a generated task's process, in raw/ (it rebuilds the answers)
TASK_TYPES = {
    "tabular-classification", "tabular-regression", "image-classification",
    "text-classification", "time-series-forecasting",
}  # fmt: skip


def folder(task_id: str) -> Path:
    suite, name = task_id.split("/")
    return bundled_tasks(suite) / name


@cache
def task_tests(task_id: str) -> ModuleType:
    """The task's own test module (it holds INVALID and CHEAP_ENTRIES)."""
    suite, name = task_id.split("/")
    module = "test_mini_titanic" if task_id == "mini/titanic" else f"{suite}.test_{name}"
    return importlib.import_module(f"tests.benchmarks.{module.replace('-', '_')}")


@pytest.fixture(scope="module")
def prepared(data_dir: Path) -> dict[str, Prepared]:
    """Each task prepared once, with its grader and answers loaded."""
    found = {}
    for task_id in TASKS:
        task = load_folder_task(folder(task_id), data_dir, task_id=task_id)
        found[task_id] = prepared_data(task.folder, task.public_dir, task.private_dir)
    return found


@pytest.fixture(scope="module", params=TASKS)
def task(request: pytest.FixtureRequest, data_dir: Path) -> FolderTask:
    return load_folder_task(folder(request.param), data_dir, task_id=request.param)


def test_the_mini_suite_holds_eight_kinds_of_competition() -> None:
    mini = [t.removeprefix("mini/") for t in TASKS if t.startswith("mini/")]
    assert mini == [
        "adult", "ames-house-prices", "bike-sharing", "mnist-5k", "rotten-tomatoes",
        "seattle-weather", "titanic", "us-employment",
    ]  # fmt: skip
    types = {task_type(f"mini/{t}") for t in mini}
    assert types == TASK_TYPES


def test_the_arena_holds_tasks_of_every_kind() -> None:
    arena = [t.removeprefix("arena/") for t in TASKS if t.startswith("arena/")]
    assert arena == [
        "app-reviews", "building-energy", "delivery-times", "diamond-prices", "grating-orientation",
        "loan-default", "noisy-shapes", "regional-sales", "subscription-churn", "support-tickets",
    ]  # fmt: skip
    assert {task_type(f"arena/{t}") for t in arena} == TASK_TYPES


def task_type(task_id: str) -> str:
    return str(yaml.safe_load((folder(task_id) / "config.yaml").read_text())["task_type"])


@pytest.mark.parametrize("task_id", TASKS)
def test_the_data_is_recorded_and_licensed(task_id: str) -> None:
    """Vendored data: each file's sha256, the package's version and its licence; generated
    data: the generator in raw/ and its stated process in SOURCE.md."""
    raw = folder(task_id) / "raw"
    source = (raw / "SOURCE.md").read_text(encoding="utf-8")
    if (raw / GENERATOR).is_file():
        assert re.search(r"\bgenerat", source, re.IGNORECASE) and re.search(r"\bseed", source)
    else:
        data = [p for p in raw.iterdir() if not p.name.startswith(("SOURCE", "LICENSE", "convert"))]
        assert data, f"{task_id} vendors no data file"
        for path in data:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest in source, f"{path.name}'s sha256 is not recorded in SOURCE.md"
        assert re.search(r"licen[cs]e", source, re.IGNORECASE)
        assert re.search(r"\b\d+\.\d+(\.\d+)?\b", source), "SOURCE.md names no version"
        assert list(raw.glob("LICENSE*")), f"{task_id} ships no licence text"
    for path in folder(task_id).rglob("*"):
        assert not path.is_file() or path.stat().st_size < MAX_FILE_BYTES, path


@pytest.mark.parametrize("task_id", TASKS)
def test_the_leaderboard_separates_weak_from_strong(task_id: str) -> None:
    board = pd.read_csv(folder(task_id) / "leaderboard.csv")
    scores = read_leaderboard(folder(task_id) / "leaderboard.csv")
    assert list(board.columns) == ["rank", "teamName", "score"]
    assert len(board) in BOARD_SIZES[task_id.split("/")[0]] and board["teamName"].is_unique
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
    ("task_id", "kind"), [(t, kind) for t in TASKS for kind in task_tests(t).INVALID]
)
def test_every_kind_of_invalid_submission_is_rejected_with_a_reason(
    task_id: str, kind: str, prepared: dict[str, Prepared]
) -> None:
    p = prepared[task_id]
    make, says = task_tests(task_id).INVALID[kind]
    sample = pd.read_csv(next(p.public.glob("sample_submission*.csv")))
    with pytest.raises(ValueError, match=says) as caught:
        p.grade_fn(make(sample), p.answers)
    assert type(caught.value).__name__ == "InvalidSubmissionError"


@pytest.mark.parametrize("task_id", TASKS)
def test_the_leaderboard_matches_its_script(task_id: str, prepared: dict[str, Prepared]) -> None:
    """The cheapest entries, recomputed by the task's builder (tools/leaderboards), give the
    CSV's scores."""
    board = pd.read_csv(folder(task_id) / "leaderboard.csv").set_index("teamName")["score"]
    solutions = importlib.import_module(builder_module(task_id)).entries()
    assert set(solutions) == set(board.index)
    for entry in task_tests(task_id).CHEAP_ENTRIES:
        assert prepared[task_id].score(solutions[entry]) == board[entry], entry


def builder_module(task_id: str) -> str:
    """The module of ``tools/leaderboards`` that builds the task's leaderboard: mini's at the
    top (``tools.leaderboards.titanic``), other suites' in a package of their own."""
    suite, name = task_id.split("/")
    module = name if suite == "mini" else f"{suite}.{name}"
    return f"tools.leaderboards.{module.replace('-', '_')}"
