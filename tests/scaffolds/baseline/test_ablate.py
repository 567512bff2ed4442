"""The baseline's ``ablate`` and ``refine`` on every kind of task: the ablation really takes a
part out and measures it on the solution's own validation; refine changes only the part that
the measured drop points to, as an edit the loop applies. Tiny synthetic tasks (the generated
scripts run in this process), and one real run of the baseline model (real kernels)."""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.code_edit import apply_edits
from podium.exec_output import ablation_results
from podium.formats import Journal
from podium.interfaces import Proposal, Strategy
from podium.records import Action, Direction, NodeState
from podium.scaffolds.baseline import ablation
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.kinds import KINDS
from podium.tree import SearchTree
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask
from tests.support import exec_solution, run_config, write_script

MAKERS: dict[str, tuple[Callable[[Path], SyntheticTask], int]] = {
    # kind → the task's maker and which draft is the parent (one with several parts)
    "tabular": (synthetic.adult, 1),
    "image": (synthetic.digits, 1),
    "text": (synthetic.reviews, 1),
    "series": (synthetic.employment, 2),  # ridge: lags, rolling means, seasonal features
}
CLEARLY_WORSE = 0.05  # the constant stand-in's loss: a share of the baseline's score at least


@dataclass(frozen=True)
class Ablated:
    task: SyntheticTask
    spec: Any
    tree: SearchTree  # node 1: the parent, node 2: its ablation, as run
    metric: float  # the parent's own validation metric
    output: str  # what the ablation printed
    workspace: Path


@dataclass(frozen=True)
class Parent:
    task: SyntheticTask
    spec: Any
    tree: SearchTree  # node 1: the parent


@pytest.fixture(scope="module")
def parents(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Parent]:
    """The parent of each kind (made once, on first use): a draft with several parts."""
    made: dict[str, Parent] = {}

    def parent(kind: str) -> Parent:
        if kind not in made:
            make, nth = MAKERS[kind]
            task = make(tmp_path_factory.mktemp(kind))
            draft = synthetic.drafts(task, nth)[-1]
            tree = SearchTree(task.lower_is_better)
            tree.add(synthetic.finished(1, draft, "draft", 0.5, task.lower_is_better))
            made[kind] = Parent(task, analyse(task.public_dir, task.metric_name), tree)
        return made[kind]

    return parent


@pytest.fixture(scope="module", params=list(MAKERS))
def ablated(
    request: pytest.FixtureRequest,
    parents: Callable[[str], Parent],
    tmp_path_factory: pytest.TempPathFactory,
) -> Ablated:
    """A parent solution of the kind, run, then ablated and the ablation run."""
    found = parents(request.param)
    task, spec, drafted = found.task, found.spec, found.tree
    root = tmp_path_factory.mktemp(f"{request.param}-runs")
    parent = drafted.get(1)
    metric = synthetic.run(parent.code, task, root / "parent")
    tree = drafted.upto(1)
    proposal = synthetic.propose(task, tree, Action(operator="ablate", parent_ids=(1,)))
    assert proposal.problem is None and proposal.plan.startswith("Ablate node 1: ")
    workspace = root / "ablation"
    output = exec_solution(proposal.code, task.public_dir, workspace)
    tree.add(synthetic.analysis(2, 1, proposal.code, output))
    return Ablated(task, spec, tree, metric, output, workspace)


