"""MLE-bench's grading rules, reproduced exactly: thresholds in every team-count bracket, medals,
validity, rounding, task files, and the aggregate and per-seed summaries."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from podium.benchmarks.folder import FolderTask
from podium.benchmarks.grading import (
    Thresholds,
    UnreadableSubmission,
    aggregate_reports,
    apply_grader,
    grade_submission,
    is_lower_better,
    leaderboard_percentile,
    load_answers,
    load_grade_fn,
    medal_thresholds,
    rank_score,
    read_leaderboard,
    read_submission,
    seed_summary,
    submission_bounds,
)
from podium.errors import TaskError
from podium.records import GradeReport, utcnow

# --- thresholds ----------------------------------------------------------------------------

# teams n -> 1-based leaderboard positions of the (gold, silver, bronze) thresholds, worked out
# by hand from Kaggle's progression table (DESIGN.md §5).
POSITIONS = {
    1: (1, 1, 1),
    5: (1, 1, 2),
    10: (1, 2, 4),
    99: (9, 19, 39),
    100: (10, 20, 40),
    249: (10, 49, 99),
    250: (10, 50, 100),
    999: (11, 50, 100),
    1000: (12, 50, 100),
    2500: (15, 125, 250),
}

TOP = 10_000.0


def table_positions(n: int) -> tuple[int, int, int]:
    """The progression table in integer arithmetic (independent of the code's ``int(n * 0.1)``)."""
    if n < 100:
        return max(1, n // 10), max(1, n // 5), max(1, 2 * n // 5)
    if n < 250:
        return 10, max(1, n // 5), max(1, 2 * n // 5)
    if n < 1000:
        return 10 + n // 500, 50, 100
    return 10 + n // 500, max(1, n // 20), max(1, n // 10)


def at(position: float, lower: bool) -> float:
    """The score a team at ``position`` has on :func:`board` (fractions fall between teams)."""
    return float(position) if lower else TOP - position


def board(n: int, lower: bool) -> list[float]:
    """``n`` distinct scores in rank order, best first."""
    return [at(k, lower) for k in range(1, n + 1)]


CASES = [(n, lower) for n in POSITIONS for lower in (True, False) if n > 1 or not lower]


def test_hand_table_matches_the_rule() -> None:
    for n, positions in POSITIONS.items():
        assert table_positions(n) == positions, n


@pytest.mark.parametrize(("n", "lower"), CASES)
def test_thresholds_are_the_tables_positions(n: int, lower: bool) -> None:
    scores = board(n, lower)
    gold, silver, bronze = POSITIONS[n]
    assert is_lower_better(scores) is lower
    assert medal_thresholds(scores) == Thresholds(
        gold=at(gold, lower),
        silver=at(silver, lower),
        bronze=at(bronze, lower),
        median=at((n + 1) / 2, lower),  # an average of the middle two when n is even
    )


def test_thresholds_for_every_team_count() -> None:
    for n in [*range(1, 1101), 1999, 2000, 2499, 2501, 5000, 12_345]:
        gold, silver, bronze = table_positions(n)
        t = medal_thresholds(board(n, lower=False))
        assert (t.gold, t.silver, t.bronze) == (
            at(gold, False),
            at(silver, False),
            at(bronze, False),
        )


@pytest.mark.parametrize(("n", "lower"), CASES)
def test_medals_at_and_between_thresholds(n: int, lower: bool) -> None:
    scores = board(n, lower)
    gold, silver, bronze = POSITIONS[n]
    probes = {1, gold, gold + 0.5, silver, silver + 0.5, bronze, bronze + 0.5, n, n + 1}
    for position in sorted(probes):
        result = rank_score(at(position, lower), scores)
        medal = (
            "gold"
            if position <= gold
            else "silver"
            if position <= silver
            else "bronze"
            if position <= bronze
            else None
        )
        for name in ("gold", "silver", "bronze"):
            assert result[f"{name}_medal"] is (name == medal), (position, result)
        assert result["above_median"] is (position < (n + 1) / 2), (position, result)


def test_a_tie_with_the_threshold_wins_that_medal_only() -> None:
    scores = [0.95, 0.9, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]  # n=10: positions 1, 2, 4
    gold = rank_score(0.95, scores)
    assert (gold["gold_medal"], gold["silver_medal"], gold["bronze_medal"]) == (True, False, False)
    silver = rank_score(0.9, scores)
    assert (silver["gold_medal"], silver["silver_medal"], silver["bronze_medal"]) == (
        False,
        True,
        False,
    )
    bronze = rank_score(0.85, scores)
    assert (bronze["gold_medal"], bronze["silver_medal"], bronze["bronze_medal"]) == (
        False,
        False,
        True,
    )
    assert not rank_score(0.8499, scores)["bronze_medal"]


def test_lower_is_better_ties_win_too() -> None:
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert rank_score(0.1, scores)["gold_medal"]
    assert rank_score(0.2, scores)["silver_medal"]
    assert rank_score(0.4, scores)["bronze_medal"]
    assert not any(rank_score(0.4001, scores)[f"{m}_medal"] for m in ("gold", "silver", "bronze"))


def test_above_median_is_strict_with_an_averaged_median() -> None:
    higher = [4.0, 3.0, 2.0, 1.0]
    assert rank_score(2.5, higher)["median_threshold"] == 2.5
    assert rank_score(2.5, higher)["above_median"] is False
    assert rank_score(2.50001, higher)["above_median"] is True
    lower = [1.0, 2.0, 3.0, 4.0]
    assert rank_score(2.5, lower)["median_threshold"] == 2.5
    assert rank_score(2.5, lower)["above_median"] is False
    assert rank_score(2.49999, lower)["above_median"] is True


def test_above_median_is_strict_with_an_odd_leaderboard() -> None:
    scores = [5.0, 4.0, 3.0, 2.0, 1.0]
    assert rank_score(3.0, scores)["above_median"] is False
    assert rank_score(3.00001, scores)["above_median"] is True


def test_no_score_wins_nothing_but_keeps_thresholds() -> None:
    result = rank_score(None, board(100, lower=True))
    assert result == {
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "gold_threshold": 10.0,
        "silver_threshold": 20.0,
        "bronze_threshold": 40.0,
        "median_threshold": 50.5,
    }


def test_rank_score_returns_plain_python_types() -> None:
    import numpy as np

    scores = list(np.array([0.9, 0.8, 0.7, 0.6], dtype=np.float64))
    result = rank_score(float(np.float64(0.9)), scores)
    for key in ("gold_medal", "silver_medal", "bronze_medal", "above_median"):
        assert type(result[key]) is bool
    for key in ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold"):
        assert type(result[key]) is float
    json.dumps(result)


def test_is_lower_better_compares_first_and_last() -> None:
    assert is_lower_better([0.1, 0.5, 0.3]) is True
    assert is_lower_better([0.9, 0.2, 0.5]) is False
    assert is_lower_better([0.5]) is False  # one row: MLE-bench says higher is better
    assert is_lower_better([0.5, 0.1, 0.5]) is False  # tied ends likewise


def test_an_empty_leaderboard_is_an_error() -> None:
    with pytest.raises(ValueError, match="no scores"):
        medal_thresholds([])
    with pytest.raises(ValueError, match="no scores"):
        rank_score(0.5, [])
    with pytest.raises(ValueError, match="no scores"):
        is_lower_better([])


def mlebench_thresholds(scores: list[float]) -> tuple[float, float, float, float]:
    """MLE-bench's pandas reading of the progression table (n < 100): ``iloc[pos - 1]`` and
    ``Series.median()``, which skips NaN."""
    series, n = pd.Series(scores, dtype=float), len(scores)
    pos = [max(1, int(n * share)) for share in (0.1, 0.2, 0.4)]
    gold, silver, bronze = (float(series.iloc[k - 1]) for k in pos)
    return gold, silver, bronze, float(series.median())


def same(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b, strict=True))


def test_blank_leaderboard_scores_give_mlebench_thresholds() -> None:
    nan = math.nan
    # n=10: gold pos 1, silver pos 2, bronze pos 4 (blank here), median of the 7 scores left
    scores = [0.95, 0.9, nan, nan, 0.8, 0.7, nan, 0.5, 0.4, 0.3]
    t = medal_thresholds(scores)
    assert (t.gold, t.silver) == (0.95, 0.9) and math.isnan(t.bronze)
    assert t.median == 0.7
    assert same((t.gold, t.silver, t.bronze, t.median), mlebench_thresholds(scores))
    assert rank_score(0.95, scores)["gold_medal"] is True
    nothing = rank_score(0.85, scores)  # would be bronze, but that threshold is NaN
    assert not (nothing["gold_medal"] or nothing["silver_medal"] or nothing["bronze_medal"])
    assert nothing["above_median"] is True
    assert leaderboard_percentile(0.85, scores) == 50.0  # 0.8 … 0.3; blanks are not beaten
    # A blank at an end makes MLE-bench's direction rule compare with NaN: higher is better.
    assert is_lower_better([0.1, 0.2, nan]) is False
    every_blank = [nan, nan, nan]
    assert same(astuple(medal_thresholds(every_blank)), mlebench_thresholds(every_blank))


def astuple(t: Thresholds) -> tuple[float, float, float, float]:
    return t.gold, t.silver, t.bronze, t.median


def test_a_nan_score_wins_nothing() -> None:
    result = rank_score(math.nan, ACCURACY_BOARD)
    assert not any(result[k] for k in ("gold_medal", "silver_medal", "bronze_medal"))
    assert result["above_median"] is False
    assert result["gold_threshold"] == 1.0
    assert leaderboard_percentile(math.nan, ACCURACY_BOARD) == 0.0


# --- leaderboard files ---------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_read_leaderboard_keeps_file_order_and_exact_values(tmp_path: Path) -> None:
    path = write(
        tmp_path / "leaderboard.csv",
        "scoreNullable,teamId,score,submissionDate\n"
        "True,1,0.418785,2017-12-01\nTrue,2,0.16506,2017-12-02\nTrue,3,1e-3,2017-12-03\n",
    )
    assert read_leaderboard(path) == [0.418785, 0.16506, 0.001]


def test_read_leaderboard_parses_as_mlebench_does(tmp_path: Path) -> None:
    # MLE-bench's get_leaderboard is a plain pd.read_csv: pandas' default float parser (not the
    # round-trip one it uses for submissions), blanks and "NaN" as NaN, "inf" as a number.
    path = write(
        tmp_path / "leaderboard.csv",
        "teamId,score\n1,0.30000000000000004\n2,\n3,0.123456789012345678\n4,NaN\n5,inf\n",
    )
    scores = read_leaderboard(path)
    expected = pd.read_csv(path)["score"].tolist()
    assert scores[0] == expected[0] and scores[2] == expected[2]
    assert math.isnan(scores[1]) and math.isnan(scores[3]) and scores[4] == math.inf
    assert all(type(s) is float for s in scores)


def test_read_leaderboard_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "leaderboard.csv"
    with pytest.raises(TaskError, match="not found") as info:
        read_leaderboard(path)
    assert str(path) in info.value.message


def test_read_leaderboard_lfs_pointer(tmp_path: Path) -> None:
    path = write(
        tmp_path / "leaderboard.csv",
        "version https://git-lfs.github.com/spec/v1\noid sha256:1087afc6\nsize 67155\n",
    )
    with pytest.raises(TaskError) as info:
        read_leaderboard(path)
    assert str(path) in info.value.message
    assert "LFS pointer" in info.value.message
    assert info.value.hint == "run `git lfs pull` in the MLE-bench checkout"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("teamName,points\na,0.5\n", ["no 'score' column", "teamName, points"]),
        ("teamName,score\na,0.5\nb,abc\n", ["line 3", "'abc'", "not a number"]),
        ("teamName,score\n", ["no scores"]),
        ("", ["empty"]),
    ],
)
def test_read_leaderboard_rejects_bad_scores(tmp_path: Path, text: str, words: list[str]) -> None:
    path = write(tmp_path / "leaderboard.csv", text)
    with pytest.raises(TaskError) as info:
        read_leaderboard(path)
    message = info.value.message
    assert str(path) in message
    assert "\n" not in message
    for word in words:
        assert word in message


