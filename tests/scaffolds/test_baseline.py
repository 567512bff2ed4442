"""The ``baseline`` operator set on mini/titanic: what it reads from the data, that its drafts
differ, that its code runs and validates, that improve usually helps, that debug simplifies.

Generated solutions run in this process (tests.support.exec_solution), not in kernels: the
loop's execution path is covered elsewhere, and this keeps dozens of fits fast."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import re
from pathlib import Path

import pytest

from podium.benchmarks.folder import FolderTask
from podium.interfaces import BudgetView, OperatorContext, Proposal
from podium.records import Action, EnvironmentInfo, Metric, Node, NodeState
from podium.scaffolds.baseline import BaselineOperators, fitter_first
from podium.scaffolds.baseline import tabular_recipe as recipes
from podium.scaffolds.baseline.analysis import TabularSpec, analyse
from podium.scaffolds.baseline.tabular_codegen import read_recipe, render
from podium.tree import SearchTree
from tests.support import exec_solution


class NoModel:
    async def ask(self, request: object, role: str) -> object:
        raise AssertionError("the baseline operators must never call a model")


def propose(task: FolderTask, tree: SearchTree, action: Action, seed: int = 0) -> Proposal:
    ctx = OperatorContext(
        task=task,
        action=action,
        parents=[tree.get(p) for p in action.parent_ids],
        tree=tree,
        environment=EnvironmentInfo(python_version="3.11"),
        budget=BudgetView(steps_left=5, time_left_s=None, exec_timeout_s=600),
        model=NoModel(),
        rng=random.Random(seed),
    )
    return asyncio.run(BaselineOperators().propose(ctx))


def finished(node_id: int, proposal: Proposal, op: str, parents: tuple[int, ...] = (),
             metric: float | None = 0.8, buggy: bool = False) -> Node:  # fmt: skip
    return Node(
        id=node_id, parent_ids=parents, operator=op, state=NodeState.DONE, step=node_id,
        plan=proposal.plan, code=proposal.code, is_buggy=buggy,
        bug_reason="KeyError: 'x'" if buggy else None,
        metric=None if metric is None else Metric(value=metric, lower_is_better=False),
    )  # fmt: skip


def validation_metric(code: str, task: FolderTask, workspace: Path) -> float:
    printed = exec_solution(code, task.public_dir, workspace)
    return float(re.findall(r"^VALIDATION_METRIC: (\S+)$", printed, re.M)[-1])


@pytest.fixture(scope="module")
def spec(titanic: FolderTask) -> TabularSpec:
    found = analyse(titanic.public_dir, titanic.metric_name)
    assert isinstance(found, TabularSpec)
    return found


def test_the_task_is_read_from_its_files(spec: TabularSpec) -> None:
    assert (spec.train_file, spec.test_file) == ("train.csv", "test.csv")
    assert (spec.id_col, spec.target, spec.problem) == ("PassengerId", "Survived", "classification")
    assert set(spec.numeric) == {"Pclass", "Age", "SibSp", "Parch", "Fare"}
    assert set(spec.categorical) == {"Sex", "Embarked"}
    assert set(spec.text) == {"Name", "Ticket", "Cabin"}
    assert spec.titled == ("Name",)
    assert set(spec.small_ints) == {"SibSp", "Parch"}
    assert (spec.scoring, spec.prediction) == ("accuracy", "label")


def test_drafts_differ_and_every_one_runs_and_writes_a_valid_submission(
    titanic: FolderTask, tmp_path: Path
) -> None:
    tree = SearchTree(lower_is_better=False)
    recipes_seen = []
    for node_id in range(1, 7):
        proposal = propose(titanic, tree, Action(operator="draft"), seed=node_id)
        recipe = read_recipe(proposal.code)
        assert recipe is not None and proposal.plan.startswith("Draft: ")
        recipes_seen.append(recipe)
        workspace = tmp_path / str(node_id)
        metric = validation_metric(proposal.code, titanic, workspace)
        assert 0.6 < metric <= 1.0
        assert titanic.check_submission(workspace / "submission" / "submission.csv") is None
        tree.add(finished(node_id, proposal, "draft", metric=metric))
    assert len({r.family for r in recipes_seen}) == 6  # six drafts, six model families


def test_improve_beats_its_parent_on_most_seeds(spec: TabularSpec, titanic: FolderTask,
                                                tmp_path: Path) -> None:  # fmt: skip
    seeds = range(8)
    wins = 0
    for seed in seeds:
        parent = recipes.draft(spec, seed, random.Random(seed))
        child, why = recipes.improve(parent, spec, random.Random(f"{seed}:improve"))
        assert child != parent and why
        before = validation_metric(render(spec, parent), titanic, tmp_path / f"p{seed}")
        after = validation_metric(render(spec, child), titanic, tmp_path / f"c{seed}")
        wins += after > before
    assert wins > len(seeds) / 2, f"improve won on {wins} of {len(seeds)} seeds"


def test_improve_changes_one_choice_of_the_parent_it_reads_from_the_code(
    titanic: FolderTask,
) -> None:
    tree = SearchTree(lower_is_better=False)
    draft = propose(titanic, tree, Action(operator="draft"))
    tree.add(finished(1, draft, "draft"))
    child = propose(titanic, tree, Action(operator="improve", parent_ids=(1,)), seed=3)
    before, after = read_recipe(draft.code), read_recipe(child.code)
    assert before is not None and after is not None and before != after
    changed = [f for f in ("family", "params", "impute", "encode", "features")
               if getattr(before, f) != getattr(after, f)]  # fmt: skip
    assert len(changed) == 1 or changed == ["family", "params"]
    assert child.plan.startswith("Improve node 1: ")


def test_debug_falls_back_to_something_simpler(spec: TabularSpec) -> None:
    fancy = recipes.Recipe(family="gradient_boosting", params={"n_estimators": 100},
                           features=("title",))  # fmt: skip
    plain, _ = recipes.debug(fancy, spec)
    assert (plain.family, plain.features) == ("linear", ())
    constant, why = recipes.debug(plain, spec)
    assert constant.family == "dummy" and "constant" in why
    unknown, _ = recipes.debug(None, spec)  # a parent written by something else (an LLM)
    assert unknown.family == "linear"


def test_debug_of_a_failed_node_runs(titanic: FolderTask, tmp_path: Path) -> None:
    tree = SearchTree(lower_is_better=False)
    broken = Proposal(plan="An LLM's attempt.", code="raise KeyError('x')\n")
    tree.add(finished(1, broken, "draft", metric=None, buggy=True))
    fix = propose(titanic, tree, Action(operator="debug", parent_ids=(1,)))
    assert fix.plan.startswith("Debug node 1 (KeyError: 'x'): fall back")
    assert validation_metric(fix.code, titanic, tmp_path) > 0.7


def test_a_task_of_no_known_layout_is_a_clear_problem(toy_task: FolderTask, tmp_path: Path) -> None:
    images = tmp_path / "public"
    images.mkdir()
    (images / "train").mkdir()
    task = dataclasses.replace(toy_task, public_dir=images)
    proposal = propose(task, SearchTree(False), Action(operator="draft"))
    assert proposal.code == ""
    assert proposal.problem is not None
    assert "tabular, image, text and time-series tasks only" in proposal.problem
    assert "no sample submission" in proposal.problem


def test_a_metric_beyond_the_baseline_stops_the_run_instead_of_validating_on_another(
    toy_task: FolderTask,
) -> None:
    task = dataclasses.replace(toy_task, metric_name="levenshtein_distance")
    proposal = propose(task, SearchTree(True), Action(operator="draft"))
    assert proposal.code == "" and proposal.beyond
    assert proposal.problem is not None
    assert "beyond the baseline: metric levenshtein_distance" in proposal.problem


def test_a_plan_says_when_the_code_validates_on_a_stand_in_for_the_tasks_metric(
    titanic: FolderTask,
) -> None:
    own = propose(titanic, SearchTree(False), Action(operator="draft"))
    assert "in place of" not in own.plan and "unknown metric" not in own.plan
    weighted = dataclasses.replace(titanic, metric_name="roc_auc_weighted")
    assert (
        "validates on roc_auc in place of roc_auc_weighted"
        in propose(weighted, SearchTree(False), Action(operator="draft")).plan
    )
    unknown = dataclasses.replace(titanic, metric_name="house-points")
    plan = propose(unknown, SearchTree(False), Action(operator="draft")).plan
    assert "unknown metric 'house-points': the baseline validates on accuracy instead" in plan


# --- crossover -------------------------------------------------------------------------------

BOOSTING = recipes.Recipe(
    family="gradient_boosting",
    params={"n_estimators": 100, "learning_rate": 0.1, "max_depth": 3, "random_state": 0},
    impute="median",
    encode="ordinal",
    features=("title",),
)
FOREST = recipes.Recipe(
    family="random_forest",
    params={"n_estimators": 200, "min_samples_leaf": 1, "random_state": 0},
    impute="mean",
    encode="onehot",
    features=("count_sum", "title", "prefix"),
)


def test_crossover_takes_the_model_from_the_fitter_parent_and_the_rest_from_the_other(
    spec: TabularSpec, titanic: FolderTask, tmp_path: Path
) -> None:
    tree = SearchTree(lower_is_better=False)
    forest = Proposal(plan="A forest.", code=render(spec, FOREST))
    boosting = Proposal(plan="Boosting.", code=render(spec, BOOSTING))
    tree.add(finished(1, forest, "draft", metric=0.80))
    tree.add(finished(2, boosting, "draft", metric=0.83))  # the fitter one, given second
    child = propose(titanic, tree, Action(operator="crossover", parent_ids=(1, 2)))
    recipe = read_recipe(child.code)
    assert recipe == recipes.Recipe(
        family="gradient_boosting",  # model, hyperparameters and scaling: the fitter parent's
        params=BOOSTING.params,
        impute="mean",  # imputation and encoding: the other parent's
        encode="onehot",
        scale=False,
        features=("title", "count_sum", "prefix"),  # the fitter's, then the other's new ones
    )
    assert child.plan.startswith("Crossover of node 2 (model) with node 1: ")
    assert "'count_sum'" in child.plan and "'prefix'" in child.plan
    metric = validation_metric(child.code, titanic, tmp_path)
    assert 0.7 < metric <= 1.0
    assert titanic.check_submission(tmp_path / "submission" / "submission.csv") is None


def test_crossover_keeps_one_hot_encoding_for_models_that_need_it(spec: TabularSpec) -> None:
    linear = recipes.Recipe(family="linear", params={"C": 1.0}, encode="onehot", scale=True)
    child, why = recipes.crossover(linear, BOOSTING, spec) or (None, "")
    assert child is not None and why
    assert (child.family, child.encode, child.scale) == ("linear", "onehot", True)
    assert (child.impute, child.features) == ("median", ("title",))


def test_crossover_with_nothing_to_add_is_none(spec: TabularSpec) -> None:
    assert recipes.crossover(FOREST, BOOSTING, spec) is not None
    same_data = dataclasses.replace(BOOSTING, family="random_forest", params=FOREST.params)
    assert recipes.crossover(same_data, BOOSTING, spec) is None


def test_the_fitter_parent_follows_the_metric_direction() -> None:
    low, high = (
        Node(id=i, operator="draft", metric=Metric(value=v, lower_is_better=True))
        for i, v in ((1, 0.2), (2, 0.9))
    )
    assert [n.id for n in fitter_first(low, high, lower_is_better=True)] == [1, 2]
    assert [n.id for n in fitter_first(low, high, lower_is_better=False)] == [2, 1]
    unmeasured = Node(id=3, operator="draft")
    assert [n.id for n in fitter_first(unmeasured, high, lower_is_better=False)] == [2, 3]
    assert [n.id for n in fitter_first(low, low, lower_is_better=False)] == [1, 1]  # a tie


def test_crossover_with_an_unreadable_parent_improves_the_first(
    spec: TabularSpec, titanic: FolderTask
) -> None:
    tree = SearchTree(lower_is_better=False)
    tree.add(finished(1, Proposal(plan="Boosting.", code=render(spec, BOOSTING)), "draft"))
    llm = Proposal(plan="An LLM's solution.", code="import pandas as pd\nprint('hi')\n")
    tree.add(finished(2, llm, "draft", metric=0.9))
    child = propose(titanic, tree, Action(operator="crossover", parent_ids=(1, 2)), seed=3)
    assert child.plan.startswith(
        "Crossover of nodes 1 and 2: a parent's recipe cannot be read, so improve. Improve node 1: "
    )
    after = read_recipe(child.code)
    assert after is not None and after != BOOSTING
    changed = [f for f in ("family", "params", "impute", "encode", "features")
               if getattr(BOOSTING, f) != getattr(after, f)]  # fmt: skip
    assert len(changed) == 1 or changed == ["family", "params"]
