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

What ran, not what was asked: the operator set of each strategy's runs is the one their
``summary.json`` says ran (a model such as ``baseline`` brings its own, whatever config.toml's
``search.operators`` says, so that key is left out of the config shown); Podium and each plugin
are shown with the git commit and dirty state their runs recorded. A value a run did not record
(an older Podium's run) is shown as "not recorded", never filled in from elsewhere.

Plugins that took part, not every one loaded: a run records every plugin package its process
loaded (``versions.plugins``), and a process loads every one installed. The card lists, per
run, only the packages that provided something the run used (its strategy, the backends of its
code and review models, its sandbox, its benchmark, its operator set), as the entry-point
plugins installed here say (:func:`plugin_providers`). A recorded package that is not installed
here cannot be checked and is kept, marked so; when the plugins here cannot be loaded at all,
every recorded package is kept and the card says the list is unfiltered.

Retries: a sweep's manifest counts each run's attempts and keeps the errors of those that did not
finish; the card lists every run that needed more than one attempt or did not finish, so twelve
runs that each failed once before finishing cannot read as twelve clean runs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from podium.errors import PodiumError
from podium.experiments.reports.record import Cell, Run
from podium.experiments.reports.runs import Manifest, RunSet
from podium.formats import RunDir, RunSummary
from podium.formats.sweep_dir import RunEntry, clip, lenient_entry
from podium.formats.sweep_grid import count

LISTED_PATHS = 5  # unsandboxed runs named in the statement (all are in the card's list)
ERROR_SHOWN = 200  # characters of a run's last error shown in the card
CONFIG_OPERATORS = "operators"  # config.toml's search.operators: what was asked, not what ran
NOT_FINISHED = ("failed", "interrupted")  # a run in one of these states is listed with its tries


def disclosure(runs: RunSet) -> dict[str, Any]:
    """The card as a JSON-ready dict (render it with :func:`card_markdown`)."""
    existing = [runs.runs[c] for c in runs.grid if c in runs.runs]
    summaries = {r.path: _summary(r) for r in existing}
    providers = plugin_providers()
    return {
        "runs": len(existing),
        "expected_runs": len(runs.grid),
        "attempts": attempts(runs, summaries),
        "tasks": sorted({c.task for c in runs.grid}),
        "models": {
            "code": sorted({c.model for c in runs.grid}),
            "review": sorted({r.review_model or r.model for r in existing}),
            "plan": sorted({r.plan_model or r.model for r in existing}),
        },
        "strategies": {s: _strategy(s, existing, summaries) for s in runs.strategies()},
        "budgets": distinct(existing, _budget),
        "hardware": _hardware(runs, existing),
        "executors": _distinct_values(e for m in runs.manifests if (e := m.data.get("executor"))),
        "seeds": sorted({c.seed for c in runs.grid}),
        "podium_versions": _versions(runs, existing),
        "podium_builds": distinct(existing, lambda r: _podium_build(summaries[r.path])),
        "plugins": distinct(existing, lambda r: _plugins(r, summaries[r.path], providers)),
        "plugins_filtered": providers is not None,
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


def _summary(run: Run) -> RunSummary:
    """The run's summary.json again, for what :class:`Run` does not carry (the operator set
    that ran, the code's commits); an empty record when it cannot be read now."""
    return RunDir(run.path).read_summary() or RunSummary()


def attempts(runs: RunSet, summaries: dict[Path, RunSummary]) -> dict[str, Any]:
    """Every sweep run's attempts, from the manifests: ``runs`` (the runs a manifest lists),
    ``retried`` (of them, those that needed more than one attempt), ``unrecorded`` (runs found
    outside any sweep: no record of their attempts), and ``listed``: each run that needed more
    than one attempt or did not finish, with its attempts, status and errors (the last one
    from its summary.json when the manifest kept none)."""
    entries = [(m, e) for m in runs.manifests for e in _entries(m)]
    in_sweeps = {_cell(e) for _, e in entries}
    listed = []
    for manifest, entry in entries:
        cell, run = _cell(entry), runs.run(_cell(entry))
        if entry.attempts > 1 or runs.status(cell) in NOT_FINISHED:
            error = summaries[run.path].error if run else None
            listed.append(_attempt_row(manifest, entry, runs.status(cell), error))
    return {
        "runs": len(entries),
        "retried": sum(e.attempts > 1 for _, e in entries),
        "unrecorded": sum(c not in in_sweeps for c in runs.runs),
        "listed": listed,
    }


def _entries(manifest: Manifest) -> list[RunEntry]:
    raw = manifest.data.get("runs")
    return [e for d in raw if (e := lenient_entry(d))] if isinstance(raw, list) else []


def _cell(entry: RunEntry) -> Cell:
    return Cell(entry.strategy, entry.model, entry.task, entry.seed)


def _attempt_row(
    manifest: Manifest, entry: RunEntry, status: str, run_error: str | None
) -> dict[str, Any]:
    last = entry.last_error or run_error
    return {
        "run": entry.id,
        "path": str(manifest.path.parent / entry.path),
        "status": status,
        "attempts": entry.attempts,
        "last_error": clip(last, ERROR_SHOWN) if last else None,
        "attempt_errors": list(entry.attempt_errors),
    }


def _strategy(name: str, runs: list[Run], summaries: dict[Path, RunSummary]) -> dict[str, Any]:
    """A strategy's runs: their ``[search]`` config (less ``operators``, which says what was
    asked) and the operator sets their summaries say ran; ``identical``: one of each."""
    mine = [r for r in runs if r.strategy == name]
    variants = distinct(mine, _search_config)
    operators = distinct(mine, lambda r: summaries[r.path].operators)
    identical = len(variants) <= 1 and len(operators) <= 1
    return {"identical": identical, "variants": variants, "operators": operators}


def _search_config(run: Run) -> dict[str, Any] | None:
    search = run.config.get("search")
    if not isinstance(search, dict):
        return None
    return {k: v for k, v in search.items() if k != CONFIG_OPERATORS}


def _versions(runs: RunSet, existing: list[Run]) -> list[str]:
    """The Podium versions that ran the runs, and the sweeps' drivers."""
    drivers = {str(v) for m in runs.manifests if (v := m.data.get("podium_version"))}
    return sorted({r.podium_version for r in existing if r.podium_version} | drivers)


def _podium_build(summary: RunSummary) -> dict[str, Any]:
    """``{"version", "commit", "dirty"}`` of the Podium that ran a run (None: not recorded)."""
    v = summary.versions
    if v is None:
        return {"version": None, "commit": None, "dirty": None}
    return {"version": v.podium, "commit": v.podium_commit, "dirty": v.podium_dirty}


Providers = dict[tuple[str, str], str]  # (kind, name) → the distribution that provides it


def plugin_providers() -> Providers | None:
    """What each installed entry-point plugin package provides here: (kind, name) → its
    distribution name (kinds: backend, strategy, sandbox, benchmark, operators). None when the
    plugins cannot be loaded (a broken plugin): the card then lists every recorded package."""
    try:
        from podium.plugins import Registry, create_plugin_manager

        registry = Registry(create_plugin_manager((), autoload=True))
    except (PodiumError, ImportError):
        return None
    tables: dict[str, dict[str, Any]] = {
        "backend": registry.backends,
        "strategy": registry.strategies,
        "sandbox": registry.sandboxes,
        "benchmark": registry.benchmarks,
        "operators": registry.operator_sets,
    }
    found: Providers = {}
    for kind, table in tables.items():
        for name, entry in table.items():
            words = str(entry.origin).split()
            if words[:2] == ["entry", "point"] and len(words) > 2:
                found[kind, name] = words[2]
    return found


def used_names(run: Run, summary: RunSummary) -> set[tuple[str, str]]:
    """The (kind, name) of everything a plugin could have provided to the run."""
    names = {("strategy", run.strategy), ("benchmark", run.task.split("/", 1)[0])}
    for model in {run.model, run.review_model or run.model, run.plan_model or run.model}:
        names.add(("backend", model))
        cuts = [i for i in (model.find("/"), model.find(":")) if i > 0]
        if cuts:
            names.add(("backend", model[: min(cuts)]))
    if run.sandbox:
        names.add(("sandbox", run.sandbox))
    if summary.operators:
        names.add(("operators", summary.operators))
    return names


def _plugins(run: Run, summary: RunSummary, providers: Providers | None) -> dict[str, Any] | None:
    """The plugin packages that took part in a run, ``{name: {version, commit, dirty}}`` (see
    the module doc; a package not installed here is kept with ``"unchecked": True``); None
    when the run did not record them (an older Podium's)."""
    v = summary.versions
    if v is None or v.plugins is None:
        return None
    recorded = {name: p.model_dump() for name, p in sorted(v.plugins.items())}
    if providers is None:
        return recorded
    installed = set(providers.values())
    took_part = {providers[k] for k in used_names(run, summary) if k in providers}
    return {
        name: p if name in installed else {**p, "unchecked": True}
        for name, p in recorded.items()
        if name in took_part or name not in installed
    }


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
    roles = f"code {_codes(models['code'])}; review {_codes(models['review'])}"
    if models.get("plan", models["code"]) != models["code"]:  # a card from before: no plan
        roles += f"; plan {_codes(models['plan'])}"
    lines.append(f"- Models: {roles}")
    lines.append(f"- Seeds: {', '.join(map(str, card['seeds']))}")
    lines.append(f"- Runs: {card['runs']} of {card['expected_runs']} expected have a summary")
    lines.extend(_attempt_lines(card["attempts"]))
    lines.extend(_strategy_lines(card["strategies"]))
    lines.append("- Budgets per run:")
    lines.extend(f"  - {_inline(v['value'])} ({_runs(v['runs'])})" for v in card["budgets"])
    lines.append(f"- Hardware (from {card['hardware']['source']}):")
    machines = card["hardware"]["machines"]
    lines.extend(f"  - {_machine(v['value'])} ({_runs(v['runs'])})" for v in machines)
    lines.extend(f"- Executor: {_inline(v['value'])}" for v in card["executors"])
    lines.extend(_code_lines(card))
    sandboxes = ", ".join(f"{k} ({_runs(n)})" for k, n in sorted(card["sandboxes"].items()))
    lines.append(f"- Sandboxes: {sandboxes or 'none'}")
    lines.append(
        f"- Obfuscated task descriptions: {card['obfuscated_description']} of {card['runs']} runs"
    )
    unsandboxed = card["clean_track"]["unsandboxed_runs"]
    lines.extend(
        ["- Unsandboxed runs:", *(f"  - `{p}`" for p in unsandboxed)] if unsandboxed else []
    )
    return "\n".join(lines) + "\n"


def _attempt_lines(attempts: dict[str, Any]) -> list[str]:
    """The count of runs that needed more than one attempt, then each listed run."""
    n, retried, unrecorded = attempts["runs"], attempts["retried"], attempts["unrecorded"]
    head = f"- Attempts: {retried} of {n} runs needed more than one attempt"
    if not n:
        head = "- Attempts: not recorded (no sweep manifest)"
    elif unrecorded:
        head += f" ({_runs(unrecorded)} outside any sweep: not recorded)"
    lines = [head]
    for row in attempts["listed"]:
        error = f"; last error: {row['last_error']}" if row["last_error"] else ""
        tries = count(row["attempts"], "attempt")
        lines.append(f"  - `{row['run']}`: {tries}, {row['status']}{error}")
    return lines


def _strategy_lines(strategies: dict[str, Any]) -> list[str]:
    lines = [
        "- Strategies (`[search]` of config.toml, less `operators`; the operator set that ran "
        "is summary.json's):"
    ]
    for name, info in strategies.items():
        variants, operators = info["variants"], _counted(info["operators"])
        if info["identical"]:
            config = variants[0]["value"] if variants else None
            lines.append(
                f"  - `{name}`: {_inline(config)} (identical in all its runs); "
                f"operators that ran: {operators}"
            )
            continue
        lines.append(
            f"  - `{name}`: NOT identical across its runs; operators that ran: {operators}; "
            f"{count(len(variants), 'config variant')}:"
        )
        lines.extend(f"    - {_inline(v['value'])} ({_runs(v['runs'])})" for v in variants)
    return lines


def _counted(values: list[dict[str, Any]]) -> str:
    """``baseline (6 runs), not recorded (2 runs)``."""
    return ", ".join(f"{_inline(v['value'])} ({_runs(v['runs'])})" for v in values) or "none"


def _machine(host: Any) -> str:
    """A machine, then the cores each run had (``cpu_share``; not recorded by older runs)."""
    if not isinstance(host, dict):
        return _inline(host)
    rest = {k: v for k, v in host.items() if k != "cpu_share"}
    return f"{_inline(rest)}; cores per run: {_inline(host.get('cpu_share'))}"


def _code_lines(card: dict[str, Any]) -> list[str]:
    """``- Podium 0.2.0 (commit abc1234, dirty) (12 runs)`` per distinct value, then the
    plugins loaded, likewise."""
    builds = card["podium_builds"]
    lines = [f"- Podium {_build(v['value'])} ({_runs(v['runs'])})" for v in builds]
    if not builds:
        lines.append(f"- Podium: {', '.join(card['podium_versions']) or 'unknown'}")
    shown = [f"{_plugin_set(v['value'])} ({_runs(v['runs'])})" for v in card["plugins"]]
    which = (
        "that took part (provided the runs' strategy, models, sandbox, benchmark or operators)"
        if card.get("plugins_filtered", True)
        else "loaded (the plugins here could not be loaded to tell which took part)"
    )
    lines.append(f"- Plugins {which}: {'; '.join(shown) or 'none'}")
    return lines


def _plugin_set(plugins: dict[str, Any] | None) -> str:
    if plugins is None:
        return "not recorded"
    shown = (
        f"{name} {_build(p)}"
        + (" (not installed here: cannot tell whether it took part)" if p.get("unchecked") else "")
        for name, p in plugins.items()
    )
    return ", ".join(shown) or "none"


def _build(value: dict[str, Any]) -> str:
    """``Podium 0.2.0 (commit abc1234, dirty)``'s version and parenthesis."""
    version = value.get("version") or "version not recorded"
    commit = value.get("commit")
    if not commit:
        return f"{version} (commit not recorded)"
    flag = value.get("dirty")
    dirty = "dirty" if flag is True else "clean" if flag is False else "dirty state unknown"
    return f"{version} (commit {commit[:7]}, {dirty})"


def _runs(n: int) -> str:
    return count(n, "run")


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
