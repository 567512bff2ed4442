"""The search loop: pick an action, propose code, execute it, review it, record it (see
docs/architecture.md, "The loop").

```
while budget remains:                       # up to `workers` nodes in flight
    action = strategy.next_action(tree, rng)
    node   = await operators.propose(...)    # model call(s)
    result = await sandbox.execute(...)      # fresh kernel per node
    node   = judge(review(...))              # metric / bug
    journal.finish(node); strategy.observe(node); hooks.node_finished(node)
final = strategy.final_node(tree) -> best/
```

Crash safety: a node is in the journal from the moment its action is chosen, and every phase
change is one transaction. A decision, once journaled, is never made again: on resume every
unfinished node is re-run under its id with its action, before any new decision, and the RNG
continues from after the last decision; only finished nodes count as steps.

Deterministic failures stop the run instead of spending its budget: an operator set that says
a task is beyond it (``Proposal.beyond``) stops it after that one node (stop reason
``beyond``), and ``max_identical_failures`` nodes in a row with the same code and
the same failure (:func:`failure_key`) stop it too (``repeated``).

Reproducibility with several workers (``schedule = "reproducible"``, the default): the decision
for node ``n`` is made on a tree holding exactly nodes ``1 .. n - workers``, admitted in id
order, and nodes take their steps in that order. What the strategy sees is then a function of
the seed and the nodes' results, never of timing, so a run, its replay and any resume of it grow
the same tree. The price: a worker idles while the oldest node in flight is still running.
``"eager"`` decides whenever a worker is free, on whatever has finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import random
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from podium import code_edit
from podium.code_diff import source_lines
from podium.errors import (
    CostLimitReached,
    ModelError,
    ModelFatalError,
    PluginError,
    RecordExhausted,
    RunDirError,
    SandboxError,
)
from podium.formats import memory_file
from podium.formats.inert_words import inert_notebook
from podium.formats.journal import Journal
from podium.formats.run_files import HELD_OUT, HELD_OUT_PREDICTIONS, OUTPUT, SOLUTION
from podium.formats.rundir import RunDir
from podium.interfaces import (
    SUBMISSION,
    SUBMISSION_WRITTEN,
    BudgetView,
    HeldOutScore,
    Holdout,
    KernelSession,
    OperatorContext,
    OperatorSet,
    Proposal,
    Sandbox,
    Strategy,
    Task,
    Workspace,
)
from podium.plugins import ModelGateway
from podium.records import Action, ExecResult, FreshRun, MemoryRecord, Node, NodeState, utcnow
from podium.scaffolds import final_choice, leakage, review
from podium.scaffolds.execution import execute_solution, open_kernel_session
from podium.scaffolds.experience import Experience, record_of
from podium.scaffolds.leakage import LeakCheck
from podium.scaffolds.model_calls import CallRecorder, RoleModels
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.spending import Spending
from podium.tree import SearchTree
from podium.untrusted import remove_tree

log = logging.getLogger(__name__)
MAX_SANDBOX_FAILURES = 3  # consecutive kernel start failures before the run gives up
MAX_FAILED_PROPOSALS = 3  # consecutive nodes whose model or operator failed: the run stops
Schedule = Literal["reproducible", "eager"]
# Stop reasons of a run that cannot succeed as it is (summary.json's ``stop_reason``; the
# run's status is then "failed"): the task is beyond the operator set; the same failure again.
BEYOND = "beyond"
REPEATED = "repeated"


@dataclass(frozen=True)
class LoopSettings:
    steps: int
    time_s: float | None = None
    cost_usd: float | None = None
    workers: int = 1
    seed: int = 0
    exec_timeout_s: float = 3600.0
    max_output_bytes: int = 64 * 1024
    keep_working: bool = False
    final_top_k: int = 1  # > 1: re-run the k best on a fresh kernel before choosing
    schedule: Schedule = "reproducible"
    fresh_check: bool = True  # a good agentic node's code run again on a fresh kernel
    max_identical_failures: int = 3  # the same code failing the same way, in a row: 0 never
    leak_check: LeakCheck = "off"  # when a good solution's score is checked for leakage
    memory_k: int = 0  # records the memory recalls into each prompt (0: off)
    memory_dir: Path | None = None  # where each finished node's record is appended


class RunEvents(Protocol):
    """Where the loop reports finished nodes: plugins' hooks and the CLI's progress rows."""

    def node_finished(self, node: Node) -> None: ...


@dataclass
class SearchParts:
    """Everything a run's config names, created before any work starts: what the search runs
    with. Whoever made them closes them (:meth:`aclose`) once the run is over."""

    task: Task
    strategy: Strategy
    operators: OperatorSet
    sandbox: Sandbox
    models: RoleModels  # by role; no code model: the operator set writes code (``baseline``)
    prompts: Prompts
    events: RunEvents
    gateway: ModelGateway = field(default_factory=ModelGateway)
    holdout: Holdout | None = None  # search.holdout: ``task`` is then its task
    memory: list[MemoryRecord] = field(default_factory=list)  # earlier runs', frozen at start

    async def aclose(self) -> None:
        """Close the models and the sandbox (its kernels); a part that fails to close is
        skipped, so the others still are."""
        await self.models.aclose()
        with contextlib.suppress(Exception):
            await self.sandbox.aclose()


@dataclass(frozen=True)
class Outcome:
    stop_reason: str  # steps | time | cost | exhausted | interrupted | error | beyond | repeated
    final: Node | None
    error: str | None = None


class StopRun(Exception):
    """Raised inside a node when the whole run must stop (e.g. the API key was rejected)."""


class Search:
    def __init__(
        self, run_dir: RunDir, journal: Journal, parts: SearchParts, settings: LoopSettings
    ) -> None:
        self.run_dir, self.journal, self.parts, self.settings = run_dir, journal, parts, settings
        self.tree = SearchTree(parts.task.lower_is_better)
        self.rng = random.Random(settings.seed)
        if (rng_state := journal.rng_state()) is not None:
            self.rng.setstate(rng_state)
        self.redo = journal.restart_unfinished()  # decided, unfinished: run again, first
        self.discarded = list(self.redo)
        self.unfinished = {n.id for n in self.redo}  # decided and not finished, in flight or not
        self.spending = Spending(settings.cost_usd, journal.spent())
        self.waiting: dict[int, Node] = {}  # finished, not yet admitted (reproducible schedule)
        for node in journal.nodes(NodeState.DONE):
            if node.step is None:
                self.waiting[node.id] = node
            else:
                self._admit(node)
        self.seq: dict[str, int] = journal.next_seqs()
        self.next_id = journal.next_node_id()
        known = {*self.tree.ids(), *self.waiting, *self.unfinished}
        run_dir.remove_stray_nodes(known)
        self.in_flight: dict[asyncio.Task[Node], Node] = {}
        self.stop_reason: str | None = None
        self.stop_detail: str | None = None  # e.g. why the cost budget stopped the run
        self.final: Node | None = None  # once chosen at the end (top-k re-runs may change it)
        self.reruns: list[final_choice.Rerun] = []
        self.error: str | None = None
        self.sandbox_failures = 0
        self.failed_proposals = 0
        self.beyond: tuple[str, str] | None = None  # the task is beyond the operators: line, hint
        self.last_failure: str | None = None  # the latest finished node's failure_key
        self.identical_failures = 0  # finished nodes in a row with that key
        for done in sorted([*self.tree, *self.waiting.values()], key=_finish_order):
            self._count_identical_failure(done)  # rebuilt: a resume goes on counting
        self._started = time.monotonic()
        self._elapsed_before = journal.elapsed_s
        self.best_id = run_dir.best_node_id()

    # --- budget ---------------------------------------------------------------------------

    def elapsed(self) -> float:
        return self._elapsed_before + (time.monotonic() - self._started)

    def time_left(self) -> float | None:
        t = self.settings.time_s
        return None if t is None else max(t - self.elapsed(), 0.0)

    def exhausted(self, decided: int | None = None) -> str | None:
        """Why no node may start, or None; ``decided``: nodes decided so far that count toward
        the steps (default: all, so no new decision fits once they make the budget)."""
        s = self.settings
        if decided is None:
            decided = self.next_id - 1
        if decided >= s.steps:
            return "steps"
        if (left := self.time_left()) is not None and left <= 0:
            return "time"
        if self.spending.exhausted:
            return "cost"
        return None

    # --- the loop -------------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Search until a budget is spent or a stop is requested; then publish the final node.

        An exception from Podium's own machinery (a bug, a full disk) cancels the nodes in
        flight — they stay resumable — records the error, and propagates.
        """
        try:
            await self._loop()
        except asyncio.CancelledError:
            self.stop_reason = self.stop_reason or "interrupted"
            await self._cancel_in_flight()
        except Exception as exc:
            self.stop_reason, self.error = "error", f"{type(exc).__name__}: {exc}"
            await self._cancel_in_flight()
            raise
        self._admit_waiting(through=None)
        final = self.final_node()
        if self.settings.final_top_k > 1 and self.stop_reason not in ("interrupted", "error"):
            final, self.reruns = await final_choice.choose(
                self.tree, self.settings.final_top_k, self._execute_again, self._held_out_scores()
            )
        self.final = final
        self._publish(final)
        return Outcome(stop_reason=self.stop_reason or "steps", final=final, error=self.error)

    def request_stop(self, reason: str = "interrupted") -> None:
        """Stop now: nodes in flight are cancelled and stay resumable (marked interrupted)."""
        self.stop_reason = self.stop_reason or reason
        for task in self.in_flight:
            task.cancel()

    async def _loop(self) -> None:
        while self.stop_reason is None:
            self._launch()
            if not self.in_flight and self.waiting:
                # The strategy waits on nodes the schedule held back (finished, not yet
                # admitted): with nothing in flight it sees them all, and decides again.
                self._admit_waiting(through=None)
                self._launch()
            if not self.in_flight:
                self.stop_reason = self.exhausted() or "exhausted"
                break
            done, _ = await asyncio.wait(self.in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(done, key=lambda t: self.in_flight[t].id):
                del self.in_flight[task]
                self._settle(task)
        await self._cancel_in_flight()

    def _launch(self) -> None:
        while self.stop_reason is None and len(self.in_flight) < self.settings.workers:
            node = self._restart() if self.redo else self._decide()
            if node is None:
                return
            node = node.model_copy(update={"worker": self._free_worker()})
            task = asyncio.create_task(self._expand(node), name=f"node-{node.id}")
            self.in_flight[task] = node

    def _restart(self) -> Node | None:
        """The next node a crash or a budget left unfinished, if the budgets let it run."""
        if self.exhausted(decided=len(self.tree) + len(self.waiting) + len(self.in_flight)):
            return None
        return self.redo.pop(0)

    def _decide(self) -> Node | None:
        """A new node: the strategy's next action, journaled with the RNG before and after."""
        if self.exhausted() or not self._may_decide():
            return None
        before = self.rng.getstate()
        self.tree.steps_left = self.settings.steps - (self.next_id - 1)
        action = self.parts.strategy.next_action(self.tree, self.rng)
        if action is None:
            return None
        self._check_action(action)
        node = Node(
            id=self.next_id,
            parent_ids=action.parent_ids,
            ref_ids=action.ref_ids,
            operator=action.operator,
            kind="analysis" if action.operator in self.parts.operators.analyses else "solution",
        )
        self.next_id += 1
        self.unfinished.add(node.id)
        self.journal.begin(node, before, self.rng.getstate(), self.elapsed())
        return node

    def _check_action(self, action: Action) -> None:
        """A strategy's action names an operator the set has, and parents and references that
        are finished nodes of the tree (a reference never also a parent): a plugin's mistake
        stops the run with its name, not later with a KeyError inside a node."""
        strategy, operators = self.parts.strategy.name, self.parts.operators
        if action.operator not in operators.operators:
            raise PluginError(
                f"strategy {strategy} asked for operator {action.operator!r}, which operator "
                f"set {operators.name} lacks"
            )
        for kind, ids in (("parent", action.parent_ids), ("reference", action.ref_ids)):
            unknown = [i for i in ids if i not in self.tree]
            if unknown:
                raise PluginError(
                    f"strategy {strategy} named {kind} node {unknown[0]}, which is not a "
                    "finished node of the tree"
                )
        if len(set(action.ref_ids)) < len(action.ref_ids) or set(action.ref_ids) & set(
            action.parent_ids
        ):
            raise PluginError(
                f"strategy {strategy} cited a node twice, or cited a parent as a reference "
                f"(parents {list(action.parent_ids)}, references {list(action.ref_ids)})"
            )

    def _may_decide(self) -> bool:
        """Eager: always. Reproducible: once nodes ``1 .. n - workers`` are all admitted (in id
        order), so the tree the decision sees does not depend on which node finished first."""
        eager = self.settings.schedule == "eager"
        through = None if eager else self.next_id - self.settings.workers
        self._admit_waiting(through)
        if through is not None and any(i <= through for i in self.unfinished):
            return False
        unadmitted = sorted([*self.in_flight.values(), *self.waiting.values()], key=_id)
        self.tree.pending = [_action_of(n) for n in unadmitted]
        return True

    def _admit_waiting(self, through: int | None) -> None:
        """Admit finished nodes in id order, up to ``through`` (None: all), stopping at the
        first node still running: nodes take their steps in id order."""
        first_open = min(self.unfinished, default=None)
        for node_id in sorted(self.waiting):
            if (through is not None and node_id > through) or (
                first_open is not None and node_id > first_open
            ):
                return
            self._finish(self.waiting.pop(node_id))

    def _free_worker(self) -> int:
        busy = {n.worker for n in self.in_flight.values()}
        return next(i for i in range(self.settings.workers) if i not in busy)

    def _settle(self, task: asyncio.Task[Node]) -> None:
        """Record one finished expansion; decide whether the run goes on."""
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, StopRun):
            self.stop_reason, self.error = "error", str(exc)
            return
        if isinstance(exc, CostLimitReached):
            self.stop_reason, self.stop_detail = "cost", str(exc)
            return
        if isinstance(exc, RecordExhausted):
            self.stop_reason, self.stop_detail = "replayed", str(exc)
            return
        if exc is not None:
            raise exc
        node = task.result().model_copy(update={"state": NodeState.DONE, "finished_at": utcnow()})
        self.unfinished.discard(node.id)
        if self.beyond is not None and self.stop_reason is None:
            self.stop_reason, (self.error, self.stop_detail) = BEYOND, self.beyond
        most = self.settings.max_identical_failures
        if self._count_identical_failure(node) >= most > 0 and self.stop_reason is None:
            self._stop_repeated(node)
        if self.settings.schedule == "eager":
            self._finish(node)
        else:  # recorded now, so no kill loses it; it takes its step in id order
            self.journal.update(node, self.elapsed())
            self.waiting[node.id] = node

    def _finish(self, node: Node) -> None:
        """Give a finished node its step, show it to the strategy, publish the best so far."""
        node = node.model_copy(update={"step": len(self.tree) + 1})
        self.journal.update(node, self.elapsed())
        self._admit(node)
        self._remember(node)
        self._publish(self.final_node())
        self.parts.events.node_finished(node)

    def _admit(self, node: Node) -> None:
        self.tree.add(node)
        self.parts.strategy.observe(node, self.tree)

    def final_node(self) -> Node | None:
        """The node to submit: the best on the held-out labels under ``search.holdout`` (the
        strategy's choice while no node has a held-out score), else the strategy's choice."""
        chosen = self.parts.strategy.final_node(self.tree)
        held_out = self._held_out_scores()
        return (final_choice.best_held_out(self.tree, held_out) if held_out else None) or chosen

    def _held_out_scores(self) -> final_choice.HeldOut | None:
        if self.parts.holdout is None:
            return None
        rd = self.run_dir
        return final_choice.HeldOut(
            of_node=rd.held_out_score,
            of_rerun=lambda i: rd.held_out_score_in(rd.final_rerun_dir(i)),
        )

    def _score_held_out_rows(self, root: Path) -> None:
        """Under ``search.holdout``: the held-out rows taken out of the submission in ``root``
        (what stays is the task's own) and scored on the host, beside the node."""
        holdout = self.parts.holdout
        if holdout is None or not (root / SUBMISSION).is_file():
            return
        predictions = root / HELD_OUT_PREDICTIONS
        problem = holdout.separate(root / SUBMISSION, predictions)
        held = HeldOutScore(None, problem) if problem else holdout.score(predictions)
        score = held.score if held.score is not None and math.isfinite(held.score) else None
        self.run_dir.write_json(root / HELD_OUT, {"score": score, "problem": held.problem})

    def _publish(self, final: Node | None) -> None:
        final_id = final.id if final else None
        if final_id != self.best_id or (final and not self.run_dir.best.exists()):
            self.run_dir.publish_best(final)
            self.best_id = final_id

    async def _cancel_in_flight(self) -> None:
        for task in self.in_flight:
            task.cancel()
        if self.in_flight:
            await asyncio.gather(*self.in_flight, return_exceptions=True)
        self.in_flight.clear()

    # --- one node -------------------------------------------------------------------------

    async def _expand(self, node: Node) -> Node:
        t0 = time.perf_counter()
        await asyncio.to_thread(self.run_dir.reset_node, node.id)  # a leftover may be huge
        client = self._call_recorder(node.id)
        try:
            node, executed = await self._propose(node, client)
            if node.bug_reason is None:
                node = await self._execute_and_review(node, client, executed)
        except (asyncio.CancelledError, CostLimitReached, RecordExhausted):
            # Left unfinished: a resume (with a larger budget) runs this node again.
            interrupted = node.model_copy(update={"state": NodeState.INTERRUPTED})
            with contextlib.suppress(Exception):
                self.journal.update(interrupted, self.elapsed())
            raise
        timings = node.timings.model_copy(
            update={
                "total_s": time.perf_counter() - t0,
                "review_model_s": client.model_s(reviewing=True),
            }
        )
        return node.model_copy(update={"usage": client.usage, "timings": timings})

    def _call_recorder(self, node_id: int) -> CallRecorder:
        """The model client of one node: its calls numbered, journaled and paid for."""
        return CallRecorder(
            node_id,
            journal=self.journal,
            spending=self.spending,
            gateway=self.parts.gateway,
            models=self.parts.models,
            next_seq=self.seq,
        )

    async def _propose(self, node: Node, client: CallRecorder) -> tuple[Node, ExecResult | None]:
        """The operator's proposal recorded on the node; and its result, if the operator ran
        its code itself (an agentic node, in ``open_kernel``'s kernel)."""
        parents = [self.tree.get(p) for p in node.parent_ids]
        seen = self._tree_seen_by(node)
        ctx = OperatorContext(
            task=self.parts.task,
            action=_action_of(node),
            parents=parents,
            refs=[self.tree.get(r) for r in node.ref_ids],
            memory=self._memory(seen),
            tree=seen,
            environment=await self.parts.sandbox.environment(),
            budget=BudgetView(  # counted by id: the same whichever node finished first
                steps_left=self.settings.steps - node.id + 1,
                time_left_s=self.time_left(),
                exec_timeout_s=self.settings.exec_timeout_s,
            ),
            model=client,
            rng=random.Random(f"{self.settings.seed}:{node.id}"),
            open_kernel=lambda: self._open_kernel(node.id),
        )
        problem: str | None = None
        try:
            proposal = await self.parts.operators.propose(ctx)
        except ModelFatalError as exc:
            raise StopRun(_fatal_message(exc)) from exc
        except ModelError as exc:
            proposal, problem = Proposal("", ""), f"model call failed: {exc}"
        except (CostLimitReached, RecordExhausted, RunDirError, sqlite3.Error):
            raise  # a budget, the record's end, the run dir's disk: never the node's fault
        except Exception as exc:
            proposal = Proposal("", "")
            problem = f"operator {node.operator} failed: {type(exc).__name__}: {exc}"
        self._count_failed_proposal(problem)
        if proposal.beyond is not None:  # the node says why; the run stops once it is recorded
            problem = proposal.problem or f"the task is beyond {self.parts.operators.name}"
            self.beyond = (problem, proposal.beyond)
        code = proposal.code
        if proposal.edit is not None and not (problem or proposal.problem):
            code, problem = _applied(proposal.edit, parents)
        problem = problem or proposal.problem or (None if code.strip() else "no code")
        timings = node.timings.model_copy(update={"model_s": client.model_s(reviewing=False)})
        node = node.model_copy(
            update={"plan": proposal.plan, "code": code, "timings": timings,
                    "state": NodeState.EXECUTING}
        )  # fmt: skip
        self.run_dir.write_text(node.id, SOLUTION, node.code)
        if proposal.notebook is not None:
            notebook = inert_notebook(proposal.notebook)
            self.run_dir.write_file(self.run_dir.node_notebook(node.id), notebook)
        if proposal.executed is not None and problem == "no code":
            problem = None  # ran cells, none cleanly: judged by its result, like any run
        if problem:
            node = node.model_copy(update={"is_buggy": True, "bug_reason": problem})
        self.journal.update(node, self.elapsed())
        return node, proposal.executed

    def _memory(self, seen: SearchTree) -> Experience | None:
        """The node's memory over the tree it sees (None when off)."""
        if self.settings.memory_k == 0:
            return None
        task = self.parts.task
        return Experience(self.parts.memory, seen, self.settings.memory_k, task.id,
                          task.task_type, self.run_dir.root.name)  # fmt: skip

    def _remember(self, node: Node) -> None:
        """Append the finished node's record to ``memory.dir`` (a failure is logged, never the
        run's: the memory is a by-product of the search)."""
        directory = self.settings.memory_dir
        if directory is None:
            return
        parent = self.tree.get(node.parent_ids[0]) if node.parent_ids else None
        task = self.parts.task
        record = record_of(node, parent, task.id, task.task_type, self.run_dir.root.name)
        try:
            memory_file.append(directory, record)
        except OSError as exc:
            log.warning("node %d: not added to the memory in %s: %s", node.id, directory, exc)

    def _tree_seen_by(self, node: Node) -> SearchTree:
        """What a node's operators see: under the reproducible schedule, the tree its decision
        was made on (nodes ``1 .. id - workers``), so its prompts do not depend on timing."""
        if self.settings.schedule == "eager":
            return self.tree
        view = self.tree.upto(node.id - self.settings.workers)
        known = {n.id: n for n in (*self.in_flight.values(), *self.waiting.values(), *self.tree)}
        decided = range(max(node.id - self.settings.workers + 1, 1), node.id)
        view.pending = [_action_of(known[i]) for i in decided if i in known]
        return view

    def _count_failed_proposal(self, problem: str | None) -> None:
        """A model that cannot be reached (a dead endpoint, a broken plugin) fails every node:
        after a few in a row the run stops, instead of spending its whole budget on them."""
        self.failed_proposals = self.failed_proposals + 1 if problem else 0
        if self.failed_proposals >= MAX_FAILED_PROPOSALS:
            raise StopRun(
                f"{self.failed_proposals} nodes in a row could not get code: {problem} "
                "(check the model, its endpoint and key: podium models check MODEL; "
                "then podium resume DIR)"
            )

    def _count_identical_failure(self, node: Node) -> int:
        """Finished nodes in a row, up to ``node`` (in the order they finished), with its code
        failing its way: a failure that repeats with the same code is deterministic, and
        running it again spends the budget for nothing, so ``max_identical_failures`` of them
        stop the run. Rebuilt from the journal on resume, so a resumed run that fails the same
        way again stops at its first such node, not after as many more."""
        key = failure_key(node)
        same = key is not None and key == self.last_failure
        self.identical_failures = self.identical_failures + 1 if same else int(key is not None)
        self.last_failure = key
        return self.identical_failures

    def _stop_repeated(self, node: Node) -> None:
        """Stop the run: ``node`` is the latest of identical failures in a row."""
        self.stop_reason = REPEATED
        self.error = (
            f"{self.identical_failures} nodes in a row ran the same code and failed the same "
            f"way (node {node.id}: {node.bug_reason})"
        )
        self.stop_detail = (
            f"running it again would fail again: see {self.run_dir.node_dir(node.id)}, fix what "
            f"it needs, then podium resume {self.run_dir.root} (search.max_identical_failures "
            "sets how many in a row stop a run; 0: never)"
        )

    async def _execute_and_review(
        self, node: Node, client: CallRecorder, executed: ExecResult | None
    ) -> Node:
        task = self.parts.task
        result = executed if executed is not None else await self._execute(node)
        self.run_dir.write_text(node.id, OUTPUT, result.output)
        if node.kind == "analysis":
            return await self._review_analysis(node, client, result)
        has_submission = (self.run_dir.node_dir(node.id) / SUBMISSION).is_file()
        # The check may run the task's grader: it runs while the review model is asked.
        checking = asyncio.create_task(self._check_submission(node.id, has_submission, result))
        timings = node.timings.model_copy(
            update={"kernel_start_s": result.kernel_start_s, "exec_s": result.duration_s}
        )
        node = node.model_copy(
            update={"exec": result, "has_submission": has_submission, "timings": timings,
                    "state": NodeState.REVIEWING}
        )  # fmt: skip
        self.journal.update(node, self.elapsed())
        opinion: review.ModelReview | str | None = None
        try:
            if self.parts.models.reviews:
                opinion = await review.ask_model(
                    task, node.code, result, client, self.parts.prompts
                )
            submission_problem = await checking
        except ModelFatalError as exc:
            checking.cancel()
            raise StopRun(_fatal_message(exc)) from exc
        except BaseException:
            checking.cancel()
            raise
        verdict = review.judge(task, result, opinion, submission_problem)
        if verdict.metric and not verdict.is_buggy and leakage.due(self.settings.leak_check,
                                                                   verdict.metric):  # fmt: skip
            verdict = await self._check_leakage(node, result, verdict, client)
        await asyncio.to_thread(self._score_held_out_rows, self.run_dir.node_dir(node.id))
        node = node.model_copy(
            update={"metric": verdict.metric, "is_buggy": verdict.is_buggy,
                    "bug_reason": verdict.bug_reason, "summary": verdict.summary}
        )  # fmt: skip
        if executed is not None and self.settings.fresh_check and node.metric and not node.is_buggy:
            node = node.model_copy(update={"fresh": await self._fresh_run(node)})
        return node

    async def _check_leakage(
        self, node: Node, result: ExecResult, verdict: review.Verdict, client: CallRecorder
    ) -> review.Verdict:
        """``verdict`` made buggy when the leak check finds the score leaked."""
        assert verdict.metric is not None
        model = client if self.parts.models.reviews else None
        try:
            leak = await leakage.check(
                self.parts.task, node.code, result.output, verdict.metric, model,
                self.parts.prompts,
            )  # fmt: skip
        except ModelFatalError as exc:
            raise StopRun(_fatal_message(exc)) from exc
        return verdict if leak is None else replace(verdict, is_buggy=True, bug_reason=leak)

    async def _review_analysis(self, node: Node, client: CallRecorder, result: ExecResult) -> Node:
        """An analysis is judged by whether it ran through, and summarised as its findings; no
        metric, no submission check (whatever it wrote is never handed over)."""
        timings = node.timings.model_copy(
            update={"kernel_start_s": result.kernel_start_s, "exec_s": result.duration_s}
        )
        node = node.model_copy(
            update={"exec": result, "timings": timings, "state": NodeState.REVIEWING}
        )
        self.journal.update(node, self.elapsed())
        opinion: review.ModelReview | str | None = None
        if self.parts.models.reviews and not result.failed:
            try:
                opinion = await review.ask_model(
                    self.parts.task, node.code, result, client, self.parts.prompts,
                    template="analysis_review",
                )  # fmt: skip
            except ModelFatalError as exc:
                raise StopRun(_fatal_message(exc)) from exc
        verdict = review.judge_analysis(result, opinion)
        return node.model_copy(
            update={"is_buggy": verdict.is_buggy, "bug_reason": verdict.bug_reason,
                    "summary": verdict.summary}
        )  # fmt: skip

    async def _fresh_run(self, node: Node) -> FreshRun:
        """An agentic node's clean cells run once more on a fresh kernel (``nodes/<id>/fresh/``),
        within what is left of the time budget: its score is reported, not assumed."""
        root = self.run_dir.fresh_run_dir(node.id)
        result = await self._execute_again(node, root, self._exec_timeout())
        metric = review.metric_from_output(result.output)
        value = metric if isinstance(metric, float) else None
        written = (root / SUBMISSION).is_file()
        same = (
            value is not None
            and node.metric is not None
            and math.isclose(value, node.metric.value, rel_tol=1e-6, abs_tol=1e-12)
        )
        return FreshRun(
            status=result.status, metric=value, has_submission=written,
            reproduced=same and written and not result.failed,
            error=result.error_line or (metric if isinstance(metric, str) else None),
        )  # fmt: skip

    async def _execute_again(
        self, node: Node, root: Path | None = None, timeout_s: float | None = None
    ) -> ExecResult:
        """Run a finished node's code once more on a fresh kernel, in ``root`` (by default
        ``nodes/<id>/rerun/``, the final choice's top-k re-run)."""
        root = root or self.run_dir.final_rerun_dir(node.id)
        await asyncio.to_thread(remove_tree, root)
        root.mkdir(parents=True)
        result = await execute_solution(
            self.parts.sandbox,
            node.code,
            Workspace(root, self.parts.task.public_dir),  # working/ is never kept here
            timeout_s=timeout_s or self.settings.exec_timeout_s,  # by default the search is over
            max_output_bytes=self.settings.max_output_bytes,
        )
        self.run_dir.write_file(root / OUTPUT, result.output)
        await asyncio.to_thread(self._score_held_out_rows, root)
        return result

    async def _check_submission(
        self, node_id: int, has_submission: bool, result: ExecResult
    ) -> str | None:
        if not has_submission:
            return result.submission_refused or f"no {SUBMISSION_WRITTEN} was written"
        return await asyncio.to_thread(self._submission_problem, node_id)

    def _submission_problem(self, node_id: int) -> str | None:
        return submission_problem(self.parts.task, self.run_dir.node_dir(node_id) / SUBMISSION)

    async def _execute(self, node: Node) -> ExecResult:
        """Run the node's code in its directory, within what is left of the time budget."""
        sandbox_errors: list[SandboxError] = []
        result = await execute_solution(
            self.parts.sandbox,
            node.code,
            self._workspace(node.id),
            timeout_s=self._exec_timeout(),
            max_output_bytes=self.settings.max_output_bytes,
            on_sandbox_error=sandbox_errors.append,
        )
        self._count_sandbox_failure(sandbox_errors[0] if sandbox_errors else None)
        return result

    async def _open_kernel(self, node_id: int) -> KernelSession:
        """A kernel kept across cells in the node's directory (an agentic node's); a cell may
        run at most what is left of the time budget."""
        try:
            session = await open_kernel_session(
                self.parts.sandbox,
                self._workspace(node_id),
                timeout_s=self._exec_timeout(),
                max_output_bytes=self.settings.max_output_bytes,
            )
        except SandboxError as exc:
            self._count_sandbox_failure(exc)
            raise
        self._count_sandbox_failure(None)
        return session

    def _workspace(self, node_id: int) -> Workspace:
        return Workspace(
            self.run_dir.node_dir(node_id),
            self.parts.task.public_dir,
            self.settings.keep_working,
            max_submission_bytes=self.parts.task.max_submission_bytes(),
            on_output=self._live_output(node_id),
        )

    def _exec_timeout(self) -> float:
        timeout = self.settings.exec_timeout_s
        if (left := self.time_left()) is not None:
            timeout = max(min(timeout, left), 1.0)
        return timeout

    def _live_output(self, node_id: int) -> Callable[[str], None]:
        """Writes the node's output so far to its ``output.txt`` while it executes, for the
        viewer and ``podium show``. A failed write (a full or read-only disk) never fails the
        node: the final output is written when the execution ends, with that write's own
        error handling, which reports the disk's problem; so the live one is only logged
        once, at INFO (``podium -v``), not warned about twice."""
        failed = False

        def write(text: str) -> None:
            nonlocal failed
            try:
                self.run_dir.write_live_output(node_id, text)
            except Exception as exc:  # a side channel: nothing of the node's depends on it
                if not failed:
                    log.info("node %d: its output so far was not written: %s", node_id, exc)
                failed = True

        return write

    def _count_sandbox_failure(self, exc: SandboxError | None) -> None:
        """A sandbox that cannot start kernels fails every node: after a few failures in a row
        the run stops, instead of spending its whole budget on them."""
        self.sandbox_failures = self.sandbox_failures + 1 if exc else 0
        if exc is not None and self.sandbox_failures >= MAX_SANDBOX_FAILURES:
            raise StopRun(f"the sandbox failed {self.sandbox_failures} times: {exc}") from exc


