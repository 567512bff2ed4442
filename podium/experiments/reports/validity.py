"""Whether a comparison can be read at all: missing runs, mixed budgets, saturated medal rates.

Three ways a report's numbers can say more than the runs do, each checked once here and carried
by the report as top-level caveats (``validity(...)["caveats"]``) that the terminal, summary.md
and every figure repeat, so a number quoted anywhere keeps its warning:

* **Missing runs.** A grid cell without a *complete* run (one that finished and was graded) is
  missing. Leaderboard-style rates (medal %, MLE-bench's totals) still count it as no medal,
  which is MLE-bench's rule, and say so; paired statistics never do (``reports.paired`` uses
  complete pairs only): "missing = no medal" inside a paired test turns a sweep stopped early
  into a significant loss. Missing cells are counted per (strategy, model), and any makes the
  comparison *incomplete*.
* **Mixed budgets.** Runs compared under different configured budgets (steps, wall time, cost,
  per-node timeout, review model) measure the budgets, not the strategies. The budgets compared
  are the ones each run was *configured* with (``config.toml``'s ``[budget]``, else
  ``summary.json``'s), never the steps it used: the ``one-draft`` control stops after one node
  under the same settings and is a fair arm. A report over mixed budgets is refused
  (:class:`~podium.errors.UserError`, one line and a hint) unless asked for, and then caveated.
* **Saturation.** When every complete run medalled, or none did, medal rates cannot separate
  the strategies (every rate is 100, or 0, ± 0); the report then leads with percentiles and
  scores.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from podium.errors import UserError
from podium.experiments.reports.record import Cell, Run
from podium.experiments.reports.runs import RunSet

MIXED_HINT = (
    "compare runs made with the same budget settings, or pass --allow-mixed-budgets to compare "
    "them anyway (every output then says the budgets differ)"
)
BUDGET_KEYS = ("steps", "time", "cost")


def complete(run: Run | None) -> bool:
    """A run that counts in paired statistics: it exists, finished and has a grade."""
    return run is not None and run.finished and run.graded


def missing_reason(runs: RunSet, cell: Cell) -> str | None:
    """Why the cell has no complete run (None when it has one): its status, or ``ungraded``."""
    run = runs.run(cell)
    if complete(run):
        return None
    if run is not None and run.finished:
        return "ungraded"
    return runs.status(cell)


def budget_of(run: Run) -> dict[str, Any]:
    """The budget a run was configured with (not what it used): steps, time, cost, the per-node
    timeout and the review and planning models (the code model is a grid axis, compared group
    by group)."""
    budget = run.config.get("budget") or run.budget or {}
    return {
        "steps": budget.get("steps"),
        "time": budget.get("time"),
        "cost": budget.get("cost"),
        "exec_timeout": (run.config.get("exec") or {}).get("timeout"),
        "review_model": run.review_model or run.model,
        "plan_model": run.plan_model or run.model,
    }


def describe_budget(budget: dict[str, Any]) -> str:
    """``steps 4, time -, cost -, exec timeout 60, review model baseline``."""
    return ", ".join(f"{k.replace('_', ' ')} {'-' if v is None else v}" for k, v in budget.items())


def validity(runs: RunSet, allow_mixed_budgets: bool = False) -> dict[str, Any]:
    """``{"complete", "missing", "mixed_budgets", "budgets", "saturated", "caveats"}``.

    ``missing``: per (strategy, model) ``{"strategy", "model", "expected", "missing",
    "reasons": {status: n}}``. ``budgets``: each distinct configured budget with its runs.
    ``saturated``: None, or ``"all"`` / ``"none"`` (every complete run medalled / none did).
    Raises UserError when the budgets differ and ``allow_mixed_budgets`` is False."""
    missing = [_missing_group(runs, s, m) for s, m in runs.groups()]
    budgets = _budgets(runs)
    mixed = len(budgets) > 1
    if mixed and not allow_mixed_budgets:
        shown = "; ".join(f"{describe_budget(b['value'])} ({b['runs']} runs)" for b in budgets)
        raise UserError(f"these runs were configured with different budgets: {shown}", MIXED_HINT)
    result: dict[str, Any] = {
        "complete": not any(g["missing"] for g in missing),
        "missing": missing,
        "mixed_budgets": mixed,
        "budgets": budgets,
        "saturated": saturation(runs),
    }
    result["caveats"] = caveats(result)
    return result


def _missing_group(runs: RunSet, strategy: str, model: str) -> dict[str, Any]:
    cells = runs.cells(strategy, model)
    reasons = Counter(r for c in cells if (r := missing_reason(runs, c)) is not None)
    return {
        "strategy": strategy,
        "model": model,
        "expected": len(cells),
        "missing": sum(reasons.values()),
        "reasons": dict(sorted(reasons.items())),
    }


def _budgets(runs: RunSet) -> list[dict[str, Any]]:
    """Each distinct configured budget of the runs that exist, most common first."""
    counts: Counter[str] = Counter()
    first: dict[str, dict[str, Any]] = {}
    for cell in runs.grid:
        run = runs.run(cell)
        if run is None:
            continue
        value = budget_of(run)
        key = json.dumps(value, sort_keys=True, default=str)
        counts[key] += 1
        first.setdefault(key, value)
    return [{"value": first[k], "runs": n} for k, n in counts.most_common()]


def saturation(runs: RunSet) -> str | None:
    """``"all"`` when every complete run medalled, ``"none"`` when none did, else None (also
    None without complete runs: nothing to be saturated)."""
    done = [r for c in runs.grid if complete(r := runs.run(c)) and r is not None]
    if not done:
        return None
    medals = sum(r.any_medal for r in done)
    if medals == len(done):
        return "all"
    return "none" if medals == 0 else None


def caveats(v: dict[str, Any]) -> list[str]:
    """The report's top-level caveats, in words, most important first."""
    found = []
    gaps = [g for g in v["missing"] if g["missing"]]
    if gaps:
        total = sum(g["missing"] for g in gaps)
        expected = sum(g["expected"] for g in v["missing"])
        per = "; ".join(
            f"{g['strategy']} ({g['model']}) {g['missing']} of {g['expected']} "
            f"[{', '.join(f'{r} {n}' for r, n in g['reasons'].items())}]"
            for g in gaps
        )
        found.append(
            f"INCOMPLETE: {total} of {expected} runs missing (not finished or not graded): "
            f"{per}. Paired statistics use complete pairs only; medal rates count a missing "
            "run as no medal (MLE-bench's leaderboard rule)"
        )
    if v["mixed_budgets"]:
        shown = "; ".join(f"{describe_budget(b['value'])} ({b['runs']} runs)" for b in v["budgets"])
        found.append(
            f"MIXED BUDGETS (allowed by --allow-mixed-budgets): {shown}. Differences may "
            "measure the budgets, not the strategies"
        )
    if v["saturated"] == "all":
        found.append(
            "SATURATED: every complete run medalled, so medal rates cannot separate the "
            "strategies; compare leaderboard percentiles and scores instead"
        )
    elif v["saturated"] == "none":
        found.append(
            "SATURATED: no complete run medalled, so medal rates cannot separate the "
            "strategies; compare leaderboard percentiles and scores instead"
        )
    return found
