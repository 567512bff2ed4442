"""Tiny tasks in the layouts of the bundled mini suite, written into a temporary folder, and
helpers to run the baseline operators on them.

Each maker writes ``public/`` (train, test or image folders, sample submission) with a few
dozen rows, so every generated solution runs in well under a second in this process. The data
carry signal (the target depends on the features), so metrics are meaningful, not just
parseable.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from podium.interfaces import BudgetView, OperatorContext, Proposal, Task
from podium.records import Action, EnvironmentInfo, Metric, Node, NodeState
from podium.scaffolds.baseline import BaselineOperators
from podium.scaffolds.baseline.analysis import analyse
from podium.submission_check import check
from podium.tree import SearchTree
from tests.support import exec_solution

S = TypeVar("S")


@dataclass
class SyntheticTask(Task):
    id: str
    name: str
    description: str
    public_dir: Path
    lower_is_better: bool
    metric_name: str

    def check_submission(self, path: Path) -> str | None:
        return check(path, self.public_dir / "sample_submission.csv")


def spec_of(task: Task, kind: type[S]) -> S:
    """The task's spec, which must be of the given kind."""
    found = analyse(task.public_dir, task.metric_name)
    assert isinstance(found, kind), found
    return found


def _task(root: Path, name: str, metric: str, lower_is_better: bool) -> SyntheticTask:
    return SyntheticTask(name, name, f"# {name}", root / "public", lower_is_better, metric)


def _split(frame: pd.DataFrame, root: Path, id_col: str, targets: list[str],
           sample: pd.DataFrame | None = None, n_test: int = 20) -> None:  # fmt: skip
    public = root / "public"
    public.mkdir(parents=True)
    train, test = frame.iloc[:-n_test], frame.iloc[-n_test:]
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=targets).to_csv(public / "test.csv", index=False)
    if sample is None:
        sample = test[[id_col, *targets]].assign(**dict.fromkeys(targets, 0))
    sample.to_csv(public / "sample_submission.csv", index=False)


def adult(root: Path) -> SyntheticTask:
    """Binary classification scored by ROC AUC: the submission holds P(income = 1)."""
    rng = np.random.default_rng(0)
    n = 140
    age = rng.integers(18, 70, n)
    work = rng.choice(["Private", "State-gov", "Self-emp"], n)
    hours = rng.integers(10, 60, n)
    income = (age / 70 + hours / 60 + (work == "Self-emp") + rng.normal(0, 0.4, n)) > 1.3
    frame = pd.DataFrame({"id": range(n), "age": age, "workclass": work, "hours": hours,
                          "income": income.astype(int)})  # fmt: skip
    frame.loc[::9, "age"] = np.nan  # gaps to impute
    frame.loc[::13, "workclass"] = None
    _split(frame, root, "id", ["income"])
    return _task(root, "adult", "roc_auc", False)


def ames(root: Path) -> SyntheticTask:
    """Regression scored on the log of a positive price (``rmse_log``)."""
    rng = np.random.default_rng(1)
    n = 120
    area = rng.integers(500, 3000, n)
    quality = rng.choice(["Ex", "Gd", "TA", "Fa"], n)
    bonus = pd.Series(quality).map({"Ex": 1.4, "Gd": 1.2, "TA": 1.0, "Fa": 0.8}).to_numpy()
    price = np.round(area * 80 * bonus * rng.lognormal(0, 0.1, n), 0)
    built = rng.integers(1950, 2010, n)
    frame = pd.DataFrame({"Id": range(1, n + 1), "GrLivArea": area, "Quality": quality,
                          "YearBuilt": built, "SalePrice": price})  # fmt: skip
    _split(frame, root, "Id", ["SalePrice"])
    return _task(root, "ames", "rmse_log", True)


def bike(root: Path) -> SyntheticTask:
    """Counts scored by RMSLE, with a date-and-time column whose hour matters."""
    rng = np.random.default_rng(2)
    when = pd.date_range("2011-01-01", periods=130, freq="7h")
    temp = rng.uniform(0, 35, len(when))
    count = np.round(5 + 10 * temp + 80 * ((when.hour >= 7) & (when.hour <= 19)), 0)
    frame = pd.DataFrame({"id": range(len(when)), "datetime": when.strftime("%Y-%m-%d %H:%M:%S"),
                          "temp": temp.round(1), "count": count.astype(int)})  # fmt: skip
    _split(frame, root, "id", ["count"])
    return _task(root, "bike", "rmsle", True)


WEATHER = ["drizzle", "fog", "rain", "snow", "sun"]


