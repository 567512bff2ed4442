"""The baseline on tabular layouts beyond titanic's: a probability for ROC AUC (adult), a log-scale
regression (ames, ``rmse_log``), counts with a date-time column (bike, ``rmsle``) and one
probability column per class (seattle, ``multiclass_log_loss``). Tiny synthetic tasks of the
same layouts, written into a temporary folder; the generated solutions run in this process."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from podium.scaffolds.baseline import tabular_recipe as recipes
from podium.scaffolds.baseline.specs import TabularSpec
from podium.scaffolds.baseline.tabular_codegen import read_recipe, render
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

LAYOUTS = ("adult", "ames", "bike", "seattle")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SyntheticTask]:
    return {name: synthetic.MAKERS[name](tmp_path_factory.mktemp(name)) for name in LAYOUTS}


def test_each_layout_is_read_from_its_files(tasks: dict[str, SyntheticTask]) -> None:
    specs = {name: synthetic.spec_of(task, TabularSpec) for name, task in tasks.items()}
    adult, ames, bike, seattle = (specs[name] for name in LAYOUTS)
    assert (adult.scoring, adult.prediction, adult.classes) == ("roc_auc", "proba", 2)
    assert adult.categorical == ("workclass",) and adult.with_missing == ("age", "workclass")
    assert (ames.problem, ames.scoring, ames.transform) == ("regression", "rmse_log", "log")
    assert (bike.scoring, bike.transform) == ("rmsle", "log1p")
    assert (bike.dates, bike.timed) == (("datetime",), ("datetime",))  # not a series: features
    assert (seattle.target, seattle.prediction) == ("weather", "classes")
    assert seattle.columns == tuple(synthetic.WEATHER)
    assert seattle.scoring == "multiclass_log_loss"
    assert (seattle.dates, seattle.timed) == (("date",), ())


@pytest.mark.parametrize("name", LAYOUTS)
def test_draft_improve_debug_and_crossover_write_valid_solutions(
    name: str, tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    task = tasks[name]
    spec = synthetic.spec_of(task, TabularSpec)
    boosting, forest, linear = synthetic.drafts(task, 3)
    families = [read_recipe(p.code) for p in (boosting, forest, linear)]
    assert [r.family for r in families if r] == ["gradient_boosting", "random_forest", "linear"]
    metric = synthetic.run(linear.code, task, tmp_path / "draft")
    assert metric > 0

    improved = synthetic.improve_child(task, linear.code, seed=3)
    before, after = read_recipe(linear.code), read_recipe(improved.code)
    assert before is not None and after is not None
    assert synthetic.one_choice(synthetic.changed_fields(before, after))
    synthetic.run(improved.code, task, tmp_path / "improve")

    fixed = synthetic.debug_child(task)
    assert "linear" in fixed.plan
    synthetic.run(fixed.code, task, tmp_path / "debug")

    fitter = recipes.Recipe("decision_tree", recipes.default_params("decision_tree", spec),
                            impute="median", encode="ordinal")  # fmt: skip
    other = recipes.Recipe("knn", recipes.default_params("knn", spec), impute="mean",
                           encode="onehot", scale=True, features=("missing_flags",))  # fmt: skip
    child, recipe = synthetic.crossover_child(
        task, render(spec, fitter), render(spec, other), read_recipe
    )
    offered = ("missing_flags",) if spec.with_missing else ()  # adult's data have gaps
    assert recipe == dataclasses.replace(fitter, impute="mean", encode="onehot", features=offered)
    synthetic.run(child.code, task, tmp_path / "crossover")


def test_the_submission_holds_what_the_metric_scores(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    """Probabilities in [0, 1] (one column per class summing to 1), positive prices, counts
    that are never negative."""
    wrote = {}
    for name in LAYOUTS:
        task = tasks[name]
        spec = synthetic.spec_of(task, TabularSpec)
        recipe = recipes.Recipe("linear", recipes.default_params("linear", spec), scale=True)
        synthetic.run(render(spec, recipe), task, tmp_path / name)
        wrote[name] = pd.read_csv(tmp_path / name / "submission" / "submission.csv")
    assert wrote["adult"]["income"].between(0, 1).all()
    assert wrote["adult"]["income"].nunique() > 2  # probabilities, not labels
    classes = wrote["seattle"][synthetic.WEATHER]
    assert classes.gt(0).all().all() and (classes.sum(axis=1) - 1).abs().max() < 1e-9
    assert wrote["ames"]["SalePrice"].gt(1000).all()
    assert wrote["bike"]["count"].ge(0).all()


def test_a_dummy_predicts_class_frequencies_when_the_metric_needs_probabilities(
    tasks: dict[str, SyntheticTask],
) -> None:
    spec = synthetic.spec_of(tasks["seattle"], TabularSpec)
    assert recipes.default_params("dummy", spec) == {"strategy": "prior"}
