"""The Python API: what ``podium run`` and ``podium resume`` do, callable from code.

This is the top of the dependency graph: it registers each room's builtin plugin (exactly as an
entry point would be), resolves names from the config through the plugin registry, and hands the
parts to the search loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from podium import __version__
from podium.api.config import (
    RunConfig,
    config_error,
    merge_changes,
    read_config_file,
    validate_config,
)
from podium.api.signals import two_stage_stop
from podium.benchmarks import (
    check_holdout,
    holdout_made,
    make_holdout,
    resolve_task,
    selection_report,
)
from podium.errors import ConfigError, RunDirError, UnknownNameError, UserError
from podium.experiments.sweeps import kernel_threads
from podium.formats import Journal, RunDir, RunSummary, SummaryGrade, memory_file
from podium.interfaces import SUBMISSION, Backend, RunInfo, Sandbox, Strategy, Task
from podium.plugins import (
    ModelGateway,
    PodiumPluginManager,
    Registry,
    RetryPolicy,
    create_plugin_manager,
)
from podium.plugins.backends.answers import RecordedAnswer
from podium.plugins.backends.replay import ReplayBackend
from podium.records import (
    CODE,
    PLAN,
    REVIEW,
    ROLES,
    GradeReport,
    MemoryRecord,
    Message,
    ModelRequest,
    Node,
    NodeState,
)
from podium.scaffolds import (
    LoopSettings,
    Prompts,
    RoleModels,
    Search,
    SearchParts,
    build_summary,
    load_recorded,
    recorded_models,
)

log = logging.getLogger("podium")


@dataclass(frozen=True)
class RunStart:
    """What ``on_start`` is told as a run starts (its run dir and journal open, its sandbox
    warm): facts to show, read-only; the caller never gets hold of the live search."""

    lower_is_better: bool  # the task's metric direction
    sandbox: str  # the sandbox's name
    sandbox_detail: str  # its one line: the isolation, and each limit with how it is enforced
    sandboxed: bool  # False: it isolates nothing, and the run is stamped so
    sandbox_notice: str | None  # a warning to show (e.g. why ``auto`` fell back)
    isolation_gaps: tuple[str, ...]  # protections it cannot give on this machine
    finished_nodes: int  # on resume: the finished nodes the search goes on from
    interrupted_nodes: int  # on resume: decided nodes left unfinished, to run again first


NodeCallback = Callable[[Node], None]
StartCallback = Callable[[RunInfo, RunStart], None]


def builtin_plugins() -> list[ModuleType]:
    """Each room's builtin-plugin module, registered like any installed plugin."""
    from podium.benchmarks import builtin as benchmarks_builtin
    from podium.plugins import builtin as plugins_builtin
    from podium.sandbox import builtin as sandbox_builtin
    from podium.scaffolds import builtin as scaffolds_builtin

    return [plugins_builtin, scaffolds_builtin, sandbox_builtin, benchmarks_builtin]


def load_registry(plugins: list[str] | tuple[str, ...] = ()) -> Registry:
    return Registry(create_plugin_manager(builtin_plugins(), plugins))


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    final: Node | None
    grade: GradeReport | None = None

    @property
    def record(self) -> RunSummary:
        """``summary`` as its typed record (the dict stays, for scripts and hooks)."""
        return RunSummary.parse(self.summary)

    @property
    def stop_reason(self) -> str:
        return str(self.record.stop_reason)


def run(
    config: RunConfig | Mapping[str, Any],
    on_node: NodeCallback | None = None,
    on_start: StartCallback | None = None,
) -> RunResult:
    """Start a new run. ``config`` is a RunConfig or the same keys as a config file."""
    cfg = config if isinstance(config, RunConfig) else validate_config(config)
    if not cfg.task.strip():  # Path("") is the current directory: never a task by accident
        raise UserError("no task given", hint="name one: podium run mini/titanic")
    if Path(cfg.task).expanduser().is_dir():  # recorded absolute: resume works from anywhere
        cfg = cfg.model_copy(update={"task": str(Path(cfg.task).expanduser().resolve())})
    return asyncio.run(_run(cfg, None, on_node, on_start))


