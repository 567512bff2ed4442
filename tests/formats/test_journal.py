"""The SQLite journal (the run's source of truth) and the run directory's file handling."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pytest

from podium.errors import RunDirError
from podium.formats.journal import Journal
from podium.formats.rundir import RunDir
from podium.records import (
    ExecResult,
    ExecStatus,
    Message,
    Metric,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Node,
    NodeState,
    RequestMeta,
    Timings,
    ToolCall,
    ToolSpec,
    Usage,
)

Role = Literal["code", "review"]
META = {"podium_version": "0.0-test", "task": "toy"}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite"


class Decisions:
    """Begins nodes the way the loop does: one RNG draw per decision, states before/after."""

    def __init__(self, journal: Journal, seed: int = 7) -> None:
        self.journal = journal
        self.rng = random.Random(seed)
        self.before: dict[int, object] = {}
        self.after: dict[int, object] = {}

    def begin(self, node: Node, elapsed_s: float = 0.0) -> Node:
        before = self.rng.getstate()
        self.rng.random()
        after = self.rng.getstate()
        self.before[node.id], self.after[node.id] = before, after
        self.journal.begin(node, before, after, elapsed_s)
        return node


def finished(node: Node, step: int, value: float | None = 0.8, **changes: object) -> Node:
    update: dict[str, object] = {
        "state": NodeState.DONE,
        "step": step,
        "plan": f"plan of node {node.id}",
        "code": f"print('VALIDATION_METRIC: {value}')\n",
        "exec": ExecResult(
            status=ExecStatus.OK,
            output=f"VALIDATION_METRIC: {value}\n",
            output_bytes=24,
            duration_s=0.25,
            kernel_start_s=0.5,
        ),
        "metric": Metric(value=value, lower_is_better=False) if value is not None else None,
        "summary": "fits a model",
        "has_submission": True,
        "usage": Usage(input_tokens=100, output_tokens=20, cost_usd=0.0015, calls=2),
        "timings": Timings(model_s=1.5, exec_s=0.25, total_s=2.0),
        "finished_at": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
    }
    update.update(changes)
    return node.model_copy(update=update)


def call(node_id: int, role: Role, seq: int, text: str = "ok") -> ModelCall:
    schema = {"type": "object", "properties": {"is_bug": {"type": "boolean"}}}
    request = ModelRequest(
        messages=[
            Message(role="system", content="You are an ML engineer."),
            Message(role="user", content=f"node {node_id}: solve the task"),
        ],
        tools=[ToolSpec(name="submit_review", description="review", parameters=schema)],
        tool_choice="submit_review" if role == "review" else None,
        temperature=0.5,
        meta=RequestMeta(node_id=node_id, role=role, seq=seq),
    )
    response = ModelResponse(
        text=text,
        tool_call=ToolCall(name="submit_review", arguments={"is_bug": False, "metric": 0.8})
        if role == "review"
        else None,
        usage=Usage(input_tokens=50, output_tokens=10, cost_usd=0.001, calls=1),
        latency_s=0.75,
        model="scripted/test",
    )
    return ModelCall(node_id=node_id, role=role, seq=seq, request=request, response=response)


# --- the journal ---------------------------------------------------------------------------


def test_nodes_read_back_identical_after_reopening(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    a = d.begin(Node(id=1, operator="draft"), elapsed_s=1.0)
    b = d.begin(Node(id=2, operator="draft"), elapsed_s=2.0)
    a = finished(a, step=1, value=0.75)
    b = finished(b, step=2, value=0.8)
    journal.update(a, elapsed_s=3.0)
    journal.update(b, elapsed_s=4.0)
    child = d.begin(Node(id=3, operator="crossover", parent_ids=(1, 2), worker=1), elapsed_s=5.0)
    child = finished(
        child,
        step=3,
        value=None,
        is_buggy=True,
        bug_reason="no VALIDATION_METRIC line",
        exec=ExecResult(
            status=ExecStatus.ERROR,
            output="Traceback ...\nKeyError: 'y'\n",
            error_name="KeyError",
            error_value="'y'",
            traceback="Traceback ...\nKeyError: 'y'",
            duration_s=0.1,
        ),
        has_submission=False,
    )
    journal.update(child, elapsed_s=6.0)
    journal.close()

    reopened = Journal.open(path)
    try:
        nodes = reopened.nodes()
        assert nodes == [a, b, child]
        assert nodes[2].parent_ids == (1, 2)
        assert isinstance(nodes[2].parent_ids, tuple)
        assert nodes[0].metric == Metric(value=0.75, lower_is_better=False)
        assert nodes[2].exec is not None and nodes[2].exec.status is ExecStatus.ERROR
        assert nodes[0].finished_at == datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
        meta = reopened.meta()
        assert meta["podium_version"] == "0.0-test"
        assert meta["task"] == "toy"
        assert meta["schema_version"] == "1"
    finally:
        reopened.close()


def test_unfinished_node_states_are_read_back(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    node = d.begin(Node(id=1, operator="draft"))
    node = node.model_copy(update={"state": NodeState.EXECUTING, "code": "print(1)"})
    journal.update(node, elapsed_s=1.0)
    journal.close()
    reopened = Journal.open(path)
    assert reopened.nodes() == [node]
    assert reopened.unfinished() == [node]
    assert reopened.nodes(NodeState.EXECUTING) == [node]
    assert reopened.nodes(NodeState.DONE) == []
    reopened.close()


def test_done_nodes_come_in_step_order(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    for node_id in (1, 2, 3, 4):
        d.begin(Node(id=node_id, operator="draft"))
    # Workers finish out of id order; node 3 is still running.
    journal.update(finished(Node(id=2, operator="draft"), step=1), elapsed_s=1.0)
    journal.update(finished(Node(id=4, operator="draft"), step=2), elapsed_s=2.0)
    journal.update(finished(Node(id=1, operator="draft"), step=3), elapsed_s=3.0)

    assert [n.id for n in journal.nodes(NodeState.DONE)] == [2, 4, 1]
    assert [n.step for n in journal.nodes(NodeState.DONE)] == [1, 2, 3]
    assert [n.id for n in journal.nodes()] == [1, 2, 3, 4]
    assert [n.id for n in journal.unfinished()] == [3]
    journal.close()


def test_model_calls_round_trip(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    d.begin(Node(id=1, operator="draft"))
    d.begin(Node(id=2, operator="draft"))
    calls = [call(1, "code", 0, "plan one"), call(2, "code", 1, "plan two"), call(1, "review", 0)]
    failed = ModelCall(
        node_id=2, role="review", seq=1, request=calls[1].request, error="ModelError: 500"
    )
    for c in [*calls, failed]:
        journal.record_call(c)
    journal.close()

    reopened = Journal.open(path)
    assert reopened.calls(1) == [calls[0], calls[2]]
    assert reopened.calls(2) == [calls[1], failed]
    assert reopened.calls() == [*calls, failed]
    assert reopened.calls(99) == []
    review = reopened.calls(1)[1].response
    assert review is not None and review.tool_call is not None
    assert review.tool_call.arguments == {"is_bug": False, "metric": 0.8}
    reopened.close()


def test_call_numbers_continue_past_every_call_ever_made(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    for node_id in (1, 2, 3):
        d.begin(Node(id=node_id, operator="draft"))
    assert journal.next_seqs() == {}
    journal.record_call(call(1, "code", 0))
    journal.record_call(call(3, "code", 1))  # node 3 asked before node 2 finished
    journal.record_call(call(2, "code", 2))
    journal.record_call(call(2, "review", 0))
    journal.update(finished(Node(id=2, operator="draft"), step=1), elapsed_s=1.0)
    assert journal.next_seqs() == {"code": 3, "review": 1}
    journal.restart_unfinished()  # nodes 1 and 3: their calls move to `discarded`
    assert journal.next_seqs() == {"code": 3, "review": 1}  # their numbers are never reused
    assert journal.earlier_seqs(1) == {"code": [0]}
    assert journal.earlier_seqs(3) == {"code": [1]}
    assert journal.earlier_seqs(2) == {}
    journal.close()


def test_restart_unfinished_keeps_each_decision_under_its_id(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    for node_id, parents in ((1, ()), (2, ()), (3, (1,))):
        d.begin(Node(id=node_id, operator="improve" if parents else "draft", parent_ids=parents))
    done = finished(Node(id=1, operator="draft"), step=1)
    journal.update(done, elapsed_s=1.0)
    half = Node(id=3, operator="improve", parent_ids=(1,), code="print(1)", worker=2)
    journal.update(half.model_copy(update={"state": NodeState.EXECUTING}), elapsed_s=1.5)
    kept, lost = call(1, "code", 0), [call(2, "code", 1), call(3, "code", 2), call(3, "review", 0)]
    for c in [kept, *lost]:
        journal.record_call(c)

    restarted = journal.restart_unfinished()

    assert [(n.id, n.operator, n.parent_ids) for n in restarted] == [
        (2, "draft", ()),
        (3, "improve", (1,)),
    ]
    assert all(n.state is NodeState.PROPOSING and n.code == "" for n in restarted)
    assert journal.nodes(NodeState.DONE) == [done]
    assert [n.id for n in journal.unfinished()] == [2, 3]  # still decided, to run again
    assert journal.calls() == [kept]
    assert journal.next_node_id() == 4  # no id is handed out twice
    assert journal.discarded_count() == 2
    journal.close()

    reopened = Journal.open(path)
    assert [n.id for n in reopened.restart_unfinished()] == [2, 3]  # killed again: same nodes
    reopened.close()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT node_id, node, calls FROM discarded ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [2, 3, 2, 3]
    assert Node.model_validate_json(rows[1][1]).code == "print(1)"  # what the attempt had done
    kept_calls = [ModelCall.model_validate(c) for c in json.loads(rows[1][2])]
    assert kept_calls == lost[1:]


def test_the_rng_continues_after_the_last_decision(path: Path) -> None:
    journal = Journal.create(path, META)
    assert journal.rng_state() is None
    d = Decisions(journal, seed=2026)
    for node_id in (1, 2, 3):
        d.begin(Node(id=node_id, operator="draft"))
    journal.update(finished(Node(id=1, operator="draft"), step=1), elapsed_s=1.0)
    journal.close()
    reopened = Journal.open(path)
    reopened.restart_unfinished()  # decisions 2 and 3 are kept: nothing to draw again
    assert reopened.rng_state() == d.after[3] == d.rng.getstate()
    reopened.close()


def test_finished_nodes_not_yet_given_a_step_come_last_in_id_order(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    for node_id in (1, 2, 3, 4):
        d.begin(Node(id=node_id, operator="draft"))
    journal.update(finished(Node(id=4, operator="draft"), step=None), elapsed_s=1.0)
    journal.update(finished(Node(id=3, operator="draft"), step=None), elapsed_s=1.0)
    journal.update(finished(Node(id=1, operator="draft"), step=1), elapsed_s=1.0)
    assert [(n.id, n.step) for n in journal.nodes(NodeState.DONE)] == [(1, 1), (3, None), (4, None)]
    journal.close()


def test_elapsed_time_is_persisted_with_each_write(path: Path) -> None:
    journal = Journal.create(path, META)
    assert journal.elapsed_s == 0.0
    d = Decisions(journal)
    d.begin(Node(id=1, operator="draft"), elapsed_s=12.5)
    assert journal.elapsed_s == 12.5
    journal.close()
    assert Journal.open(path).elapsed_s == 12.5

    journal = Journal.open(path)
    journal.update(finished(Node(id=1, operator="draft"), step=1), elapsed_s=20.25)
    journal.record_call(call(1, "code", 0))  # carries no time: keeps the last one
    journal.close()
    assert Journal.open(path).elapsed_s == 20.25

    journal = Journal.open(path)
    journal.set_state("note", "x", elapsed_s=31.0)
    journal.close()
    reopened = Journal.open(path)
    assert reopened.elapsed_s == 31.0
    assert reopened.get_state("note") == "x"
    reopened.close()


def test_another_schema_version_is_refused(path: Path) -> None:
    Journal.create(path, META).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    with pytest.raises(RunDirError, match="999") as err:
        Journal.open(path)
    assert err.value.hint


def test_a_journal_without_schema_version_is_refused(path: Path) -> None:
    Journal.create(path, META).close()
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM meta WHERE key='schema_version'")
    with pytest.raises(RunDirError):
        Journal.open(path)


def test_a_missing_journal_is_refused_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "no-run" / "journal.sqlite"
    with pytest.raises(RunDirError):
        Journal.open(missing)
    assert not missing.exists()
    with pytest.raises(RunDirError):
        Journal.open(tmp_path)  # a directory is no journal either


def test_a_file_that_is_not_a_database_is_refused(path: Path) -> None:
    path.write_bytes(b"this is not SQLite, just some text that happens to be here\n" * 20)
    with pytest.raises(RunDirError):
        Journal.open(path)


def test_the_journal_uses_wal(path: Path) -> None:
    Journal.create(path, META).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_second_reader_sees_committed_writes_while_open(path: Path) -> None:
    journal = Journal.create(path, META)
    d = Decisions(journal)
    node = d.begin(Node(id=1, operator="draft"))
    reader = Journal.open(path)
    try:
        assert reader.nodes() == [node]
        done = finished(node, step=1)
        journal.update(done, elapsed_s=1.0)
        assert reader.nodes(NodeState.DONE) == [done]
    finally:
        reader.close()
        journal.close()


# --- the run directory ----------------------------------------------------------------------


@pytest.fixture
def rundir(tmp_path: Path) -> RunDir:
    root = tmp_path / "run"
    root.mkdir()
    return RunDir(root)


def node_with_files(rundir: RunDir, node_id: int, step: int, metric: float) -> Node:
    node_dir = rundir.reset_node(node_id)
    (node_dir / "solution.py").write_text(f"print({node_id})\n")
    (node_dir / "submission.csv").write_text(f"id,y\n1,{node_id}\n")
    return Node(
        id=node_id,
        operator="improve",
        step=step,
        state=NodeState.DONE,
        metric=Metric(value=metric, lower_is_better=False),
    )


def test_publish_best_writes_and_replaces_best(rundir: RunDir) -> None:
    first = node_with_files(rundir, 1, step=1, metric=0.7)
    rundir.publish_best(first)
    assert (rundir.best / "solution.py").read_text() == "print(1)\n"
    assert (rundir.best / "submission.csv").read_text() == "id,y\n1,1\n"
    info = json.loads((rundir.best / "node.json").read_text())
    assert info["node_id"] == 1 and info["step"] == 1 and info["metric"] == 0.7
    assert rundir.best_node_id() == 1

    second = node_with_files(rundir, 2, step=5, metric=0.9)
    rundir.publish_best(second)
    assert (rundir.best / "solution.py").read_text() == "print(2)\n"
    assert (rundir.best / "submission.csv").read_text() == "id,y\n1,2\n"
    assert json.loads((rundir.best / "node.json").read_text())["node_id"] == 2
    assert rundir.best_node_id() == 2
    assert sorted(p.name for p in rundir.root.iterdir()) == ["best", "nodes"]


def test_publish_best_cleans_leftovers_of_a_crashed_publish(rundir: RunDir) -> None:
    rundir.publish_best(node_with_files(rundir, 1, step=1, metric=0.7))
    (rundir.root / "best.new").mkdir()
    (rundir.root / "best.new" / "solution.py").write_text("half written")
    (rundir.root / "best.old").mkdir()
    rundir.publish_best(node_with_files(rundir, 2, step=2, metric=0.8))
    assert not (rundir.root / "best.new").exists()
    assert not (rundir.root / "best.old").exists()
    assert rundir.best_node_id() == 2


def test_publish_best_never_copies_a_symlinked_submission(rundir: RunDir, tmp_path: Path) -> None:
    secret = tmp_path / "answers.csv"
    secret.write_text("the private answers\n")
    node = node_with_files(rundir, 1, step=1, metric=0.7)
    (rundir.node_dir(1) / "submission.csv").unlink()
    (rundir.node_dir(1) / "submission.csv").symlink_to(secret)
    rundir.publish_best(node)
    assert (rundir.best / "solution.py").is_file()
    assert not (rundir.best / "submission.csv").exists()


def test_a_run_dir_has_one_writer(rundir: RunDir) -> None:
    rundir.lock()
    other = RunDir(rundir.root)
    with pytest.raises(RunDirError, match="in use"):
        other.lock()
    rundir.unlock()
    other.lock()  # free again once the first holder lets go
    other.unlock()
