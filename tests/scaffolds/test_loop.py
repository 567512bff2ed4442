"""The search loop end to end, in process: podium.run on the toy task with a scripted model and
real kernels. Each test is one small run (a kernel per executed node, ~0.7 s each)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import podium
from podium.errors import RunDirError
from podium.formats import Journal
from tests.support import (
    code_answer,
    node_answers,
    review_answer,
    run_config,
    solution,
    write_script,
)

pytestmark = pytest.mark.slow


def test_run_writes_the_run_dir_contract(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            node_answers(solution(0.80), plan="Draft one."),
            node_answers(solution(0.95), plan="Draft two."),
            node_answers(solution(0.70), plan="Draft three."),
        ],
    )
    out = tmp_path / "run"
    result = podium.run(run_config(script, out, data_dir, steps=3, search={"num_drafts": 3}))

    assert result.run_dir == out
    for name in ("config.toml", "journal.sqlite", "summary.json"):
        assert (out / name).is_file()
    for node_id in (1, 2, 3):
        node_dir = out / "nodes" / str(node_id)
        assert (node_dir / "solution.py").read_text().startswith("import shutil")
        assert "VALIDATION_METRIC" in (node_dir / "output.txt").read_text()
        assert (node_dir / "submission.csv").is_file()
        assert not (node_dir / "working").exists()  # removed unless --keep-working
        assert not (node_dir / "input").exists()  # the data link is not left behind
    # best/ is the best node (2), not the last one run (3)
    assert json.loads((out / "best" / "node.json").read_text())["node_id"] == 2
    assert (out / "best" / "solution.py").read_text() == (out / "nodes/2/solution.py").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 3
    assert summary["best_node"] == 2
    assert summary["best_metric"] == 0.95
    assert summary["stop_reason"] == "steps"
    assert summary["status"] == "finished"
    assert summary["sandboxed"] is True and summary["sandbox"] == "bwrap"
    assert "memory" in summary["sandbox_detail"]
    assert summary["versions"]["podium"] == podium.__version__
    meta = dict(sqlite3.connect(out / "journal.sqlite").execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == "1" and meta["podium_version"] == podium.__version__


# A sparse 2 GiB file: the host must refuse it without reading it.
HUGE_SUBMISSION = "open('submission/submission.csv', 'wb').truncate(2 * 1024**3)"


def test_failing_nodes_count_as_steps_and_never_stop_the_run(
    tmp_path: Path, data_dir: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            code_answer("", error="rate limited"),  # the model call fails
            {"role": "code", "text": "Only prose, no code at all."},  # nothing to run
            node_answers(solution(error="ValueError('boom')")),  # the solution raises
            node_answers(solution(None), metric=None),  # no metric anywhere
            node_answers(solution(0.5, submit=False)),  # no submission
            node_answers(solution(0.5, submit=False, extra=HUGE_SUBMISSION)),
            node_answers(solution(0.9)),
        ],
    )
    result = podium.run(
        run_config(script, tmp_path / "run", data_dir, steps=7, search={"num_drafts": 7})
    )
    nodes = Journal.open(tmp_path / "run" / "journal.sqlite").nodes()
    reasons = [n.bug_reason for n in nodes]
    assert reasons[0] is not None and "model call failed: rate limited" in reasons[0]
    assert reasons[1] == "the model's answer contains no Python code"
    assert reasons[2] == "ValueError: boom"
    assert reasons[3] is not None and "no VALIDATION_METRIC" in reasons[3]
    assert reasons[4] == "no submission/submission.csv was written"
    assert reasons[5] == (  # refused by the sandbox's hand-over at the task's bound, unread
        "submission/submission.csv is 2,147,483,648 bytes, over the 104,857,600-byte limit"
    )
    assert not (tmp_path / "run" / "nodes" / "6" / "submission.csv").exists()
    assert reasons[6] is None and nodes[6].metric is not None
    assert result.summary["steps"] == 7 and result.summary["buggy_nodes"] == 6
    assert result.final is not None and result.final.id == 7


def test_metric_comes_from_the_line_then_the_review_and_direction_from_the_task(
    tmp_path: Path, data_dir: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            # the line says 0.6; the review claims 0.99: the line wins
            [code_answer(solution(0.6)), review_answer(metric=0.99)],
            # no line: the review's metric is used
            [code_answer(solution(None)), review_answer(metric=0.7)],
            # the review flags a bug the hard checks cannot see: buggy despite the metric
            [code_answer(solution(0.99)), review_answer(is_bug=True, summary="Leaky split.")],
        ],
    )
    podium.run(run_config(script, tmp_path / "run", data_dir, steps=3, search={"num_drafts": 3}))
    nodes = Journal.open(tmp_path / "run" / "journal.sqlite").nodes()
    assert nodes[0].metric is not None and nodes[0].metric.value == 0.6
    assert nodes[1].metric is not None and nodes[1].metric.value == 0.7
    assert all(n.metric is None or n.metric.lower_is_better is False for n in nodes)
    assert nodes[2].is_buggy and nodes[2].bug_reason == "review: Leaky split."


def test_rejected_credentials_stop_the_run_and_keep_what_was_done(
    tmp_path: Path, data_dir: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [node_answers(solution(0.8)), code_answer("", error="invalid API key", fatal=True)],
    )
    result = podium.run(run_config(script, tmp_path / "run", data_dir, steps=5))
    assert result.summary["status"] == "failed"
    assert result.summary["stop_reason"] == "error"
    assert "invalid API key" in result.summary["error"]
    assert result.summary["steps"] == 1
    assert json.loads((tmp_path / "run/best/node.json").read_text())["node_id"] == 1


def test_a_model_that_fails_node_after_node_stops_the_run(tmp_path: Path, data_dir: Path) -> None:
    """A dead endpoint fails every call: after a few nodes in a row the run stops (non-zero),
    and the nodes it stopped on are re-run by a resume, once the model is back."""
    failing = [code_answer("", error="connection refused")] * 4
    script = write_script(tmp_path / "s.jsonl", [node_answers(solution(0.8)), *failing])
    result = podium.run(
        run_config(script, tmp_path / "run", data_dir, steps=8, search={"num_drafts": 8})
    )
    assert result.summary["status"] == "failed"
    assert "3 nodes in a row could not get code" in result.summary["error"]
    assert "connection refused" in result.summary["error"]
    assert result.summary["steps"] == 3  # the good node and two failed ones; the third re-runs
    journal = Journal.open(tmp_path / "run" / "journal.sqlite")
    assert [n.id for n in journal.unfinished()] == [4]
    journal.close()


def test_prompts_are_recorded_and_free_of_run_specific_text(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [node_answers(solution(0.8), plan="First."), node_answers(solution(0.9), plan="Second.")],
    )
    podium.run(run_config(script, tmp_path / "run", data_dir, steps=2, search={"num_drafts": 1}))
    calls = Journal.open(tmp_path / "run" / "journal.sqlite").calls()
    assert [(c.node_id, c.role, c.seq) for c in calls] == [
        (1, "code", 0), (1, "review", 0), (2, "code", 1), (2, "review", 1),
    ]  # fmt: skip
    improve = calls[2].request.messages[-1].content
    assert "First." in improve and 'print("VALIDATION_METRIC: 0.8")' in improve
    for call in calls:
        text = json.dumps([m.content for m in call.request.messages])
        assert str(tmp_path) not in text and str(data_dir) not in text
        assert call.response is not None


def test_same_seed_and_answers_give_the_same_tree(tmp_path: Path, data_dir: Path) -> None:
    answers = [node_answers(solution(m)) for m in (0.5, 0.6)]
    answers += [node_answers(solution(error="KeyError('x')"))]
    answers += [node_answers(solution(m)) for m in (0.7, 0.8, 0.9)]
    script = write_script(tmp_path / "s.jsonl", answers)
    trees = []
    for name in ("a", "b"):
        cfg = run_config(script, tmp_path / name, data_dir, steps=6, seed=11,
                         search={"num_drafts": 3, "debug_prob": 0.5})  # fmt: skip
        podium.run(cfg)
        journal = Journal.open(tmp_path / name / "journal.sqlite")
        trees.append(
            [(n.id, n.operator, n.parent_ids, n.code, n.is_buggy) for n in journal.nodes()]
            + [c.request.model_dump_json() for c in journal.calls()]
        )
    assert trees[0] == trees[1]


def test_time_budget_stops_the_run(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl", [node_answers(solution(0.5, sleep=30)), node_answers(solution())]
    )
    result = podium.run(run_config(script, tmp_path / "run", data_dir, steps=5, budget={"time": 3}))
    assert result.summary["stop_reason"] == "time"
    assert result.summary["steps"] == 1  # the node was cut at the budget, not at its 30 s sleep
    assert result.summary["elapsed_s"] < 15


def test_two_workers_expand_nodes_concurrently(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [node_answers(solution(0.5, sleep=1.5))] * 4)
    result = podium.run(
        run_config(script, tmp_path / "run", data_dir, steps=4, workers=2, search={"num_drafts": 4})
    )
    nodes = Journal.open(tmp_path / "run" / "journal.sqlite").nodes()
    assert sorted(n.id for n in nodes) == [1, 2, 3, 4]
    assert {n.worker for n in nodes} == {0, 1}
    assert sorted(n.step or 0 for n in nodes) == [1, 2, 3, 4]
    serial = sum(n.timings.total_s for n in nodes)
    assert result.summary["elapsed_s"] < serial * 0.8


def test_an_existing_run_dir_is_not_overwritten(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [node_answers(solution())])
    cfg = run_config(script, tmp_path / "run", data_dir, steps=1)
    podium.run(cfg)
    with pytest.raises(RunDirError, match="already holds a run"):
        podium.run(cfg)