def resume(
    run_dir: Path,
    changes: Mapping[str, Any] | None = None,
    on_node: NodeCallback | None = None,
    on_start: StartCallback | None = None,
) -> RunResult:
    """Continue a run from its journal. ``changes`` may raise budgets (e.g. budget.steps)."""
    rd = RunDir(Path(run_dir))
    if not rd.config.is_file() or not rd.journal.is_file():
        raise RunDirError(
            f"{run_dir} is not a Podium run directory (no config.toml or journal.sqlite)",
            hint="give a directory podium run made (without --out: one under ./runs/)",
        )
    cfg = validate_config(merge_changes(read_config_file(rd.config), changes or {}))
    return asyncio.run(_run(cfg, rd, on_node, on_start))


async def _run(
    cfg: RunConfig,
    existing: RunDir | None,
    on_node: NodeCallback | None,
    on_start: StartCallback | None,
) -> RunResult:
    pm = create_plugin_manager(builtin_plugins(), cfg.plugins)
    replayed = _replay_source(cfg)
    if replayed is not None:
        cfg = replayed.config
    events = _Events(pm, on_node)
    parts = _resolve(cfg, Registry(pm), events, replayed)
    await parts.sandbox.environment()  # a broken sandbox.python stops here, before any file
    task = parts.task
    parts.sandbox.hide(task.secret_paths())  # as does an answer the sandbox could not mask
    try:  # a grader that cannot be imported stops the run here, before any file
        await asyncio.to_thread(task.warm_up)
    except BaseException:
        await parts.aclose()
        raise
    rd = existing or RunDir(default_run_dir(cfg, task))
    if existing is not None:  # before config.toml is rewritten with the changes
        _keeps_its_holdout(cfg, existing, task)
    elif cfg.search.holdout:  # refused before the run dir exists
        check_holdout(task, cfg.search.holdout, cfg.seed)
    journal = _open_journal(rd, cfg, task, created=existing is None)
    try:
        task = _task_with_holdout(cfg, parts, rd)
        parts.sandbox.hide(task.secret_paths())  # a holdout's labels too, before any kernel
        info = RunInfo(run_dir=rd.root, task_id=task.id, model=cfg.model.name or "",
                       strategy=parts.strategy.name)  # fmt: skip
        summary_info = _summary_info(cfg, task, parts)
        if parts.holdout is not None:
            summary_info["holdout"] = parts.holdout.describe()
        events.run = info
        parts.memory = _memory_copy(cfg, rd, created=existing is None)
        search = Search(rd, journal, parts, _loop_settings(cfg))
        if existing is not None:
            _check_resumable(rd, search)
        log.info("sandbox %s", parts.sandbox.describe())
        await parts.sandbox.warm_up(rd.sandbox_scratch, task.public_dir, cfg.workers)
        events.search_summary = lambda: rd.write_summary(build_summary(search, None, summary_info))
        if on_start:
            on_start(info, _run_start(search))
        _call_hook(pm, "podium_run_started", run=info)
        try:
            with _stop_on_signals(search):
                outcome = await search.run()
        except Exception:
            # Best effort: on a full or failing disk the error being raised says it all.
            with contextlib.suppress(RunDirError, OSError, sqlite3.Error):
                rd.write_summary(build_summary(search, "error", summary_info))
            raise
        record = build_summary(search, outcome.stop_reason, summary_info)
        report = grade_best(rd, task, parts.sandbox)
        if report is not None:
            record.grade = SummaryGrade(
                **{name: getattr(report, name) for name in SummaryGrade.model_fields}
            )
            grade_every_node(rd, search)
        rd.write_summary(record)
        summary = record.to_dict()
        _call_hook(pm, "podium_run_finished", run=info, summary=summary)
        return RunResult(run_dir=rd.root, summary=summary, final=outcome.final, grade=report)
    except (OSError, sqlite3.Error) as exc:
        _raise_disk_failure(rd, exc)
        raise
    finally:
        await parts.aclose()
        journal.close()
        rd.unlock()


def _memory_copy(cfg: RunConfig, rd: RunDir, *, created: bool) -> list[MemoryRecord]:
    """What the run recalls from earlier runs: read from ``memory.dir`` (or, under
    ``--replay``, from the replayed run's own copy) as it starts, and kept in the run dir, which
    a resume reads instead, so a run recalls the same however the directory changed."""
    if cfg.memory.retrieve == 0:
        return []
    if not created:
        return memory_file.read(rd.memory_copy)
    if cfg.model.replay is not None:
        source = Path(cfg.model.replay).expanduser()
        records = memory_file.read(RunDir(source).memory_copy) if source.is_dir() else []
    elif cfg.memory.dir is not None:
        records = memory_file.read(cfg.memory.dir.expanduser() / memory_file.RECORDS)
    else:
        records = []
    rd.write_file(rd.memory_copy, memory_file.lines(records))
    return records


