"""The synthetic runs (``tests/viewer/synthetic/``) read back through the viewer's reader
as promised: every node, the strategy's own tree, crossovers with two parents, the best path
from ``best/``, buggy nodes with kernel-shaped tracebacks, prompts that carry the task and the
parent, running nodes; the same run for the same seed; and quickly written."""

from __future__ import annotations

import difflib
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from podium.formats import RunDir, run_files
from podium.records import Action, Node, NodeState
from podium.scaffolds.review import DESCRIPTION_CHARS_FOR_REVIEW, tail
from podium.tree import SearchTree
from podium.viewer import open_run
from podium.viewer.run_data import RunView
from tests.viewer import synthetic
from tests.viewer.synthetic import SyntheticRun, write_synthetic_run

EVOLUTION = {"population": 4, "crossover_prob": 0.6}


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory) -> SyntheticRun:
    """60 evolutionary nodes (crossovers from the tenth or so), the last two still running."""
    root = tmp_path_factory.mktemp("synthetic") / "run"
    return write_synthetic_run(root, 60, strategy="evolutionary", params=EVOLUTION, running=2)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> SyntheticRun:
    """The quick one: 12 MCTS nodes, finished."""
    return write_synthetic_run(tmp_path_factory.mktemp("synthetic") / "run", 12)


def test_every_node_reads_back_through_the_viewer(evolved: SyntheticRun) -> None:
    view = open_run(evolved.root)
    assert [n.id for n in view.nodes] == list(range(1, 61))
    assert evolved.node_count == 60
    assert {n.id: n.operator for n in view.nodes} == evolved.operators
    assert {n.id: n.parent_ids for n in view.nodes} == evolved.parents
    assert view.run_summary.strategy == "evolutionary"
    assert view.run_summary.status == "running"  # caught live: two nodes still executing
    assert view.run_summary.steps == evolved.steps == 60 - evolved.workers
    assert all(view.node(i).step is None for i in evolved.waiting)


def test_the_tree_is_the_strategys(evolved: SyntheticRun, small: SyntheticRun) -> None:
    """Each node's action is what the strategy decides, replayed here under the reproducible
    schedule on a plain SearchTree with the RNG state the journal holds for the node."""
    for run, params in ((evolved, EVOLUTION), (small, {})):
        view = open_run(run.root)
        strategy = synthetic.STRATEGIES[run.strategy](params)
        tree = SearchTree(run.lower_is_better)
        by_id = {n.id: n for n in view.nodes}
        for node in view.nodes:
            for earlier in range(len(tree) + 1, node.id - run.workers + 1):
                tree.add(by_id[earlier])
                strategy.observe(by_id[earlier], tree)
            tree.pending = [_action(by_id[i]) for i in range(max(node.id - run.workers + 1, 1),
                                                             node.id)]  # fmt: skip
            rng = random.Random()
            rng.setstate(_rng_before(run.root)[node.id])
            assert strategy.next_action(tree, rng) == _action(node), f"node {node.id}"


def test_crossovers_have_two_parents_and_mix_them(evolved: SyntheticRun) -> None:
    view = open_run(evolved.root)
    assert evolved.crossovers
    for node_id, (a, b) in evolved.crossovers.items():
        assert view.node(node_id).parent_ids == (a, b)
        assert a < node_id and b < node_id and view.node(a).is_good and view.node(b).is_good
        model_b = next(line for line in view.node(b).code.splitlines() if "def make_model" in line)
        assert model_b in view.node(node_id).code  # B's model, with A's features


def test_the_best_path_comes_from_best(evolved: SyntheticRun, small: SyntheticRun) -> None:
    for run in (evolved, small):
        view = open_run(run.root)
        assert view.best_id == run.best == RunDir(run.root).best_node_id()
        assert view.best_path == run.best_path and run.best in run.best_path
        assert len(run.best_path) > 1  # the final node is not a draft
        admitted = [n for n in view.nodes if n.is_good and n.step is not None]
        assert run.best_metric == max(n.metric.value for n in admitted if n.metric)
        best = view.node(run.best)
        assert (run.root / "best" / run_files.SOLUTION).read_text() == best.code
        assert (run.root / "best" / "submission.csv").is_file()


