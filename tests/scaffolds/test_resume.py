"""Crash safety: SIGKILL the real CLI at the most dangerous moments (named failpoints) and at
random moments, resume, and check the finished run is exactly the uninterrupted one.

Also Ctrl-C / SIGTERM: the run stops promptly, marks the node in flight interrupted, writes
its summary, and resumes."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.formats import Journal
from podium.records import NodeState
from tests.support import (
    TOY_TASK,
    cli_env,
    code_answer,
    podium_cli,
    podium_popen,
    review_answer,
    run_config,
    solution,
    write_script,
)

pytestmark = pytest.mark.slow

STEPS = 6
SEARCH = {"num_drafts": 2, "debug_prob": 0.5, "max_debug_depth": 3}
SEED = 0  # with this seed every decision from node 3 on depends on the RNG


def _script(path: Path) -> Path:
    """Answers for any path the search may take: every node runs, some fail, metrics vary."""
    codes = [
        solution(0.61, sleep=0.2),
        solution(error="KeyError('x3')"),
        solution(0.72, sleep=0.2),
        solution(None),
        solution(0.83, sleep=0.2),
        solution(0.64),
    ]
    answers: list[Any] = []
    for i, code in enumerate(codes):
        answers.append(code_answer(code, plan=f"Plan {i}.", delay_s=0.3))
        answers.append(review_answer(summary=f"Review {i}.", metric=0.5))
    return write_script(path, answers)


def _cli_args(script: Path, out: Path, data_dir: Path) -> list[str]:
    args = ["run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", str(STEPS),
            "--seed", str(SEED), "--out", str(out), "--data-dir", str(data_dir)]  # fmt: skip
    for key, value in SEARCH.items():
        args += ["-o", f"search.{key}={value}"]
    return args


def _tree(run_dir: Path) -> dict[str, Any]:
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        nodes = journal.nodes()
        return {
            "nodes": [
                (
                    n.id,
                    n.step,
                    n.state,
                    n.operator,
                    n.parent_ids,
                    n.code,
                    n.is_buggy,
                    n.metric.value if n.metric else None,
                )
                for n in nodes
            ],
            "calls": [
                (c.node_id, c.role, c.seq, c.request.messages[-1].content) for c in journal.calls()
            ],
            "best": json.loads((run_dir / "best" / "node.json").read_text())["node_id"],
            "discarded": journal.discarded_count(),
        }
    finally:
        journal.close()


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> tuple[Path, dict]:
    """The script, and the tree of an uninterrupted run of it (the reference)."""
    base = tmp_path_factory.mktemp("resume")
    script = _script(base / "script.jsonl")
    cfg = run_config(script, base / "reference", data_dir, steps=STEPS, seed=SEED, search=SEARCH)
    podium.run(cfg)
    reference = _tree(base / "reference")
    operators = {n[3] for n in reference["nodes"]}
    assert {"draft", "debug"} <= operators or {"draft", "improve"} <= operators
    return script, reference


def _kernels_in(run_dir: Path) -> list[int]:
    """Pids of processes (kernels) whose working directory is inside the run dir."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(run_dir) in str((entry / "cwd").readlink()):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _assert_same_as_reference(run_dir: Path, reference: dict[str, Any]) -> None:
    tree = _tree(run_dir)
    assert tree["nodes"] == reference["nodes"]
    assert tree["calls"] == reference["calls"]
    assert tree["best"] == reference["best"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] == STEPS and summary["status"] == "finished"
    assert not (run_dir / "best.new").exists() and not (run_dir / "best.old").exists()
    best = reference["best"]
    assert (run_dir / "best/solution.py").read_bytes() == (
        run_dir / f"nodes/{best}/solution.py"
    ).read_bytes()
    for node_id, *_ in tree["nodes"]:
        assert (run_dir / f"nodes/{node_id}/solution.py").is_file()
        assert (run_dir / f"nodes/{node_id}/output.txt").is_file()


