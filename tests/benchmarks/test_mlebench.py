"""The ``mlebench`` benchmark against a fixture in MLE-bench's registry layout (tiny competitions
of our own with hyphenated ids), so the adapter is exercised without the package; and, opt-in,
against a real MLE-bench installation."""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import podium
from podium.api.runs import load_registry
from podium.benchmarks import resolve_task
from podium.benchmarks.folder import FolderTask
from podium.benchmarks.mlebench import MLEBench, MLEBenchTask, _mlebench, package_repo
from podium.errors import TaskError
from podium.interfaces import Benchmark
from tests.support import (
    MLEBENCH_FIXTURE,
    cli_env,
    files_under,
    node_answers,
    podium_cli,
    run_config,
    solution,
    write_script,
)

FIXTURE = MLEBENCH_FIXTURE
DATA = FIXTURE / "data"
IRIS = "tiny-iris-species"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Benchmark:
    monkeypatch.setenv("MLEBENCH_REPO", str(FIXTURE))
    return load_registry([]).benchmark("mlebench")


def env() -> dict[str, str]:
    return cli_env(MLEBENCH_REPO=str(FIXTURE))


def load(bench: Benchmark, task_id: str, obfuscated: bool = False) -> MLEBenchTask:
    task = bench.load_task(task_id, DATA, obfuscated=obfuscated)
    assert isinstance(task, MLEBenchTask)
    return task


# --- the registry ----------------------------------------------------------------------------


def test_competitions_and_splits_come_from_the_registry(bench: Benchmark) -> None:
    every = ["tiny-house-values", IRIS, "tiny-lfs-board", "tiny-unprepared"]
    assert bench.task_ids() == every
    assert bench.task_ids("low") == bench.task_ids("lite") == [IRIS]
    assert bench.task_ids("high") == ["tiny-unprepared", "tiny-lfs-board"]
    assert bench.task_ids("dev") == [IRIS, "tiny-house-values"]  # no newline at its end
    assert sorted(bench.task_ids("all")) == every
    with pytest.raises(TaskError, match="no split 'hard'") as caught:
        bench.task_ids("hard")
    assert "low (= lite" in str(caught.value.hint)


def test_a_task_sees_the_public_data_and_carries_its_split(bench: Benchmark) -> None:
    task = load(bench, IRIS)
    assert task.id == f"mlebench/{IRIS}" and task.competition_id == IRIS
    assert task.public_dir == DATA / IRIS / "prepared" / "public"
    assert task.answers == DATA / IRIS / "prepared" / "private" / "test.csv"
    assert task.sample_submission.parent == task.public_dir
    assert task.complexity == "low" and load(bench, "tiny-house-values").complexity == "medium"
    assert task.metric_name == "multiclass_log_loss" and task.lower_is_better
    assert task.description.startswith("# Tiny Iris Species")


def test_the_obfuscated_description(bench: Benchmark) -> None:
    task = load(bench, "tiny-house-values", obfuscated=True)
    assert task.description.startswith("# Obfuscated task")
    with pytest.raises(TaskError, match="no obfuscated description"):
        load(bench, IRIS, obfuscated=True)


