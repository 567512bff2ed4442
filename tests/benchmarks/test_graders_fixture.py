"""Podium grades like MLE-bench on competitions whose real graders broke its submission checks
(the graders fixture: ``tests/benchmarks/graders_fixture.py``): every labelled submission gets
MLE-bench's verdict, and every sample submission is valid."""

from __future__ import annotations

import math
from functools import cache

import pytest

from podium.benchmarks.mlebench import MLEBench, MLEBenchTask
from tests.benchmarks.graders_fixture import (
    COMPETITIONS,
    DATA,
    REPO,
    Case,
    cases,
    grade_like_mlebench,
    sample_submission,
)

CASES = cases()
SAMPLE_NAMES = {
    "detecting-insults-in-social-commentary": "sample_submission_null.csv",
    "movie-review-sentiment-analysis-kernels-only": "sampleSubmission.csv",
    "multi-modal-gesture-recognition": "randomPredictions.csv",
}


@cache
def task(competition: str) -> MLEBenchTask:
    loaded = MLEBench(repo=REPO).load_task(competition, DATA)
    assert isinstance(loaded, MLEBenchTask)
    return loaded


def test_the_fixture_has_its_competitions_and_both_kinds_of_case() -> None:
    assert len(COMPETITIONS) == 7
    assert MLEBench(repo=REPO).task_ids() == COMPETITIONS
    for competition in COMPETITIONS:
        labels = {c.valid for c in CASES if c.competition == competition}
        assert labels == {True, False}, competition
        name = SAMPLE_NAMES.get(competition, "sample_submission.csv")
        assert task(competition).sample_submission == sample_submission(competition)
        assert sample_submission(competition).name == name


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_labels_are_the_graders_verdicts(case: Case) -> None:
    """The fixture itself: each label is what its grader says when run as MLE-bench runs it
    (no Podium grading code involved)."""
    if case.reader_fails:
        assert not case.valid
        with pytest.raises((ValueError, UnicodeDecodeError)):  # MLE-bench lets this escape
            grade_like_mlebench(case.competition, case.submission)
        return
    score = grade_like_mlebench(case.competition, case.submission)
    assert (score is not None) is case.valid, case.why


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_podium_grades_each_case_as_mlebench_does(case: Case) -> None:
    report = task(case.competition).grade(case.submission)
    assert report.valid_submission is case.valid, f"{case.why}; Podium said: {report.error}"
    if not case.valid:
        assert report.score is None and not report.any_medal and report.error


@pytest.mark.parametrize("competition", COMPETITIONS)
def test_every_sample_submission_is_valid(competition: str) -> None:
    report = task(competition).grade(sample_submission(competition))
    assert report.valid_submission, report.error
    assert report.submission_exists and report.error is None


def test_a_nan_score_is_a_valid_score_that_wins_nothing() -> None:
    # The phrase-matching sample predicts a constant: Pearson's r is NaN, which MLE-bench
    # reports as the score of a valid submission (round(nan, 5) is not None).
    competition = "us-patent-phrase-to-phrase-matching"
    report = task(competition).grade(sample_submission(competition))
    assert report.valid_submission and report.score is not None and math.isnan(report.score)
    assert not report.any_medal and not report.above_median