def submission_problem(task: Task, path: Path) -> str | None:
    """The task's format check on a handed-over submission (the check reads it through
    ``podium.untrusted``, capped)."""
    return task.check_submission(path)


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.~@+-]+)+[/\\]?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def failure_key(node: Node) -> str | None:
    """What makes two failed nodes the same failure: their exact code (hashed) and their bug
    reason with what differs from run to run for the same failure (paths, node ids and other
    numbers: times, sizes; memory addresses) masked. None for a node that did not fail."""
    if not node.is_buggy:
        return None
    reason = _ADDRESS.sub("0x?", node.bug_reason or "")
    reason = _NUMBER.sub("#", _PATH.sub("<path>", reason))
    return f"{hashlib.sha256(node.code.encode()).hexdigest()} {reason}"


def _finish_order(node: Node) -> tuple[str, int]:
    return (node.finished_at.isoformat() if node.finished_at else "", node.id)


def _applied(edit: str, parents: list[Node]) -> tuple[str, str | None]:
    """A proposal's edit applied to its first parent's code: the new code, or "" and why not."""
    if not parents:
        return "", f"{code_edit.REASON_PREFIX}a node without a parent has no code to edit"
    result = code_edit.apply_edits(parents[0].code, edit)
    if result.code is None:
        return "", result.reason
    if source_lines(result.code) == source_lines(parents[0].code):
        return "", f"{code_edit.REASON_PREFIX}it leaves node {parents[0].id}'s code as it was"
    return result.code, None


def _fatal_message(exc: ModelFatalError) -> str:
    return f"{exc} ({exc.hint})" if exc.hint else str(exc)


def _id(node: Node) -> int:
    return node.id


def _action_of(node: Node) -> Action:
    return Action(operator=node.operator, parent_ids=node.parent_ids, ref_ids=node.ref_ids)