def test_buggy_nodes_fail_like_real_solutions(evolved: SyntheticRun) -> None:
    view = open_run(evolved.root)
    assert len(evolved.buggy) >= 6 and evolved.tracebacks
    for node_id, reason in evolved.buggy.items():
        node = view.node(node_id)
        assert node.is_buggy and node.bug_reason == reason and reason
    for node_id in evolved.tracebacks:
        result = view.node(node_id).exec
        assert result is not None and result.traceback is not None
        tb = result.traceback
        assert tb.startswith("-" * 75 + "\n") and "Traceback (most recent call last)" in tb
        assert "Cell In[1], line " in tb and "> " in tb
        assert tb.endswith(f"{result.error_name}: {result.error_value}") or result.timed_out
        assert tb in result.output and evolved.buggy[node_id]


def test_a_traceback_is_laid_out_as_the_kernel_lays_it_out() -> None:
    """Against a real ipykernel's traceback of the same code (colours stripped, as the
    sandbox strips them)."""
    lines = ["import pandas as pd", "", 'train = pd.read_csv("./input/train.csv")',
             'X_train = train[["Age", "Fare"]]', "preds = X_train.mean(axis=1)",
             "print(preds.shape)",
             'sub = pd.DataFrame({"PassengerId": X_te.index, "Survived": preds})']  # fmt: skip
    code = synthetic.Code("\n".join(lines) + "\n", tuple(lines), {})
    cell = synthetic.cell_frame(code, 7)
    assert synthetic.traceback_text("NameError", "name 'X_te' is not defined", [cell], []) == (
        "---------------------------------------------------------------------------\n"
        "NameError                                 Traceback (most recent call last)\n"
        "Cell In[1], line 7\n"
        '      3 train = pd.read_csv("./input/train.csv")\n'
        '      4 X_train = train[["Age", "Fare"]]\n'
        "      5 preds = X_train.mean(axis=1)\n"
        "      6 print(preds.shape)\n"
        '----> 7 sub = pd.DataFrame({"PassengerId": X_te.index, "Survived": preds})\n'
        "\n"
        "NameError: name 'X_te' is not defined"
    )


def test_a_function_frame_keeps_to_its_function() -> None:
    lines = ["import pandas as pd", "", 'train = pd.read_csv("./input/train.csv")', "", "",
             "def add_features(df: pd.DataFrame) -> pd.DataFrame:", "    df = df.copy()",
             '    df["Fare_log"] = df["Fare"] + 1',
             '    df["Fare_per_bin"] = df["Fare"] / df["Age_bin"]', "    return df", "", "",
             "full = add_features(train)", "print(full.shape)"]  # fmt: skip
    code = synthetic.Code("\n".join(lines) + "\n", tuple(lines), {})
    assert synthetic.cell_frame(code, 13) == (
        "Cell In[1], line 13\n"
        '      9     df["Fare_per_bin"] = df["Fare"] / df["Age_bin"]\n'
        "     10     return df\n     11 \n     12 \n"
        "---> 13 full = add_features(train)\n"
        "     14 print(full.shape)"
    )
    assert synthetic.cell_frame(code, 9, (6, 10), ", in add_features(df)") == (
        "Cell In[1], line 9, in add_features(df)\n"
        "      6 def add_features(df: pd.DataFrame) -> pd.DataFrame:\n"
        "      7     df = df.copy()\n"
        '      8     df["Fare_log"] = df["Fare"] + 1\n'
        '----> 9     df["Fare_per_bin"] = df["Fare"] / df["Age_bin"]\n'
        "     10     return df"
    )


