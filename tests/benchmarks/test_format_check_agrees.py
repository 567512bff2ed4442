"""The node's format check against the graders fixture: it never refuses a submission the
competition's grader accepts, and it catches what the grader refuses without the answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.benchmarks.mlebench import MLEBench, MLEBenchTask
from tests.benchmarks.graders_fixture import COMPETITIONS, DATA, REPO, Case, cases


@pytest.fixture(scope="module")
def tasks() -> dict[str, MLEBenchTask]:
    bench = MLEBench(repo=REPO)
    loaded = {c: bench.load_task(c, DATA) for c in COMPETITIONS}
    assert all(isinstance(t, MLEBenchTask) for t in loaded.values())
    return loaded  # type: ignore[return-value]


# Answer syntax only tensorflow2-question-answering's grader knows: its answers are .jsonl
# records, so no stand-in can be built from the (all-blank) sample and the structural check,
# which never refuses what a grader accepts, decides. The check lets these through; the final
# grading calls them invalid.
KNOWN_MISSES = {
    f"tensorflow2-question-answering/invalid/{name}.csv"
    for name in ("span_not_integer", "span_with_dash", "two_spans", "yes_lowercase")
}


def _marked(case: Case) -> object:
    if case.id not in KNOWN_MISSES:
        return case
    reason = "grader-specific answer syntax, jsonl answers: no stand-in"
    return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("case", [_marked(c) for c in cases()], ids=lambda c: c.id)
def test_the_check_agrees_with_the_grader(case: Case, tasks: dict[str, MLEBenchTask]) -> None:
    problem = tasks[case.competition].check_submission(case.submission)
    assert (problem is None) == case.valid, f"{case.why}: {problem}"

    if problem is not None:
        assert "\n" not in problem and "Traceback" not in problem


@pytest.mark.parametrize("competition", COMPETITIONS)
def test_the_sample_passes(competition: str, tasks: dict[str, MLEBenchTask]) -> None:
    task = tasks[competition]
    assert task.check_submission(task.sample_submission) is None


def test_a_missing_submission_is_reported(tasks: dict[str, MLEBenchTask], tmp_path: Path) -> None:
    problem = tasks[COMPETITIONS[0]].check_submission(tmp_path / "none.csv")
    assert problem is not None and "does not exist" in problem
