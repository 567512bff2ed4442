"""A plain data folder as a task (MLE-bench's ``/home/data``): what it is, the metric its
description states, the harness's rules, and the format check through a validation server that
speaks MLE-bench's wire format, with the structural check when the server gives no verdict."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from podium.benchmarks.data_folder import (
    IN_PODIUM,
    MLEBENCH_RULES,
    DataFolderTask,
    is_data_folder,
    load_data_folder,
)
from podium.benchmarks.folder import FolderTask
from podium.benchmarks.metric_direction import read_metric
from podium.errors import TaskError
from tests.agents.fake_grading_server import VALID, FakeGradingServer
from tests.support import TITANIC

INVALID = (200, {"result": "Submission invalid! The attempt to grade the submission has "
                           "resulted in the following error message:\nmissing ids"})  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, titanic: FolderTask, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A simulated /home: data/ holds titanic's public files and description, nothing else."""
    for name in ("COMPETITION_ID", "MLEBENCH_INSTRUCTIONS", "MLEBENCH_VALIDATION_URL"):
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "home" / "data"
    shutil.copytree(titanic.public_dir, data)
    shutil.copy(TITANIC / "description.md", data / "description.md")
    return tmp_path / "home"


def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLEBENCH_VALIDATION_URL", "")


def test_a_data_folder_is_a_description_without_a_registry_config(home: Path) -> None:
    assert is_data_folder(home / "data")
    assert not is_data_folder(TITANIC)  # MLE-bench's registry layout: config.yaml
    assert not is_data_folder(home)
    (home / "data" / "grade.py").write_text("def grade(s, a): ...\n")  # a registry folder's
    assert not is_data_folder(home / "data")
    (home / "data" / "grade.py").unlink()
    with pytest.raises(TaskError) as excinfo:
        load_data_folder(TITANIC)
    assert "not a data folder" in excinfo.value.message and excinfo.value.hint


