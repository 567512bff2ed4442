"""Deterministic failures stop a run instead of spending its budget (issue 39).

* A task beyond the operator set (the baseline on a layout it does not read) is said once, in
  one line with what it would need and a hint: exactly one node is recorded, the run stops
  with stop reason ``beyond`` and ``podium run`` exits non-zero.
* ``search.max_identical_failures`` (3) nodes in a row with the same code failing the same way
  stop the run (``repeated``, non-zero exit); failing code that differs never does.

Through the real command line (:func:`podium.cli.app.run_cli`) with the real sandbox; the
scripted model plays the code model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podium.cli.app import run_cli
from podium.formats import Journal, RunDir
from podium.records import Node
from podium.scaffolds.loop import BEYOND, REPEATED, failure_key
from podium.testing.scripted import node_answers, write_script
from tests.support import TOY_TASK, solution

FAST = ["-o", "sandbox.preimports=[]"]  # toy solutions use the standard library


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = run_cli(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _summary(run: Path) -> dict[str, object]:
    return dict(json.loads(RunDir(run).summary.read_text(encoding="utf-8")))


def _nodes(run: Path) -> list[Node]:
    journal = Journal.open(RunDir(run).journal)
    try:
        return sorted(journal.nodes(), key=lambda n: n.id)
    finally:
        journal.close()


@pytest.fixture
def only_a_train_table(tmp_path: Path) -> Path:
    """A data folder as AIDE's bitcoin-price task comes: a description naming its metric and
    one table, no test set and no sample submission (the baseline cannot tell what to
    predict)."""
    folder = tmp_path / "bitcoin"
    folder.mkdir()
    (folder / "description.md").write_text(
        "# Bitcoin price\n\nPredict the next closing price. Submissions are evaluated on the "
        "root mean squared error (RMSE).\n",
        encoding="utf-8",
    )
    days = pd.date_range("2020-01-01", periods=60).astype(str)
    pd.DataFrame({"date": days, "close": np.linspace(100.0, 160.0, 60)}).to_csv(
        folder / "train.csv", index=False
    )
    return folder


def test_a_task_beyond_the_baseline_is_said_once_and_stops_the_run(
    only_a_train_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["run", str(only_a_train_table), "--model", "baseline", "--steps", "20",
            "--out", str(run), *FAST]  # fmt: skip
    status, out, err = _run(argv, capsys)
    assert status == 1, out + err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    hints = [line for line in err.splitlines() if line.startswith("hint: ")]
    assert len(errors) == 1 and len(hints) == 1, err
    assert "the baseline model handles" in errors[0] and "sample submission" in errors[0]
    assert "--model" in hints[0]
    summary = _summary(run)
    assert (summary["stop_reason"], summary["status"], summary["steps"]) == (BEYOND, "failed", 1)
    nodes = _nodes(run)
    assert [n.id for n in nodes] == [1] and nodes[0].is_buggy
    assert nodes[0].bug_reason is not None and nodes[0].bug_reason in errors[0]


def test_the_same_code_failing_the_same_way_stops_the_run(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = solution(error="ValueError('the column price is not in the table')")
    script = write_script(tmp_path / "s.jsonl", [node_answers(failing, is_bug=True)] * 10)
    run = tmp_path / "run"
    argv = ["run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", "10",
            "--out", str(run), "--data-dir", str(data_dir), *FAST]  # fmt: skip
    status, out, err = _run(argv, capsys)
    assert status == 1, out + err
    summary = _summary(run)
    assert (summary["stop_reason"], summary["status"], summary["steps"]) == (REPEATED, "failed", 3)
    assert "3 nodes in a row ran the same code and failed the same way" in err
    assert "hint: " in err and "max_identical_failures" in err
    nodes = _nodes(run)
    assert len(nodes) == 3 and all(n.is_buggy and n.code == failing for n in nodes)


def test_the_same_code_killed_at_the_memory_limit_stops_the_run(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A node the kernel's memory limit kills (the taxi table read whole, scaled down) fails
    the same way each time it runs, whatever its peak and timing: the run stops after 3."""
    hog = solution(  # 1 GiB where 256 MiB are allowed, held until the limit's watchdog sees it
        extra="rows = [b'x' * 1024**2 for _ in range(1024)]\ntime.sleep(120)"
    )
    script = write_script(tmp_path / "s.jsonl", [node_answers(hog, is_bug=True)] * 6)
    run = tmp_path / "run"
    argv = ["run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", "6",
            "--out", str(run), "--data-dir", str(data_dir), "-o", "sandbox.memory=256M",
            *FAST]  # fmt: skip
    status, out, err = _run(argv, capsys)
    assert status == 1, out + err
    summary = _summary(run)
    assert (summary["stop_reason"], summary["steps"]) == (REPEATED, 3)
    nodes = _nodes(run)
    assert all(n.is_buggy and "memory limit" in (n.bug_reason or "") for n in nodes), nodes


