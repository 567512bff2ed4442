"""The disclosure card: what a reader needs to judge (and reproduce) the numbers.

MLE-bench asks leaderboard entries to state their models, scaffold, budgets, hardware and
seeds, and whether they are clean-track. The card takes each from the runs themselves
(``config.toml``, ``summary.json``, ``host.json``), not from what a sweep was asked to do, and
shows every distinct value with how many runs had it, so a mixed set of runs cannot pass for a
uniform one. Hardware falls back to the sweep manifests' (the driver's machine) when no run
recorded its own.

Clean track: only when every run that exists ran its code in an isolating sandbox does the card
say so; one unsandboxed run (or one that did not record its sandbox) makes the whole report
"NOT clean-track", naming the runs. (Grading after the run, on the host, is how Podium always
grades; the card states it as part of the claim.)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from podium.benchmarks.reports.record import Run
from podium.benchmarks.reports.runs import RunSet

LISTED_PATHS = 5  # unsandboxed runs named in the statement (all are in the card's list)


def disclosure(runs: RunSet) -> dict[str, Any]:
    """The card as a JSON-ready dict (render it with :func:`card_markdown`)."""
    existing = [runs.runs[c] for c in runs.grid if c in runs.runs]
    return {
        "runs": len(existing),
        "expected_runs": len(runs.grid),
        "tasks": sorted({c.task for c in runs.grid}),
        "models": {
            "code": sorted({c.model for c in runs.grid}),
            "review": sorted({r.review_model or r.model for r in existing}),
        },
        "strategies": {s: _strategy(s, existing) for s in runs.strategies()},
        "budgets": distinct(existing, _budget),
        "hardware": _hardware(runs, existing),
        "executors": _distinct_values(e for m in runs.manifests if (e := m.data.get("executor"))),
        "seeds": sorted({c.seed for c in runs.grid}),
        "podium_versions": _versions(runs, existing),
        "sandboxes": dict(Counter(r.sandbox or "unknown" for r in existing)),
        "obfuscated_description": sum(bool(r.obfuscated_description) for r in existing),
        "clean_track": clean_track(existing),
    }


def distinct(runs: Iterable[Run], value: Callable[[Run], Any]) -> list[dict[str, Any]]:
    """Each distinct ``value(run)`` with the number of runs that had it, most common first."""
    return _distinct_values(value(r) for r in runs)


def _distinct_values(values: Iterable[Any]) -> list[dict[str, Any]]:
    """Values compared as canonical JSON (key order ignored), each shown as first seen."""
    counts: Counter[str] = Counter()
    first: dict[str, Any] = {}
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        counts[key] += 1
        first.setdefault(key, value)
    return [{"value": first[k], "runs": n} for k, n in counts.most_common()]


def _strategy(name: str, runs: list[Run]) -> dict[str, Any]:
    """The ``[search]`` config of a strategy's runs; ``identical`` says whether they agree."""
    variants = distinct((r for r in runs if r.strategy == name), lambda r: r.config.get("search"))
    return {"identical": len(variants) <= 1, "variants": variants}


def _versions(runs: RunSet, existing: list[Run]) -> list[str]:
    """The Podium versions that ran the runs, and the sweeps' drivers."""
    drivers = {str(v) for m in runs.manifests if (v := m.data.get("podium_version"))}
    return sorted({r.podium_version for r in existing if r.podium_version} | drivers)


def _budget(run: Run) -> dict[str, Any]:
    budget = run.config.get("budget") or run.budget
    return {
        "steps": budget.get("steps"),
        "time_s": budget.get("time"),
        "cost_usd": budget.get("cost"),
        "exec_timeout_s": (run.config.get("exec") or {}).get("timeout"),
    }


def _hardware(runs: RunSet, existing: list[Run]) -> dict[str, Any]:
    recorded = [r.host for r in existing if r.host is not None]
    if recorded:
        return {"source": "runs (host.json)", "machines": _distinct_values(recorded)}
    drivers = [m.data["hardware"] for m in runs.manifests if m.data.get("hardware")]
    if drivers:
        return {
            "source": "sweep manifests (the driver's machine)",
            "machines": _distinct_values(drivers),
        }
    return {"source": "not recorded", "machines": []}


