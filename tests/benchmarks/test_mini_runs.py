"""``podium run mini/<id>`` works on every bundled task with the default model (no key): real
kernels in the sandbox, the baseline's solutions, the final grade. (titanic: test_mini_cli.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import podium
from tests.benchmarks.test_bundled_suites import TASKS

pytestmark = pytest.mark.slow


MINI_TASKS = [t.removeprefix("mini/") for t in TASKS if t.startswith("mini/")]


@pytest.mark.parametrize("name", [t for t in MINI_TASKS if t != "titanic"])
def test_the_baseline_model_solves_every_mini_task(
    name: str, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    podium.run({"task": f"mini/{name}", "out": str(out), "data_dir": str(data_dir),
                "budget": {"steps": 2}, "workers": 2})  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["steps"], summary["buggy_nodes"]) == (2, 0), summary
    grade = json.loads((out / "grade.json").read_text())
    assert grade["valid_submission"] and grade["sandboxed"], grade
    placeholder = podium.api.runs.load_registry([]).benchmark("mini").load_task(name, data_dir)
    baseline = placeholder.grade(placeholder.sample_submission)  # type: ignore[union-attr]
    assert baseline is not None and baseline.score is not None
    better = (
        grade["score"] < baseline.score
        if grade["is_lower_better"]
        else grade["score"] > baseline.score
    )
    assert better, f"{grade['score']} does not beat the sample submission's {baseline.score}"
