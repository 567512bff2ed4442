"""The baseline's ``ensemble`` on every kind of task, and what an action's cited solutions give
``improve`` and ``draft``: the ensemble really trains each parent's model on the same folds
and combines their predictions into a valid submission; a cited node really lends its data
handling. Tiny synthetic tasks (the generated scripts run in this process), and one real run
of the ``refine`` strategy with the baseline model (real kernels)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

import podium
from podium.formats import Journal
from podium.interfaces import Proposal
from podium.records import Action, Direction, NodeState
from podium.scaffolds.baseline import ensemble
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.kinds import KINDS
from podium.tree import SearchTree
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask
from tests.support import run_config, solution, write_script

MAKERS: dict[str, tuple[Callable[[Path], SyntheticTask], int]] = {
    # kind → the task's maker and how many of its first drafts are the members (they differ)
    "tabular": (synthetic.adult, 3),
    "image": (functools.partial(synthetic.digits_at, images=200), 2),
    "text": (synthetic.reviews, 3),
    "series": (synthetic.employment, 3),
}
MEMBER_LINE = re.compile(r"^ENSEMBLE MEMBER node (\d+): (\S+)$", re.M)


@dataclass(frozen=True)
class Ensembled:
    task: SyntheticTask
    tree: SearchTree  # nodes 1..k: the members, as run
    proposal: Proposal
    output: str  # what the ensemble printed
    metric: float  # its validation metric


def members_of(task: SyntheticTask, count: int, root: Path) -> SearchTree:
    """The task's first ``count`` drafts, run, as finished nodes 1..count with their metrics."""
    tree = SearchTree(task.lower_is_better)
    for node_id, draft in enumerate(synthetic.drafts(task, count), start=1):
        metric = synthetic.run(draft.code, task, root / f"member{node_id}")
        tree.add(synthetic.finished(node_id, draft, "draft", metric, task.lower_is_better))
    return tree