def test_the_task_takes_what_the_folder_and_the_harness_give(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_server(monkeypatch)
    task = load_data_folder(home / "data")
    assert isinstance(task, DataFolderTask)
    assert (task.id, task.public_dir, task.rules) == ("data", (home / "data").resolve(), None)
    assert task.description.startswith("# Titanic")
    assert (task.metric_name, task.lower_is_better) == ("accuracy", False)
    assert task.metric_source == "the evaluation section says higher is better"
    assert task.grade(home / "data" / "sample_submission.csv") is None  # no answers here
    assert task.train_rows() == 891
    monkeypatch.setenv("COMPETITION_ID", "spaceship-titanic")
    assert load_data_folder(home / "data").competition_id == "spaceship-titanic"


@pytest.mark.parametrize(
    ("evaluation", "name", "lower"),
    [
        ("Submissions are evaluated on area under the ROC curve.", "roc_auc", False),
        ("Submissions are scored on the log loss. A smaller log loss is better.", "log_loss", True),
        ("Submissions are evaluated using multi-class logarithmic loss.", "multiclass_log_loss",
         True),
        ("scored on the root mean squared error of the counts", "rmse", True),
        ("evaluated on the Root Mean Squared Logarithmic Error", "rmsle", True),
        ("Submissions are evaluated using the macro F1 score.", "f1", False),
        ("the quadratic weighted kappa, which measures agreement", "quadratic_weighted_kappa",
         False),
        ("the mean Levenshtein distance between the strings", "levenshtein_distance", True),
        ("Mean Average Precision @ 5 (MAP@5)", "mean_average_precision", False),
        ("the Log of the Mean Absolute Error, averaged across types", "mae", True),
    ],
)  # fmt: skip
def test_the_metric_and_its_direction_come_from_the_evaluation_section(
    evaluation: str, name: str, lower: bool
) -> None:
    text = f"# A task\n\nAccuracy matters in life.\n\n## Evaluation\n\n{evaluation}\n\n## Data\n"
    reading = read_metric(text)
    assert reading is not None
    assert (reading.name, reading.lower_is_better) == (name, lower)


def test_a_description_naming_no_metric_is_refused_unless_the_direction_is_given(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_server(monkeypatch)
    (home / "data" / "description.md").write_text("# Guess\n\nPredict the column y.\n")
    with pytest.raises(TaskError) as excinfo:
        load_data_folder(home / "data")
    assert "\n" not in excinfo.value.message
    assert excinfo.value.hint == "set PODIUM_METRIC_DIRECTION=lower (or higher)"
    monkeypatch.setenv("PODIUM_METRIC_DIRECTION", "lower")
    task = load_data_folder(home / "data")
    assert (task.lower_is_better, task.metric_source) == (True, "PODIUM_METRIC_DIRECTION=lower")
    monkeypatch.setenv("PODIUM_METRIC_DIRECTION", "down")
    with pytest.raises(TaskError, match="expected lower or higher"):
        load_data_folder(home / "data")


def test_the_harness_instructions_become_the_rules(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_server(monkeypatch)
    (home / "instructions.txt").write_text("RULES: submit /home/submission/submission.csv\n")
    (home / "instructions_obfuscated.txt").write_text("OBFUSCATED RULES\n")
    (home / "data" / "description_obfuscated.md").write_text("# Task\n\n# Metric\n\nAccuracy.\n")
    task = load_data_folder(home / "data")
    assert task.rules == f"RULES: submit /home/submission/submission.csv\n\n{IN_PODIUM}"
    hidden = load_data_folder(home / "data", obfuscated=True)
    assert hidden.rules is not None and hidden.rules.startswith("OBFUSCATED RULES")
    assert hidden.description.startswith("# Task") and hidden.name == "data"
    named = home / "mine.txt"
    named.write_text("MINE\n")
    monkeypatch.setenv("MLEBENCH_INSTRUCTIONS", str(named))
    assert load_data_folder(home / "data").rules == f"MINE\n\n{IN_PODIUM}"
    named.unlink()
    with pytest.raises(TaskError, match="MLEBENCH_INSTRUCTIONS"):
        load_data_folder(home / "data")


def test_podiums_wording_of_mlebench_rules_names_the_working_directory() -> None:
    for phrase in ("./submission/submission.csv", "./validate_submission.py", "by hand",
                   "plagiarised", "own\ntrain/test split".replace("\n", " ")):  # fmt: skip
        assert phrase in " ".join(MLEBENCH_RULES.split())


# --- the validation server -----------------------------------------------------------------


def submission(home: Path, tmp_path: Path, rows: int | None = None) -> Path:
    """The sample submission as a node's handed-over copy (``rows``: cut to that many)."""
    lines = (home / "data" / "sample_submission.csv").read_text().splitlines(keepends=True)
    path = tmp_path / f"node-{rows}" / "submission.csv"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(lines if rows is None else lines[: rows + 1]))
    return path


def test_check_submission_asks_the_validation_server(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FakeGradingServer(lambda data: VALID if data.count(b"\n") == 419 else INVALID)
    with server.running():
        monkeypatch.setenv("MLEBENCH_VALIDATION_URL", server.url)
        task = load_data_folder(home / "data")
        good = submission(home, tmp_path)
        assert task.check_submission(good) is None
        short = submission(home, tmp_path, rows=10)
        reason = task.check_submission(short)
    assert server.received == [good.read_bytes(), short.read_bytes()]
    assert reason == (
        "MLE-bench's validator: Submission invalid! The attempt to grade the submission has "
        "resulted in the following error message: missing ids"
    )


@pytest.mark.parametrize(
    "answer",
    [(500, {"error": "An unexpected error occurred.", "details": "boom"}), (200, b"<html>"),
     (200, {"status": "running"})],
    ids=["server error", "not json", "no result"],
)  # fmt: skip
def test_without_a_verdict_the_structural_check_decides(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    answer: tuple[int, object],
) -> None:
    server = FakeGradingServer(lambda _: answer)
    with server.running():
        monkeypatch.setenv("MLEBENCH_VALIDATION_URL", server.url)
        task = load_data_folder(home / "data")
        assert task.check_submission(submission(home, tmp_path)) is None
        reason = task.check_submission(submission(home, tmp_path, rows=10))
    assert len(server.received) == 2
    assert reason is not None and "rows" in reason and "validator" not in reason
    assert sum("gave no verdict" in r.getMessage() for r in caplog.records) == 1  # said once


def test_an_unreachable_server_falls_back_to_the_structural_check(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("MLEBENCH_VALIDATION_URL", f"http://127.0.0.1:{port}/validate")
    task = load_data_folder(home / "data")
    assert task.server is not None
    assert task.check_submission(submission(home, tmp_path)) is None
    assert "rows" in (task.check_submission(submission(home, tmp_path, rows=3)) or "")
    assert "does not exist" in (task.check_submission(tmp_path / "absent.csv") or "")
    monkeypatch.setenv("MLEBENCH_VALIDATION_URL", "file:///etc/passwd")
    with pytest.raises(TaskError, match="not an http"):
        load_data_folder(home / "data")
