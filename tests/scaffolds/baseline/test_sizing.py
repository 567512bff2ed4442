"""A first draft sized to the data (issue 39): the three shapes that ran for minutes or were
killed at the memory limit get a draft that fits ``budget.DRAFT_SECONDS`` of one core, later
nodes grow only within ``budget.GROW_SECONDS``, and sized scripts run.

The recipe sees nothing but the spec, so a small fixture stands for the real size through its
spec with the real number of rows (``dataclasses.replace``); the scripts run on the fixtures."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline import tabular_recipe as recipes
from podium.scaffolds.baseline.specs import TabularSpec
from podium.scaffolds.baseline.tabular_codegen import read_recipe, render
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

TAXI_ROWS = 21_500_000  # the 1 GB train.csv every node of which the kernel killed


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SyntheticTask]:
    return {
        "leaf": synthetic.leaf(tmp_path_factory.mktemp("leaf"), per_class=3),
        "wide": synthetic.wide(tmp_path_factory.mktemp("wide"), rows=400),
        "taxi": synthetic.taxi(tmp_path_factory.mktemp("taxi"), rows=24_000),
    }


def today(family: str, spec: TabularSpec) -> recipes.Recipe:
    """The draft as it was before sizing: the family's defaults on every row and column."""
    return recipes.Recipe(family, recipes.default_params(family, spec), encode="ordinal")


