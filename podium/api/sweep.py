"""What ``podium bench`` does, callable from code: plan a sweep (every run's config resolved
and checked before anything runs), run it through an executor, continue it after a crash.

Each run is planned as an ordinary run config, written into its run dir as ``plan.json``; the
worker (:mod:`podium.cli.sweep_worker`) turns it into a run. So a sweep run is exactly what
``podium run`` would have done with the same options, and can be opened, resumed and replayed
like any other run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podium import __version__
from podium.api.config import RunConfig, load_config
from podium.api.runs import build_strategy, load_registry
from podium.api.signals import two_stage_stop
from podium.errors import UserError
from podium.experiments.sweeps import (
    EventCallback,
    Executor,
    Job,
    JobFactory,
    LocalExecutor,
    RayExecutor,
    Sweep,
    describe_host,
    drive,
)
from podium.formats import (
    MANIFEST,
    Grid,
    Manifest,
    RunDir,
    RunEntry,
    check_unique_ids,
    load_manifest,
    new_runs,
    reconcile,
)
from podium.plugins import Registry
from podium.sandbox import bwrap_problem

PLAN = "plan.json"


@dataclass(frozen=True)
class SweepRequest:
    """What the user asked for; ``run_options`` are dotted config keys (``budget.steps``)."""

    tasks: str
    strategies: tuple[str, ...]
    models: tuple[str, ...]
    seeds: tuple[int, ...]
    run_options: Mapping[str, Any] = field(default_factory=dict)
    overrides: Sequence[str] = ()
    config_file: Path | None = None
    plugins: Sequence[str] = ()
    allow_unsandboxed: bool = False


@dataclass(frozen=True)
class ExecutorRequest:
    name: str = "local"
    parallel: int | None = None
    cpus_per_run: float | None = None  # default: the runs' workers
    gpus_per_run: int = 0
    address: str | None = None


# --- planning ------------------------------------------------------------------------------


def expand_tasks(spec: str, registry: Registry) -> tuple[str, ...]:
    """``mini``, ``mlebench:low``, or a comma list of those, task refs and task folders."""
    refs: list[str] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            raise UserError(
                f"--tasks {spec!r}: an empty item", hint="e.g. --tasks mini/titanic,mini/adult"
            )
        refs.extend(_expand_item(item, registry))
    unique = tuple(dict.fromkeys(refs))
    if not unique:
        raise UserError(f"--tasks {spec!r} selects no task")
    return unique


def _expand_item(item: str, registry: Registry) -> list[str]:
    path = Path(item).expanduser()
    if path.is_dir():
        return [str(path.resolve())]
    name, _, split = item.partition(":")
    if "/" not in name:
        return [f"{name}/{t}" for t in registry.benchmark(name).task_ids(split or None)]
    bench, _, task_id = name.partition("/")
    known = registry.benchmark(bench).task_ids(None)
    if task_id not in known:
        raise UserError(
            f"--tasks: benchmark {bench!r} has no task {task_id!r}",
            hint=f"list them with: podium tasks {bench}",
        )
    return [item]


def run_config(request: SweepRequest, entry: RunEntry, run_dir: Path) -> RunConfig:
    cli = {**request.run_options, "task": entry.task, "search.strategy": entry.strategy,
           "model.name": entry.model, "seed": entry.seed, "out": run_dir}  # fmt: skip
    if request.plugins:
        cli["plugins"] = list(request.plugins)
    return load_config(
        request.config_file, scoped_overrides(request.overrides, entry.strategy), cli
    )


def scoped_overrides(overrides: Sequence[str], strategy: str) -> list[str]:
    """``-o KEY=VALUE`` applies to every run; ``-o STRATEGY:KEY=VALUE`` only to that strategy's
    (its own search parameters: ``-o greedy:search.num_drafts=3``)."""
    kept = []
    for item in overrides:
        key, sep, value = item.partition("=")
        scope, colon, bare = key.partition(":")
        if not colon:
            kept.append(item)
        elif scope.strip() == strategy:
            kept.append(f"{bare}{sep}{value}")
    return kept


def sandbox_problem(cfg: RunConfig, registry: Registry) -> str | None:
    """Why this config's runs would not be sandboxed here, or None."""
    spec = registry.sandbox(cfg.sandbox.name)
    if not spec.isolated:
        return f"sandbox {cfg.sandbox.name!r} isolates nothing"
    if cfg.sandbox.name == "auto" and (problem := bwrap_problem()) is not None:
        return f"bwrap does not work here ({problem}), so sandbox 'auto' would run unsandboxed"
    return None


def refuse_unsandboxed(cfg: RunConfig, registry: Registry) -> None:
    problem = sandbox_problem(cfg, registry)
    if problem is not None:
        raise UserError(
            f"refusing to sweep unsandboxed: {problem}",
            hint="runs without isolation are not clean-track; pass --allow-unsandboxed to run "
            "them anyway (reports will say so)",
        )


@dataclass(frozen=True)
class Plan:
    """A checked sweep, not yet on disk: every run's resolved config."""

    out: Path
    request: SweepRequest
    grid: Grid
    entries: list[RunEntry]
    configs: list[RunConfig]

    @property
    def workers(self) -> int:
        return max(cfg.workers for cfg in self.configs)


def plan(out: Path, request: SweepRequest, executor: ExecutorRequest) -> Plan:
    """Check everything a sweep needs before anything is written: the directory, the tasks,
    every run's config (strategy parameters, models and keys, the sandbox)."""
    if (out / MANIFEST).exists():
        raise UserError(
            f"{out} already holds a sweep", hint=f"continue it: podium bench --resume {out}"
        )
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} exists and is not empty", hint="choose a new --out directory")
    registry = load_registry(list(request.plugins))
    grid = Grid(tasks=expand_tasks(request.tasks, registry), strategies=request.strategies,
                models=request.models, seeds=request.seeds)  # fmt: skip
    check_unique_ids(grid)
    entries = new_runs(grid)
    configs = [run_config(request, e, (out / e.path).resolve()) for e in entries]
    _check_configs(configs, registry, request, executor)
    return Plan(out, request, grid, entries, configs)


