"""The baseline on samples with several prediction columns that are not regressions: independent
0/1 labels (jigsaw-toxic-comment-classification's six, as text; a table of three faults) get one
binary model per column and submit each one's probability; one-hot columns (plant-pathology-2020's
four leaf classes, as images; seattle's weather held one-hot) are one multi-class model whose
class probabilities fill them. Validation is the metric the grader names, column by column, and
the submission is scored here as MLE-bench's grader scores it, against the fixture's answers.
Labels of images that are not one-hot are refused in one line. Tiny synthetic folders
(``synthetic``); generated drafts run in this process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import label_ranking_average_precision_score, log_loss, roc_auc_score

from podium.benchmarks.metric_reading import task_metric
from podium.scaffolds.baseline import tabular_recipe
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.metrics import METRIC_IMPORTS, metric_source
from podium.scaffolds.baseline.specs import ImageSpec, TabularSpec, TextSpec, Unsupported
from podium.scaffolds.baseline.tabular_codegen import render
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

NAMES = tuple(synthetic.MULTI_MAKERS)
GRADED = ("toxic", "plant", "sensors")  # with private answers


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SyntheticTask]:
    return {n: synthetic.MULTI_MAKERS[n](tmp_path_factory.mktemp(n)) for n in NAMES}


def test_each_shape_is_read_as_its_grader_scores_it(tasks: dict[str, SyntheticTask]) -> None:
    # MLE-bench's grader names read into the metric the fixtures carry
    assert task_metric("column-wise ROC AUC", "") == tasks["toxic"].metric_name
    assert task_metric("mean-column-wise-roc-auc", "") == tasks["plant"].metric_name

    toxic = synthetic.spec_of(tasks["toxic"], TextSpec)
    assert toxic.targets == tuple(synthetic.TOXIC_LABELS) and toxic.text == ("comment_text",)
    assert (toxic.problem, toxic.scoring, toxic.prediction) == (
        "classification",
        "roc_auc",
        "proba",
    )

    plant = synthetic.spec_of(tasks["plant"], ImageSpec)
    assert plant.onehot and plant.columns == tuple(synthetic.PLANT_CLASSES)
    assert (plant.scoring, plant.prediction, plant.classes) == ("roc_auc", "classes", 4)

    sensors = synthetic.spec_of(tasks["sensors"], TabularSpec)
    assert sensors.targets == ("vibration", "leak", "overheat")  # the sample's order
    assert (sensors.scoring, sensors.prediction) == ("log_loss", "proba")
    assert sensors.features == ("pressure", "temp", "rpm", "site")  # no label is a feature

    onehot = synthetic.spec_of(tasks["seattle_onehot"], TabularSpec)
    assert onehot.layout is not None and onehot.layout.onehot and not onehot.targets
    assert (onehot.columns, onehot.prediction) == (tuple(synthetic.WEATHER), "classes")
    assert not set(onehot.features) & set(synthetic.WEATHER)


def _graded(task: SyntheticTask, submission: pd.DataFrame) -> float:
    """The submission's score as MLE-bench's graders compute it: the mean over the prediction
    columns of each one's ROC AUC (or log loss), rows matched by id."""
    answers = pd.read_csv(task.public_dir.parent / "private" / "test.csv")
    key = "image_id" if "image_id" in answers.columns else "id"
    columns = [c for c in answers.columns if c != key]
    answers, submission = answers.sort_values(key), submission.sort_values(key)
    assert answers[key].tolist() == submission[key].tolist()
    if task.metric_name == "roc_auc":
        return float(roc_auc_score(answers[columns], submission[columns], average="macro"))
    return float(np.mean([log_loss(answers[c], submission[c], labels=[0, 1]) for c in columns]))


def _prior_log_loss(task: SyntheticTask, columns: list[str]) -> float:
    """The mean column-wise log loss of predicting each label's training rate: what a model
    without signal scores."""
    train = pd.read_csv(task.public_dir / "train.csv")
    return float(
        np.mean([log_loss(train[c], np.full(len(train), train[c].mean())) for c in columns])
    )


