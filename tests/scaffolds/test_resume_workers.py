"""Exact resume with several workers: SIGKILL a 3-worker run (and its resumes) at random
moments, resume until it finishes, and check the tree is the uninterrupted run's, node by node;
for greedy, for refine (analyses, references, ensembles, and a strategy that waits), and for
mcgs (an aggregation citing the best node of each branch).

The nodes sleep for different times, so they finish out of id order: a tree that depended on
which node finished first would differ from run to run, and a resume that handed out new ids or
re-drew decisions would differ from the reference."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.formats import Journal
from podium.records import Node
from tests.scaffolds.test_resume import _node_count, _wait_for, _wait_no_kernels
from tests.support import (
    TOY_TASK,
    code_answer,
    podium_cli,
    podium_popen,
    review_answer,
    run_config,
    solution,
    write_script,
)

pytestmark = pytest.mark.slow

STEPS, WORKERS, SEED = 9, 3, 3
SEARCHES: dict[str, dict[str, Any]] = {
    "greedy": {"num_drafts": 3, "debug_prob": 0.5, "max_debug_depth": 3},
    "refine": {"num_solutions": 2, "outer_steps": 1, "inner_steps": 2, "ensemble_rounds": 2},
    # UCT only, and every gain under 0.05 leaves the search stalled: an aggregation is due
    "mcgs": {"num_drafts": 3, "num_improves": 2, "min_exploration_weight": 1.0,
             "metric_improvement_threshold": 0.05, "fusion_min_successful_nodes": 1},
}  # fmt: skip


def _script(path: Path) -> Path:
    """Answers by node: what a node gets depends on its id only, never on arrival order."""
    answers: list[Any] = []
    for node_id in range(1, STEPS + 1):
        sleep = (0.9, 0.1, 0.5)[node_id % 3]  # node 3k+1 is the slow one of its batch
        if node_id % 4 == 2:
            code = solution(error="KeyError('x3')", sleep=sleep)
        else:
            code = solution(0.5 + node_id / 100, sleep=sleep)
        answers.append(code_answer(code, plan=f"Plan {node_id}.", node_id=node_id))
        answers.append(review_answer(summary=f"Review {node_id}.", node_id=node_id))
    return write_script(path, answers)


def _cli_args(strategy: str, script: Path, out: Path, data_dir: Path) -> list[str]:
    args = ["run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", str(STEPS),
            "--seed", str(SEED), "--out", str(out), "--data-dir", str(data_dir),
            "--strategy", strategy, "-o", f"workers={WORKERS}",
            "-o", "sandbox.preimports=[]"]  # fmt: skip
    for key, value in SEARCHES[strategy].items():
        args += ["-o", f"search.{key}={value}"]
    return args


def _row(n: Node) -> tuple[Any, ...]:
    metric = n.metric.value if n.metric else None
    return (n.id, n.step, n.state, n.operator, n.parent_ids, n.ref_ids, n.kind, n.code,
            n.is_buggy, metric)  # fmt: skip


def _tree(run_dir: Path) -> dict[str, Any]:
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        return {
            "nodes": [_row(n) for n in journal.nodes()],
            "calls": sorted(
                (c.node_id, c.role, c.request.meta.turn, c.request.messages[-1].content)
                for c in journal.calls()
            ),
            "best": json.loads((run_dir / "best" / "node.json").read_text())["node_id"],
        }
    finally:
        journal.close()


@pytest.fixture(scope="module", params=list(SEARCHES))
def reference(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, data_dir: Path
) -> tuple[str, Path, dict[str, Any]]:
    strategy = request.param
    base = tmp_path_factory.mktemp(f"resume-workers-{strategy}")
    script = _script(base / "script.jsonl")
    cfg = run_config(
        script, base / "reference", data_dir, steps=STEPS, seed=SEED, workers=WORKERS,
        search={"strategy": strategy, **SEARCHES[strategy]},
    )  # fmt: skip
    podium.run(cfg)
    tree = _tree(base / "reference")
    operators = {n[3] for n in tree["nodes"]}
    assert len(tree["nodes"]) == STEPS and "draft" in operators and len(operators) > 1
    if strategy == "refine":
        assert {"ablate", "refine", "ensemble"} <= operators, operators
    if strategy == "mcgs":
        assert any(n[3] == "draft" and n[5] for n in tree["nodes"]), "no aggregation"
    return strategy, script, tree


def _journal_ids(run_dir: Path) -> set[str]:
    with sqlite3.connect(f"file:{run_dir / 'journal.sqlite'}?mode=ro", uri=True) as db:
        return {str(r[0]) for r in db.execute("SELECT id FROM nodes")}


def test_the_tree_does_not_depend_on_which_worker_finished_first(
    reference: tuple[str, Path, dict[str, Any]], tmp_path: Path, data_dir: Path
) -> None:
    strategy, script, tree = reference
    again = podium_cli(*_cli_args(strategy, script, tmp_path / "again", data_dir), timeout=300)
    assert again.returncode == 0, again.stderr
    assert _tree(tmp_path / "again") == tree


def test_resume_after_random_sigkills_with_three_workers(
    reference: tuple[str, Path, dict[str, Any]], tmp_path: Path, data_dir: Path
) -> None:
    strategy, script, tree = reference
    out = tmp_path / "run"
    rng = random.Random(20261202)
    proc = podium_popen(*_cli_args(strategy, script, out, data_dir))
    _wait_for(lambda: _node_count(out) >= 1, proc)
    for _ in range(4):
        time.sleep(rng.uniform(0.0, 3.0))
        proc.kill()
        proc.wait()
        _wait_no_kernels(out)
        proc = podium_popen("resume", str(out))
        _wait_for(lambda: _node_count(out) >= 1, proc)
    proc.kill()
    proc.wait()
    final = podium_cli("resume", str(out), timeout=300)
    assert final.returncode in (0, 2), final.stderr  # 2: it had already finished
    assert _tree(out) == tree
    node_dirs = {p.name for p in (out / "nodes").iterdir()}
    assert node_dirs == _journal_ids(out), "a node dir without its journal row was left"
