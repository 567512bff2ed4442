"""The baseline on a text layout (mini/rotten-tomatoes'): one review column and a 0/1 sentiment
scored by ROC AUC, so the submission holds probabilities. Tiny synthetic reviews; the
generated solutions run in this process."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from podium.scaffolds.baseline import text_recipe
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.kinds import KINDS
from podium.scaffolds.baseline.specs import TextSpec
from podium.scaffolds.baseline.text_codegen import render
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

read = KINDS["text"].read


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> SyntheticTask:
    return synthetic.reviews(tmp_path_factory.mktemp("reviews"))


@pytest.fixture(scope="module")
def spec(task: SyntheticTask) -> TextSpec:
    return synthetic.spec_of(task, TextSpec)


def test_the_layout_is_read_from_the_files(spec: TextSpec) -> None:
    assert (spec.id_col, spec.target, spec.text, spec.problem) == (
        "id", "sentiment", ("review",), "classification",
    )  # fmt: skip
    assert (spec.scoring, spec.prediction) == ("roc_auc", "proba")


def test_the_drafts_try_each_model_and_write_probabilities(
    task: SyntheticTask, tmp_path: Path
) -> None:
    made = synthetic.drafts(task, 3)
    families = [r.family for r in map(read, (p.code for p in made)) if r]
    assert families == ["logistic", "linear_svm", "naive_bayes"]
    for i, proposal in enumerate(made):
        assert synthetic.run(proposal.code, task, tmp_path / str(i)) > 0.8
        written = pd.read_csv(tmp_path / str(i) / "submission" / "submission.csv")
        assert written["sentiment"].between(0, 1).all() and written["sentiment"].nunique() > 2
    assert "CalibratedClassifierCV(LinearSVC" in made[1].code  # an SVM's probabilities


def test_improve_changes_one_choice(task: SyntheticTask, spec: TextSpec, tmp_path: Path) -> None:
    parent = text_recipe.TextRecipe("logistic", {"C": 4.0, "max_iter": 2000})
    seen = set()
    for seed in range(8):
        child = synthetic.improve_child(task, render(spec, parent), seed)
        after = read(child.code)
        assert after is not None
        changed = synthetic.changed_fields(parent, after)
        assert synthetic.one_choice(changed), changed
        seen.add(changed[0])
    assert {"words", "chars"} & seen and len(seen) >= 3  # n-grams, and other choices too
    synthetic.run(child.code, task, tmp_path)


def test_debug_falls_back_to_unigrams_then_a_constant(
    task: SyntheticTask, spec: TextSpec, tmp_path: Path
) -> None:
    fixed = synthetic.debug_child(task)
    simple = read(fixed.code)
    assert simple is not None and (simple.family, simple.words, simple.chars) == ("logistic", 1, 0)
    synthetic.run(fixed.code, task, tmp_path / "simple")
    constant, why = text_recipe.debug(simple, spec)
    assert constant.family == "dummy_classifier" and "constant" in why
    assert synthetic.run(render(spec, constant), task, tmp_path / "constant") == 0.5


def test_crossover_takes_the_features_from_the_other_parent(
    task: SyntheticTask, spec: TextSpec, tmp_path: Path
) -> None:
    fitter = text_recipe.TextRecipe("naive_bayes", {"alpha": 0.1}, words=2)
    other = text_recipe.TextRecipe("logistic", {"C": 1.0}, words=1, chars=4, min_df=1)
    child, recipe = synthetic.crossover_child(task, render(spec, fitter), render(spec, other), read)
    assert recipe == text_recipe.TextRecipe("naive_bayes", {"alpha": 0.1}, words=1, chars=4,
                                            min_df=1)  # fmt: skip
    synthetic.run(child.code, task, tmp_path)


def test_a_numeric_target_is_a_text_regression(tmp_path: Path) -> None:
    rows = [{"id": i, "title": f"a {'very ' * (i % 5)}long and winding title number {i}",
             "score": float(i % 5) * 10 + 1} for i in range(40)]  # fmt: skip
    public = tmp_path / "public"
    public.mkdir()
    frame = pd.DataFrame(rows)
    frame.iloc[:30].to_csv(public / "train.csv", index=False)
    frame.iloc[30:].drop(columns="score").to_csv(public / "test.csv", index=False)
    frame.iloc[30:][["id", "score"]].to_csv(public / "sample_submission.csv", index=False)
    spec = analyse(public, "rmsle")
    assert isinstance(spec, TextSpec) and (spec.problem, spec.transform) == ("regression", "log1p")
    task = SyntheticTask("titles", "titles", "", public, True, "rmsle")
    recipe, _ = text_recipe.debug(None, spec)
    assert recipe.family == "ridge"
    assert synthetic.run(render(spec, recipe), task, tmp_path / "run") < 1.0