def test_grading_follows_mlebench_with_a_hyphenated_grader(
    bench: Benchmark, tmp_path: Path
) -> None:
    # Its grade.py imports .classes (the hyphenated path must resolve), and its config says
    # awards_medals: false, which MLE-bench treats as informational: medals are graded anyway.
    task = load(bench, IRIS)
    board = pd.read_csv(task.folder / "leaderboard.csv")["score"].tolist()
    report = task.grade(task.sample_submission)
    assert report.competition_id == IRIS
    assert report.score == round(math.log(3), 5)
    n = len(board)  # 40 teams: positions ⌊0.1n⌋, ⌊0.2n⌋, ⌊0.4n⌋
    expected = (board[n // 10 - 1], board[n // 5 - 1], board[int(n * 0.4) - 1])
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold) == expected
    assert report.is_lower_better and not report.any_medal
    answers = pd.read_csv(task.answers)
    perfect = pd.get_dummies(answers["species"]).astype(float).assign(id=answers["id"])
    path = tmp_path / "perfect.csv"
    perfect[["id", "setosa", "versicolor", "virginica"]].to_csv(path, index=False)
    best = task.grade(path)
    assert best.gold_medal and best.score is not None and best.score < 1e-6
    broken = tmp_path / "broken.csv"
    broken.write_text("id,setosa\nf060,1\n")
    rejected = task.grade(broken)
    assert rejected.score is None and not rejected.valid_submission
    assert "grader rejected" in str(rejected.error)


def nan_submission(task: MLEBenchTask, path: Path) -> Path:
    """The sample with one probability left blank: the log loss of that row is NaN."""
    sample = pd.read_csv(task.sample_submission)
    sample.loc[0, "setosa"] = None
    sample.to_csv(path, index=False)
    return path


UNREADABLE = b"id,setosa,versicolor,virginica\n\xff\xfe,1,0,0\n"
UNREADABLE_WHY = (
    "cannot read the submission: 'utf-8' codec can't decode byte 0xff in position 0: "
    "invalid start byte"
)


def test_a_nan_log_loss_is_a_valid_submission_as_in_mlebench(
    bench: Benchmark, tmp_path: Path
) -> None:
    task = load(bench, IRIS)
    report = task.grade(nan_submission(task, tmp_path / "submission.csv"))
    assert report.score is not None and math.isnan(report.score)
    assert report.valid_submission and report.error is None and not report.any_medal
    unreadable = tmp_path / "unreadable.csv"
    unreadable.write_bytes(UNREADABLE)
    invalid = task.grade(unreadable)
    assert invalid.score is None and not invalid.valid_submission and invalid.submission_exists
    assert invalid.error == UNREADABLE_WHY


def test_a_registry_folder_is_its_mlebench_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `podium run|grade <checkout>/mlebench/competitions/<id>`: the data `mlebench prepare` made,
    # used as it is: prepare.py (which needs MLE-bench and the raw download) never runs, and
    # nothing is written, in the checkout or the data dir.
    competitions = FIXTURE / "mlebench" / "competitions"
    before = files_under(FIXTURE)
    registry = load_registry([])
    task = resolve_task(str(competitions / IRIS), registry, DATA)
    assert isinstance(task, MLEBenchTask) and task.id == f"mlebench/{IRIS}"
    assert task.public_dir == DATA / IRIS / "prepared" / "public"
    assert task.complexity == "low" and task.lower_is_better
    assert task.grade(task.sample_submission).score == round(math.log(3), 5)

    xdg = tmp_path / "xdg"  # without --data-dir: MLE-bench's own data dir
    shutil.copytree(DATA / IRIS, xdg / "mle-bench" / "data" / IRIS)
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    copied = files_under(xdg)
    found = resolve_task(str(competitions / IRIS), registry, None)
    assert found.public_dir == (xdg / "mle-bench" / "data" / IRIS / "prepared" / "public").resolve()

    with pytest.raises(TaskError, match="tiny-unprepared is not prepared") as caught:
        resolve_task(str(competitions / "tiny-unprepared"), registry, None)
    assert "mlebench prepare -c tiny-unprepared" in str(caught.value.hint)
    assert files_under(FIXTURE) == before and files_under(xdg) == copied


# --- MLE-bench's own package (a stand-in) ------------------------------------------------------

# A small stand-in for the installed `mlebench` package, with what Podium uses of it. Like the
# real one, importing its data module makes ./cache in the working directory (the real one opens
# a diskcache at the relative path "cache"), and its grade_csv reads the submission with a bare
# pd.read_csv, so a file pandas cannot parse would raise out of it.
STAND_IN = {
    "__init__.py": '"""A stand-in for MLE-bench\'s package, for Podium\'s tests."""\n',
    "data.py": """
from pathlib import Path

import pandas as pd

Path("cache").mkdir(exist_ok=True)
(Path("cache") / "cache.db").touch()


def is_dataset_prepared(competition, grading_only=False):
    return competition.answers.is_file()


def get_leaderboard(competition):
    return pd.read_csv(competition.leaderboard)
""",
    "registry.py": """
import importlib
import logging
from dataclasses import dataclass
from pathlib import Path

import yaml

from podium.benchmarks.grading import is_lower_better, rank_score

log = logging.getLogger("mlebench.grade_helpers")


class Grader:
    def __init__(self, spec):
        module, name = spec.split(":")
        self.grade_fn = getattr(importlib.import_module(module), name)

    def __call__(self, submission, answers):
        try:
            score = self.grade_fn(submission, answers)
        except Exception as exc:
            log.warning("Invalid submission: %s", exc)
            return None
        return round(score, 5)

    def rank_score(self, score, board):
        return rank_score(score, board["score"].tolist())

    def is_lower_better(self, board):
        return is_lower_better(board["score"].tolist())


@dataclass
class Competition:
    id: str
    answers: Path
    leaderboard: Path
    grader: Grader


class Registry:
    def __init__(self, data_dir=Path("/nonexistent")):
        self.data_dir = data_dir

    def set_data_dir(self, data_dir):
        return Registry(data_dir)

    def get_competition(self, competition_id):
        folder = Path(__file__).parent / "competitions" / competition_id
        config = yaml.safe_load((folder / "config.yaml").read_text())
        answers = self.data_dir / config["dataset"]["answers"]
        grader = Grader(config["grader"]["grade_fn"])
        return Competition(competition_id, answers, folder / "leaderboard.csv", grader)


registry = Registry()
""",
    "grade.py": """
from datetime import datetime

import pandas as pd

from mlebench.data import get_leaderboard


class Report(dict):
    def to_dict(self):
        return dict(self)


def grade_csv(path, competition):
    exists = path.is_file() and path.suffix.lower() == ".csv"
    score = None
    if exists:
        score = competition.grader(pd.read_csv(path), pd.read_csv(competition.answers))
    board = get_leaderboard(competition)
    ranked = competition.grader.rank_score(score, board)
    medal = ranked["gold_medal"] or ranked["silver_medal"] or ranked["bronze_medal"]
    return Report(
        competition_id=competition.id, score=score, any_medal=medal,
        submission_exists=exists, valid_submission=score is not None,
        is_lower_better=competition.grader.is_lower_better(board),
        created_at=datetime.now().isoformat(), submission_path=str(path), **ranked,
    )
""",
}


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A checkout of the fixture registry whose stand-in `mlebench` package is importable, as
    `pip install -e` would leave it; its modules are forgotten afterwards."""
    checkout = tmp_path / "mle-bench"
    shutil.copytree(FIXTURE / "mlebench", checkout / "mlebench")
    shutil.copytree(FIXTURE / "experiments", checkout / "experiments")
    for name, text in STAND_IN.items():
        (checkout / "mlebench" / name).write_text(text.lstrip())
    monkeypatch.syspath_prepend(str(checkout))
    yield checkout.resolve()
    for name in [m for m in sys.modules if m == "mlebench" or m.startswith("mlebench.")]:
        del sys.modules[name]


def test_mlebench_s_grader_is_never_handed_an_unreadable_file(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    bench = MLEBench(installed)
    assert bench.graded_by_package and package_repo() == installed
    task = load(bench, IRIS)
    valid = task.grade(task.sample_submission)
    assert valid.score == round(math.log(3), 5) and valid.error is None

    unreadable = tmp_path / "submission.csv"
    unreadable.write_bytes(UNREADABLE)
    report = task.grade(unreadable)  # the stand-in's bare pd.read_csv would raise on it
    assert report.score is None and not report.valid_submission and report.submission_exists
    assert report.error == UNREADABLE_WHY and not report.any_medal
    same = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold",
            "is_lower_better", "competition_id")  # fmt: skip
    assert {k: getattr(report, k) for k in same} == {k: getattr(valid, k) for k in same}
    assert report.submission_path == str(unreadable) and report.leaderboard_percentile == 0.0

    nan = task.grade(nan_submission(task, tmp_path / "nan.csv"))
    assert nan.score is not None and math.isnan(nan.score)
    assert nan.valid_submission and nan.error is None
    absent = task.grade(tmp_path / "absent.csv")
    assert (
        not absent.submission_exists and absent.error == f"no submission at {tmp_path}/absent.csv"
    )

    assert list(work.iterdir()) == [] and Path.cwd() == work  # grading made no ./cache here
    _mlebench()  # nor does Podium's import of it (the grader worker's), made in this process
    assert list(work.iterdir()) == [] and Path.cwd() == work
    del sys.modules["mlebench.data"]
    importlib.import_module("mlebench.data")  # a plain import, as the stand-in is written
    assert (work / "cache").is_dir()  # ...does make one: what Podium's import avoids


# --- one-line guidance -----------------------------------------------------------------------


def test_an_unprepared_competition_says_how_to_prepare_it(bench: Benchmark) -> None:
    with pytest.raises(TaskError, match="tiny-unprepared is not prepared") as caught:
        load(bench, "tiny-unprepared")
    assert f"mlebench prepare -c tiny-unprepared --data-dir {DATA}" in str(caught.value.hint)


def test_an_lfs_pointer_leaderboard_says_git_lfs_pull(bench: Benchmark) -> None:
    with pytest.raises(TaskError, match="Git LFS pointer") as caught:
        load(bench, "tiny-lfs-board")
    assert "git lfs pull" in str(caught.value.hint)


def test_unknown_competitions_and_a_bad_registry(
    bench: Benchmark, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    registry = load_registry([])
    with pytest.raises(TaskError, match="unknown task 'mlebench/tiny-iris'"):
        resolve_task("mlebench/tiny-iris", registry, DATA)
    monkeypatch.setenv("MLEBENCH_REPO", str(tmp_path))
    with pytest.raises(TaskError, match="has no mlebench/competitions folder"):
        MLEBench().task_ids()


@pytest.mark.skipif(package_repo() is not None, reason="mlebench is installed here")
def test_without_mlebench_the_cli_says_how_to_install_it() -> None:
    no_repo = {k: v for k, v in cli_env().items() if k != "MLEBENCH_REPO"}
    listed = podium_cli("tasks", "mlebench", env=no_repo)
    assert listed.returncode == 2
    lines = listed.stderr.strip().splitlines()
    assert lines[0] == "error: MLE-bench is not installed (no module named 'mlebench')"
    assert lines[1].startswith("hint: install it from its repository: git clone")
    assert len(lines) == 2 and "Traceback" not in listed.stderr


def test_tasks_lists_the_registry_without_needing_the_data(tmp_path: Path) -> None:
    listed = podium_cli("tasks", "mlebench", "--data-dir", str(DATA), env=env())
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert "low" in rows[IRIS] and "multi-class-log-loss" in rows[IRIS]
    assert rows[IRIS].rstrip().endswith("ready") and " 40 " in rows[IRIS]
    assert "not prepared (mlebench prepare -c tiny-unprepared)" in rows["tiny-unprepared"]
    assert "Git LFS pointer" in rows["tiny-lfs-board"]
    low = podium_cli("tasks", "mlebench", "--split", "lite", "--data-dir", str(tmp_path), env=env())
    assert low.returncode == 0, low.stderr
    assert [line.split()[0] for line in low.stdout.splitlines()[1:]] == [IRIS]
    assert "not prepared" in low.stdout  # an empty data dir: listed all the same


# --- a run, graded, exported -----------------------------------------------------------------


@pytest.mark.slow
def test_a_run_is_graded_for_mlebench_and_exported_for_mlebench_grade(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path
) -> None:
    monkeypatch.setenv("MLEBENCH_REPO", str(FIXTURE))
    checks = "from validate_submission import validate\nprint('FORMAT', validate())\n"
    script = write_script(tmp_path / "s.jsonl", [node_answers(solution(0.5) + checks)])
    out = tmp_path / "runs" / "iris"
    config = run_config(script, out, DATA, steps=1, task=f"mlebench/{IRIS}")
    podium.run(config)
    report = json.loads((out / "grade.json").read_text())
    assert report["competition_id"] == IRIS and report["score"] == round(math.log(3), 5)
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["competition_id"], summary["complexity"]) == (IRIS, "low")
    assert "FORMAT (True, '')" in (out / "nodes" / "1" / "output.txt").read_text()

    toy = tmp_path / "runs" / "toy"  # a run of another benchmark: skipped, with a note
    podium.run(run_config(write_script(tmp_path / "t.jsonl", [node_answers(solution())]), toy,
                          data_dir, steps=1))  # fmt: skip
    shutil.rmtree(toy / "best")
    exported = podium_cli("export", "mlebench-jsonl", str(tmp_path / "runs"), env=env())
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert lines == [
        {
            "competition_id": IRIS,
            "submission_path": str((out / "best" / "submission.csv").resolve()),
            "logs_path": str(out.resolve()),
            "code_path": str((out / "best" / "solution.py").resolve()),
            "run_dir": str(out.resolve()),
        }
    ]
    assert "skipped 1 runs of non-MLE-bench tasks" in exported.stderr
    only_toy = podium_cli("export", "mlebench-jsonl", str(toy), env=env())
    assert only_toy.returncode == 2 and "none of these runs" in only_toy.stderr
    nothing = podium_cli("export", "mlebench-jsonl", str(tmp_path / "absent"), env=env())
    assert nothing.returncode == 2 and "is not a directory" in nothing.stderr


# --- opt-in: a real MLE-bench ----------------------------------------------------------------

REAL_REPO = os.environ.get("MLEBENCH_REPO")
REAL_DATA = os.environ.get("PODIUM_TEST_MLEBENCH_DATA")


@pytest.mark.skipif(
    not REAL_REPO or Path(REAL_REPO).resolve() == FIXTURE,
    reason="opt-in: set MLEBENCH_REPO to a checkout of MLE-bench",
)
def test_a_real_checkout_lists_every_split_without_its_data(tmp_path: Path) -> None:
    bench = MLEBench(Path(str(REAL_REPO)))
    sizes = {split: len(bench.task_ids(split)) for split in ("low", "medium", "high", "dev", "all")}
    assert sizes == {"low": 22, "medium": 38, "high": 15, "dev": 7, "all": 75}
    complexities = {bench.summary(cid, tmp_path).complexity for cid in bench.task_ids("all")}
    assert complexities == {"low", "medium", "high"}


@pytest.mark.skipif(
    package_repo() is None or not REAL_DATA,
    reason="opt-in: install mlebench (pip install -e <checkout>; git lfs pull) and set "
    "PODIUM_TEST_MLEBENCH_DATA to a data dir where spooky-author-identification is prepared",
)
def test_mlebench_grades_as_our_reproduction_of_its_rules() -> None:
    bench = MLEBench()
    assert bench.graded_by_package
    task = bench.load_task("spooky-author-identification", Path(str(REAL_DATA)))
    assert isinstance(task, MLEBenchTask)
    theirs = task.grade(task.sample_submission)  # mlebench.grade.grade_csv
    ours = FolderTask.grade(task, task.sample_submission)  # the grade_fn by path, our rules
    same = {"created_at", "error"}
    assert theirs.model_dump(exclude=same) == ours.model_dump(exclude=same)