def _keeps_its_holdout(cfg: RunConfig, rd: RunDir, task: Task) -> None:
    """A resumed run keeps what it started with: a holdout is neither dropped (its next nodes
    would train on the held-out labels), nor added halfway, nor changed (checked against its
    ``split.json``)."""
    had = holdout_made(rd.holdout)
    if had != bool(cfg.search.holdout):
        raise RunDirError(
            f"{rd.root} was started {'with' if had else 'without'} search.holdout; a resumed "
            "run cannot " + ("drop it" if had else "add one"),
            hint="resume it as it was started, or start a new run",
        )
    if had:
        make_holdout(task, rd.holdout, cfg.search.holdout, cfg.seed)  # reads, never writes


def _task_with_holdout(cfg: RunConfig, parts: SearchParts, rd: RunDir) -> Task:
    """Under ``search.holdout``: the run's split (made once, in the run dir; a resumed run
    reuses it), whose task the agent then works on. The task as it is otherwise."""
    if cfg.search.holdout:
        parts.holdout = make_holdout(parts.task, rd.holdout, cfg.search.holdout, cfg.seed)
        parts.task = parts.holdout.task
    return parts.task


def _check_resumable(rd: RunDir, search: Search) -> None:
    """A finished run is not started up again for nothing: say which budget it spent."""
    if search.redo or (spent := search.exhausted()) is None:
        return
    what = {"steps": f"its {search.settings.steps} steps", "time": "its time budget",
            "cost": "its cost budget"}[spent]  # fmt: skip
    raise RunDirError(
        f"nothing to resume: {rd.root} has finished {what} and no node is unfinished",
        hint=f"raise that budget to go on, e.g. podium resume {rd.root} --steps "
        f"{search.settings.steps + 10}" if spent == "steps" else
        f"raise that budget to go on: podium resume {rd.root} --{spent} MORE",
    )  # fmt: skip


def _run_start(search: Search) -> RunStart:
    task, sandbox = search.parts.task, search.parts.sandbox
    return RunStart(
        lower_is_better=task.lower_is_better,
        sandbox=sandbox.name,
        sandbox_detail=sandbox.describe(),
        sandboxed=sandbox.isolated,
        sandbox_notice=sandbox.notice,
        isolation_gaps=tuple(sandbox.isolation_gaps()),
        finished_nodes=len(search.tree),
        interrupted_nodes=len(search.discarded),
    )


def _resolve(
    cfg: RunConfig, registry: Registry, events: _Events, replayed: _Replay | None = None
) -> SearchParts:
    """Every name in the config → an object. Names are checked before the task is prepared.

    The caller owns what is made here (models, sandbox) and closes it: ``SearchParts.aclose``.
    """
    strategy = build_strategy(cfg, registry)
    if not cfg.model.name:
        raise UnknownNameError(
            "no model given", hint=f"use --model; available: {registry.model_choices()}"
        )
    own_operators = registry.model_operator_set(cfg.model.name)
    models = _role_models(cfg, registry, replayed, writes_code=own_operators is None)
    if cfg.search.leak_check == "always" and not models.reviews:
        raise ConfigError(
            "search.leak_check = always needs a review model, and this run has none",
            hint="name one with --review-model, or use search.leak_check = suspicious",
        )
    _check_cost_budget(cfg, *models.backends())
    spec = own_operators or registry.operator_set(cfg.search.operators)
    operators = spec.create(
        {
            "memory_chars": cfg.search.memory_chars,
            "planning": cfg.search.planning,
            "edit_format": cfg.search.edit_format,
            "prompts": cfg.prompts,
            "agentic": cfg.agentic.model_dump(),
        }
    )
    sandbox = registry.sandbox(cfg.sandbox.name).create(sandbox_table(cfg))
    task = resolve_task(cfg.task, registry, cfg.data_dir, cfg.obfuscated_description)
    m = cfg.model
    policy = RetryPolicy(attempts=m.max_attempts, total_s=m.retry_time, first_wait_s=m.retry_wait)
    return SearchParts(
        task=task,
        strategy=strategy,
        operators=operators,
        sandbox=sandbox,
        models=models,
        prompts=Prompts(cfg.prompts),
        events=events,
        gateway=ModelGateway(policy, m.concurrency),
    )