# --- grading modules -----------------------------------------------------------------------

SPOOKY_SPEC = "mlebench.competitions.spooky-author-identification.grade:grade"


def task_folder(root: Path, grade_py: str, **siblings: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write(root / "grade.py", grade_py)
    for name, text in siblings.items():
        write(root / f"{name}.py", text)
    return root


def test_load_grade_fn_resolves_a_hyphenated_module_path(tmp_path: Path) -> None:
    folder = task_folder(
        tmp_path / "spooky-author-identification",
        "def grade(submission, answers):\n    return float(len(submission) + 10 * len(answers))\n",
    )
    fn = load_grade_fn(folder, SPOOKY_SPEC)
    assert fn(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1]})) == 12.0


def test_two_tasks_grade_modules_do_not_collide(tmp_path: Path) -> None:
    one = task_folder(tmp_path / "one", "def grade(s, a):\n    return 1.0\n")
    two = task_folder(tmp_path / "two", "def grade(s, a):\n    return 2.0\n")
    empty = pd.DataFrame()
    assert load_grade_fn(one, "x.one.grade:grade")(empty, empty) == 1.0
    assert load_grade_fn(two, "x.two.grade:grade")(empty, empty) == 2.0


def test_grade_module_may_import_its_siblings_and_use_dataclasses(tmp_path: Path) -> None:
    folder = task_folder(
        tmp_path / "task",
        "from dataclasses import dataclass\n"
        "from .classes import CLASSES\n\n"
        "@dataclass\nclass Box:\n    n: int\n\n"
        "def grade(s, a):\n    return float(Box(len(CLASSES)).n)\n",
        classes="CLASSES = ['EAP', 'HPL', 'MWS']\n",
    )
    assert load_grade_fn(folder, SPOOKY_SPEC)(pd.DataFrame(), pd.DataFrame()) == 3.0