def create(planned: Plan, executor: ExecutorRequest) -> Sweep:
    """Write the sweep dir: the manifest and one run dir per cell, holding its ``plan.json``."""
    request = planned.request
    manifest = Manifest(
        podium_version=__version__, tasks_spec=request.tasks, grid=planned.grid,
        run_options={k: _plain(v) for k, v in request.run_options.items()},
        overrides=list(request.overrides),
        config_file=str(request.config_file) if request.config_file else None,
        plugins=list(request.plugins), allow_unsandboxed=request.allow_unsandboxed,
        executor={"name": executor.name, "gpus_per_run": executor.gpus_per_run},
        hardware=describe_host(), runs=planned.entries,
    )  # fmt: skip
    sweep = Sweep(planned.out, manifest)
    for entry, cfg in zip(planned.entries, planned.configs, strict=True):
        run_dir = sweep.run_dir(entry)
        run_dir.mkdir(parents=True)
        write_plan(run_dir, cfg, request.allow_unsandboxed, executor.gpus_per_run)
    sweep.save()
    return sweep


def planned_workers(sweep: Sweep) -> int:
    """The workers of the sweep's runs (each run's CPUs by default), from their plans."""
    workers = [1]
    for entry in sweep.manifest.runs:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            plan_data = json.loads((sweep.run_dir(entry) / PLAN).read_text(encoding="utf-8"))
            workers.append(int(plan_data["config"].get("workers", 1)))
    return max(workers)


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def _check_configs(
    configs: list[RunConfig], registry: Registry, request: SweepRequest, executor: ExecutorRequest
) -> None:
    """Strategy parameters, model names (and keys, when running here), the sandbox."""
    checked: set[tuple[str, str]] = set()
    for cfg in configs:
        build_strategy(cfg, registry)  # unknown search.* keys are errors, defaults recorded
        name = cfg.model.name or ""
        if executor.name == "local" and ("model", name) not in checked:
            checked.add(("model", name))
            if registry.model_operator_set(name) is None:
                registry.backend(name, cfg.model.model_dump())  # a missing key fails here
    if not request.allow_unsandboxed and executor.name == "local":
        refuse_unsandboxed(configs[0], registry)


def write_plan(run_dir: Path, cfg: RunConfig, allow_unsandboxed: bool, gpus_per_run: int) -> None:
    plan_data = {
        "config": json.loads(cfg.model_dump_json()),
        "allow_unsandboxed": allow_unsandboxed,
        "gpus_per_run": gpus_per_run,
    }
    RunDir(run_dir).write_json(run_dir / PLAN, plan_data)  # whole or not at all


# --- running -------------------------------------------------------------------------------


def open_sweep(sweep_dir: Path) -> Sweep:
    """An existing sweep, with every run's state re-read from its run dir."""
    manifest = load_manifest(sweep_dir)
    sweep = Sweep(sweep_dir, manifest)
    reconcile(sweep_dir, manifest)
    sweep.save()
    return sweep


def make_executor(request: ExecutorRequest, workers: int) -> Executor:
    cpus = request.cpus_per_run or float(workers)
    if request.name == "local":
        if request.address:
            raise UserError(
                "--address is for --executor ray", hint="drop --address, or add --executor ray"
            )
        return LocalExecutor(request.parallel, cpus, request.gpus_per_run)
    if request.name == "ray":
        ray: Executor = RayExecutor(request.address, cpus, request.gpus_per_run, request.parallel)
        return ray
    raise UserError(f"unknown executor {request.name!r}", hint="executors: local, ray")


def job_factory(worker: str, cpus: float, gpus: int) -> JobFactory:
    def make(entry: RunEntry, run_dir: Path) -> Job:
        return Job(run_id=entry.id, run_dir=run_dir, worker=worker, cpus=cpus, gpus=gpus)

    return make


def execute(
    sweep: Sweep,
    executor: Executor,
    worker: str,
    on_event: EventCallback | None = None,
    retry_failed: bool = False,
) -> bool:
    """Run what remains of the sweep, each run by the ``worker`` module (the command line's
    ``podium.cli.sweep_worker``: it prints as ``podium run`` does). False when it was
    interrupted (SIGINT/SIGTERM): the runs in flight were stopped gracefully and ``--resume``
    continues them."""
    info = executor.describe()
    sweep.manifest.executor = {
        **info,
        "gpus_per_run": sweep.manifest.executor.get("gpus_per_run", 0),
    }
    cpus = float(str(info.get("cpus_per_run", 1.0)))
    make_job = job_factory(worker, cpus, int(sweep.manifest.executor["gpus_per_run"]))

    async def main() -> bool:
        task = asyncio.ensure_future(drive(sweep, executor, make_job, on_event, retry_failed))
        try:
            with _cancel_on_signals(task):
                await task
            return True
        except asyncio.CancelledError:
            return False
        finally:
            await executor.aclose()

    return asyncio.run(main())


def _cancel_on_signals(task: asyncio.Future[None]) -> contextlib.AbstractContextManager[None]:
    """First SIGINT/SIGTERM: stop every run gracefully. A second Ctrl-C: quit now (each run
    still gets SIGTERM from the kernel when this process dies, and stays resumable)."""

    def cancel(signum: int) -> None:
        task.cancel()

    return two_stage_stop(cancel)
