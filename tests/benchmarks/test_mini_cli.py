"""mini/titanic from the command line: the default no-key run ends graded; `podium grade` and
`podium tasks` report what MLE-bench would."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from podium.benchmarks.folder import FolderTask
from tests.support import TITANIC, podium_cli

pytestmark = pytest.mark.slow

REPORT_FIELDS = {
    "competition_id", "score", "gold_threshold", "silver_threshold", "bronze_threshold",
    "median_threshold", "any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median",
    "submission_exists", "valid_submission", "is_lower_better", "created_at", "submission_path",
}  # fmt: skip


def test_the_default_run_searches_with_no_key_and_ends_graded(
    titanic: FolderTask, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    run = podium_cli("run", "mini/titanic", "--steps", "6", "--out", str(out),
                     "--data-dir", str(data_dir))  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "model baseline" in run.stdout
    report = json.loads((out / "grade.json").read_text())
    assert set(report) >= REPORT_FIELDS
    assert report["competition_id"] == "mini/titanic"
    assert report["valid_submission"] is True and report["submission_exists"] is True
    assert report["sandboxed"] is True  # auto picked bwrap: CI installs bubblewrap
    assert 0.7 < report["score"] <= 1.0
    assert report["score"] == round(report["score"], 5)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["grade"]["score"] == report["score"]
    assert summary["buggy_nodes"] == 0
    assert "score: " in run.stdout and "on the private answers" in run.stdout
    assert "thresholds: gold >= 0.83254, silver >= 0.82057, bronze >= 0.80383" in run.stdout
    assert "sandbox  bwrap: memory" in run.stdout
    assert "not clean-track" not in run.stdout
    assert summary["sandbox"] == "bwrap" and summary["sandboxed"] is True


def test_grade_reports_valid_and_malformed_submissions(
    titanic: FolderTask, data_dir: Path, tmp_path: Path
) -> None:
    sample = titanic.sample_submission
    answers = pd.read_csv(titanic.answers)
    expected = round(float((answers["Survived"] == 0).mean()), 5)
    graded = podium_cli("grade", "mini/titanic", str(sample), "--data-dir", str(data_dir), "--json")
    assert graded.returncode == 0, graded.stderr
    report = json.loads(graded.stdout)
    assert set(report) >= REPORT_FIELDS
    assert report["score"] == expected and report["any_medal"] is False
    assert report["sandboxed"] is None  # graded by hand: nothing known about how it was made

    broken = tmp_path / "broken.csv"
    broken.write_text("PassengerId,Survived\n892,1\n")
    bad = podium_cli("grade", "mini/titanic", str(broken), "--data-dir", str(data_dir))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stdout.startswith("score: none, invalid submission: ")
    assert "thresholds: gold >= 0.83254" in bad.stdout

    missing = podium_cli("grade", "mini/titanic", str(tmp_path / "nope.csv"), "--json",
                         "--data-dir", str(data_dir))  # fmt: skip
    assert json.loads(missing.stdout)["submission_exists"] is False


def test_tasks_lists_the_bundled_suite(titanic: FolderTask, data_dir: Path) -> None:
    listing = podium_cli("tasks", "mini", "--data-dir", str(data_dir))
    assert listing.returncode == 0, listing.stderr
    header, *rows = listing.stdout.splitlines()
    assert header.split() == [
        "id",
        "split",
        "type",
        "metric",
        "direction",
        "rows",
        "teams",
        "status",
    ]
    assert len(rows) == 8
    row = next(r for r in rows if r.startswith("mini/titanic "))
    assert row.split() == ["mini/titanic", "-", "tabular-classification", "accuracy", "higher",
                           "is", "better", "891", "166", "ready"]  # fmt: skip


def test_a_broken_leaderboard_is_one_line(tmp_path: Path, data_dir: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(TITANIC, task)
    (task / "leaderboard.csv").write_text("version https://git-lfs.github.com/spec/v1\n")
    run = podium_cli("run", str(task), "--data-dir", str(data_dir))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and "leaderboard.csv" in lines[0]
    assert len(lines) <= 2