def test_load_grade_fn_other_function_and_file_names(tmp_path: Path) -> None:
    folder = task_folder(tmp_path / "task", "def unused(s, a):\n    return 0.0\n")
    write(folder / "metric.py", "def score_it(s, a):\n    return 7.0\n")
    fn = load_grade_fn(folder, "pkg.task.metric:score_it")
    assert fn(pd.DataFrame(), pd.DataFrame()) == 7.0


@pytest.mark.parametrize(
    ("grade_py", "spec", "words"),
    [
        (None, SPOOKY_SPEC, ["grade.py", "not found"]),
        ("def other(s, a):\n    return 1.0\n", SPOOKY_SPEC, ["grade.py", "no function grade()"]),
        ("grade = 3\n", SPOOKY_SPEC, ["grade.py", "no function grade()"]),
        (
            "import podium_no_such_module_xyz\n",
            SPOOKY_SPEC,
            ["grade.py", "failed to import", "ModuleNotFoundError"],
        ),
        ("def grade(:\n", SPOOKY_SPEC, ["grade.py", "failed to import", "SyntaxError"]),
        ("raise RuntimeError('boom\\nagain')\n", SPOOKY_SPEC, ["grade.py", "boom again"]),
        ("def grade(s, a):\n    return 1.0\n", "mlebench.grade.grade", ["not 'module:function'"]),
        ("def grade(s, a):\n    return 1.0\n", "grade:", ["not 'module:function'"]),
    ],
)
def test_load_grade_fn_errors_name_the_file(
    tmp_path: Path, grade_py: str | None, spec: str, words: list[str]
) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    if grade_py is not None:
        write(folder / "grade.py", grade_py)
    with pytest.raises(TaskError) as info:
        load_grade_fn(folder, spec)
    message = info.value.message
    assert str(folder) in message
    assert "\n" not in message
    for word in words:
        assert word in message


def test_a_grader_needing_an_absent_package_says_which(tmp_path: Path) -> None:
    folder = task_folder(tmp_path / "task", "from mlebench_absent.grade_helpers import X\n")
    before = set(sys.modules)
    with pytest.raises(TaskError, match="ModuleNotFoundError") as info:
        load_grade_fn(folder, SPOOKY_SPEC)
    assert info.value.hint is not None and "'mlebench_absent'" in info.value.hint
    assert set(sys.modules) == before  # the half-loaded module is not left behind