def seattle(root: Path) -> SyntheticTask:
    """Multiclass with one probability column per class, scored by the multiclass log loss."""
    rng = np.random.default_rng(3)
    n = 150
    dates = pd.date_range("2012-01-01", periods=n, freq="D")
    precipitation = rng.gamma(1.0, 3.0, n).round(1)
    temp_max = (10 + 10 * np.sin(np.arange(n) / 58) + rng.normal(0, 2, n)).round(1)
    weather = np.where(precipitation > 4, np.where(temp_max < 5, "snow", "rain"),
                       np.where(precipitation > 1.5, "drizzle",
                                np.where(rng.random(n) < 0.3, "fog", "sun")))  # fmt: skip
    weather[:25] = WEATHER * 5  # every class in every fold
    frame = pd.DataFrame({"id": range(n), "date": dates.strftime("%Y-%m-%d"),
                          "precipitation": precipitation, "temp_max": temp_max,
                          "temp_min": (temp_max - rng.uniform(3, 9, n)).round(1),
                          "wind": rng.uniform(0, 8, n).round(1), "weather": weather})  # fmt: skip
    test_ids = frame["id"].iloc[-20:]
    sample = pd.DataFrame({"id": test_ids, **dict.fromkeys(WEATHER, 0.2)})
    _split(frame, root, "id", ["weather"], sample=sample)
    return _task(root, "seattle", "multiclass_log_loss", True)


def digits(root: Path) -> SyntheticTask:
    """Image classification: 8x8 greyscale digit PNGs, labels in train.csv, no test.csv."""
    from PIL import Image
    from sklearn.datasets import load_digits

    data = load_digits(n_class=3)
    images, labels = data.images[:90], data.target[:90]
    public = root / "public"
    for folder in ("train", "test"):
        (public / folder).mkdir(parents=True)
    ids = [f"img{i:03d}" for i in range(len(images))]
    for name, pixels, i in zip(ids, images, range(len(images)), strict=True):
        folder = "train" if i < 70 else "test"
        Image.fromarray((pixels * 16).clip(0, 255).astype(np.uint8), mode="L").save(
            public / folder / f"{name}.png"
        )
    pd.DataFrame({"id": ids[:70], "label": labels[:70]}).to_csv(public / "train.csv", index=False)
    pd.DataFrame({"id": ids[70:], "label": 0}).to_csv(public / "sample_submission.csv",
                                                      index=False)  # fmt: skip
    return _task(root, "digits", "accuracy", False)


GOOD = ["great", "moving", "brilliant", "funny", "warm", "clever", "charming", "superb"]
BAD = ["dull", "boring", "tedious", "flat", "clumsy", "weak", "lifeless", "awful"]
FILLER = ["the", "film", "story", "cast", "plot", "director", "scenes", "actors", "movie",
          "script", "is", "a", "and", "of"]  # fmt: skip


def reviews(root: Path) -> SyntheticTask:
    """Text classification scored by ROC AUC: one review column, a 0/1 sentiment."""
    rng = random.Random(4)
    rows = []
    for i in range(120):
        sentiment = i % 2
        words = rng.choices(FILLER, k=8) + rng.choices(GOOD if sentiment else BAD, k=2)
        words += rng.choices(BAD if sentiment else GOOD, k=rng.choice([0, 0, 1]))
        rng.shuffle(words)
        rows.append({"id": i, "review": " ".join(words), "sentiment": sentiment})
    _split(pd.DataFrame(rows), root, "id", ["sentiment"])
    return _task(root, "reviews", "roc_auc", False)


def employment(root: Path, n_series: int = 3, months: int = 72) -> SyntheticTask:
    """Monthly series (trend x season x noise) scored by sMAPE on the next 12 months."""
    rng = np.random.default_rng(5)
    dates = pd.date_range("2010-01-01", periods=months + 12, freq="MS")
    rows = []
    for s in range(n_series):
        level = 100 * (s + 1) ** 2
        season = 1 + 0.1 * np.sin(2 * np.pi * (dates.month.to_numpy() + s) / 12)
        trend = 1 + 0.004 * (s + 1) * np.arange(len(dates))
        values = level * season * trend * rng.lognormal(0, 0.01, len(dates))
        rows += [{"date": d.strftime("%Y-%m-%d"), "series": f"sector_{s}", "value": round(v, 1)}
                 for d, v in zip(dates, values, strict=True)]  # fmt: skip
    frame = pd.DataFrame(rows)
    cut = dates[months]
    public = root / "public"
    public.mkdir(parents=True)
    frame[pd.to_datetime(frame["date"]) < cut].to_csv(public / "train.csv", index=False)
    test = frame[pd.to_datetime(frame["date"]) >= cut].reset_index(drop=True)
    test.insert(0, "id", range(len(test)))
    test[["id", "date", "series"]].to_csv(public / "test.csv", index=False)
    test[["id"]].assign(value=0.0).to_csv(public / "sample_submission.csv", index=False)
    return _task(root, "employment", "smape", True)


MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {
    "adult": adult, "ames": ames, "bike": bike, "seattle": seattle, "digits": digits,
    "reviews": reviews, "employment": employment,
}  # fmt: skip
KIND = {"adult": "tabular", "ames": "tabular", "bike": "tabular", "seattle": "tabular",
        "digits": "image", "reviews": "text", "employment": "series"}  # fmt: skip


