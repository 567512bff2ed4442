"""The bundled arena noisy-shapes competition: its generated PNGs, grader and leaderboard."""

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

FOLDER = bundled_tasks("arena") / "noisy-shapes"
TRAINING_ID = 7  # the smallest training id (checked in test_the_split)
TASK_ID = "arena/noisy-shapes"
SHAPES = ["disk", "ring", "square", "frame", "triangle", "plus"]


def stems(folder: Path) -> set[int]:
    return {int(p.stem) for p in folder.glob("*.png")}


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("shapes_gen", FOLDER / "raw" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the generator and the folder ------------------------------------------------------------


def test_the_generator_is_seeded_and_draws_every_shape() -> None:
    gen = generator()
    first, labels = gen.generate(300)
    again, labels_again = gen.generate(300)
    assert np.array_equal(first, again) and np.array_equal(labels, labels_again)
    assert first.shape == (300, 16, 16) and first.dtype == np.uint8
    assert set(labels) == set(range(6))
    assert not np.array_equal(first, gen.generate(300, seed=1)[0])


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is False
    assert task.metric_name == "accuracy"
    assert task.config["task_type"] == "image-classification"
    assert task.config["dataset"]["answers"] == "noisy-shapes/prepared/private/test.csv"
    assert "id,label" in task.description


# --- preparation ---------------------------------------------------------------------------


def test_the_split(task: FolderTask, train: pd.DataFrame, answers: pd.DataFrame) -> None:
    train_ids, test_ids = stems(task.public_dir / "train"), stems(task.public_dir / "test")
    assert (len(train_ids), len(test_ids)) == (2500, 5000)
    assert train_ids | test_ids == set(range(1, 7501))
    assert TRAINING_ID in train_ids  # the invalid-submission tests use it
    assert list(train.columns) == ["id", "label"]
    assert set(train["id"]) == train_ids and set(answers["id"]) == test_ids
    assert set(train["label"]) == set(answers["label"]) == set(SHAPES)
    shares = answers["label"].value_counts(normalize=True)
    assert shares.min() > 0.14 and shares.max() < 0.19  # about a sixth each
    assert min(test_ids) < 20 and max(train_ids) > 7400  # ids are shuffled over the split


def test_the_images_are_16x16_greyscale_pngs(task: FolderTask, train: pd.DataFrame) -> None:
    for image_id in train["id"].iloc[:20]:
        with Image.open(task.public_dir / "train" / f"{image_id}.png") as image:
            assert (image.format, image.mode, image.size) == ("PNG", "L", (16, 16))
            assert np.asarray(image).std() > 10  # a shape and noise, not a flat image


def test_public_files_hold_no_answers(
    task: FolderTask, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv", "test", "train", "train.csv",
    ]  # fmt: skip
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert list(sample.columns) == ["id", "label"] and set(sample["label"]) == {"disk"}
    assert list(sample["id"]) == list(answers["id"])


# --- grading -------------------------------------------------------------------------------


def test_accuracy_matches_an_independent_count(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    rng = np.random.default_rng(3)
    guessed = answers.assign(label=rng.choice(SHAPES, size=len(answers)))
    keep = rng.random(len(answers)) < 0.5
    guessed.loc[keep, "label"] = answers.loc[keep, "label"]
    right = sum(g == a for g, a in zip(guessed["label"], answers["label"], strict=True))
    shuffled = guessed.sample(frac=1.0, random_state=1)[["label", "id"]]
    assert grade(grade_module, shuffled, answers) == pytest.approx(right / len(answers))
    assert grade(grade_module, answers.copy(), answers) == 1.0
    assert grade(grade_module, answers.astype({"id": str}), answers) == 1.0


def test_the_sample_scores_the_share_of_disks(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    share = float((answers["label"] == "disk").mean())
    assert grade(grade_module, sample, answers) == pytest.approx(share)


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing label column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["label"]], "columns"),
    "extra column": (lambda s: s.assign(confidence=1.0), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"label": "Label"}), "columns"),
    "a repeated column": (lambda s: pd.concat([s, s[["label"]]], axis=1), "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", TRAINING_ID), "unknown"),
    "a file name as id": (
        lambda s: with_cell(s, 0, "id", f"{s.loc[0, 'id']}.png"),
        "whole numbers",
    ),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 2.5), "whole numbers"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "true/false ids": (lambda s: s.assign(id=s["id"] > 0), "true/false"),
    "an unknown shape": (lambda s: with_cell(s, 0, "label", "circle"), "one of the shapes"),
    "a capitalised shape": (lambda s: with_cell(s, 0, "label", "Disk"), "one of the shapes"),
    "a class number": (lambda s: with_cell(s, 0, "label", 0), "one of the shapes"),
    "a missing label": (lambda s: with_cell(s, 0, "label", None), "missing"),
}


# --- the leaderboard -----------------------------------------------------------------------

# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them
# against the CSV).
CHEAP_ENTRIES = [
    "constant: every image is ring",
    "prior: the training classes' shares",
    "random guess uniform seed=0",
    "rule: nearest class by mean centre against border",
    "nearest centroid metric=euclidean on 8x8 block means, 250 images",
    "k-NN n_neighbors=1 weights=uniform on pixels, 250 images",
]
