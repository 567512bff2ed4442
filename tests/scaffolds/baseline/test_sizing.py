"""A first draft sized to the data (issue 39): the three tabular shapes that ran for minutes or
were killed at the memory limit, and text, image and series tasks of real sizes, get a draft
that fits ``budget.DRAFT_SECONDS`` of one core and the memory budget, later nodes grow only
within ``budget.GROW_SECONDS``, and sized scripts of every kind run.

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
from podium.scaffolds.baseline import image_recipe as images
from podium.scaffolds.baseline import series_recipe as series
from podium.scaffolds.baseline import tabular_recipe as recipes
from podium.scaffolds.baseline import text_recipe as texts
from podium.scaffolds.baseline.kinds import KINDS
from podium.scaffolds.baseline.specs import ImageSpec, SeriesSpec, TabularSpec, TextSpec
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
        "reviews": synthetic.reviews(tmp_path_factory.mktemp("reviews")),
        "digits": synthetic.digits(tmp_path_factory.mktemp("digits")),
        "cactus": synthetic.cactus(tmp_path_factory.mktemp("cactus")),
        "employment": synthetic.employment(tmp_path_factory.mktemp("employment"), n_series=12),
        "two_targets": synthetic.two_targets(tmp_path_factory.mktemp("two_targets")),
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


def test_two_targets_cost_one_model_each(tasks: dict[str, SyntheticTask]) -> None:
    spec = replace(synthetic.spec_of(tasks["two_targets"], TabularSpec), rows=5_000_000)
    assert spec.targets == ("SalePrice", "Rooms")
    one = replace(spec, targets=())
    plain = today("hist_gradient_boosting", spec)
    assert recipes.seconds(plain, spec) > 1.8 * recipes.seconds(plain, one)
    first = recipes.draft(spec, 0, random.Random(0))
    assert recipes.seconds(first, spec) <= budget.DRAFT_SECONDS
    alone = recipes.draft(one, 0, random.Random(0))  # one target: gives up less
    assert recipes.seconds(first, one) < recipes.seconds(alone, one) <= budget.DRAFT_SECONDS


def test_text_drafts_on_a_million_documents_sample_them_and_cap_the_vocabulary(
    tasks: dict[str, SyntheticTask],
) -> None:
    small = synthetic.spec_of(tasks["reviews"], TextSpec)
    assert 40 < small.chars < 80  # the analysis measures the documents' length
    spec = replace(small, rows=1_000_000, chars=400)  # posts of jigsaw's length, 6x as many
    assert texts.seconds(texts.TextRecipe("logistic", {"C": 4.0}), spec) > 4 * budget.DRAFT_SECONDS
    drafts = [texts.draft(spec, i, random.Random(i)) for i in range(6)]
    for d in drafts:
        assert texts.seconds(d, spec) <= budget.DRAFT_SECONDS, d
        assert 0 < d.sample <= texts.memory_rows(d, spec), d
        assert d.max_features == texts.MAX_FEATURES, d
    plan = KINDS["text"].describe(spec, drafts[0])
    assert f"fitted on {drafts[0].sample} sampled documents and the 200000 most" in plan
    children = [texts.improve(drafts[0], spec, random.Random(seed))[0] for seed in range(30)]
    for child in children:
        assert texts.seconds(child, spec) <= budget.GROW_SECONDS, child
        assert texts.fitted_rows(child, spec) <= texts.memory_rows(child, spec), child
    # later nodes grow back: more n-grams (the documents are held at memory's cap already)
    assert any(c.max_features != texts.MAX_FEATURES for c in children)
    plain = texts.TextRecipe("logistic", {"C": 4.0, "max_iter": 2000})
    assert texts.draft(small, 0, random.Random(0)) == plain  # 100 reviews: as before


def test_text_sized_script_samples_documents_and_caps_ngrams(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    spec = synthetic.spec_of(tasks["reviews"], TextSpec)
    sized = replace(texts.draft(spec, 0, random.Random(0)), sample=70, max_features=40,
                    holdout=True)  # fmt: skip
    code = KINDS["text"].render(spec, sized)
    assert KINDS["text"].read(code) == sized
    assert "train = train.sample(n=min(len(train), 70), random_state=0)" in code
    assert "chunksize=" in code  # the documents kept while reading, never all at once
    assert "max_features=40" in code and "[:1]" in code  # one hold-out split
    auc = synthetic.run(code, tasks["reviews"], tmp_path)
    assert auc > 0.6


def test_image_drafts_on_many_images_sample_them(tasks: dict[str, SyntheticTask]) -> None:
    small = synthetic.spec_of(tasks["cactus"], ImageSpec)
    spec = replace(small, size=(32, 32), rows=60_000)  # aerial-cactus' size, 3.4x its images
    svc = images._start("svc", spec)
    assert images.seconds(svc, spec) > 10 * budget.DRAFT_SECONDS  # quadratic in the images
    drafts = [images.draft(spec, i, random.Random(i)) for i in range(5)]
    assert [d.family for d in drafts] == list(images.DRAFT_ORDER)
    for d in drafts:
        assert images.seconds(d, spec) <= budget.DRAFT_SECONDS, d
        assert 0 < d.sample <= images.memory_rows(spec) < spec.rows, d
    assert drafts[3].sample < drafts[0].sample  # the SVM gives up more images than the linear
    plan = KINDS["image"].describe(spec, drafts[3])
    assert f"fitted on {drafts[3].sample} sampled training images" in plan
    for seed in range(20):
        child, _ = images.improve(drafts[3], spec, random.Random(seed))
        assert images.seconds(child, spec) <= budget.GROW_SECONDS, child
        assert 0 < child.sample <= images.memory_rows(spec), child
    assert images.draft(small, 3, random.Random(3)) == svc  # 60 small images: as before


def test_image_drafts_count_the_decoding_of_large_photos(tasks: dict[str, SyntheticTask]) -> None:
    """20,000 training photos of 2048x1365 (plant-pathology's size) shrunk to 32 pixels a side:
    decoding them, even at a reduced scale, is most of the draft's cost, so it loads a sample,
    where as many stored 32x22 images are loaded whole."""
    stored = replace(synthetic.spec_of(tasks["cactus"], ImageSpec), size=(32, 22), rows=20_000)
    photos = replace(stored, source=(2048, 1365))
    assert images.draft(stored, 0, random.Random(0)).sample == 0
    first = images.draft(photos, 0, random.Random(0))
    assert 0 < first.sample < photos.rows
    assert images.seconds(first, photos) <= budget.DRAFT_SECONDS


def test_image_sized_script_loads_a_sample_of_the_images(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    spec = synthetic.spec_of(tasks["digits"], ImageSpec)
    sized = replace(images.draft(spec, 0, random.Random(0)), sample=45, holdout=True)
    code = KINDS["image"].render(spec, sized)
    assert KINDS["image"].read(code) == sized
    assert "train = train.sample(n=min(len(train), 45), random_state=0)" in code
    accuracy = synthetic.run(code, tasks["digits"], tmp_path)
    assert accuracy > 0.7  # three digit classes


def test_series_learned_drafts_on_many_series_fit_on_a_sample(
    tasks: dict[str, SyntheticTask],
) -> None:
    small = synthetic.spec_of(tasks["employment"], SeriesSpec)
    spec = replace(small, n_series=100_000)
    first = series.draft(spec, 0, random.Random(0))
    assert first == series._start("seasonal_naive")  # node 1: nothing to fit
    for index in (1, 2, 4):  # ridge, histogram boosting, a forest
        unsized = series._start(series.DRAFT_ORDER[index])
        d = series.draft(spec, index, random.Random(index))
        assert series.seconds(unsized, spec) > budget.DRAFT_SECONDS or (
            series.memory_share(unsized, spec) < 1
        )
        assert series.seconds(d, spec) <= budget.DRAFT_SECONDS, d
        assert series.memory_share(d, spec) == 1, d
        assert d.history == series.MIN_HISTORY and series.MIN_SERIES <= d.sample < 100_000, d
        child, _ = series.improve(d, spec, random.Random(index))
        assert series.seconds(child, spec) <= budget.GROW_SECONDS, child
        assert series.memory_share(child, spec) == 1, child
    assert series.draft(small, 2, random.Random(2)) == series._start("hist_gradient_boosting")


def test_series_sized_script_fits_a_sample_and_forecasts_every_series(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    spec = synthetic.spec_of(tasks["employment"], SeriesSpec)
    sized = replace(series._start("hist_gradient_boosting"), history=24, sample=5)
    code = KINDS["series"].render(spec, sized)
    assert KINDS["series"].read(code) == sized
    assert "SAMPLE = 5" in code and "design(fit, origin, h)" in code
    smape = synthetic.run(code, tasks["employment"], tmp_path)  # the check: every test id
    assert 0 < smape < 10
