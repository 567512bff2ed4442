"""What the baseline's ablate and ensemble really measure (issue 40), on the test fixtures and
the bundled mini tasks, each script run in this process (no sandbox: figures, not a run).

* ``ablate``: a draft's ablation script; per part, its score and its drop from the unchanged
  solution in the task's direction (a positive drop: the part helps).
* ``ensemble``: the task's first k drafts as members, then three rounds citing the earlier
  ones (equal weights, by rank, the best member 3:1); each round against the members' mean and
  best.

Usage (from the repository root):
    .venv/bin/python perf/baseline_operators.py ablate [adult digits reviews employment:2
        mini/titanic mini/mnist-5k mini/rotten-tomatoes mini/us-employment:2]
    .venv/bin/python perf/baseline_operators.py ensemble [adult:3 ames:3 ... mini/titanic:3]

A case is a maker of ``tests/scaffolds/baseline/synthetic.py`` (``digits_at@200`` gives its
size) or a bundled ``mini/<task>``; ``:n`` is the draft to ablate (default 1) or the members'
count (default 3).
"""

from __future__ import annotations

import functools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from podium.api import load_registry  # noqa: E402
from podium.benchmarks import resolve_task  # noqa: E402
from podium.exec_output import ablation_results  # noqa: E402
from podium.records import Action, Direction  # noqa: E402
from podium.tree import SearchTree  # noqa: E402
from tests.scaffolds.baseline import synthetic  # noqa: E402
from tests.support import exec_solution  # noqa: E402

ABLATE = ["adult", "digits", "reviews", "employment:2"]
ENSEMBLE = ["adult:3", "ames:3", "bike:3", "seattle:3", "sensors:3", "pizza:3", "digits:3",
            "digits_at@200:3", "reviews:3", "toxic:3", "employment:3", "monthly_sales:3",
            "bitcoin_forecast:3"]  # fmt: skip


def maker(name: str) -> Callable[[Path], Any]:
    """The task of a case: a synthetic fixture made under a folder, or a bundled mini task."""
    if name.startswith("mini/"):
        task = resolve_task(name, load_registry(), None)
        return lambda root: synthetic.SyntheticTask(
            name, name, "", task.public_dir, task.lower_is_better, task.metric_name
        )
    fixture, _, size = name.partition("@")
    make = getattr(synthetic, fixture)
    if size:
        make = functools.partial(make, **{"images" if "digits" in fixture else "rows": int(size)})
    return make  # type: ignore[no-any-return]


def ablate(case: str, root: Path) -> None:
    name, _, nth = case.partition(":")
    task = maker(name)(root / "task")
    draft = synthetic.drafts(task, int(nth or 1))[-1]
    tree = SearchTree(task.lower_is_better)
    tree.add(synthetic.finished(1, draft, "draft", 0.5, task.lower_is_better))
    study = synthetic.propose(task, tree, Action(operator="ablate", parent_ids=(1,)))
    start = time.perf_counter()
    results = ablation_results(exec_solution(study.code, task.public_dir, root / "run"))
    direction, base = Direction.of(task.lower_is_better), results[0][1]
    print(f"{name} ({task.metric_name}, {direction}), ran {time.perf_counter() - start:.1f} s")
    for part, score in results:
        drop = direction.score(base) - direction.score(score)
        print(f"    {part:40s} {score:10.4f}   drop {drop:+.4f}")


def ensemble(case: str, root: Path) -> None:
    name, _, k = case.partition(":")
    size = int(k or 3)
    task = maker(name)(root / "task")
    direction, tree = Direction.of(task.lower_is_better), SearchTree(task.lower_is_better)
    members = []
    for i, draft in enumerate(synthetic.drafts(task, size), 1):
        members.append(synthetic.run(draft.code, task, root / f"d{i}"))
        tree.add(synthetic.finished(i, draft, "draft", members[-1], task.lower_is_better))
    parents, rounds = tuple(range(1, size + 1)), []
    for r in range(3):
        earlier = tuple(n.id for n in tree if n.operator == "ensemble")
        action = Action(operator="ensemble", parent_ids=parents, ref_ids=earlier)
        made = synthetic.propose(task, tree, action)
        rounds.append(synthetic.run(made.code, task, root / f"e{r}"))
        tree.add(synthetic.finished(size + 1 + r, made, "ensemble", rounds[-1],
                                    task.lower_is_better, parents=parents))  # fmt: skip
    mean, best = sum(members) / size, max(members, key=direction.score)

    def versus(value: float) -> str:
        if direction.score(value) > direction.score(best) + 1e-12:
            return "beats the best"
        if abs(value - best) <= 1e-12:
            return "ties the best"
        return ">= mean" if direction.score(value) >= direction.score(mean) - 1e-12 else "< mean"

    shown = ", ".join(f"{m:.6g}" for m in members)
    print(f"| {name} | {task.metric_name} | {shown} | "
          + " | ".join(f"{v:.6g} ({versus(v)})" for v in rounds) + " |", flush=True)  # fmt: skip


def main() -> None:
    what, cases = sys.argv[1], sys.argv[2:]
    measure = {"ablate": ablate, "ensemble": ensemble}[what]
    for case in cases or (ABLATE if what == "ablate" else ENSEMBLE):
        with tempfile.TemporaryDirectory() as root:
            measure(case, Path(root))


if __name__ == "__main__":
    main()