def _wait_no_kernels(run_dir: Path) -> None:
    deadline = time.monotonic() + 5
    while _kernels_in(run_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _kernels_in(run_dir) == [], "a kernel outlived the killed run"


@pytest.mark.parametrize(
    "failpoint",
    [
        # Node 4 is chosen with the RNG (nodes 1-2 are drafts), so a resume must rewind it.
        "model.call:7",  # node 4's answer received, not yet recorded
        "exec.running:4",  # node 4's solution running
        "journal.write:24",  # node 4's "done" transaction written, not committed
        "best.copy:3",  # the second update of best/ half done
    ],
)
def test_resume_after_sigkill_at_a_failpoint(
    failpoint: str, session: tuple[Path, dict], tmp_path: Path, data_dir: Path
) -> None:
    script, reference = session
    out = tmp_path / "run"
    killed = podium_cli(*_cli_args(script, out, data_dir), env=cli_env(PODIUM_FAILPOINTS=failpoint))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    _wait_no_kernels(out)
    resumed = podium_cli("resume", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming after" in resumed.stdout
    _assert_same_as_reference(out, reference)


def test_resume_after_random_sigkills(
    session: tuple[Path, dict], tmp_path: Path, data_dir: Path
) -> None:
    script, reference = session
    out = tmp_path / "run"
    rng = random.Random(20261130)
    proc = podium_popen(*_cli_args(script, out, data_dir))
    _wait_for(lambda: _node_count(out) >= 1, proc)
    for _ in range(3):
        time.sleep(rng.uniform(0.0, 2.5))
        proc.kill()
        proc.wait()
        _wait_no_kernels(out)
        proc = podium_popen("resume", str(out))
        time.sleep(rng.uniform(1.0, 3.0))
    proc.kill()
    proc.wait()
    final = podium_cli("resume", str(out))
    # On a quick machine the last resume may have finished the run before its kill: then
    # there is nothing left to resume, and the run must still equal the reference.
    finished = "nothing to resume" in final.stderr and "no node is unfinished" in final.stderr
    assert final.returncode == 0 or finished, final.stderr
    _assert_same_as_reference(out, reference)


def _node_count(run_dir: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{run_dir / 'journal.sqlite'}?mode=ro", uri=True)
        try:
            return int(db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def _node_state(run_dir: Path, node_id: int) -> str | None:
    try:
        db = sqlite3.connect(f"file:{run_dir / 'journal.sqlite'}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT state FROM nodes WHERE id=?", (node_id,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def _wait_for(condition: Any, proc: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out waiting for the run"
        time.sleep(0.05)


# GNU timeout passes a SIGTERM on to its child and then to the child's process group, and
# supervisors repeat it: a second SIGTERM, even after the first was taken, is the same request
# (a graceful stop), never "quit at once" with the summary left running.
@pytest.mark.parametrize(
    ("signum", "twice"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["SIGINT", "SIGTERM", "SIGTERM-twice"],
)
def test_interrupt_marks_the_node_and_resume_finishes(
    signum: int, twice: bool, tmp_path: Path, data_dir: Path
) -> None:
    gate = tmp_path / "gate"
    gate.touch()
    hold = f"import os\nwhile os.path.exists({str(gate)!r}): time.sleep(0.05)"
    answers: list[Any] = [code_answer(solution(0.5)), review_answer()]
    answers += [code_answer(solution(0.6, extra=hold)), review_answer()]
    answers += [code_answer(solution(0.7)), review_answer()]
    script = write_script(tmp_path / "s.jsonl", answers)
    out = tmp_path / "run"
    proc = podium_popen(
        "run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", "3",
        "-o", "search.num_drafts=3", "--out", str(out), "--data-dir", str(data_dir),
        "--sandbox", "local",  # the held solution watches a file on the host
    )  # fmt: skip
    _wait_for(lambda: _node_state(out, 2) == NodeState.EXECUTING.value, proc)
    time.sleep(0.5)  # let the kernel start running the held solution
    sent = time.monotonic()
    proc.send_signal(signum)
    if twice:  # once the first was taken (its warning printed), as a supervisor repeats it
        assert proc.stderr is not None
        while "stopping (SIGTERM)" not in (line := proc.stderr.readline()):
            assert line, "the run ended without taking the first SIGTERM"
        proc.send_signal(signum)
    stdout, _ = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 10
    assert proc.returncode == 130
    assert f"podium resume {out}" in stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] == 1
    assert _node_state(out, 2) == NodeState.INTERRUPTED.value
    _wait_no_kernels(out)

    gate.unlink()
    resumed = podium_cli("resume", str(out))
    assert resumed.returncode == 0, resumed.stderr
    nodes = Journal.open(out / "journal.sqlite").nodes()
    assert [(n.id, n.step, n.state) for n in nodes] == [(i, i, NodeState.DONE) for i in (1, 2, 3)]
    assert json.loads((out / "summary.json").read_text())["discarded_nodes"] == 1


def test_resume_can_raise_the_step_budget(tmp_path: Path, data_dir: Path) -> None:
    answers = [[code_answer(solution(m)), review_answer()] for m in (0.5, 0.6, 0.7)]
    script = write_script(tmp_path / "s.jsonl", answers)
    out = tmp_path / "run"
    podium.run(run_config(script, out, data_dir, steps=2, search={"num_drafts": 3}))
    finished = podium_cli("resume", str(out))  # nothing to do: said in one line, not started up
    assert finished.returncode == 2
    assert finished.stderr.splitlines() == [
        f"error: nothing to resume: {out} has finished its 2 steps and no node is unfinished",
        f"hint: raise that budget to go on, e.g. podium resume {out} --steps 12",
    ]
    assert "sandbox" not in finished.stdout
    (out / "nodes" / "77").mkdir()  # as an older Podium's resume could leave: no journal row
    (out / "nodes" / "77" / "solution.py").write_text("print(77)\n")
    result = podium.resume(out, {"budget.steps": 3})
    assert sorted(p.name for p in (out / "nodes").iterdir()) == ["1", "2", "3"]
    assert result.summary["steps"] == 3
    assert "steps = 3" in (out / "config.toml").read_text()