def changed_lines(before: str, after: str) -> set[int]:
    """Line numbers (0-based) of ``before`` that ``after`` replaces, deletes or inserts at."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines())
    return {
        line
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag != "equal"
        for line in (range(i1, i2) if i2 > i1 else [i1])
    }


def test_the_ablation_scores_each_part_on_the_solutions_own_validation(ablated: Ablated) -> None:
    results = ablation_results(ablated.output)
    names = [name for name, _ in results]
    assert names[0] == "baseline" and len(names) >= 3, ablated.output
    assert results[0][1] == pytest.approx(ablated.metric, abs=1e-6)  # the same split, same rows
    assert "VALIDATION_METRIC" not in ablated.output
    assert list((ablated.workspace / "submission").iterdir()) == []  # nothing to hand over
    stand_in = names[1]  # the model replaced by a trivial one comes first
    assert stand_in in ("constant model", "last value forecast")
    direction = Direction.of(ablated.task.lower_is_better)
    loss = direction.score(results[0][1]) - direction.score(results[1][1])
    assert loss > CLEARLY_WORSE * abs(results[0][1]), results


def test_refine_after_ablate_changes_only_the_part_that_matters_most(ablated: Ablated) -> None:
    parent = ablated.tree.get(1)
    kind = KINDS[ablated.spec.kind]
    recipe = kind.read(parent.code)
    child = synthetic.propose(
        ablated.task, ablated.tree, Action(operator="refine", parent_ids=(1,), ref_ids=(2,))
    )
    assert child.problem is None and child.edit is not None, child.problem
    made = apply_edits(parent.code, child.edit)
    refined = kind.read(made.code or "")
    assert refined is not None and made.code == kind.render(ablated.spec, refined)
    results = ablation_results(ablated.output)
    direction = Direction.of(ablated.task.lower_is_better)
    worst = max(results[1:], key=lambda r: direction.score(results[0][1]) - direction.score(r[1]))
    assert f"node 2's ablation shows '{worst[0]}' matters most" in child.plan, child.plan
    (part,) = [p for p in kind.parts(recipe, ablated.spec) if p.name == worst[0]]
    without = kind.render(ablated.spec, part.without)
    assert changed_lines(parent.code, made.code or "") <= {0} | changed_lines(parent.code, without)
    assert set(synthetic.changed_fields(recipe, refined)) <= set(
        synthetic.changed_fields(recipe, part.without)
    )


@pytest.mark.parametrize(
    ("kind", "lines", "chosen", "changed"),
    [
        ("text", {"constant model": 0.6, "word unigrams only": 0.5, "raw term counts": 0.9},
         "word unigrams only", {"words": 3}),
        ("text", {"constant model": 0.7, "word unigrams only": 0.6, "raw term counts": 0.5},
         "word unigrams only", {"words": 3}),  # raw counts mattered most: nothing to refine
        ("series", {"last value forecast": 6.0, "fewer lags": 5.0, "no rolling means": 9.0,
                    "no seasonal features": 5.5}, "no rolling means", {"windows": (3, 6, 12)}),
    ],
)  # fmt: skip
def test_refine_follows_the_largest_drop_in_the_tasks_direction(
    parents: Callable[[str], Parent],
    kind: str,
    lines: dict[str, float],
    chosen: str,
    changed: dict[str, Any],
) -> None:
    """Made-up findings where a part other than the model matters most: text's ROC AUC
    (higher is better) drops most without word bigrams (or without sublinear term counts,
    which have no stronger setting: the next part is refined), series' sMAPE (lower is
    better) rises most without rolling means."""
    found = parents(kind)
    base = 0.8 if kind == "text" else 5.0
    output = "\n".join(f"ABLATION {n}: {v}" for n, v in {"baseline": base, **lines}.items())
    tree = found.tree.upto(1)
    tree.add(synthetic.analysis(2, 1, "", output))
    child = synthetic.propose(
        found.task, tree, Action(operator="refine", parent_ids=(1,), ref_ids=(2,))
    )
    parent = KINDS[kind].read(tree.get(1).code)
    made = apply_edits(tree.get(1).code, child.edit or "")
    assert KINDS[kind].read(made.code or "") == replace(parent, **changed)
    assert f"'{chosen}' matters most" in child.plan, child.plan


@pytest.mark.parametrize("kind", list(MAKERS))
def test_without_an_analysis_refine_changes_the_model_and_says_so(
    parents: Callable[[str], Parent], kind: str
) -> None:
    found = parents(kind)
    tree = found.tree
    child = synthetic.propose(found.task, tree, Action(operator="refine", parent_ids=(1,)), seed=3)
    assert "no readable ablation of node 1, so refine the model: " in child.plan
    assert child.edit is not None and KINDS[kind] is KINDS[found.spec.kind]
    before = KINDS[kind].read(tree.get(1).code)
    after = KINDS[kind].read(apply_edits(tree.get(1).code, child.edit).code or "")
    assert set(synthetic.changed_fields(before, after)) <= synthetic.MODEL_FIELDS


def test_a_solution_written_otherwise_is_a_problem_not_a_crash(
    parents: Callable[[str], Parent],
) -> None:
    task = parents("tabular").task
    tree = SearchTree(task.lower_is_better)
    theirs = Proposal("An LLM's solution.", "print('hello')\n")
    tree.add(synthetic.finished(1, theirs, "draft", 0.5, task.lower_is_better))
    for op in ("ablate", "refine"):
        made = synthetic.propose(task, tree, Action(operator=op, parent_ids=(1,)))
        assert made.problem is not None and "carries no baseline" in made.problem
        assert made.problem.startswith(f"cannot {op} node 1: ") and not made.code


def test_a_large_task_is_ablated_on_one_shared_sample_within_the_limit(
    parents: Callable[[str], Parent],
) -> None:
    """Planned, not run: the same recipe on a table 1,000 times larger than the fixture's (one
    kind shows the sizing; the code is the same for all)."""
    found = parents("tabular")
    kind = KINDS["tabular"]
    spec = replace(found.spec, rows=found.spec.rows * 1_000)
    recipe = kind.read(found.tree.get(1).code)
    parts = kind.parts(recipe, spec)
    limit = 0.2 * sum(kind.seconds(r, spec) for r in [recipe, *(p.without for p in parts)])
    base, kept, words = ablation.sized(kind, spec, recipe, parts, limit)
    assert [p.name for p in kept] == [p.name for p in parts]
    assert 0 < base.sample < spec.rows and {p.without.sample for p in kept} == {base.sample}
    assert sum(kind.seconds(r, spec) for r in [base, *(p.without for p in kept)]) <= limit
    assert f"every variant on the same {base.sample} sampled rows" in words
    tight = ablation.sized(kind, spec, recipe, parts, 1e-6)  # below even the smallest sample
    assert len(tight[1]) == 1 and "left out to fit" in tight[2]


class AblateThenRefine(Strategy):
    """A draft, its ablation, a refine of the draft citing the ablation, then stop."""

    name = "ablate-then-refine"

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        decided = len(tree) + len(tree.pending)
        if decided == 0:
            return Action(operator="draft")
        if decided == 1 and len(tree) == 1:
            return Action(operator="ablate", parent_ids=(1,))
        if decided == 2 and len(tree) == 2:
            return Action(operator="refine", parent_ids=(1,), ref_ids=(2,))
        return None


@pytest.mark.slow
def test_a_baseline_run_ablates_then_refines_without_a_key(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(tmp_path / "unused.jsonl", [])
    config = run_config(script, tmp_path / "run", data_dir, steps=3,
                        model={"name": "baseline"},
                        search={"strategy": f"{__name__}:AblateThenRefine"})  # fmt: skip
    result = podium.run(config)
    journal = Journal.open(result.run_dir / "journal.sqlite")
    nodes = {n.id: n for n in journal.nodes(NodeState.DONE)}
    journal.close()
    analysis, refined = nodes[2], nodes[3]
    assert analysis.kind == "analysis" and not analysis.is_good and not analysis.is_buggy
    assert analysis.metric is None
    findings = ablation_results(analysis.summary)
    assert findings[0][0] == "baseline" and len(findings) >= 3, analysis.summary
    assert not any((result.run_dir / "nodes" / "2").rglob("submission.csv"))
    assert refined.is_good and refined.operator == "refine", refined.bug_reason
    assert refined.code != nodes[1].code and "node 2's ablation shows" in refined.plan
    best = json.loads((result.run_dir / "best" / "node.json").read_text())
    assert best["node_id"] in (1, 3)  # a solution: the analysis is never the best node