def _role_models(
    cfg: RunConfig, registry: Registry, replayed: _Replay | None, *, writes_code: bool
) -> RoleModels:
    """The backend of each role: ``model.plan`` and ``model.review`` where named, else the
    code model (a model that brings its own operators, ``baseline``, has no code role). One
    backend per distinct model; under ``--replay``, one per role, answering from its record."""
    m = cfg.model
    names = {CODE: m.name if writes_code else None, PLAN: m.plan, REVIEW: m.review}
    by_name: dict[str, Backend] = {}
    by_role: dict[str, Backend] = {}
    for role in ROLES:
        name = names[role] or names[CODE]
        if name is None:
            continue
        if replayed is not None:
            by_role[role] = _backend(cfg, registry, name, role, replayed)
        else:
            by_role[role] = by_name.get(name) or _backend(cfg, registry, name, role, None)
            by_name[name] = by_role[role]
    code = names[CODE]
    if replayed is not None and code is not None:  # a plugin operator's own roles
        for role in sorted({a.role for a in replayed.answers} - set(ROLES)):
            by_role[role] = _backend(cfg, registry, code, role, replayed)
    return RoleModels(by_role)


def _backend(
    cfg: RunConfig, registry: Registry, name: str, role: str, replayed: _Replay | None
) -> Backend:
    """The backend for ``name``; under ``--replay``, one answering ``role`` from the record."""
    options = cfg.model.model_dump()
    if replayed is None:
        return registry.backend(name, options)
    live = (lambda: registry.backend(name, options)) if cfg.model.replay_miss == "live" else None
    role_answers = [a for a in replayed.answers if a.role == role]
    return ReplayBackend(name, role_answers, str(cfg.model.replay), live)


@dataclass(frozen=True)
class _Replay:
    config: RunConfig  # with the recorded model names filled in
    answers: list[RecordedAnswer]


def _replay_source(cfg: RunConfig) -> _Replay | None:
    """``--replay SOURCE``: its recorded calls, and the models that made them.

    Unless the user names models, the run uses the recorded ones, so ``--replay-miss live``
    asks the same model the record came from.
    """
    if cfg.model.replay is None:
        return None
    recorded = load_recorded(Path(cfg.model.replay).expanduser())
    if not any(a.request for a in recorded):
        raise UserError(
            f"--replay {cfg.model.replay}: no recorded model calls to answer from",
            hint="a run with the baseline model makes none; a scripted file without requests "
            "is used with --model scripted:FILE",
        )
    models = recorded_models(recorded)
    model = cfg.model
    if model.name == "baseline" and CODE in models:
        others = {r: models.get(r) for r in (PLAN, REVIEW)}
        update = {r: name if name != models[CODE] else None for r, name in others.items()}
        model = model.model_copy(update={"name": models[CODE], **update})
    if model.name == "baseline":
        raise UserError(
            f"--replay {cfg.model.replay}: the record does not say which model answered",
            hint="name it: --model provider/model",
        )
    return _Replay(cfg.model_copy(update={"model": model}), recorded)


def _check_cost_budget(cfg: RunConfig, *models: Backend | None) -> None:
    """``--cost`` is enforced before each call, which needs each model's price."""
    if cfg.budget.cost is None:
        return
    probe = ModelRequest(messages=[Message(role="user", content="price probe")])
    for backend in models:
        if backend is not None and backend.max_cost_usd(probe) is None:
            raise ConfigError(
                f"--cost cannot be enforced: no price is known for {backend.model}",
                hint=f"give its price in USD per million tokens: -o "
                f"'model.prices.\"{backend.model}\"={{input=1.0, output=3.0}}'",
            )


def sandbox_table(cfg: RunConfig) -> dict[str, Any]:
    """The ``[sandbox]`` table the sandbox is made from; a sandbox that takes ``threads`` and
    was not given it gets the cores this run may use divided among its workers' kernels."""
    table = cfg.sandbox.model_dump()
    if "threads" in table and table["threads"] is None:
        table["threads"] = kernel_threads(cfg.workers)
    return table


def grade_best(rd: RunDir, task: Task, sandbox: Sandbox) -> GradeReport | None:
    """Grade ``best/submission.csv`` on the host, after the search, into ``grade.json``,
    stamped with how isolated the code that wrote it was.

    A task that cannot be graded gives None; a broken grader is logged, never loses the run.
    """
    try:
        report = task.grade(rd.best / SUBMISSION, sandboxed=sandbox.isolated)
    except UserError as exc:
        log.warning("could not grade the best submission: %s", exc.message)
        return None
    if report is not None:
        report = report.model_copy(update={"isolation_gaps": sandbox.isolation_gaps()})
        rd.write_json(rd.grade, report.model_dump(mode="json"))
    return report