# --- running the operators ---------------------------------------------------------------------


class NoModel:
    async def ask(self, request: object, role: str) -> object:
        raise AssertionError("the baseline operators must never call a model")


def propose(task: Task, tree: SearchTree, action: Action, seed: int = 0) -> Proposal:
    ctx = OperatorContext(
        task=task,
        action=action,
        parents=[tree.get(p) for p in action.parent_ids],
        tree=tree,
        environment=EnvironmentInfo(python_version="3.11"),
        budget=BudgetView(steps_left=5, time_left_s=None, exec_timeout_s=600),
        model=NoModel(),
        rng=random.Random(seed),
    )
    return asyncio.run(BaselineOperators().propose(ctx))


def finished(node_id: int, proposal: Proposal, op: str, metric: float | None,
             lower_is_better: bool, parents: tuple[int, ...] = (),
             buggy: bool = False) -> Node:  # fmt: skip
    return Node(
        id=node_id, parent_ids=parents, operator=op, state=NodeState.DONE, step=node_id,
        plan=proposal.plan, code=proposal.code, is_buggy=buggy,
        bug_reason="ValueError: boom" if buggy else None,
        metric=None if metric is None else Metric(value=metric, lower_is_better=lower_is_better),
    )  # fmt: skip


def run(code: str, task: SyntheticTask, workspace: Path) -> float:
    """Run a solution in-process; check its submission's format; return its metric line.

    Thread limits a solution sets (forecasting scripts use one thread) are undone after it."""
    with threadpool_limits(limits=None):  # restores the limits on the way out
        printed = exec_solution(code, task.public_dir, workspace)
    problem = task.check_submission(workspace / "submission" / "submission.csv")
    assert problem is None, problem
    found = re.findall(r"^VALIDATION_METRIC: (\S+)$", printed, re.M)
    assert found, f"no metric line in: {printed[-500:]}"
    value = float(found[-1])
    assert np.isfinite(value), printed
    return value


MODEL_FIELDS = {"family", "params", "scale", "per_horizon"}  # what switching the model resets


def changed_fields(before: object, after: object) -> list[str]:
    """The recipe fields that differ; improve must change one choice: one field, or the model
    (its family with that family's defaults)."""
    names = [f.name for f in fields(before)]  # type: ignore[arg-type]
    changed = [n for n in names if getattr(before, n) != getattr(after, n)]
    return changed


def one_choice(changed: list[str]) -> bool:
    if "family" in changed:
        return set(changed) <= MODEL_FIELDS
    return len(changed) == 1


def crossover_child(task: SyntheticTask, fitter_code: str, other_code: str,
                    kind_read: Callable[[str], object]) -> tuple[Proposal, object]:  # fmt: skip
    """Propose a crossover of two rendered parents (the fitter one given second, so the
    operator must pick it by metric); the child's proposal and recipe."""
    tree = SearchTree(task.lower_is_better)
    good, bad = (0.1, 0.2) if task.lower_is_better else (0.9, 0.8)
    tree.add(finished(1, Proposal("other", other_code), "draft", bad, task.lower_is_better))
    tree.add(finished(2, Proposal("fitter", fitter_code), "draft", good, task.lower_is_better))
    child = propose(task, tree, Action(operator="crossover", parent_ids=(1, 2)))
    assert child.plan.startswith("Crossover of node 2 (model) with node 1: "), child.plan
    return child, kind_read(child.code)


def improve_child(task: SyntheticTask, parent_code: str, seed: int) -> Proposal:
    tree = SearchTree(task.lower_is_better)
    tree.add(finished(1, Proposal("parent", parent_code), "draft", 1.0, task.lower_is_better))
    child = propose(task, tree, Action(operator="improve", parent_ids=(1,)), seed=seed)
    assert child.plan.startswith("Improve node 1: "), child.plan
    return child


def debug_child(task: SyntheticTask, parent_code: str = "raise ValueError('boom')\n") -> Proposal:
    tree = SearchTree(task.lower_is_better)
    broken = Proposal("An LLM's attempt.", parent_code)
    tree.add(finished(1, broken, "draft", None, task.lower_is_better, buggy=True))
    child = propose(task, tree, Action(operator="debug", parent_ids=(1,)))
    assert child.plan.startswith("Debug node 1 (ValueError: boom): fall back"), child.plan
    return child


def drafts(task: SyntheticTask, count: int) -> list[Proposal]:
    """The first ``count`` drafts of a search, as the operator writes them one after another."""
    tree = SearchTree(task.lower_is_better)
    made = []
    for node_id in range(1, count + 1):
        proposal = propose(task, tree, Action(operator="draft"), seed=node_id)
        assert proposal.plan.startswith("Draft: "), proposal.plan
        tree.add(finished(node_id, proposal, "draft", 0.5, task.lower_is_better))
        made.append(proposal)
    return made
