"""The arena suite's promise to whoever compares strategies on it: the baseline's first draft
(seed 0) does not medal on any task, so a medal there is something a search earned. (Over
seeds, the first draft's medal rate, and how often a good search medals, are measured by
perf/suite_power.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import podium
from tests.benchmarks.test_bundled_suites import TASKS

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("task_id", [t for t in TASKS if t.startswith("arena/")])
def test_the_baselines_first_draft_does_not_medal(
    task_id: str, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    podium.run({"task": task_id, "out": str(out), "data_dir": str(data_dir),
                "search": {"strategy": "one-draft"}, "budget": {"steps": 20}})  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["steps"], summary["buggy_nodes"]) == (1, 0), summary
    grade = json.loads((out / "grade.json").read_text())
    assert grade["valid_submission"], grade
    assert not grade["any_medal"], f"the first draft medals on {task_id}: {grade['score']}"