def grade_every_node(rd: RunDir, search: Search) -> None:
    """``selection.json``: every good node graded once the search is over (post-hoc; see
    ``podium.benchmarks.selection``). A grader that fails is logged, never loses the run."""
    held_out = rd.held_out_score if search.parts.holdout is not None else None
    try:
        report = selection_report(
            search.parts.task, list(search.tree), rd.node_dir, search.final, held_out
        )
    except UserError as exc:
        log.warning("could not grade every node: %s", exc.message)
        return
    if report is not None:
        rd.write_json(rd.selection, report)


def build_strategy(cfg: RunConfig, registry: Registry) -> Strategy:
    """Create the strategy; the ``search.*`` keys it does not know are config errors."""
    spec = registry.strategy(cfg.search.strategy)
    extras = dict(cfg.search.model_extra or {})
    if spec.params is None:
        if extras:
            raise ConfigError(
                f"search.{next(iter(extras))}: unknown key",
                hint=f"strategy {spec.name} takes no parameters",
            )
        return spec.create(None)
    try:
        params = spec.params.model_validate(extras)
    except ValidationError as exc:
        raise config_error(exc, prefix="search.", model=spec.params) from None
    # Record every parameter in force (defaults included) in the run's config.toml.
    for key, value in params.model_dump().items():
        setattr(cfg.search, key, value)
    return spec.create(params)


def default_run_dir(cfg: RunConfig, task: Task) -> Path:
    if cfg.out is not None:
        return cfg.out
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", task.id.rsplit("/", 1)[-1]).strip("-") or "task"
    base = Path("runs") / f"{datetime.now():%Y-%m-%d_%H-%M-%S}-{slug}"
    path, n = base, 2
    while path.exists():
        path, n = base.with_name(f"{base.name}-{n}"), n + 1
    return path


def _open_journal(rd: RunDir, cfg: RunConfig, task: Task, created: bool) -> Journal:
    """Create the run (dir, lock, config.toml, journal) or reopen it, its lock held.

    A failure of the disk here is one line (``_raise_disk_failure``); a new run that fails
    before its journal holds anything leaves nothing behind, so the same command can be run
    again.
    """
    try:
        return _create_run(rd, cfg, task) if created else _reopen_run(rd, cfg, task)
    except (OSError, sqlite3.Error) as exc:
        _raise_disk_failure(rd, exc)
        raise


def _create_run(rd: RunDir, cfg: RunConfig, task: Task) -> Journal:
    if rd.journal.exists():
        raise RunDirError(
            f"{rd.root} already holds a run", hint=f"continue it with: podium resume {rd.root}"
        )
    made = rd.create()
    rd.lock()
    try:
        rd.write_config(cfg.to_toml())
        return Journal.create(
            rd.journal,
            {"podium_version": __version__, "task_id": task.id,
             "created_at": datetime.now().astimezone().isoformat()},
        )  # fmt: skip
    except BaseException:
        rd.unlock()
        rd.discard_start(made)
        raise


def _reopen_run(rd: RunDir, cfg: RunConfig, task: Task) -> Journal:
    rd.lock()
    journal: Journal | None = None
    try:
        journal = Journal.open(rd.journal)  # a disk failure: sqlite3.Error, said by the caller
        recorded = journal.meta().get("task_id")
        if recorded != task.id:
            raise RunDirError(f"{rd.root} is a run of {recorded}, but its config names {task.id}")
        _check_node_files(rd, journal)
        rd.write_config(cfg.to_toml())
    except BaseException:
        if journal is not None:
            journal.close()
        rd.unlock()
        raise
    return journal


def _check_node_files(rd: RunDir, journal: Journal) -> None:
    """A resume needs the files of the finished nodes it may publish as ``best/``.

    A good node's ``submission.csv`` exists nowhere but in ``nodes/<id>/`` (the journal holds
    its code and results, not its predictions): resuming without it could publish a ``best/``
    with no submission, and the run would look fine until graded. So that stops the resume,
    with the nodes named. Other finished nodes' files only serve inspection (the journal has
    their code and output): their absence is a warning, and the run goes on.
    """
    done = journal.nodes(NodeState.DONE)
    if lost := rd.missing_submissions(done):
        shown = ", ".join(str(i) for i in lost[:10]) + (", ..." if len(lost) > 10 else "")
        raise RunDirError(
            f"cannot resume {rd.root}: the submission.csv of {len(lost)} good finished "
            f"node(s) is missing from {rd.nodes} (nodes {shown})",
            hint=f"restore {rd.nodes} (e.g. from a copy of the run) and resume again; "
            f"the journal still has every node's code and results: podium show {rd.root}",
        )
    gone = [n.id for n in done if not rd.node_dir(n.id).is_dir()]
    if gone:
        log.warning(
            "%d finished node(s) of %s have no directory in %s (their records stay in the journal)",
            len(gone),
            rd.root,
            rd.nodes,
        )


