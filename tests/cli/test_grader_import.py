"""A registry folder whose grader cannot be imported (every real MLE-bench ``grade.py`` imports
``mlebench``, which need not be installed where Podium runs): ``podium run`` says so in one line
and a hint before the search starts (no run dir, no node), and ``podium grade`` says the same
line, through the real command line (:func:`podium.cli.app.run_cli`, as in test_bad_input.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from podium.cli.app import run_cli
from tests.cli.test_bad_input import assert_one_line_error
from tests.support import TOY_TASK

# What MLE-bench's graders start with (e.g. spooky-author-identification's grade.py).
MLEBENCH_IMPORT = "from mlebench.grade_helpers import InvalidSubmissionError\n"
SAID = "toy: the grader grade:grade cannot be imported"


@pytest.fixture
def needs_mlebench(tmp_path: Path) -> Path:
    """The toy task folder (same id, so its data prepared in the session's data dir is used)
    with a ``grade.py`` shaped like MLE-bench's: it imports the ``mlebench`` package first."""
    folder = tmp_path / "tasks" / "toy"
    shutil.copytree(TOY_TASK, folder)
    grade = folder / "grade.py"
    grade.write_text(MLEBENCH_IMPORT + grade.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = run_cli(argv)
    return status, capsys.readouterr().err


def test_run_says_the_grader_cannot_be_imported_before_any_node(
    needs_mlebench: Path, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["run", str(needs_mlebench), "--model", "baseline", "--steps", "20",
            "--out", str(out), "--data-dir", str(data_dir)]  # fmt: skip
    status, stderr = _cli(argv, capsys)
    assert_one_line_error(status, stderr, SAID)
    error, hint = stderr.splitlines()[-2:]
    assert "No module named 'mlebench'" in error, stderr
    assert "mlebench" in hint and "install" in hint, stderr
    assert not out.exists()  # stopped before the run dir: no journal, no nodes/


def test_grade_says_the_same_line(
    needs_mlebench: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = data_dir / "toy" / "prepared" / "public" / "sample_submission.csv"
    status, stderr = _cli(
        ["grade", str(needs_mlebench), str(sample), "--data-dir", str(data_dir)], capsys
    )
    assert_one_line_error(status, stderr, SAID)
    assert "No module named 'mlebench'" in stderr.splitlines()[-2], stderr
