"""The bundled arena grating-orientation competition: its generated PNGs, grader (multi-class
log loss) and leaderboard."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from podium.benchmarks.folder import FolderTask
from podium.secret_paths import bundled_tasks
from tests.support import grade_with as grade
from tests.support import with_cell

FOLDER = bundled_tasks("arena") / "grating-orientation"
TRAINING_ID = 2  # the smallest training id (checked in test_the_split)
TASK_ID = "arena/grating-orientation"
CLASSES = ["deg000", "deg030", "deg060", "deg090", "deg120", "deg150"]


def stems(folder: Path) -> set[int]:
    return {int(p.stem) for p in folder.glob("*.png")}


def generator() -> ModuleType:
    path = FOLDER / "raw" / "generate.py"
    spec = importlib.util.spec_from_file_location("grating_gen", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the generator and the folder ------------------------------------------------------------


def test_the_generator_is_seeded_and_draws_every_orientation() -> None:
    gen = generator()
    first, labels = gen.generate(300)
    again, labels_again = gen.generate(300)
    assert np.array_equal(first, again) and np.array_equal(labels, labels_again)
    assert first.shape == (300, 16, 16) and first.dtype == np.uint8
    assert set(labels) == set(range(6))
    assert not np.array_equal(first, gen.generate(300, seed=1)[0])


def test_the_stripes_run_along_the_class_orientation() -> None:
    """Without noise or distractor, a 90-degree grating varies down the rows only."""
    gen = generator()
    angle, frequency = np.array([np.pi / 2]), np.array([0.2])
    stripes = gen._grating(angle, frequency, np.array([0.3]), np.array([0.4]))[0]
    assert np.allclose(stripes, stripes[:, :1])  # constant along each row
    assert stripes[:, 0].std() > 0.1


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is True
    assert task.metric_name == "multiclass_log_loss"
    assert task.config["task_type"] == "image-classification"
    assert task.config["dataset"]["answers"] == "grating-orientation/prepared/private/test.csv"
    assert "id,deg000,deg030,deg060,deg090,deg120,deg150" in task.description


# --- preparation ---------------------------------------------------------------------------


def test_the_split(task: FolderTask, train: pd.DataFrame, answers: pd.DataFrame) -> None:
    train_ids, test_ids = stems(task.public_dir / "train"), stems(task.public_dir / "test")
    assert (len(train_ids), len(test_ids)) == (2500, 5000)
    assert train_ids | test_ids == set(range(1, 7501))
    assert TRAINING_ID in train_ids  # the invalid-submission tests use it
    assert list(train.columns) == ["id", "orientation"]
    assert set(train["id"]) == train_ids and set(answers["id"]) == test_ids
    assert set(train["orientation"]) == set(answers["orientation"]) == set(CLASSES)
    shares = answers["orientation"].value_counts(normalize=True)
    assert shares.min() > 0.14 and shares.max() < 0.19  # about a sixth each
    assert min(test_ids) < 20 and max(train_ids) > 7400  # ids are shuffled over the split


def test_the_images_are_16x16_greyscale_pngs(task: FolderTask, train: pd.DataFrame) -> None:
    for image_id in train["id"].iloc[:20]:
        with Image.open(task.public_dir / "train" / f"{image_id}.png") as image:
            assert (image.format, image.mode, image.size) == ("PNG", "L", (16, 16))
            pixels = np.asarray(image)
        assert 90 < pixels.mean() < 165  # mid-grey on average
        assert pixels.std() > 40  # stripes and heavy noise


def test_public_files_hold_no_answers(
    task: FolderTask, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv", "test", "train", "train.csv",
    ]  # fmt: skip
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert list(sample.columns) == ["id", *CLASSES]
    assert np.allclose(sample[CLASSES].to_numpy(), 1 / 6)
    assert list(sample["id"]) == list(answers["id"])


# --- grading -------------------------------------------------------------------------------


def test_log_loss_matches_an_independent_computation(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    rng = np.random.default_rng(5)
    raw = rng.dirichlet(np.ones(6), size=len(answers)) * rng.uniform(0.5, 2.0, (len(answers), 1))
    raw[0] = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]  # a hard zero: clipped to 1e-15 before renormalising
    submission = pd.concat([answers[["id"]], pd.DataFrame(raw, columns=CLASSES)], axis=1)
    truth = answers["orientation"].map(CLASSES.index).to_numpy()
    clipped = np.clip(raw, 1e-15, 1 - 1e-15)
    clipped = clipped / clipped.sum(axis=1, keepdims=True)
    expected = -np.mean([np.log(clipped[i, t]) for i, t in enumerate(truth)])
    shuffled = submission.sample(frac=1.0, random_state=2)
    reordered = shuffled[["deg150", "id", *CLASSES[:-1]]]
    assert grade(grade_module, reordered, answers) == pytest.approx(expected, rel=1e-12)


def test_the_uniform_sample_scores_log_six(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == pytest.approx(np.log(6))


def test_a_perfect_submission_scores_about_zero(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    onehot = pd.get_dummies(answers["orientation"]).reindex(columns=CLASSES).astype(float)
    perfect = pd.concat([answers[["id"]], onehot], axis=1)
    assert grade(grade_module, perfect, answers) == pytest.approx(0.0, abs=1e-12)


def _zero_first_row(sample: pd.DataFrame) -> pd.DataFrame:
    frame = sample.copy()
    frame.loc[0, CLASSES] = 0.0
    return frame


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "a missing class column": (lambda s: s.drop(columns=["deg090"]), "columns"),
    "missing id column": (lambda s: s.drop(columns=["id"]), "columns"),
    "extra column": (lambda s: s.assign(deg180=0.1), "unexpected"),
    "a label column instead": (
        lambda s: s[["id"]].assign(orientation="deg000"),
        "columns",
    ),
    "a repeated column": (lambda s: pd.concat([s, s[["deg000"]]], axis=1), "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", TRAINING_ID), "unknown"),
    "a file name as id": (
        lambda s: with_cell(s, 0, "id", f"{s.loc[0, 'id']}.png"),
        "whole numbers",
    ),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a missing probability": (lambda s: with_cell(s, 0, "deg030", None), "missing"),
    "a text probability": (lambda s: with_cell(s, 0, "deg030", "high"), "numbers"),
    "an infinite probability": (lambda s: with_cell(s, 0, "deg030", float("inf")), "finite"),
    "a negative probability": (lambda s: with_cell(s, 0, "deg030", -0.1), "at least 0"),
    "true/false probabilities": (lambda s: s.assign(deg060=s["deg060"] > 0), "true/false"),
    "an all-zero row": (_zero_first_row, "positive probability"),
}


# --- the leaderboard -----------------------------------------------------------------------

# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them
# against the CSV).
CHEAP_ENTRIES = [
    "constant: every image is deg090",
    "constant: 0.5 on deg030",
    "prior: the training classes' shares",
    "random guess uniform seed=0",
    "rule: nearest class by mean gradients across and down",
    "nearest centroid metric=euclidean on Fourier magnitudes, 250 images",
    "gaussian naive bayes var_smoothing=1e-09 on gradient-orientation histograms, 250 images",
]
