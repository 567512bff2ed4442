"""The arena Support Tickets competition: the generator, its preparation, the multi-class
log-loss grader and the leaderboard."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, task_module, with_cell
from tests.support import grade_with as grade

FOLDER = MINI.parent / "arena" / "support-tickets"
TASK_ID = "arena/support-tickets"
QUEUES = ["account", "billing", "cancellation", "returns", "shipping", "technical"]


@pytest.fixture(scope="module")
def train(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "train.csv", keep_default_na=False)


@pytest.fixture(scope="module")
def test_frame(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "test.csv", keep_default_na=False)


def one_hot(answers: pd.DataFrame, p: float = 1.0) -> pd.DataFrame:
    """A submission giving the recorded queue ``p`` and the others (1 - p) / 5 each."""
    out = pd.DataFrame({"id": answers["id"]})
    for name in QUEUES:
        out[name] = np.where(answers["queue"] == name, p, (1 - p) / 5)
    return out


# --- the task folder and the generator -------------------------------------------------------


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is True
    assert task.metric_name == "multiclass_log_loss"
    assert task.config["task_type"] == "text-classification"
    assert "multi-class logarithmic loss" in task.description
    assert "id,account,billing,cancellation,returns,shipping,technical" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "support-tickets/prepared/private/test.csv"


def test_the_generator_states_its_seed_and_is_seeded() -> None:
    generator = task_module(FOLDER / "raw", "generate")
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert str(generator.SEED) in source and "Podium" in source
    first, again = generator.generate(n=300), generator.generate(n=300)
    pd.testing.assert_frame_equal(first, again)
    assert list(first.columns) == ["message", "queue"]
    assert set(first["queue"]) <= set(QUEUES)
    assert not generator.generate(seed=1, n=300).equals(first)


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 3000 and len(test_frame) == 12000
    assert list(train.columns) == ["id", "message", "queue"]
    assert list(test_frame.columns) == ["id", "message"]
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 15001))
    assert list(answers.columns) == ["id", "queue"]
    assert list(answers["id"]) == list(test_frame["id"])
    assert sorted(set(train["queue"])) == sorted(set(answers["queue"])) == QUEUES
    for messages in (train["message"], test_frame["message"]):
        assert (messages.str.len() > 0).all() and not messages.str.contains("\n").any()


def test_the_sample_is_uniform(sample: pd.DataFrame) -> None:
    assert list(sample.columns) == ["id", *QUEUES]
    assert np.allclose(sample[QUEUES].to_numpy(), 1 / 6)


# --- grading -------------------------------------------------------------------------------


def test_the_score_is_the_mean_log_loss(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, one_hot(answers, 0.7), answers) == pytest.approx(-math.log(0.7))
    rng = np.random.default_rng(5)
    probabilities = rng.dirichlet(np.ones(6), size=len(answers))
    submission = pd.DataFrame(probabilities * 0.5, columns=QUEUES)  # rows sum to 0.5: rescaled
    submission.insert(0, "id", answers["id"].to_numpy())
    truth = answers["queue"].map(QUEUES.index).to_numpy()
    expected = -np.log(probabilities[np.arange(len(answers)), truth]).mean()
    assert grade(grade_module, submission, answers) == pytest.approx(expected)
    shuffled = submission.sample(frac=1.0, random_state=2)[["technical", *QUEUES[:5], "id"]]
    assert grade(grade_module, shuffled, answers) == pytest.approx(expected)


def test_the_sample_scores_log_6_and_zeros_are_clipped(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == pytest.approx(math.log(6))
    assert grade(grade_module, one_hot(answers), answers) < 1e-12
    wrong = one_hot(answers).assign(id=answers["id"].to_numpy()[::-1])
    assert grade(grade_module, wrong, answers) < -math.log(1e-15) + 1e-9


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing class column": (lambda s: s.drop(columns="billing"), "missing"),
    "missing id column": (lambda s: s.drop(columns="id"), "missing"),
    "extra column": (lambda s: s.assign(spam=0.0), "unexpected"),
    "a label column instead of probabilities": (
        lambda s: s[["id"]].assign(queue="billing"),
        "columns",
    ),
    "a repeated column": (lambda s: pd.concat([s, s[["billing"]]], axis=1), "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 999999), "unknown"),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 2.5), "whole numbers"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a missing probability": (lambda s: with_cell(s, 0, "billing", None), "missing"),
    "a text probability": (lambda s: with_cell(s, 0, "billing", "high"), "numbers"),
    "an infinite probability": (lambda s: with_cell(s, 0, "billing", float("inf")), "finite"),
    "a negative probability": (lambda s: with_cell(s, 0, "billing", -0.1), "at least 0"),
    "true/false probabilities": (lambda s: s.assign(billing=s.index % 2 == 0), "true/false"),
    "a row of zeros": (lambda s: s.assign(**dict.fromkeys(QUEUES, 0.0)), "all zero"),
}


# --- the leaderboard -----------------------------------------------------------------------

# Entries cheap enough to recompute in tests (test_bundled_suites.py checks them against the CSV).
CHEAP_ENTRIES = [
    "constant: the training prior",
    "constant: 0.9 on the most frequent class",
    "random scores seed=0",
    "rule: about 10 keywords per queue, strength 1.5, times the prior",
    "multinomial NB alpha=0.3 fit_prior=yes on word 1-2-gram counts",
    "logistic regression C=1 penalty=l2 class_weight=none on word TF-IDF, 500 training rows",
]
