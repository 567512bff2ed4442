"""How the operator set finds a parent's recipe: the first line names the kind of task, a line
from before kinds existed is tabular, and a recipe of another kind (or none) is unreadable, so
improve drafts afresh and crossover becomes an improve."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from podium.interfaces import Proposal
from podium.records import Action
from podium.scaffolds.baseline import series_recipe
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.kinds import KINDS
from podium.scaffolds.baseline.recipe_line import RECIPE_MARK, read_line
from podium.scaffolds.baseline.series_codegen import render
from podium.scaffolds.baseline.specs import SeriesSpec
from podium.scaffolds.baseline.tabular_codegen import read_recipe
from podium.scaffolds.baseline.tabular_recipe import Recipe
from podium.tree import SearchTree
from tests.scaffolds.baseline import synthetic

OLD_LINE = (
    RECIPE_MARK
    + '{"encode": "onehot", "family": "linear", "features": ["title"], '
    + ('"impute": "median", "params": {"C": 1.0}, "scale": true}\nprint("an old run")\n')
)


def test_a_recipe_line_without_a_kind_is_a_tabular_one() -> None:
    found = read_line(OLD_LINE)
    assert found is not None and found[0] == "tabular"
    assert read_recipe(OLD_LINE) == Recipe("linear", {"C": 1.0}, scale=True, features=("title",))
    assert KINDS["series"].read(OLD_LINE) is None  # a tabular recipe is no forecaster
    assert read_line("import pandas\n") is None and read_line(RECIPE_MARK + "[1, 2]\n") is None


def test_each_kind_reads_back_what_it_wrote(tmp_path: Path) -> None:
    makers = {**synthetic.MAKERS, **synthetic.LAYOUT_MAKERS}
    for name in ("digits", "reviews", "employment", "adult", "cactus", "insults"):
        task = makers[name](tmp_path / name)
        spec = analyse(task.public_dir, task.metric_name)
        kind = KINDS[spec.kind]
        recipe = kind.draft(spec, 1, random.Random(0))
        assert kind.read(kind.render(spec, recipe)) == recipe
        others = [k for k in KINDS.values() if k is not kind]
        assert all(other.read(kind.render(spec, recipe)) is None for other in others)


@pytest.fixture(scope="module")
def employment(tmp_path_factory: pytest.TempPathFactory) -> synthetic.SyntheticTask:
    return synthetic.employment(tmp_path_factory.mktemp("employment"))


def test_crossover_with_a_parent_written_by_an_llm_improves_the_first(
    employment: synthetic.SyntheticTask,
) -> None:
    spec = synthetic.spec_of(employment, SeriesSpec)
    ridge = series_recipe.SeriesRecipe("ridge", {"alpha": 1.0}, per_horizon=True)
    tree = SearchTree(lower_is_better=True)
    ours = Proposal("Ridge.", render(spec, ridge))
    tree.add(synthetic.finished(1, ours, "draft", 2.0, True))
    llm = Proposal("An LLM's forecast.", "import pandas as pd\n")
    tree.add(synthetic.finished(2, llm, "draft", 1.0, True))
    child = synthetic.propose(employment, tree, Action(operator="crossover", parent_ids=(1, 2)))
    assert child.plan.startswith(
        "Crossover of nodes 1 and 2: a parent's recipe cannot be read, so improve. Improve node 1: "
    )
    after = KINDS["series"].read(child.code)
    assert after is not None and synthetic.one_choice(synthetic.changed_fields(ridge, after))


def test_a_crossover_child_that_would_repeat_the_other_parent_is_an_improve(
    employment: synthetic.SyntheticTask,
) -> None:
    spec = synthetic.spec_of(employment, SeriesSpec)
    fitter = series_recipe.SeriesRecipe("ridge", {"alpha": 1.0}, per_horizon=True)
    other = dataclasses.replace(fitter, lags=24)  # the same model, other features
    tree = SearchTree(lower_is_better=True)
    tree.add(synthetic.finished(1, Proposal("other", render(spec, other)), "draft", 2.0, True))
    tree.add(synthetic.finished(2, Proposal("fitter", render(spec, fitter)), "draft", 1.0, True))
    made = synthetic.propose(employment, tree, Action(operator="crossover", parent_ids=(1, 2)))
    assert made.plan.startswith(
        "Crossover of nodes 1 and 2: the child would repeat the other parent (it has the same "
        "model), so improve. Improve node 1: "
    )