def test_leaf_drafts_leave_out_boosting_over_99_classes(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    small = synthetic.spec_of(tasks["leaf"], TabularSpec)
    assert (small.classes, len(small.numeric), len(small.columns)) == (99, 192, 99)
    spec = replace(small, rows=891)  # MLE-bench's leaf-classification
    # 100 trees per class, 99 classes, 6 fits: node 1 ran for more than 11 minutes
    assert recipes.seconds(today("gradient_boosting", spec), spec) > 10 * budget.DRAFT_SECONDS
    assert "gradient_boosting" not in recipes.affordable(spec, budget.DRAFT_SECONDS)
    drafts = [recipes.draft(spec, i, random.Random(i)) for i in range(5)]
    assert [d.family for d in drafts] == [
        "random_forest", "linear", "extra_trees", "knn", "decision_tree",
    ]  # fmt: skip
    assert all(recipes.seconds(d, spec) <= budget.DRAFT_SECONDS for d in drafts)
    assert all(not (d.holdout or d.sample or d.select) for d in drafts)  # 5 folds, all data
    knn = render(small, drafts[3])  # the same draft on a third of the rows, to run it
    log_loss = synthetic.run(knn, tasks["leaf"], tmp_path)
    assert 0 < log_loss < 4.0  # better than the uniform guess, ln(99) = 4.6


def test_wide_draft_gives_up_rounds_folds_and_columns_not_the_model(
    tasks: dict[str, SyntheticTask],
) -> None:
    spec = replace(synthetic.spec_of(tasks["wide"], TabularSpec), rows=2700)  # the 662 s table
    assert recipes.seconds(today("gradient_boosting", spec), spec) > 5 * budget.DRAFT_SECONDS
    first = recipes.draft(spec, 0, random.Random(0))
    assert first.family == "gradient_boosting"
    assert first.params["n_estimators"] == recipes.MIN_ROUNDS and first.holdout
    assert recipes.MIN_COLUMNS < first.select < 2000 and first.sample == 0
    assert recipes.seconds(first, spec) <= budget.DRAFT_SECONDS
    # improve grows it back within the later nodes' budget, never beyond
    children = [recipes.improve(first, spec, random.Random(seed))[0] for seed in range(40)]
    assert all(recipes.seconds(c, spec) <= budget.GROW_SECONDS for c in children)
    assert any(c.select > first.select or c.select == 0 or not c.holdout for c in children)


def test_wide_sized_script_selects_columns_and_holds_out(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    spec = synthetic.spec_of(tasks["wide"], TabularSpec)
    sized = recipes.sized(today("gradient_boosting", spec), spec, limit=3.0)
    assert sized is not None and sized.holdout and 0 < sized.select < 2000
    code = render(spec, sized)
    assert read_recipe(code) == sized
    assert f"SelectKBest(f_classif, k={sized.select})" in code
    auc = synthetic.run(code, tasks["wide"], tmp_path)
    assert auc > 0.6  # ten of the 2,000 columns carry the signal: selection keeps them


def test_taxi_drafts_sample_rows_to_fit_time_and_memory(tasks: dict[str, SyntheticTask]) -> None:
    spec = replace(synthetic.spec_of(tasks["taxi"], TabularSpec), rows=TAXI_ROWS)
    drafts = [recipes.draft(spec, i, random.Random(i)) for i in range(7)]
    assert drafts[0].family == "hist_gradient_boosting"
    for d in drafts:
        assert 0 < d.sample <= recipes.memory_rows(d, spec), d
        assert recipes.seconds(d, spec) <= budget.DRAFT_SECONDS, d
    # every later node stays within memory too, whatever it changes
    rng = random.Random(0)
    for d in drafts:
        child, _ = recipes.improve(d, spec, rng)
        assert 0 < child.sample <= recipes.memory_rows(child, spec), child
    fixed, _ = recipes.debug(drafts[0], spec)
    assert fixed.family == "linear" and 0 < fixed.sample <= recipes.memory_rows(fixed, spec)


def test_taxi_sized_script_samples_rows_on_one_thread(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    spec = synthetic.spec_of(tasks["taxi"], TabularSpec)
    assert recipes.draft(spec, 0, random.Random(0)).sample == 0  # 21,600 rows: all of them
    # a budget nothing fits: sizing's floors, MIN_ROWS rows of the 21,600 on one split
    sized = recipes.fitted(today("hist_gradient_boosting", spec), spec, limit=0.01)
    assert sized.sample == recipes.MIN_ROWS and sized.holdout and sized.select == 0
    code = render(spec, sized)
    assert f"train.sample(n=min(len(train), {sized.sample}), random_state=0)" in code
    assert "threadpool_limits(1)" in code
    rmse = synthetic.run(code, tasks["taxi"], tmp_path)
    assert 0 < rmse < 3.0  # the fare's noise alone is about 1


PEAK = """
import runpy, sys
runpy.run_path(sys.argv[1], run_name="__main__")
print([line for line in open("/proc/self/status") if line.startswith("VmHWM")][0])
"""
"""The script's peak resident memory, by its own memory map's high-water mark: getrusage's
ru_maxrss of a forked process starts at its parent's size (here pytest's) on Linux."""


def _peak_kb(code: str, public: Path, workspace: Path) -> tuple[int, str]:
    """Run ``code`` as a script in a node-like workspace, in a process of its own; its peak
    resident memory (kB) and what it printed."""
    workspace.mkdir()
    (workspace / "input").symlink_to(public)
    (workspace / "submission").mkdir()
    (workspace / "solution.py").write_text(code)
    done = subprocess.run(
        [sys.executable, "-c", PEAK, "solution.py"], cwd=workspace, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    return int(re.findall(r"^VmHWM:\s+(\d+) kB$", done.stdout, re.M)[-1]), done.stdout


def test_a_table_beyond_memory_is_never_held_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The taxi table 100 times over (2 M rows, 200 MB) with the memory budget scaled down as
    far (32 MiB): the sized draft reads the file in chunks, keeping a sample of each, and its
    whole run, model and all, peaks below a bare script that only reads the file whole."""
    task = synthetic.taxi(tmp_path / "taxi", rows=22_000)
    train = task.public_dir / "train.csv"
    body = train.read_bytes().split(b"\n", 1)[1]
    rows = body.count(b"\n")
    with train.open("ab") as handle:
        for _ in range(99):
            handle.write(body)
    monkeypatch.setattr(budget, "MEMORY_BYTES", 32 * 1024**2)
    spec = synthetic.spec_of(task, TabularSpec)
    assert spec.rows == 100 * rows
    first = recipes.draft(spec, 0, random.Random(0))
    assert 0 < first.sample <= recipes.memory_rows(first, spec) < spec.rows // 20
    code = render(spec, first)
    assert "chunksize=" in code
    whole, _ = _peak_kb('import pandas as pd\npd.read_csv("./input/train.csv")\n',
                        task.public_dir, tmp_path / "whole")  # fmt: skip
    sized, printed = _peak_kb(code, task.public_dir, tmp_path / "sized")
    assert sized < whole - 250_000, (sized, whole)  # at least 250 MB less
    assert 0 < float(re.findall(r"^VALIDATION_METRIC: (\S+)$", printed, re.M)[-1]) < 3.0
    problem = task.check_submission(tmp_path / "sized" / "submission" / "submission.csv")
    assert problem is None, problem