# --- grading a submission ------------------------------------------------------------------

# An accuracy leaderboard (higher is better), n=10: gold pos 1, silver pos 2, bronze pos 4.
ACCURACY_BOARD = [1.0, 0.95, 0.9, 0.85, 0.7, 0.65, 0.6, 0.55, 0.5, 0.4]  # median 0.675


def accuracy(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    merged = answers.merge(submission, on="id", suffixes=("_true", "_pred"))
    if len(merged) != len(answers):
        raise ValueError("submission misses ids")
    return float((merged["label_true"] == merged["label_pred"]).mean())


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    return write(tmp_path / "answers.csv", "id,label\n1,a\n2,b\n3,a\n4,b\n")


def constant(value: Any) -> Callable[[pd.DataFrame, pd.DataFrame], Any]:
    def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> Any:
        return value

    return grade


def never_called(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    raise AssertionError("the grader must not run")


def test_a_valid_submission(tmp_path: Path, answers: Path) -> None:
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n2,b\n3,a\n4,a\n")
    report = grade_submission("toy", submission, answers, accuracy, ACCURACY_BOARD, sandboxed=True)
    assert report.competition_id == "toy"
    assert report.score == 0.75
    assert report.submission_exists and report.valid_submission
    assert report.error is None
    assert not (report.any_medal or report.gold_medal or report.silver_medal or report.bronze_medal)
    assert report.above_median  # 0.75 > 0.675
    assert report.is_lower_better is False
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold) == (
        1.0,
        0.95,
        0.85,
    )
    assert report.median_threshold == pytest.approx(0.675)
    assert report.submission_path == str(submission)
    assert report.sandboxed is True
    assert report.created_at.utcoffset() is not None  # timezone-aware
    assert GradeReport.model_validate_json(report.model_dump_json()) == report


def test_a_perfect_submission_wins_gold(tmp_path: Path, answers: Path) -> None:
    submission = write(tmp_path / "submission.csv", "id,label\n4,b\n3,a\n2,b\n1,a\n")
    report = grade_submission("toy", submission, answers, accuracy, ACCURACY_BOARD)
    assert report.score == 1.0
    assert report.gold_medal and report.any_medal and report.medal == "gold"
    assert not (report.silver_medal or report.bronze_medal)
    assert report.sandboxed is None


def test_the_score_is_rounded_to_five_decimals(tmp_path: Path, answers: Path) -> None:
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, constant(0.123456789), ACCURACY_BOARD)
    assert report.score == 0.12346


@pytest.mark.parametrize(
    ("raw", "leaderboard"),
    [
        (0.1234599, [0.12346, 0.1, 0.05]),  # higher is better: rounds up onto gold
        (0.1234549, [0.12345, 0.2, 0.3]),  # lower is better: rounds down onto gold
    ],
)
def test_rounding_happens_before_the_medal_comparison(
    tmp_path: Path, answers: Path, raw: float, leaderboard: list[float]
) -> None:
    assert not rank_score(raw, leaderboard)["gold_medal"]  # the raw grade falls short
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, constant(raw), leaderboard)
    assert report.score == leaderboard[0]
    assert report.gold_medal


def assert_invalid(report: GradeReport, *, exists: bool, reason: str) -> None:
    assert report.score is None
    assert report.valid_submission is False
    assert report.submission_exists is exists
    assert not (report.any_medal or report.gold_medal or report.silver_medal or report.bronze_medal)
    assert report.above_median is False
    assert (report.gold_threshold, report.silver_threshold, report.bronze_threshold) == (
        1.0,
        0.95,
        0.85,
    )
    assert report.median_threshold == pytest.approx(0.675)
    assert report.error is not None and "\n" not in report.error
    assert reason in report.error


def test_a_grader_exception_makes_the_submission_invalid(tmp_path: Path, answers: Path) -> None:
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, accuracy, ACCURACY_BOARD)
    assert_invalid(report, exists=True, reason="ValueError: submission misses ids")


def test_a_multi_line_grader_error_is_reported_on_one_line(tmp_path: Path, answers: Path) -> None:
    def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
        raise KeyError("line one\nline two")

    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, grade, ACCURACY_BOARD)
    assert_invalid(report, exists=True, reason="KeyError")
    assert report.error is not None and "line one" in report.error and "line two" in report.error


def test_an_unreadable_csv_is_an_invalid_submission(tmp_path: Path, answers: Path) -> None:
    submission = tmp_path / "submission.csv"
    submission.write_bytes(b"\xff\xfe\x00\x01 not text \xff")
    report = grade_submission("toy", submission, answers, never_called, ACCURACY_BOARD)
    assert_invalid(
        report,
        exists=True,
        reason="cannot read the submission: 'utf-8' codec can't decode byte 0xff in position 0",
    )


def test_a_malformed_csv_is_an_invalid_submission(tmp_path: Path, answers: Path) -> None:
    submission = write(tmp_path / "submission.csv", 'id,label\n"1,a\n')
    report = grade_submission("toy", submission, answers, never_called, ACCURACY_BOARD)
    assert_invalid(report, exists=True, reason="cannot read the submission: Error tokenizing data")


def test_a_missing_submission(tmp_path: Path, answers: Path) -> None:
    submission = tmp_path / "submission" / "submission.csv"
    report = grade_submission("toy", submission, answers, never_called, ACCURACY_BOARD)
    assert_invalid(report, exists=False, reason=f"no submission at {submission}")
    assert report.submission_path == str(submission)


