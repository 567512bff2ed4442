"""The baseline on a multi-series forecasting layout (mini/us-employment's): ``train.csv`` with
date, series and value; ``test.csv`` with id, date and series for the next 12 months; sMAPE.
Tiny synthetic series (trend x season); the generated solutions run in this process."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podium.scaffolds.baseline import analysis, series_recipe
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.kinds import KINDS
from podium.scaffolds.baseline.series_codegen import render
from podium.scaffolds.baseline.specs import SeriesSpec
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

read = KINDS["series"].read


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> SyntheticTask:
    return synthetic.employment(tmp_path_factory.mktemp("employment"))


@pytest.fixture(scope="module")
def spec(task: SyntheticTask) -> SeriesSpec:
    return synthetic.spec_of(task, SeriesSpec)


def test_the_layout_is_read_from_the_files(spec: SeriesSpec) -> None:
    assert (spec.date, spec.series, spec.target, spec.id_col) == ("date", "series", "value", "id")
    assert (spec.period, spec.horizon, spec.length, spec.n_series) == (12, 12, 72, 3)
    assert (spec.scoring, spec.nonnegative) == ("smape", True)


def test_the_drafts_alternate_simple_and_learned_forecasters_and_each_one_runs(
    task: SyntheticTask, tmp_path: Path
) -> None:
    made = synthetic.drafts(task, 6)
    families = [r.family for r in map(read, (p.code for p in made)) if r]
    assert families == list(series_recipe.DRAFT_ORDER)
    metrics = {}
    for family, proposal in zip(families, made, strict=True):
        metrics[family] = synthetic.run(proposal.code, task, tmp_path / family)
        written = pd.read_csv(tmp_path / family / "submission" / "submission.csv")
        assert written["value"].gt(0).all()
    assert all(0 <= m < 20 for m in metrics.values())  # sMAPE, in percent
    # growing series: a regression on lag features beats repeating last year
    assert metrics["ridge"] < metrics["seasonal_naive"]


def test_the_hold_out_is_the_last_horizon_of_the_history(
    task: SyntheticTask, spec: SeriesSpec, tmp_path: Path
) -> None:
    """The metric line is sMAPE of the seasonal naive forecast of the last 12 training months."""
    naive = series_recipe.SeriesRecipe("seasonal_naive")
    printed = synthetic.run(render(spec, naive), task, tmp_path)
    train = pd.read_csv(task.public_dir / "train.csv")
    wide = train.pivot(index="series", columns="date", values="value").to_numpy()
    actual, forecast = wide[:, -12:], wide[:, -24:-12]
    expected = 100 * np.mean(2 * np.abs(forecast - actual) / (np.abs(actual) + np.abs(forecast)))
    assert printed == pytest.approx(expected, abs=1e-5)


def test_improve_changes_one_choice(task: SyntheticTask, spec: SeriesSpec, tmp_path: Path) -> None:
    parent = series_recipe.draft(spec, 2, random.Random(0))  # gradient boosting
    seen = set()
    for seed in range(8):
        child = synthetic.improve_child(task, render(spec, parent), seed)
        after = read(child.code)
        assert after is not None
        changed = synthetic.changed_fields(parent, after)
        assert synthetic.one_choice(changed), changed
        seen.add(changed[0])
    assert len(seen) >= 3
    synthetic.run(child.code, task, tmp_path / "learned")
    drift = series_recipe.SeriesRecipe("drift", {"window": 24})
    simple = synthetic.improve_child(task, render(spec, drift), seed=1)
    synthetic.run(simple.code, task, tmp_path / "simple")


def test_debug_falls_back_to_seasonal_naive_then_the_last_value(
    task: SyntheticTask, spec: SeriesSpec, tmp_path: Path
) -> None:
    fixed = synthetic.debug_child(task)
    naive = read(fixed.code)
    assert naive is not None and naive.family == "seasonal_naive"
    synthetic.run(fixed.code, task, tmp_path / "seasonal")
    last, why = series_recipe.debug(naive, spec)
    assert last.family == "naive" and "cannot fail" in why
    synthetic.run(render(spec, last), task, tmp_path / "last")


def test_crossover_takes_the_features_from_the_other_parent(
    task: SyntheticTask, spec: SeriesSpec, tmp_path: Path
) -> None:
    fitter = series_recipe.SeriesRecipe("random_forest", dict(
        series_recipe.MODELS["random_forest"].params))  # fmt: skip
    other = series_recipe.SeriesRecipe("ridge", {"alpha": 1.0}, lags=6, windows=(6,),
                                       seasonal=False, per_horizon=True, history=0)  # fmt: skip
    child, recipe = synthetic.crossover_child(task, render(spec, fitter), render(spec, other), read)
    assert recipe == dataclasses.replace(other, family="random_forest", params=fitter.params,
                                         per_horizon=False)  # fmt: skip
    synthetic.run(child.code, task, tmp_path)
    naive = series_recipe.SeriesRecipe("seasonal_naive")
    assert series_recipe.crossover(naive, other, spec) is None  # it uses no features


def test_a_single_series_without_a_series_column(tmp_path: Path) -> None:
    dates = pd.date_range("2000-01-01", periods=84, freq="MS")
    values = 50 + 10 * np.sin(2 * np.pi * dates.month.to_numpy() / 12) + 0.2 * np.arange(84)
    public = tmp_path / "public"
    public.mkdir()
    frame = pd.DataFrame({"month": dates.strftime("%Y-%m-%d"), "sales": values.round(2)})
    frame.iloc[:72].to_csv(public / "train.csv", index=False)
    test = frame.iloc[72:][["month"]].assign(id=range(12))[["id", "month"]]
    test.to_csv(public / "test.csv", index=False)
    test[["id"]].assign(sales=0.0).to_csv(public / "sample_submission.csv", index=False)
    spec = analyse(public, "mae")
    assert isinstance(spec, SeriesSpec) and (spec.series, spec.horizon) == (None, 12)
    task = SyntheticTask("sales", "sales", "", public, True, "mae")
    for family in ("seasonal_drift", "ridge"):
        recipe = series_recipe.SeriesRecipe(family, dict(series_recipe.MODELS[family].params))
        assert synthetic.run(render(spec, recipe), task, tmp_path / family) < 3.0


def test_short_histories_get_simple_forecasters_only(spec: SeriesSpec) -> None:
    short = dataclasses.replace(spec, length=30)
    assert set(series_recipe.families(short)) <= set(series_recipe.SIMPLE)
    assert series_recipe.families(spec) == series_recipe.DRAFT_ORDER


def test_a_table_longer_than_the_analysed_head_is_still_every_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long table sorted by series holds only its first series in the head the analysis
    reads (here 100 rows of 216: one and a half series); the test asks for all three. The
    series, their count and the history's length come from one pass over the whole file."""
    monkeypatch.setattr(analysis, "ANALYSIS_ROWS", 100)
    task = synthetic.employment(tmp_path)
    spec = analysis.analyse.__wrapped__(task.public_dir, task.metric_name)
    assert isinstance(spec, SeriesSpec), spec
    assert (spec.n_series, spec.length, spec.horizon, spec.series) == (3, 72, 12, "series")