def test_different_failing_code_spends_its_budget(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same error from code that differs each time is not a repeat: the model is trying."""
    answers = [
        node_answers(f"# attempt {i}\n" + solution(error="ValueError('boom')"), is_bug=True)
        for i in range(5)
    ]
    script = write_script(tmp_path / "s.jsonl", answers)
    run = tmp_path / "run"
    argv = ["run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", "5",
            "--out", str(run), "--data-dir", str(data_dir), *FAST]  # fmt: skip
    status, out, err = _run(argv, capsys)
    assert status == 0, out + err
    summary = _summary(run)
    assert (summary["stop_reason"], summary["steps"], summary["buggy_nodes"]) == ("steps", 5, 5)


# --- what "the same failure" is ------------------------------------------------------------


def _failed(code: str, reason: str, node_id: int = 1) -> Node:
    return Node(id=node_id, operator="draft", code=code, is_buggy=True, bug_reason=reason)


def test_run_specific_details_do_not_make_a_failure_different() -> None:
    a = _failed("x = 1\n", "MemoryError at 0x7f3a2c1b (node 3, /tmp/run-a/nodes/3/working)", 3)
    b = _failed("x = 1\n", "MemoryError at 0x7f99aa00 (node 4, /tmp/run-b/nodes/4/working)", 4)
    killed = [
        _failed("x = 1\n", f"memory limit (8 GiB) exceeded after {s} s", i)
        for i, s in ((1, 12.5), (2, 13.1))
    ]
    assert failure_key(a) == failure_key(b) is not None
    assert failure_key(killed[0]) == failure_key(killed[1])
    assert failure_key(a) != failure_key(killed[0])  # another failure


def test_different_code_or_no_failure_is_never_the_same_failure() -> None:
    assert failure_key(_failed("x = 1\n", "boom")) != failure_key(_failed("x = 2\n", "boom"))
    assert failure_key(Node(id=1, operator="draft", code="x = 1\n")) is None


def test_a_resumed_run_goes_on_counting_from_its_journal(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The count is rebuilt from the journal: resumed as it was, the run stops at its first
    new node that fails the same way again, not after three more."""
    failing = solution(error="ValueError('no such column')")
    script = write_script(tmp_path / "s.jsonl", [node_answers(failing, is_bug=True)] * 10)
    run = tmp_path / "run"
    argv = ["run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", "10",
            "-o", "search.max_identical_failures=2", "--out", str(run),
            "--data-dir", str(data_dir), *FAST]  # fmt: skip
    assert _run(argv, capsys)[0] == 1
    assert _summary(run)["steps"] == 2
    status, out, err = _run(["resume", str(run)], capsys)
    assert status == 1, out + err
    summary = _summary(run)
    assert (summary["stop_reason"], summary["steps"]) == (REPEATED, 3)
    assert "3 nodes in a row ran the same code" in err