def _raise_disk_failure(rd: RunDir, exc: BaseException) -> None:
    """The one place a run's OSError or SQLite error becomes a user's error: a failure of the
    disk or the run dir (full, read-only, no permission, I/O) is raised as one line with what to
    do; anything else returns, for the caller to re-raise as the bug it is."""
    if (failure := rd.failure(exc)) is not None:
        raise failure from exc


def _loop_settings(cfg: RunConfig) -> LoopSettings:
    return LoopSettings(
        steps=cfg.budget.steps,
        time_s=cfg.budget.time,
        cost_usd=cfg.budget.cost,
        workers=cfg.workers,
        seed=cfg.seed,
        exec_timeout_s=cfg.exec.timeout,
        max_output_bytes=cfg.exec.max_output_bytes,
        keep_working=cfg.exec.keep_working,
        final_top_k=cfg.search.final_top_k,
        schedule=cfg.schedule,
        fresh_check=cfg.agentic.fresh_check,
        max_identical_failures=cfg.search.max_identical_failures,
        leak_check=cfg.search.leak_check,
        memory_k=cfg.memory.retrieve,
        # A replay's nodes are an earlier run's again: they teach nothing new.
        memory_dir=cfg.memory.dir.expanduser() if cfg.memory.dir and not cfg.model.replay else None,
    )


def _summary_info(cfg: RunConfig, task: Task, parts: SearchParts) -> dict[str, Any]:
    return {
        "task": task.id,
        "competition_id": getattr(task, "competition_id", task.id),
        "task_type": task.task_type,
        "complexity": task.complexity,
        "obfuscated_description": cfg.obfuscated_description,
        "model": cfg.model.name,
        "review_model": cfg.model.review or cfg.model.name,
        "plan_model": cfg.model.plan or cfg.model.name,
        "strategy": cfg.search.strategy,
        "operators": parts.operators.name,  # what ran: a model (baseline) brings its own
        "sandbox": parts.sandbox.name,
        "sandbox_detail": parts.sandbox.describe(),
        "sandboxed": parts.sandbox.isolated,
        "isolation_gaps": parts.sandbox.isolation_gaps(),
        "seed": cfg.seed,
        "workers": cfg.workers,
        "schedule": cfg.schedule,
        "budget": cfg.budget.model_dump(),
    }


class _Events:
    """After each node: refresh summary.json, tell the caller, call the plugins' hook.

    Made before the parts it is one of; what it needs of the started run (``run``, the
    summary's writer) is set once the run dir is open, before any node can finish.
    """

    def __init__(self, pm: PodiumPluginManager, on_node: NodeCallback | None):
        self.pm, self.on_node = pm, on_node
        self.run: RunInfo | None = None
        self.search_summary: Callable[[], None] | None = None

    def node_finished(self, node: Node) -> None:
        if self.search_summary:
            self.search_summary()
        if self.on_node:
            self.on_node(node)
        _call_hook(self.pm, "podium_node_finished", run=self.run, node=node)


def _call_hook(pm: PodiumPluginManager, name: str, **kwargs: Any) -> None:
    """Run an event hook; a plugin's exception is logged, never allowed to lose the run."""
    try:
        getattr(pm.hook, name)(**kwargs)
    except Exception as exc:
        log.warning("a plugin's %s hook failed: %s: %s", name, type(exc).__name__, exc)


def _stop_on_signals(search: Search) -> contextlib.AbstractContextManager[None]:
    """First SIGINT/SIGTERM: stop, marking nodes in flight interrupted. A second Ctrl-C: exit
    now (see ``two_stage_stop``)."""

    def stop(signum: int) -> None:
        log.warning(
            "stopping (%s): nodes in flight are marked interrupted; %s to quit at once",
            signal.Signals(signum).name,
            "press Ctrl-C again" if signum == signal.SIGINT else "press Ctrl-C",
        )
        search.request_stop("interrupted")

    return two_stage_stop(stop)
