"""``podium rerun``: a recorded node's code run again on a fresh bwrap kernel, and compared.

One real run (scripted model, toy task, bwrap) is shared by the module: node 1 is deterministic,
node 2 prints a random metric, node 3 raises, node 4 has no code. Each rerun costs one kernel
(~1 s); the tests that need the run are marked slow.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import podium
from podium.api.rerun import RerunReport, rerun_node
from podium.cli.app import app
from podium.errors import UserError
from tests.recorded_run import RecordedRun
from tests.support import code_answer, node_answers, run_config, solution, write_script

RANDOM_METRIC = "import random\nprint(f'VALIDATION_METRIC: {random.random()}')"


def journal_rows(run_dir: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of the journal (opened read-only)."""
    db = sqlite3.connect(f"file:{run_dir / 'journal.sqlite'}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    finally:
        db.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    tmp = tmp_path_factory.mktemp("rerun")
    answers: list[dict[str, Any] | list[dict[str, Any]]] = [
        node_answers(solution(0.8)),
        node_answers(solution(None, extra=RANDOM_METRIC)),
        node_answers(solution(error="ValueError('boom')")),
        code_answer("", plan="No code this time."),
    ]
    script = write_script(tmp / "script.jsonl", answers)
    config = run_config(
        script, tmp / "run", data_dir, steps=4, search={"num_drafts": 4}, sandbox={"name": "bwrap"}
    )
    result = podium.run(config)
    assert result.summary["steps"] == 4
    return result.run_dir


@pytest.fixture
def unchanged_journal(run_dir: Path) -> Iterator[None]:
    """The test's reruns leave every journal row as it was."""
    before = journal_rows(run_dir)
    yield
    assert journal_rows(run_dir) == before


def rerun(*args: str) -> Result:
    return CliRunner().invoke(app, ["rerun", *args])


def latest_report(run_dir: Path, node_id: int) -> RerunReport:
    reruns = run_dir / "nodes" / str(node_id) / "reruns"
    last = max(reruns.iterdir(), key=lambda p: int(p.name))
    return RerunReport.model_validate_json((last / "rerun.json").read_text())


@pytest.mark.slow
def test_a_deterministic_node_reproduces(run_dir: Path, unchanged_journal: None) -> None:
    done = rerun(str(run_dir), "1")
    assert done.exit_code == 0, done.output
    out = done.output
    assert "status      ok → ok  (same)" in out
    assert "metric      0.8 → 0.8  (same)" in out
    assert "written → written, identical files; format check passed" in out
    assert "output      identical" in out
    assert out.rstrip().endswith("reproduced: status and metric as recorded")
    report = latest_report(run_dir, 1)
    assert report.reproduced and report.sandbox == "bwrap" and report.sandboxed
    assert report.status_then == report.status_now == "ok"


@pytest.mark.slow
def test_reruns_are_numbered_and_never_overwritten(run_dir: Path, unchanged_journal: None) -> None:
    first = rerun_node(run_dir, 1, timeout_s=30)
    second = rerun_node(run_dir, 1, timeout_s=30)
    assert second.rerun == first.rerun + 1
    for report in (first, second):
        root = Path(report.rerun_dir)
        assert root == run_dir.resolve() / "nodes" / "1" / "reruns" / str(report.rerun)
        assert sorted(p.name for p in root.iterdir()) == [
            "output.txt",
            "rerun.json",
            "solution.py",
            "submission.csv",
        ]  # fmt: skip  (input link, scratch dirs and kernel slots are gone)
        assert json.loads((root / "rerun.json").read_text()) == report.model_dump(mode="json")
        assert (root / "output.txt").read_text() == (run_dir / "nodes/1/output.txt").read_text()
    assert second.timeout_s == 30


@pytest.mark.slow
def test_a_nondeterministic_metric_does_not_reproduce(
    run_dir: Path, unchanged_journal: None
) -> None:
    done = rerun(str(run_dir), "2", "--diff-lines", "4")
    assert done.exit_code == 1, done.output
    report = latest_report(run_dir, 2)
    assert not report.reproduced and report.status_now == "ok"
    assert report.metric_then is not None and report.metric_now is not None
    assert report.metric_difference == pytest.approx(report.metric_now - report.metric_then)
    out = done.output
    assert f"(difference {report.metric_difference:+.6g}" in out
    assert f"--- nodes/2/output.txt (recorded)\n+++ nodes/2/reruns/{report.rerun}/" in out
    assert f"-VALIDATION_METRIC: {report.metric_then!r}\n" in out
    assert f"[{len(report.output_diff) - 4} more diff lines cut]" in out
    assert "NOT reproduced: metric " in out


@pytest.mark.slow
def test_a_tolerance_accepts_a_difference(run_dir: Path) -> None:
    report = rerun_node(run_dir, 2, tolerance=10.0)  # any two metrics in (0, 1)
    assert report.reproduced and not report.output_identical


@pytest.mark.slow
def test_a_buggy_node_fails_again(run_dir: Path, unchanged_journal: None) -> None:
    done = rerun(str(run_dir), "3", "--timeout", "1m")
    assert done.exit_code == 0, done.output
    assert "status      error → error  (same)" in done.output
    assert "error then  ValueError: boom\nerror now   ValueError: boom" in done.output
    assert "metric      none → none  (same)" in done.output
    report = latest_report(run_dir, 3)
    assert report.timeout_s == 60 and not report.submission_now


@pytest.mark.slow
def test_json_and_another_sandbox(run_dir: Path) -> None:
    done = rerun(str(run_dir), "1", "--json", "--sandbox", "local")
    assert done.exit_code == 0, done.output
    report = RerunReport.model_validate_json(done.stdout)
    assert report.reproduced and report.sandbox == "local" and not report.sandboxed
    assert "warning: sandbox 'local' isolates nothing" in done.stderr


@pytest.mark.slow
def test_bad_input_is_one_line(run_dir: Path) -> None:
    cases = {
        ("4",): ("node 4 has no code to run (the model", "podium show"),
        ("9",): ("has no node 9", "this run has nodes 1–4"),
        ("1", "--timeout", "soon"): ("--timeout: not a duration: 'soon'", None),
        ("1", "--sandbox", "docker"): ("docker", None),
    }
    for args, (message, hint) in cases.items():
        done = rerun(str(run_dir), *args)
        assert isinstance(done.exception, UserError), (args, done.output)
        assert message in done.exception.message
        assert hint is None or hint in (done.exception.hint or "")
    assert not (run_dir / "nodes" / "4" / "reruns").exists()


@pytest.mark.slow
def test_missing_task_data_is_one_line_with_a_hint(run_dir: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(run_dir, tmp_path / "run")
    config = (copy / "config.toml").read_text()
    task = next(line for line in config.splitlines() if line.startswith("task = "))
    (copy / "config.toml").write_text(config.replace(task, f'task = "{tmp_path}/gone"'))
    done = rerun(str(copy), "1")
    assert isinstance(done.exception, UserError)
    assert (
        done.exception.message
        == f"cannot load the run's task: task folder not found: {tmp_path}/gone"
    )
    assert done.exception.hint is not None and "data_dir" in done.exception.hint


def test_a_node_without_a_recorded_execution_cannot_be_compared(recorded_run: RecordedRun) -> None:
    with pytest.raises(UserError) as caught:
        rerun_node(recorded_run.root, recorded_run.running)
    assert caught.value.message == (
        "node 7 has no recorded execution to compare with: it has not finished (executing)"
    )
    assert caught.value.hint == f"its code is in {recorded_run.root / 'nodes/7/solution.py'}"