@pytest.mark.parametrize("name", ["submission.txt", "submission"])
def test_a_file_that_is_not_a_csv_does_not_count(tmp_path: Path, answers: Path, name: str) -> None:
    submission = write(tmp_path / name, "id,label\n1,a\n2,b\n3,a\n4,b\n")
    report = grade_submission("toy", submission, answers, never_called, ACCURACY_BOARD)
    assert_invalid(report, exists=False, reason="not a .csv file")


def test_a_directory_named_like_a_csv_does_not_count(tmp_path: Path, answers: Path) -> None:
    submission = tmp_path / "submission.csv"
    submission.mkdir()
    report = grade_submission("toy", submission, answers, never_called, ACCURACY_BOARD)
    assert_invalid(report, exists=False, reason="not a .csv file")


@pytest.mark.parametrize(
    ("value", "reason"),
    [(None, "NoneType 'None'"), ("0.5", "str '0.5'"), ([0.5, 0.6], "list '[0.5, 0.6]'")],
)
def test_a_grade_that_is_not_a_number_is_invalid(
    tmp_path: Path, answers: Path, value: Any, reason: str
) -> None:
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, constant(value), ACCURACY_BOARD)
    assert_invalid(report, exists=True, reason=reason)


def test_a_nan_grade_is_a_valid_submission_without_a_medal(tmp_path: Path, answers: Path) -> None:
    # MLE-bench's Grader returns round(nan, 5): not None, so grade_csv reports it as valid.
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, constant(math.nan), ACCURACY_BOARD)
    assert report.score is not None and math.isnan(report.score)
    assert report.valid_submission and report.submission_exists and report.error is None
    assert not (report.any_medal or report.gold_medal or report.silver_medal or report.bronze_medal)
    assert report.above_median is False and report.leaderboard_percentile == 0.0
    assert report.gold_threshold == 1.0
    # grade.json is written with json.dumps (NaN as MLE-bench's reports write it) and read back.
    back = GradeReport.model_validate(json.loads(json.dumps(report.model_dump(mode="json"))))
    assert back.score is not None and math.isnan(back.score) and back.valid_submission
    assert aggregate_reports([report])["total_valid_submissions"] == 1


def test_numpy_grades_become_plain_floats(tmp_path: Path, answers: Path) -> None:
    import numpy as np

    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    report = grade_submission("toy", submission, answers, constant(np.float32(0.5)), ACCURACY_BOARD)
    assert type(report.score) is float and report.score == 0.5


def test_an_empty_submission_reaches_the_grader_as_an_empty_frame(
    tmp_path: Path, answers: Path
) -> None:
    seen: list[pd.DataFrame] = []

    def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
        seen.append(submission)
        return accuracy(submission, answers)

    submission = write(tmp_path / "submission.csv", "")
    report = grade_submission("toy", submission, answers, grade, ACCURACY_BOARD)
    assert len(seen) == 1 and seen[0].empty
    assert_invalid(report, exists=True, reason="KeyError")


def test_the_grader_gets_both_frames(tmp_path: Path, answers: Path) -> None:
    seen: dict[str, pd.DataFrame] = {}

    def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
        seen["submission"], seen["answers"] = submission, answers
        return 0.5

    submission = write(tmp_path / "submission.csv", "id,p\n1,0.418785\n")
    grade_submission("toy", submission, answers, grade, ACCURACY_BOARD)
    assert seen["submission"]["p"].tolist() == [0.418785]
    assert seen["answers"]["label"].tolist() == ["a", "b", "a", "b"]


def test_jsonl_answers_reach_the_grader_as_records(tmp_path: Path) -> None:
    # tensorflow2-question-answering's answers are JSON lines, which MLE-bench hands over as a
    # list of dicts.
    answers = write(tmp_path / "answers.jsonl", '{"id": 1, "y": "a"}\n\n{"id": 2, "y": "b"}\n')

    def grade(submission: pd.DataFrame, answers: list[dict[str, Any]]) -> float:
        truth = {row["id"]: row["y"] for row in answers}
        return float(
            sum(truth[i] == y for i, y in zip(submission["id"], submission["y"], strict=True)) / 2
        )

    submission = write(tmp_path / "submission.csv", "id,y\n1,a\n2,a\n")
    assert load_answers(answers) == [{"id": 1, "y": "a"}, {"id": 2, "y": "b"}]
    report = grade_submission("qa", submission, answers, grade, ACCURACY_BOARD)
    assert report.score == 0.5 and report.valid_submission


def test_csv_answers_keep_exact_floats(tmp_path: Path) -> None:
    answers = write(tmp_path / "answers.csv", "id,y\n1,0.418785\n2,0.30000000000000004\n")
    assert load_answers(answers)["y"].tolist() == [0.418785, 0.30000000000000004]


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("answers.parquet", "x", ["neither a .csv nor a .jsonl"]),
        ("answers.CSV", "id\n1\n", ["neither a .csv nor a .jsonl"]),  # MLE-bench: exact suffix
        ("answers.jsonl", '{"id": 1}\n{"id": \n', ["line 2 is not JSON"]),
        ("answers.csv", "", ["empty"]),
    ],
)
def test_unusable_answers_are_a_task_error_naming_the_file(
    tmp_path: Path, name: str, text: str, words: list[str]
) -> None:
    path = write(tmp_path / name, text)
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    with pytest.raises(TaskError) as info:
        grade_submission("toy", submission, path, never_called, ACCURACY_BOARD)
    assert str(path) in info.value.message and "\n" not in info.value.message
    for word in words:
        assert word in info.value.message