def test_prompts_carry_the_task_and_the_parent(evolved: SyntheticRun) -> None:
    view = open_run(evolved.root)
    calls = view.calls()
    assert len(calls) == 2 * 60 - len(evolved.running)  # a running node has no review yet
    for call in calls:
        prompt = "\n".join(m.content for m in call.request.messages)
        if call.role == "code":
            assert evolved.task_description in prompt and evolved.data_preview in prompt
        else:
            assert tail(evolved.task_description, DESCRIPTION_CHARS_FOR_REVIEW)[6:] in prompt
            assert view.node(call.node_id).code in prompt
    node = next(n for n in view.nodes if n.operator == "improve")
    parent = view.node(node.parent_ids[0])
    prompt = view.calls(node.id)[0].request.messages[1].content
    assert parent.code.rstrip() in prompt and parent.exec is not None
    assert parent.exec.output[-2000:] in prompt


def test_a_child_differs_from_its_parent_by_a_few_lines(evolved: SyntheticRun) -> None:
    view = open_run(evolved.root)
    for node in view.nodes:
        if node.operator in ("improve", "debug"):
            changed = _changed_lines(view.node(node.parent_ids[0]).code, node.code)
            assert 1 <= changed <= 12, f"node {node.id} ({node.operator}): {changed} lines"


def test_running_nodes_are_executing_with_their_output_so_far(evolved: SyntheticRun) -> None:
    assert evolved.running == (59, 60)
    rd = RunDir(evolved.root)
    rd.lock()  # as the run's process holds it: the viewer then shows them running
    try:
        view = open_run(evolved.root)
        for node_id in evolved.running:
            node = view.node(node_id)
            assert node.state is NodeState.EXECUTING and view.kind(node) == "running"
            assert node.code and node.exec is None
            assert rd.node_file(node_id, run_files.OUTPUT).read_text().startswith("train: ")
    finally:
        rd.unlock()
    assert open_run(evolved.root).kind(open_run(evolved.root).node(59)) == "interrupted"


def test_the_same_seed_writes_the_same_run(tmp_path: Path, small: SyntheticRun) -> None:
    again = write_synthetic_run(tmp_path / "again", 12)
    other = write_synthetic_run(tmp_path / "other", 12, seed=1)
    assert _content(open_run(again.root)) == _content(open_run(small.root))
    assert _content(open_run(other.root)) != _content(open_run(small.root))
    assert json.loads((again.root / "summary.json").read_text()) == json.loads(
        (small.root / "summary.json").read_text()
    )


def test_every_strategy_and_direction(tmp_path: Path) -> None:
    for strategy in synthetic.STRATEGIES:
        run = write_synthetic_run(tmp_path / strategy, 30, strategy=strategy,
                                  lower_is_better=True, workers=2)  # fmt: skip
        view = open_run(run.root)
        assert view.lower_is_better is True and view.run_summary.status == "finished"
        good = [n.metric.value for n in view.nodes if n.is_good and n.metric]
        assert run.best_metric == min(good)
        assert {n.worker for n in view.nodes} == {0, 1}


def test_it_is_quick(evolved: SyntheticRun, small: SyntheticRun) -> None:
    """Bounded generously (2,000 nodes take seconds; perf/viewer_load.py reports them)."""
    assert small.seconds < 10 and evolved.seconds < 30


def _action(node: Node) -> Action:
    return Action(operator=node.operator, parent_ids=node.parent_ids)


def _rng_before(root: Path) -> dict[int, Any]:
    """The RNG state each node's decision started from, as the journal holds it."""
    with sqlite3.connect(RunDir(root).journal) as db:
        rows = db.execute("SELECT id, rng_before FROM nodes").fetchall()
    states = {}
    for node_id, text in rows:
        version, internal, gauss = json.loads(text)
        states[node_id] = (version, tuple(internal), gauss)
    return states


def _changed_lines(before: str, after: str) -> int:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def _content(view: RunView) -> list[Any]:
    return [n.model_dump() for n in view.nodes] + [c.model_dump() for c in view.calls()]