@pytest.fixture(scope="module", params=list(MAKERS))
def ensembled(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Ensembled:
    make, count = MAKERS[request.param]
    root = tmp_path_factory.mktemp(request.param)
    task = make(root)
    tree = members_of(task, count, root)
    action = Action(operator="ensemble", parent_ids=tuple(range(1, count + 1)))
    proposal = synthetic.propose(task, tree, action)
    assert proposal.problem is None, proposal.problem
    printed: list[str] = []
    metric = synthetic.run(proposal.code, task, root / "ensemble", printed=printed)
    return Ensembled(task, tree, proposal, printed[0], metric)


def test_the_ensemble_trains_each_member_as_it_is_and_beats_their_mean(
    ensembled: Ensembled,
) -> None:
    """Its submission passed the format check (``synthetic.run``); each member scores exactly
    its own metric (the same folds on the same rows); the combination is at least as good as
    the members' mean, in the task's direction."""
    members = {int(i): float(v) for i, v in MEMBER_LINE.findall(ensembled.output)}
    parents = {n.id: n.metric.value for n in ensembled.tree if n.metric is not None}
    assert members.keys() == parents.keys()
    for node_id, value in parents.items():
        assert members[node_id] == pytest.approx(value, abs=1e-6)
    assert len(set(parents.values())) > 1  # the members differ
    direction = Direction.of(ensembled.task.lower_is_better)
    mean = sum(parents.values()) / len(parents)
    assert direction.score(ensembled.metric) >= direction.score(mean) - 1e-9, (members, ensembled)
    for node_id, value in parents.items():  # the plan names each member with its score
        assert f"node {node_id} ({value:.6g})" in ensembled.proposal.plan
    assert "combined by " in ensembled.proposal.plan
    assert ensemble.read(ensembled.proposal.code) is not None
    assert KINDS["tabular"].read(ensembled.proposal.code) is None  # no recipe of one member


@pytest.mark.parametrize("make", [synthetic.insults, synthetic.bitcoin_forecast])
def test_layouts_of_their_own_are_ensembled_into_the_samples_format(
    make: Callable[[Path], SyntheticTask], tmp_path: Path
) -> None:
    """A sample without an id column (the submission follows the test's rows) and a forecast
    without a test table (the script makes the future dates): the members' lines and the
    submission's are the task's own."""
    task = make(tmp_path)
    tree = members_of(task, 2, tmp_path)
    made = synthetic.propose(task, tree, Action(operator="ensemble", parent_ids=(1, 2)))
    printed: list[str] = []
    synthetic.run(made.code, task, tmp_path / "ensemble", printed=printed)  # its format checked
    assert len(MEMBER_LINE.findall(printed[0])) == 2


def combiner(source: str) -> Callable[..., Any]:
    """The ``combine`` an ensemble script defines, from its source."""
    scope: dict[str, Any] = {"np": np, "pd": pd, "rankdata": rankdata}
    exec(source, scope)
    return scope["combine"]  # type: ignore[no-any-return]


def test_the_combinations_vote_rank_and_average_as_their_plans_say() -> None:
    soft = combiner(ensemble.SOFT_VOTE)
    a = pd.DataFrame({"cat": [0.6, 0.2], "dog": [0.4, 0.8]})
    b = pd.DataFrame({"cat": [0.1, 0.3], "emu": [0.9, 0.7]})  # a fold without dogs
    assert list(soft([a, b], [1, 1])) == ["emu", "dog"]  # (cat .35 dog .2 emu .45), (.25 .4 .35)
    labels = np.array(["dog", "cat"])  # a member without probabilities: every member votes
    assert list(soft([a, labels], [1, 1])) == ["cat", "dog"]  # a tie: the better member's
    assert list(soft([a, labels], [1, 3])) == ["dog", "cat"]
    ranks = combiner(ensemble.RANK)([np.array([0.1, 0.9, 0.5]), np.array([0.2, 0.1, 0.3])], [1, 1])
    assert list(ranks) == pytest.approx([1.5 / 3, 2 / 3, 2.5 / 3])
    logs = combiner(ensemble.SCALED_MEAN.format(transform="log", forward="np.log",
                                                inverse="np.exp"))  # fmt: skip
    assert logs([np.array([1.0, 100.0]), np.array([100.0, 1.0])], [1, 1]) == pytest.approx(10.0)


def test_parents_that_cannot_be_members_are_left_out_with_a_note(tmp_path: Path) -> None:
    task = synthetic.adult(tmp_path)
    drafts = synthetic.drafts(task, 2)
    tree = SearchTree(task.lower_is_better)
    lower = task.lower_is_better
    tree.add(synthetic.finished(1, drafts[0], "draft", 0.7, lower))
    tree.add(synthetic.finished(2, Proposal("theirs", solution()), "draft", 0.9, lower))
    tree.add(synthetic.finished(3, drafts[0], "draft", 0.6, lower))  # node 1's recipe again
    tree.add(synthetic.finished(4, drafts[1], "draft", None, lower, buggy=True))
    short = synthetic.propose(task, tree, Action(operator="ensemble", parent_ids=(1, 2, 3, 4)))
    assert short.problem is not None and "found 1" in short.problem and not short.code
    for note in ("node 2 left out (no baseline tabular recipe", "node 3 left out (the same",
                 "node 4 left out (it has no validation score)"):  # fmt: skip
        assert note in short.problem
    tree.add(synthetic.finished(5, drafts[1], "draft", 0.8, lower))
    made = synthetic.propose(task, tree, Action(operator="ensemble", parent_ids=(1, 2, 5)))
    assert made.problem is None and made.plan.startswith("Ensemble of node 5 (0.8), node 1 (0.7)")
    assert "node 2 left out" in made.plan and ensemble.read(made.code)["members"] == [5, 1]


def test_each_round_weighs_the_members_anew_citing_the_earlier_ones(tmp_path: Path) -> None:
    task = synthetic.adult(tmp_path)
    drafts = synthetic.drafts(task, 2)
    tree = SearchTree(task.lower_is_better)
    for node_id, draft in enumerate(drafts, start=1):
        tree.add(synthetic.finished(node_id, draft, "draft", 0.7 + node_id / 10, False))
    weights = []
    for node_id in (3, 4, 5, 6):
        earlier = tuple(n.id for n in tree if n.operator == "ensemble")
        made = synthetic.propose(
            task, tree, Action(operator="ensemble", parent_ids=(1, 2), ref_ids=earlier)
        )
        found = ensemble.read(made.code)
        assert found is not None and found["members"] == [2, 1]
        weights.append(found["weights"])
        if earlier:
            assert f"node {earlier[-1]} (" in made.plan, made.plan
        tree.add(synthetic.finished(node_id, made, "ensemble", 0.85, False, parents=(1, 2)))
    assert weights == [[1, 1], [2, 1], [3, 1], [1, 1]]  # every scheme once, then again


def test_members_that_sampled_differently_share_one_sample(tmp_path: Path) -> None:
    """One member fitted on a sample of the rows and validated on a hold-out, the other on all
    of them with 5 folds: both fit on the same sample in the ensemble, which runs and scores
    them on the fold they share (the hold-out is the first of the same seeded folds)."""
    task = synthetic.adult(tmp_path)
    kind = KINDS["tabular"]
    spec = analyse(task.public_dir, task.metric_name)
    first, second = (kind.read(d.code) for d in synthetic.drafts(task, 2))
    tree = SearchTree(task.lower_is_better)
    sampled = Proposal("sampled", kind.render(spec, replace(first, sample=90, holdout=True)))
    tree.add(synthetic.finished(1, sampled, "draft", 0.7, False))
    tree.add(synthetic.finished(2, Proposal("all", kind.render(spec, second)), "draft", 0.8, False))
    made = synthetic.propose(task, tree, Action(operator="ensemble", parent_ids=(1, 2)))
    assert "every member on the same 90 sampled rows" in made.plan, made.plan
    printed: list[str] = []
    synthetic.run(made.code, task, tmp_path / "ensemble", printed=printed)
    assert len(MEMBER_LINE.findall(printed[0])) == 2


def test_a_large_task_is_ensembled_on_one_shared_sample_within_the_limit(tmp_path: Path) -> None:
    """Planned, not run: two recipes on a table 1,000 times larger than the fixture's."""
    task = synthetic.adult(tmp_path)
    kind = KINDS["tabular"]
    spec = analyse(task.public_dir, task.metric_name)
    spec = replace(spec, rows=spec.rows * 1_000)
    recipes = [kind.read(d.code) for d in synthetic.drafts(task, 3)]
    limit = 0.3 * sum(kind.seconds(r, spec) for r in recipes)
    kept, sized, words = ensemble.sized(kind, spec, recipes, limit)
    assert kept == [0, 1, 2] and len({r.sample for r in sized}) == 1
    assert 0 < sized[0].sample < spec.rows and sum(kind.seconds(r, spec) for r in sized) <= limit
    assert f"every member on the same {sized[0].sample} sampled rows to fit" in words
    tight = ensemble.sized(kind, spec, recipes, 1e-6)  # below even the smallest sample
    assert len(tight[0]) == 2 and "1 costliest member(s) left out to fit" in tight[2]


def _two_tabular_drafts(tmp_path: Path) -> tuple[Any, Any, Any, Any, Any, SearchTree]:
    """The adult fixture with two finished drafts: node 1 (0.7) the first draft, node 2 (0.9)
    another model with the other imputation."""
    task = synthetic.adult(tmp_path)
    kind = KINDS["tabular"]
    spec = analyse(task.public_dir, task.metric_name)
    parent = kind.read(synthetic.drafts(task, 1)[0].code)
    impute = "mean" if parent.impute != "mean" else "median"
    other = replace(parent, family="extra_trees", params={}, impute=impute)
    tree = SearchTree(task.lower_is_better)
    tree.add(synthetic.finished(1, Proposal("p", kind.render(spec, parent)), "draft", 0.7, False))
    tree.add(synthetic.finished(2, Proposal("o", kind.render(spec, other)), "draft", 0.9, False))
    return task, kind, spec, parent, other, tree


def test_an_improve_citing_a_node_takes_its_data_handling(tmp_path: Path) -> None:
    task, kind, spec, parent, other, tree = _two_tabular_drafts(tmp_path)
    impute = other.impute
    tree.add(synthetic.analysis(3, 2, "", "ABLATION baseline: 0.9"))  # not a solution
    action = Action(operator="improve", parent_ids=(1,), ref_ids=(2, 3))
    child = synthetic.propose(task, tree, action)
    assert child.plan.startswith("Improve node 1 with cited node 2 (0.9)'s data handling: ")
    assert f"take {impute} imputation from node 2" in child.plan, child.plan
    made = kind.read(child.code)
    assert made == replace(parent, impute=impute)  # the parent's model, node 2's imputation
    assert f'"impute": "{impute}"' in child.code.split("\n", 1)[0]  # the recipe line shows it
    same = replace(parent, family="extra_trees", params={})  # another model, the same handling
    tree.add(synthetic.finished(4, Proposal("s", kind.render(spec, same)), "draft", 0.8, False))
    plain = synthetic.propose(task, tree, Action(operator="improve", parent_ids=(1,), ref_ids=(4,)))
    assert plain.plan.startswith("Cited node 4 has nothing to add to node 1, so improve. Improve")


def test_a_draft_citing_solutions_starts_from_the_two_best(tmp_path: Path) -> None:
    task, kind, spec, parent, other, tree = _two_tabular_drafts(tmp_path)
    tree.add(synthetic.finished(3, Proposal("w", kind.render(spec, parent)), "draft", 0.5, False))
    child = synthetic.propose(task, tree, Action(operator="draft", ref_ids=(1, 2, 3)))
    assert child.plan.startswith("Draft a new branch from cited nodes 2 (model) and 1: ")
    assert kind.read(child.code) == replace(other, impute=parent.impute)
    alone = synthetic.propose(task, tree, Action(operator="draft", ref_ids=(2,)))
    assert alone.plan.startswith("Only cited node 2 can be read, so a plain draft. Draft: ")


@pytest.mark.slow
def test_a_baseline_refine_run_ends_with_good_ensembles(tmp_path: Path, data_dir: Path) -> None:
    """MLE-STAR's shape without a key: two drafts, each ablated and refined once, then two
    ensemble rounds of the two paths' best solutions, the second citing the first."""
    script = write_script(tmp_path / "unused.jsonl", [])
    params = {"num_solutions": 2, "outer_steps": 1, "inner_steps": 1, "ensemble_rounds": 2}
    config = run_config(script, tmp_path / "run", data_dir, steps=8, model={"name": "baseline"},
                        search={"strategy": "refine", **params})  # fmt: skip
    result = podium.run(config)
    journal = Journal.open(result.run_dir / "journal.sqlite")
    nodes = {n.id: n for n in journal.nodes(NodeState.DONE)}
    journal.close()
    assert [n.operator for n in nodes.values()] == [
        "draft", "draft", "ablate", "ablate", "refine", "refine", "ensemble", "ensemble"
    ]  # fmt: skip
    first, last = nodes[7], nodes[8]
    assert first.is_good and last.is_good, (first.bug_reason, last.bug_reason)
    assert first.parent_ids == last.parent_ids and (first.ref_ids, last.ref_ids) == ((), (7,))
    parents = [nodes[p] for p in last.parent_ids]
    assert all(p.is_good and p.kind == "solution" for p in parents)

    def draft_of(node_id: int) -> int:
        node = nodes[node_id]
        return node_id if node.operator == "draft" else draft_of(node.parent_ids[0])

    assert {draft_of(p.id) for p in parents} == {1, 2}  # one final solution of each path
    for parent in parents:
        assert f"node {parent.id} (" in last.plan
    assert "equal weights" in first.plan and "Earlier ensembles of these members: node 7 (" in (
        last.plan
    )
    assert ensemble.read(first.code)["weights"] != ensemble.read(last.code)["weights"]
    direction = Direction.of(False)  # the toy task's accuracy
    mean = sum(p.metric.value for p in parents) / 2  # type: ignore[union-attr]
    assert direction.score(first.metric.value) >= direction.score(mean) - 1e-9  # type: ignore[union-attr]
    best = json.loads((result.run_dir / "best" / "node.json").read_text())
    assert best["node_id"] in nodes and nodes[best["node_id"]].is_good