def test_missing_answers_are_a_task_error(tmp_path: Path) -> None:
    submission = write(tmp_path / "submission.csv", "id,label\n1,a\n")
    with pytest.raises(TaskError, match="answers not found"):
        grade_submission("toy", submission, tmp_path / "nope.csv", never_called, ACCURACY_BOARD)


# --- the helpers a validity check shares ----------------------------------------------------


def test_read_submission_reads_as_mlebench_does(tmp_path: Path) -> None:
    data = b"id,p\n1,0.418785\n2,0.30000000000000004\n"
    frame = read_submission(data)
    assert frame["p"].tolist() == [0.418785, 0.30000000000000004]  # round-trip floats
    path = tmp_path / "submission.csv"
    path.write_bytes(data)
    assert read_submission(path).equals(frame)
    empty = read_submission(b"")
    assert isinstance(empty, pd.DataFrame) and empty.empty  # handed to the grader as empty


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"\xffid\n1\n",
            "cannot read the submission: 'utf-8' codec can't decode byte 0xff in position 0: "
            "invalid start byte",
        ),
        (
            b'id,label\n"1,a\n',
            "cannot read the submission: Error tokenizing data. C error: EOF inside string "
            "starting at row 1",
        ),
        (bytes(range(256)) * 4, "cannot read the submission: "),
    ],
)
def test_an_unreadable_submission_is_one_line_saying_why(data: bytes, message: str) -> None:
    with pytest.raises(UnreadableSubmission) as info:
        read_submission(data)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_read_submission_opens_a_path_as_untrusted(tmp_path: Path) -> None:
    target = write(tmp_path / "elsewhere.csv", "id\n1\n")
    link = tmp_path / "submission.csv"
    link.symlink_to(target)
    with pytest.raises(UnreadableSubmission, match="symlink"):
        read_submission(link)
    with pytest.raises(UnreadableSubmission, match="no file at"):
        read_submission(tmp_path / "absent.csv")


# --- bounded before pandas reads the file ---------------------------------------------------


def wide_header(columns: int) -> str:
    return ",".join(["id", "label"] + [f"c{i}" for i in range(columns)]) + "\n"


def test_an_absurd_submission_is_invalid_before_pandas_reads_it(
    tmp_path: Path, answers: Path
) -> None:
    """A header far wider than the answers' (and the sample's) is refused on its first
    megabyte: pandas took 85 s and 3.1 GB on a million columns."""
    rows = "1,a\n2,b\n3,a\n4,b\n"
    million = write(tmp_path / "million.csv", wide_header(10**6) + rows)
    start = time.monotonic()
    report = grade_submission("toy", million, answers, never_called, ACCURACY_BOARD)
    assert time.monotonic() - start < 10
    assert report.submission_exists and not report.valid_submission
    assert report.error == (
        "the submission's header line is over 1,048,576 bytes long "
        "(the answers: 9 bytes, 2 columns)"
    )
    sample = write(tmp_path / "sample_submission.csv", "id,label\n1,a\n2,a\n3,a\n4,a\n")
    wide = write(tmp_path / "wide.csv", wide_header(20_000) + rows)
    report = grade_submission("toy", wide, answers, never_called, ACCURACY_BOARD, sample=sample)
    assert report.error == (
        "the submission's header has 20,002 columns, over the 10,000 accepted "
        "(the widest of the sample submission and the answers: 2)"
    )
    with pytest.raises(UnreadableSubmission, match="20,002 columns"):
        read_submission(wide.read_bytes(), submission_bounds(answers))


def test_pandas_stops_reading_past_the_rows_bound(tmp_path: Path, answers: Path) -> None:
    """A submission is read no further than the bounds' rows and one: 2 million rows past a
    bound of 100,000 are refused in a fraction of what reading them takes, and the bound is ten
    times the widest reference's rows (a format with several rows per answer row passes)."""
    limits = submission_bounds(answers)
    assert limits.max_rows == 100_000  # the floor: the answers have 4 rows
    many = write(tmp_path / "many.csv", "id,label\n" + "1,a\n" * 2_000_000)
    with pytest.raises(UnreadableSubmission) as caught:
        read_submission(many, limits)
    assert str(caught.value) == (
        "the submission has over 100,000 rows, the most accepted for this task"
    )
    report = grade_submission("toy", many, answers, never_called, ACCURACY_BOARD)
    assert report.error == str(caught.value)
    big = write(
        tmp_path / "big_answers.csv", "id,label\n" + "".join(f"{i},a\n" for i in range(20_000))
    )
    assert submission_bounds(big).max_rows == 200_000


def test_extra_columns_within_the_bounds_still_reach_the_grader(
    tmp_path: Path, answers: Path
) -> None:
    """Graders select columns by name: 5,000 extra columns are the grader's to judge."""
    extra = ",0" * 5_000
    rows = "".join(f"{i},{label}{extra}\n" for i, label in ((1, "a"), (2, "b"), (3, "a"), (4, "a")))
    submission = write(tmp_path / "submission.csv", wide_header(5_000) + rows)
    report = grade_submission("toy", submission, answers, accuracy, ACCURACY_BOARD)
    assert report.valid_submission and report.score == 0.75