@pytest.mark.parametrize("name", GRADED)
def test_the_first_draft_submits_the_probabilities_the_grader_scores(
    name: str, tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    task = tasks[name]
    metric, submission, sample = synthetic.first_draft(task, tmp_path)
    key = "image_id" if name == "plant" else "id"
    assert submission[key].tolist() == sample[key].tolist()  # the sample's rows, in its order
    predicted = submission.drop(columns=[key])
    assert predicted.apply(lambda c: c.between(0, 1).all() and c.nunique() > 2).all()
    if name == "plant":  # one class per row: its probabilities sum to 1
        assert (predicted.sum(axis=1) - 1).abs().max() < 1e-6  # as written to CSV
    graded = _graded(task, submission)
    if task.metric_name == "roc_auc":
        assert metric > 0.8 and graded > 0.8, (metric, graded)
    else:  # log loss: well below what the labels' rates alone score
        prior = _prior_log_loss(task, list(predicted.columns))
        assert metric < 0.9 * prior and graded < 0.9 * prior, (metric, graded, prior)


def test_a_label_too_rare_for_every_fold_is_predicted_as_its_rate(tmp_path: Path) -> None:
    """jigsaw's rarest labels on a small table: ``threat`` ticked once, so some folds fit on
    rows without it; that label's model is a constant there, and the others still learn."""
    task = synthetic.toxic(tmp_path / "toxic")
    train = pd.read_csv(task.public_dir / "train.csv")
    train.assign(threat=(train.index == 5).astype(int)).to_csv(
        task.public_dir / "train.csv", index=False
    )
    (draft,) = synthetic.drafts(task, 1)
    assert synthetic.run(draft.code, task, tmp_path / "run") > 0.8
    submission = pd.read_csv(tmp_path / "run" / "submission" / "submission.csv")
    assert submission["threat"].max() < 0.05 and submission["toxic"].max() > 0.5


def test_one_hot_columns_validate_as_the_class_column_they_encode(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    """seattle's weather one-hot in train.csv: the same model, the same folds, the same metric
    as with the weather column itself, and the submission in the sample's class columns."""
    onehot = tasks["seattle_onehot"]
    column = synthetic.seattle(tmp_path / "seattle")
    ours, theirs = _linear(onehot), _linear(column)
    ran = synthetic.run(ours, onehot, tmp_path / "onehot")
    assert ran == synthetic.run(theirs, column, tmp_path / "column")
    submission = pd.read_csv(tmp_path / "onehot" / "submission" / "submission.csv")
    assert list(submission.columns) == ["id", *synthetic.WEATHER]
    assert (submission[synthetic.WEATHER].sum(axis=1) - 1).abs().max() < 1e-6


def _linear(task: SyntheticTask, **sizing: int) -> str:
    """The script of a scaled linear model (the fastest family) for a tabular task."""
    spec = synthetic.spec_of(task, TabularSpec)
    params = tabular_recipe.default_params("linear", spec)
    return render(spec, tabular_recipe.Recipe("linear", params, scale=True, **sizing))


def test_a_several_label_script_improves_debugs_and_selects_columns(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    """Each label's own model sees one target column: improve, debug (down to a constant) and a
    sized recipe keeping the columns most related to the target all run."""
    task = tasks["sensors"]
    spec = synthetic.spec_of(task, TabularSpec)
    prior = _prior_log_loss(task, list(spec.targets))
    improved = synthetic.improve_child(task, _linear(task), seed=3)  # tunes C
    assert synthetic.run(improved.code, task, tmp_path / "improve") < 0.9 * prior
    fixed = synthetic.debug_child(task)
    constant = synthetic.debug_child(task, fixed.code)
    assert "constant" in constant.plan
    ran = synthetic.run(constant.code, task, tmp_path / "constant")
    assert ran == pytest.approx(prior, abs=0.05)  # each label's training rate
    forest = tabular_recipe.Recipe("random_forest", {"n_estimators": 200})
    one = tabular_recipe.seconds(forest, replace(spec, targets=()))
    assert tabular_recipe.seconds(forest, spec) > 2.5 * one  # three forests: sized as three
    sized = _linear(task, holdout=True, select=2, sample=100)
    assert "SelectKBest(f_classif, k=2)" in sized
    assert synthetic.run(sized, task, tmp_path / "sized") < 0.9 * prior


def test_independent_labels_of_images_are_refused_in_one_line(tmp_path: Path) -> None:
    """(Numbers and classes mixed in a table: ``test_layouts``' refusals.)"""
    plant = synthetic.plant(tmp_path / "plant")  # a leaf with two diseases ticked: not one-hot
    train = pd.read_csv(plant.public_dir / "train.csv")
    train.loc[0, ["rust", "scab"]] = 1
    train.to_csv(plant.public_dir / "train.csv", index=False)
    with pytest.raises(Unsupported, match=(
        r"^the sample submission predicts 4 labels-table columns \(healthy, multiple_diseases, "
        r"rust, scab\), independent 0/1 labels: the baseline classifies each image into one "
        r"class; it needs one-hot columns"
    )) as caught:  # fmt: skip
        analyse(plant.public_dir, plant.metric_name)
    assert "\n" not in str(caught.value)


def _column_metric(key: str, prediction: str) -> Any:
    """The ``metric`` a several-target script carries, executed."""
    space: dict[str, Any] = {"np": np, "pd": pd, "POSITIVE": 1}
    exec(METRIC_IMPORTS, space)
    exec(metric_source(key, prediction, 2, columnwise=True), space)
    return space["metric"]


def test_several_targets_are_scored_column_by_column_as_mlebenchs_graders_do() -> None:
    """jigsaw's mean column-wise AUC (and plant-pathology's, of one-hot classes), a mean
    column-wise log loss, nomad2018's mean column-wise RMSLE; a label with one class in a fold
    has no AUC and is left out rather than failing the fold; a label ranking ranks each row's
    labels together."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, (50, 3))
    pred = np.clip(y * 0.4 + rng.uniform(0, 0.6, (50, 3)), 0.01, 0.99)
    auc = _column_metric("roc_auc", "proba")
    assert auc(y, pred) == pytest.approx(roc_auc_score(y, pred, average="macro"))
    single = y.copy()
    single[:, 2] = 0
    assert auc(single, pred) == pytest.approx(roc_auc_score(y[:, :2], pred[:, :2], average="macro"))
    losses = [log_loss(y[:, j], pred[:, j]) for j in range(3)]
    assert _column_metric("log_loss", "proba")(y, pred) == pytest.approx(np.mean(losses))
    ranking = label_ranking_average_precision_score(y, pred)
    assert _column_metric("label_ranking_average_precision", "proba")(y, pred) == ranking
    # one-hot classes: the class model's one-vs-rest AUC is plant-pathology's column-wise mean
    space: dict[str, Any] = {"np": np, "pd": pd, "COLUMNS": synthetic.PLANT_CLASSES}
    exec(METRIC_IMPORTS + "\n" + metric_source("roc_auc", "classes"), space)
    truth = rng.integers(0, 4, 60)
    onehot = np.eye(4)[truth]
    proba = rng.dirichlet(np.ones(4), 60) + onehot
    proba = pd.DataFrame(proba / proba.sum(axis=1, keepdims=True), columns=synthetic.PLANT_CLASSES)
    named = np.array(synthetic.PLANT_CLASSES)[truth]
    expected = roc_auc_score(onehot, proba, average="macro")
    assert space["metric"](named, proba) == pytest.approx(expected)
    energies = rng.uniform(0, 3, (40, 2))
    guess = energies * rng.uniform(0.8, 1.2, (40, 2))
    errors = [np.sqrt(np.mean((np.log1p(energies[:, j]) - np.log1p(guess[:, j])) ** 2))
              for j in range(2)]  # fmt: skip
    assert _column_metric("rmsle", "value")(energies, guess) == pytest.approx(np.mean(errors))