def clean_track(runs: list[Run]) -> dict[str, Any]:
    """``{"clean", "statement", "unsandboxed_runs"}`` for the runs that exist."""
    n = len(runs)
    unsandboxed = [str(r.path) for r in runs if r.sandboxed is not True]
    if not n:
        return {
            "clean": False,
            "statement": "NOT clean-track: no run has a summary.json yet.",
            "unsandboxed_runs": [],
        }
    if unsandboxed:
        shown = ", ".join(unsandboxed[:LISTED_PATHS])
        more = (
            f" and {len(unsandboxed) - LISTED_PATHS} more"
            if len(unsandboxed) > LISTED_PATHS
            else ""
        )
        statement = (
            f"NOT clean-track: {len(unsandboxed)} of {n} runs ran unsandboxed ({shown}{more})."
        )
        return {"clean": False, "statement": statement, "unsandboxed_runs": unsandboxed}
    names = sorted({r.sandbox or "unknown" for r in runs})
    where = f"the {' and '.join(names)} sandbox{'es' if len(names) > 1 else ''}"
    statement = (
        f"All {n} runs executed their code in {where}; grading used the private answers only "
        "after each run ended, on the host; no signal derived from private answers reached any "
        "agent during a run."
    )
    reduced = [r for r in runs if r.isolation_gaps]
    if reduced:
        gaps = sorted({gap.split(":", 1)[0] for r in reduced for gap in r.isolation_gaps})
        statement += (
            f" {len(reduced)} of {n} runs ran with reduced isolation (missing: "
            f"{', '.join(gaps)}; see each run's isolation_gaps)."
        )
    return {"clean": True, "statement": statement, "unsandboxed_runs": []}


def card_markdown(card: dict[str, Any]) -> str:
    """The card as a markdown section."""
    lines = ["## Disclosure", "", f"**{card['clean_track']['statement']}**", ""]
    tasks = card["tasks"]
    lines.append(f"- Tasks ({len(tasks)}): {', '.join(f'`{t}`' for t in tasks)}")
    models = card["models"]
    lines.append(f"- Models: code {_codes(models['code'])}; review {_codes(models['review'])}")
    lines.append(f"- Seeds: {', '.join(map(str, card['seeds']))}")
    lines.append(f"- Runs: {card['runs']} of {card['expected_runs']} expected have a summary")
    lines.extend(_strategy_lines(card["strategies"]))
    lines.append("- Budgets per run:")
    lines.extend(f"  - {_inline(v['value'])} ({v['runs']} runs)" for v in card["budgets"])
    lines.append(f"- Hardware (from {card['hardware']['source']}):")
    machines = card["hardware"]["machines"]
    lines.extend(f"  - {_inline(v['value'])} ({v['runs']} runs)" for v in machines)
    lines.extend(f"- Executor: {_inline(v['value'])}" for v in card["executors"])
    lines.append(f"- Podium: {', '.join(card['podium_versions']) or 'unknown'}")
    sandboxes = ", ".join(f"{k} ({n} runs)" for k, n in sorted(card["sandboxes"].items()))
    lines.append(f"- Sandboxes: {sandboxes or 'none'}")
    lines.append(
        f"- Obfuscated task descriptions: {card['obfuscated_description']} of {card['runs']} runs"
    )
    unsandboxed = card["clean_track"]["unsandboxed_runs"]
    lines.extend(
        ["- Unsandboxed runs:", *(f"  - `{p}`" for p in unsandboxed)] if unsandboxed else []
    )
    return "\n".join(lines) + "\n"


def _strategy_lines(strategies: dict[str, Any]) -> list[str]:
    lines = ["- Strategies (`[search]` of config.toml):"]
    for name, info in strategies.items():
        variants = info["variants"]
        if info["identical"]:
            config = variants[0]["value"] if variants else None
            lines.append(f"  - `{name}`: {_inline(config)} (identical in all its runs)")
            continue
        lines.append(f"  - `{name}`: NOT identical across its runs, {len(variants)} variants:")
        lines.extend(f"    - {_inline(v['value'])} ({v['runs']} runs)" for v in variants)
    return lines


def _codes(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "unknown"


def _inline(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, dict):
        shown = (f"{k} = {'none' if v is None else _nested(v)}" for k, v in value.items())
        return ", ".join(shown) or "defaults"
    return str(value)


def _nested(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{_inline(value)}}}"
    return f"[{', '.join(map(str, value))}]" if isinstance(value, list) else str(value)