def test_podium_grade_on_a_million_columns_is_quick_and_small(
    titanic: FolderTask, data_dir: Path, tmp_path: Path
) -> None:
    """The CLI, as a user runs it, on a million-column CSV: one line, exit 1, well under a
    gigabyte (measured: ~2 s, ~100 MB, start-up included; perf/README.md)."""
    ids = pd.read_csv(titanic.sample_submission)["PassengerId"]
    header = "PassengerId,Survived" + "".join(f",c{i}" for i in range(10**6)) + "\n"
    path = write(tmp_path / "submission.csv", header + "".join(f"{i},0\n" for i in ids))
    command = [sys.executable, "-c", MEASURED, sys.executable, "-m", "podium", "grade",
               "mini/titanic", str(path), "--data-dir", str(data_dir)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "invalid submission: the submission's header line is over 1,048,576 bytes" in done.stdout
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    assert peak_kib < 1024**2  # KiB: under a gigabyte (3.1 GB before)


# Runs a command and prints its peak resident memory (KiB) as the last line of stderr.
MEASURED = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


class InvalidSubmissionError(Exception):
    """As MLE-bench's graders raise it."""


def test_apply_grader_follows_mlebench_graders_call() -> None:
    import numpy as np

    frame = pd.DataFrame({"id": [1]})
    assert apply_grader(constant(0.123456789), frame, frame) == (0.12346, None)
    score, reason = apply_grader(constant(np.float64("nan")), frame, frame)
    assert score is not None and math.isnan(score) and reason is None  # a score, not an error
    assert apply_grader(constant(np.float32(0.25)), frame, frame) == (0.25, None)
    assert apply_grader(constant(3), frame, frame) == (3.0, None)
    assert type(apply_grader(constant(np.float64(0.5)), frame, frame)[0]) is float

    def rejects(submission: pd.DataFrame, answers: Any) -> float:
        raise InvalidSubmissionError("the ids differ\nfrom the answers'")

    assert apply_grader(rejects, frame, frame) == (
        None,
        "grader rejected the submission: InvalidSubmissionError: the ids differ from the answers'",
    )
    assert apply_grader(lambda s, a: s["missing"], frame, frame)[0] is None
    assert apply_grader(constant("high"), frame, frame) == (
        None,
        "grader returned str 'high', not a number",
    )


# --- summaries -----------------------------------------------------------------------------


def report(
    task: str,
    medal: str | None = None,
    *,
    valid: bool = True,
    exists: bool = True,
    above: bool = False,
) -> GradeReport:
    """A report built by hand (no grading): only the flags the summaries count matter."""
    return GradeReport(
        competition_id=task,
        score=0.5 if valid else None,
        gold_threshold=0.9,
        silver_threshold=0.8,
        bronze_threshold=0.7,
        median_threshold=0.5,
        any_medal=medal is not None,
        gold_medal=medal == "gold",
        silver_medal=medal == "silver",
        bronze_medal=medal == "bronze",
        above_median=above or medal is not None,
        submission_exists=exists,
        valid_submission=valid,
        is_lower_better=False,
        created_at=utcnow(),
        submission_path=f"/runs/{task}/submission.csv",
    )


def test_aggregate_reports_uses_mlebench_names_and_counts() -> None:
    reports = [
        report("a", "gold"),
        report("b", "silver"),
        report("c", "bronze"),
        report("d", above=True),
        report("e", valid=False),
        report("f", valid=False, exists=False),
    ]
    summary = aggregate_reports(iter(reports))
    assert {k: v for k, v in summary.items() if k != "competition_reports"} == {
        "total_runs": 6,
        "total_runs_with_submissions": 5,
        "total_valid_submissions": 4,
        "total_medals": 3,
        "total_gold_medals": 1,
        "total_silver_medals": 1,
        "total_bronze_medals": 1,
        "total_above_median": 4,
    }
    dumped = json.loads(json.dumps(summary))
    assert [r["competition_id"] for r in dumped["competition_reports"]] == list("abcdef")
    assert isinstance(dumped["competition_reports"][0]["created_at"], str)
    assert dumped["competition_reports"][4]["score"] is None


def test_aggregate_of_nothing() -> None:
    summary = aggregate_reports([])
    assert summary["total_runs"] == 0 and summary["total_medals"] == 0
    assert summary["competition_reports"] == []


SUMMARY_FIELDS = {
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "valid_submission",
}


def test_seed_summary_per_seed_mean_and_sem() -> None:
    tasks = ["a", "b", "c", "d"]
    by_seed = {
        # any medal 2/4 = 50%; gold 25%; valid 3/4
        0: [report("a", "gold"), report("b", "silver"), report("c"), report("d", valid=False)],
        # b and d never ran (count as no medal); z is not a task of the set
        1: [report("a", "bronze"), report("c"), report("z", "gold")],
        # d never ran
        2: [report("a", "gold"), report("b", "gold"), report("c", "bronze")],
    }
    summary = seed_summary(by_seed, tasks)
    assert summary["n_seeds"] == 3 and summary["n_tasks"] == 4
    assert set(summary) == {"n_seeds", "n_tasks"} | SUMMARY_FIELDS

    any_medal = summary["any_medal"]
    assert any_medal["per_seed"] == {0: 50.0, 1: 25.0, 2: 75.0}
    assert any_medal["mean"] == pytest.approx(50.0)
    # sample sd (ddof=1) of 50, 25, 75 is 25; over sqrt(3 seeds)
    assert any_medal["sem"] == pytest.approx(14.4338, abs=1e-4)
    assert any_medal["sem"] == pytest.approx(25 / math.sqrt(3))
    assert any_medal["sem"] == pytest.approx(pd.Series([50.0, 25.0, 75.0]).sem())

    assert summary["gold_medal"]["per_seed"] == {0: 25.0, 1: 0.0, 2: 50.0}
    assert summary["silver_medal"]["per_seed"] == {0: 25.0, 1: 0.0, 2: 0.0}
    assert summary["bronze_medal"]["per_seed"] == {0: 0.0, 1: 25.0, 2: 25.0}
    assert summary["above_median"]["per_seed"] == {0: 50.0, 1: 25.0, 2: 75.0}
    valid = summary["valid_submission"]
    assert valid["per_seed"] == {0: 75.0, 1: 50.0, 2: 75.0}
    assert valid["mean"] == pytest.approx(200 / 3)
    assert valid["sem"] == pytest.approx(25 / 3)  # sd 14.434 (ddof=1) / sqrt(3)
    json.dumps(summary)


def test_seed_summary_with_one_seed_has_no_sem() -> None:
    summary = seed_summary({7: [report("a", "gold"), report("b")]}, ["a", "b", "c", "d", "e"])
    assert summary["any_medal"] == {"per_seed": {7: 20.0}, "mean": 20.0, "sem": None}
    assert summary["valid_submission"]["mean"] == 40.0


def test_seed_summary_with_identical_seeds_has_zero_sem() -> None:
    summary = seed_summary({0: [report("a", "gold")], 1: [report("a", "silver")]}, ["a", "b"])
    assert summary["any_medal"]["mean"] == 50.0
    assert summary["any_medal"]["sem"] == 0.0


@pytest.mark.parametrize(
    ("by_seed", "tasks", "words"),
    [
        ({}, ["a"], "no seeds"),
        ({0: [report("a")]}, [], "no tasks"),
        ({0: [report("a")]}, ["a", "a"], "repeats"),
        ({0: [report("a", "gold"), report("a")]}, ["a"], "two reports for a"),
    ],
)
def test_seed_summary_rejects_ambiguous_input(
    by_seed: dict[int, list[GradeReport]], tasks: list[str], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        seed_summary(by_seed, tasks)


# --- MLE-bench's published values (opt-in) -------------------------------------------------

SPOOKY_LEADERBOARD = Path("mlebench/competitions/spooky-author-identification/leaderboard.csv")


def real_spooky_leaderboard() -> Path | str:
    """The real spooky leaderboard in $MLEBENCH_REPO, or why it cannot be used here."""
    repo = os.environ.get("MLEBENCH_REPO")
    if not repo:
        return "set MLEBENCH_REPO to an MLE-bench checkout to check MLE-bench's known thresholds"
    path = Path(repo) / SPOOKY_LEADERBOARD
    if not path.is_file():
        return f"MLEBENCH_REPO has no {SPOOKY_LEADERBOARD}"
    if path.read_bytes().startswith(b"version https://git-lfs"):
        return f"{path} is a Git LFS pointer: run `git lfs pull` in {repo}"
    return path


def test_spooky_author_identification_thresholds_match_mlebench() -> None:
    path = real_spooky_leaderboard()
    if isinstance(path, str):
        pytest.skip(path)
    scores = read_leaderboard(path)
    assert is_lower_better(scores) is True
    t = medal_thresholds(scores)
    assert t.gold == pytest.approx(0.16506, abs=1e-9)
    assert t.silver == pytest.approx(0.26996, abs=1e-9)
    assert t.bronze == pytest.approx(0.29381, abs=1e-9)
    assert t.median == pytest.approx(0.418785, abs=1e-9)
    assert rank_score(0.16506, scores)["gold_medal"] is True


@pytest.mark.parametrize(
    ("score", "board", "percentile"),
    [
        (0.85, [0.9, 0.8, 0.8, 0.7], 75.0),  # higher is better: beats 0.8, 0.8, 0.7
        (0.8, [0.9, 0.8, 0.8, 0.7], 25.0),  # a tie beats nobody
        (0.95, [0.9, 0.8, 0.8, 0.7], 100.0),
        (0.1, [0.9, 0.8, 0.8, 0.7], 0.0),
        (0.15, [0.1, 0.2, 0.3], 66.6667),  # lower is better (first < last)
        (0.3, [0.1, 0.2, 0.3], 0.0),
        (None, [0.1, 0.2, 0.3], 0.0),  # invalid or missing: beats nobody
    ],
)
def test_leaderboard_percentile_is_the_share_of_entries_strictly_beaten(
    score: float | None, board: list[float], percentile: float
) -> None:
    assert leaderboard_percentile(score, board) == percentile


def test_grade_reports_carry_the_percentile(tmp_path: Path) -> None:
    answers = tmp_path / "answers.csv"
    answers.write_text("id,y\n1,1\n2,0\n")
    submission = tmp_path / "submission.csv"
    submission.write_text("id,y\n1,1\n2,1\n")

    def accuracy(sub: pd.DataFrame, ans: pd.DataFrame) -> float:
        return float((sub["y"] == ans["y"]).mean())

    report = grade_submission("t", submission, answers, accuracy, [0.9, 0.6, 0.5, 0.4])
    assert report.score == 0.5 and report.leaderboard_percentile == 25.0
    missing = grade_submission("t", tmp_path / "none.csv", answers, accuracy, [0.9, 0.6])
    assert missing.leaderboard_percentile == 0.0
