"""The run (:func:`write_synthetic_run`): the loop's state (an :class:`IndexedTree`, the
builtin strategy, the run's one ``random.Random(seed)``), driven as the loop drives it under
its reproducible schedule, on a simulated clock: nodes take minutes, a run hours to days.
Written as a run writes it, through ``Journal`` and ``RunDir``: each node begun when it is
decided (with the RNG before and after), its code call, and, when its execution and review
are over, its review call and the finished record, in the order of the clock; the last
``running`` nodes left executing (their output so far in ``output.txt``); then ``best/``
(``strategy.final_node``, published by ``RunDir``) and ``summary.json`` (``build_summary``'s
record). Node files are written without the fsync ``RunDir.write_text`` does (what is written
is the same; the flush would cost seconds for thousands of files).
"""

from __future__ import annotations

import bisect
import heapq
import math
import operator
import random
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import tomli_w

from podium.formats import Journal, RunDir, run_files
from podium.interfaces import Strategy
from podium.records import (
    Action,
    Metric,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Node,
    NodeState,
    RequestMeta,
    Timings,
    ToolCall,
    Usage,
)
from podium.scaffolds import build_summary
from podium.scaffolds.review import REVIEW_TOOL
from podium.scaffolds.spending import Spending
from podium.scaffolds.strategies import MCTS, Evolutionary, Greedy, RandomSearch
from podium.scaffolds.strategies.evolutionary import EvolutionaryParams
from podium.scaffolds.strategies.greedy import GreedyParams
from podium.scaffolds.strategies.mcts import MCTSParams
from podium.tree import SearchTree
from tests.viewer.synthetic.calls import (
    BUG_PLANS,
    MEMORY_CHARS,
    MEMORY_NODES,
    MODEL,
    PRICES,
    REVIEW_MODEL,
    Seen,
    answered,
    code_request,
    review_request,
)
from tests.viewer.synthetic.changes import (
    Proposal,
    break_program,
    crossover,
    debug,
    draft,
    improve,
    metric_value,
)
from tests.viewer.synthetic.executions import execute
from tests.viewer.synthetic.output import printed_by
from tests.viewer.synthetic.programs import Code, render
from tests.viewer.synthetic.task import (
    DATA_PREVIEW,
    EXEC_TIMEOUT_S,
    TASK_ID,
    TEST_ROWS,
    TaskText,
    task_text,
)
from tests.viewer.synthetic.written import SyntheticRun

if TYPE_CHECKING:
    from podium.scaffolds.loop import Search

START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
STRATEGIES: dict[str, Callable[[Mapping[str, Any]], Strategy]] = {
    "greedy": lambda p: Greedy(GreedyParams(**p)),
    "mcts": lambda p: MCTS(MCTSParams(**p)),
    "evolutionary": lambda p: Evolutionary(EvolutionaryParams(**p)),
    "random": lambda p: RandomSearch(),
}


class IndexedTree(SearchTree):
    """The loop's ``SearchTree``, keeping its lists of good, buggy and draft nodes as nodes
    are added instead of filtering every node at each call: the same lists in the same order,
    so a strategy decides exactly as on the plain tree, but a 2,000-node run is not quadratic
    in them (strategies ask for them at every decision)."""

    def __init__(self, lower_is_better: bool) -> None:
        super().__init__(lower_is_better)
        self._good: list[Node] = []
        self._buggy: list[Node] = []
        self._drafts: list[Node] = []

    def add(self, node: Node) -> None:
        assert node.id not in self, "a node is added once"
        super().add(node)
        if node.is_good:
            self._good.append(node)
        if node.is_buggy:
            self._buggy.append(node)
        if not node.parent_ids:
            self._drafts.append(node)

    def good_nodes(self) -> list[Node]:
        return list(self._good)

    def buggy_nodes(self) -> list[Node]:
        return list(self._buggy)

    def drafts(self) -> list[Node]:
        return list(self._drafts)


@dataclass
class Made:
    """A node as the run left it, and the proposal it came from (its children's start)."""

    node: Node
    proposal: Proposal


@dataclass(order=True)
class _Review:
    """A node whose review starts at ``at`` (seconds into the run): its review call (numbered
    then, as ``CallRecorder`` numbers calls) and its finished record are written once the
    run's clock passes it."""

    at: float
    node_id: int
    request: ModelRequest = field(compare=False)
    response: ModelResponse = field(compare=False)
    attempts: int = field(compare=False)
    node: Node = field(compare=False)


@dataclass(frozen=True)
class _Spec:
    nodes: int
    strategy: str
    seed: int
    running: int
    lower_is_better: bool
    workers: int
    params: Mapping[str, Any]
    bug_rate: float


BUG_SHARE = {"draft": 1.2, "improve": 1.0, "crossover": 1.2, "debug": 1.6}  # x bug_rate


class _Run:
    """One synthetic run being written: the loop's state (the tree, the strategy, the RNG),
    the simulated clock, and the writes that are due."""

    def __init__(self, root: Path, spec: _Spec) -> None:
        self.spec, self.task = spec, task_text(spec.lower_is_better)
        self.rd = RunDir(root)
        root.mkdir(parents=True)
        self.rd.write_config(_config_toml(spec))
        meta = {"podium_version": "synthetic", "task_id": TASK_ID, "created_at": START.isoformat()}
        self.journal = Journal.create(self.rd.journal, meta)
        self.strategy = STRATEGIES[spec.strategy](spec.params)
        self.tree = IndexedTree(spec.lower_is_better)
        self.ranked: list[tuple[float, int]] = []  # admitted good nodes, best first
        self.top: tuple[int, ...] = ()  # the best of them, in self.best
        self.best = SearchTree(spec.lower_is_better)
        self.rng = random.Random(spec.seed)
        self.made: dict[int, Made] = {}
        self.admitted = 0  # nodes 1 .. admitted are in the tree
        self.due: list[_Review] = []  # a heap
        self.finish_at: dict[int, float] = {}
        self.worker_of: dict[int, int] = {}
        self.decided_at = 0.0
        self.done_by = [0.0]  # done_by[k]: when nodes 1 .. k had all finished
        self.seq = {"code": 0, "review": 0}
        self.spending = Spending(None)
        self.elapsed = 0.0
        self.writer = ThreadPoolExecutor(max_workers=1)  # one thread: each node's files in order
        self.writes: list[Future[None]] = []

    # --- the loop ---------------------------------------------------------------------------

    def grow(self) -> None:
        """Decide and write every node; then, for a finished run, admit the rest (as the loop
        does when it ends)."""
        for node_id in range(1, self.spec.nodes + 1):
            action, before, after = self._decide(node_id)
            if action is None:
                break
            self._write_node(node_id, action, before, after)
        while self.due:
            self._write_review(heapq.heappop(self.due))
        if not self.spec.running:
            self._admit_through(len(self.made))

    def _decide(self, node_id: int) -> tuple[Action | None, Any, Any]:
        """The strategy's action on nodes 1 .. id - workers, the rest pending (the loop's
        reproducible schedule), from the run's RNG: its state before and after."""
        w = self.spec.workers
        self._admit_through(node_id - w)
        pending = range(max(node_id - w + 1, 1), node_id)
        self.tree.pending = [_action(self.made[i].node) for i in pending]
        before = self.rng.getstate()
        action = self.strategy.next_action(self.tree, self.rng)
        return action, before, self.rng.getstate()

    def _admit_through(self, last: int) -> None:
        while self.admitted < last:
            self.admitted += 1
            node = self.made[self.admitted].node
            self.tree.add(node)
            self.strategy.observe(node, self.tree)
            if node.is_good and node.metric is not None:
                bisect.insort(self.ranked, (-self.tree.direction.score(node.metric.value), node.id))

    def _seen(self) -> Seen:
        top = tuple(node_id for _, node_id in self.ranked[:MEMORY_NODES])
        if top != self.top:  # the best nodes change less and less often as the run goes on
            self.top, self.best = top, SearchTree(self.spec.lower_is_better)
            for node_id in top:
                self.best.add(self.made[node_id].node)
        return Seen(self.tree, self.best)

    # --- one node ---------------------------------------------------------------------------

    def _write_node(self, node_id: int, action: Action, before: Any, after: Any) -> None:
        """Decided now: journaled with the RNG, its code asked for, then left running or run."""
        rng = random.Random(f"{self.spec.seed}:{node_id}")
        start, worker = self._start(node_id)
        while self.due and self.due[0].at <= start:
            self._write_review(heapq.heappop(self.due))
        proposal = self._propose(action, rng)
        code = render(proposal.program, self.task)
        node = Node(
            id=node_id,
            parent_ids=action.parent_ids,
            operator=action.operator,
            worker=worker,
            created_at=START + timedelta(seconds=start),
        )
        self.journal.begin(node, before, after, self._tick(start))
        call = self._code_call(node_id, action, proposal, code, start, rng)
        self.journal.record_call(call)
        self._spend(call)
        assert call.response is not None
        node = node.model_copy(
            update={
                "plan": proposal.plan,
                "code": code.text,
                "state": NodeState.EXECUTING,
                "timings": Timings(model_s=call.response.latency_s),
            }
        )
        self._write_file(node_id, run_files.SOLUTION, code.text)
        ready = start + 0.03 + call.response.latency_s
        if node_id > self.spec.nodes - self.spec.running:
            self._leave_running(node, proposal, code, ready, rng)
        else:
            self._execute(node, proposal, code, (start, ready), call.response.usage, rng)

    def _start(self, node_id: int) -> tuple[float, int]:
        """When the node is decided (once nodes 1 .. id - workers are done, and not before the
        decision before it) and the lowest worker free then."""
        w = self.spec.workers
        start = max(self.decided_at, self.done_by[max(node_id - w, 0)])
        self.decided_at = start
        busy = {
            self.worker_of[i]
            for i in range(max(node_id - w + 1, 1), node_id)
            if self.finish_at[i] > start
        }
        worker = min(set(range(w)) - busy)
        self.worker_of[node_id] = worker
        return start, worker

    def _propose(self, action: Action, rng: random.Random) -> Proposal:
        """The operator's solution, made buggy with the operator's share of ``bug_rate``."""
        parents = [self.made[p] for p in action.parent_ids]
        if action.operator == "draft":
            proposal = draft(rng, self.task)
        elif action.operator == "improve":
            proposal = improve(parents[0].proposal, rng, self.task)
        elif action.operator == "crossover":
            proposal = crossover(parents[0].proposal, parents[1].proposal, rng, self.task)
        else:
            proposal = debug(parents[0].proposal, parents[0].node.bug_reason or "", rng)
        if rng.random() < self.spec.bug_rate * BUG_SHARE.get(action.operator, 1.0):
            fixed = parents[0].proposal.program.bug if action.operator == "debug" else None
            program = break_program(proposal.program, rng, fixed.kind if fixed else None)
            assert program.bug is not None
            extra = BUG_PLANS[program.bug.kind](program) if program.bug.kind in BUG_PLANS else ""
            proposal = replace(proposal, program=program, plan=proposal.plan + extra)
        return proposal

    def _code_call(
        self,
        node_id: int,
        action: Action,
        proposal: Proposal,
        code: Code,
        start: float,
        rng: random.Random,
    ) -> ModelCall:
        seq = self.seq["code"]
        self.seq["code"] += 1
        meta = RequestMeta(node_id=node_id, role="code", seq=seq)
        parents = [self.made[p].node for p in action.parent_ids]
        steps_left = self.spec.nodes - node_id + 1
        request = code_request(action, parents, self._seen(), self.task, steps_left, meta)
        answer = f"{proposal.plan}\n\n```python\n{code.text}```\n"
        response, attempts = answered(request, MODEL, rng, answer)
        return _call(request, response, start + 0.01, attempts)

    def _execute(
        self,
        node: Node,
        proposal: Proposal,
        code: Code,
        times: tuple[float, float],
        usage: Usage,
        rng: random.Random,
    ) -> None:
        """Run it and review it; its files now, its review and finished record when due."""
        start, ready = times
        run = execute(proposal, code, rng, self.task)
        result = run.result
        review_at = ready + 0.02 + result.kernel_start_s + result.duration_s
        verdict = {
            "is_bug": run.bug_reason is not None,
            "summary": run.summary,
            "metric": run.metric,
        }
        request = review_request(code.text, result.output, self.task)
        tool = ToolCall(name=REVIEW_TOOL.name, arguments=verdict)
        response, attempts = answered(request, REVIEW_MODEL, rng, tool_call=tool)
        finish = review_at + response.latency_s + rng.uniform(0.005, 0.05)
        self._finished(node.id, finish)
        timings = Timings(
            model_s=node.timings.model_s,
            kernel_start_s=result.kernel_start_s,
            exec_s=result.duration_s,
            review_model_s=response.latency_s,
            total_s=round(finish - start, 3),
        )
        admitted = not self.spec.running or node.id <= self.spec.nodes - self.spec.workers
        done = node.model_copy(
            update={
                "state": NodeState.DONE,
                "step": node.id if admitted else None,
                "exec": result,
                "metric": None
                if run.metric is None
                else Metric(value=run.metric, lower_is_better=self.task.lower_is_better),
                "is_buggy": run.bug_reason is not None,
                "bug_reason": run.bug_reason,
                "summary": run.summary,
                "has_submission": run.has_submission,
                "usage": usage + response.usage,
                "timings": timings,
                "finished_at": START + timedelta(seconds=finish),
            }
        )
        self.made[node.id] = Made(done, proposal)
        self._write_file(node.id, run_files.OUTPUT, result.output)
        if run.has_submission:
            self._write_file(node.id, run_files.NODE_SUBMISSION, _submission_csv(rng, self.task))
        heapq.heappush(self.due, _Review(review_at, node.id, request, response, attempts, done))

    def _leave_running(
        self, node: Node, proposal: Proposal, code: Code, ready: float, rng: random.Random
    ) -> None:
        """A node still executing when the run was read: its record says so, and its output
        so far is in output.txt (the loop rewrites it while the solution runs)."""
        value = metric_value(proposal.quality, self.task)
        printed = printed_by(proposal.program, code, value, rng, self.task)
        share = rng.uniform(0.1, 0.9)
        lines = printed.text.splitlines(keepends=True)
        self.made[node.id] = Made(node, proposal)
        self._finished(node.id, math.inf)
        self.journal.update(node, self._tick(ready))
        so_far = "".join(lines[: int(len(lines) * share)])
        self.writes.append(
            self.writer.submit(self.rd.write_text, node.id, run_files.OUTPUT, so_far)
        )
        self.elapsed = max(self.elapsed, ready + share * printed.seconds)

    def _finished(self, node_id: int, at: float) -> None:
        self.finish_at[node_id] = at
        self.done_by.append(max(self.done_by[-1], at))

    def _write_review(self, due: _Review) -> None:
        seq = self.seq["review"]
        self.seq["review"] += 1
        meta = RequestMeta(node_id=due.node_id, role="review", seq=seq)
        request = due.request.model_copy(update={"meta": meta})
        call = _call(request, due.response, due.at, due.attempts)
        self.journal.record_call(call)
        self._spend(call)
        self.journal.update(due.node, self._tick(self.finish_at[due.node_id]))

    def _spend(self, call: ModelCall) -> None:
        assert call.response is not None
        self.spending.add(call.role, call.model, call.response.usage)

    def _tick(self, at: float) -> float:
        """The journal's running time, never going back (writes come in the clock's order)."""
        self.elapsed = max(self.elapsed, at)
        return round(self.elapsed, 3)

    def _write_file(self, node_id: int, name: str, text: str) -> None:
        """A node file where RunDir puts it, without its fsync (see the module's docstring),
        by the writer thread: the file system's time overlaps the generation's."""
        self.writes.append(self.writer.submit(_write_node_file, self.rd, node_id, name, text))

    def _files_written(self) -> None:
        """Wait for the writer thread; a write that failed fails the run here."""
        self.writer.shutdown(wait=True)
        for write in self.writes:
            write.result()

    # --- the end ----------------------------------------------------------------------------

    def finish(self, started: float) -> SyntheticRun:
        """``best/`` and ``summary.json`` as the run leaves them; what was written."""
        final = self.strategy.final_node(self.tree)
        self._files_written()
        self.rd.publish_best(final)
        live = self.spec.running > 0
        view = _SearchView(self, None if live else final)
        record = build_summary(cast("Search", view), None if live else "steps", _info(self.spec))
        updated = START + timedelta(seconds=self.elapsed)
        self.rd.write_summary(record.model_copy(update={"updated_at": updated.isoformat()}))
        self.journal.close()
        return self._report(final, updated, time.perf_counter() - started)

    def _report(self, final: Node | None, updated: datetime, seconds: float) -> SyntheticRun:
        nodes = [m.node for m in self.made.values()]
        return SyntheticRun(
            root=self.rd.root,
            strategy=self.spec.strategy,
            seed=self.spec.seed,
            workers=self.spec.workers,
            lower_is_better=self.spec.lower_is_better,
            node_count=len(nodes),
            steps=len(self.tree),
            best=final.id if final else None,
            best_metric=final.metric.value if final and final.metric else None,
            best_path=_ancestors(self.made, final.id) if final else frozenset(),
            operators={n.id: n.operator for n in nodes},
            parents={n.id: n.parent_ids for n in nodes},
            metrics={n.id: n.metric.value for n in nodes if n.metric is not None},
            good=frozenset(n.id for n in nodes if n.is_good),
            buggy={n.id: n.bug_reason or "" for n in nodes if n.is_buggy},
            tracebacks=frozenset(n.id for n in nodes if n.exec and n.exec.traceback),
            crossovers={
                n.id: (n.parent_ids[0], n.parent_ids[1]) for n in nodes if n.operator == "crossover"
            },
            running=tuple(n.id for n in nodes if n.state is NodeState.EXECUTING),
            waiting=tuple(n.id for n in nodes if n.state is NodeState.DONE and n.step is None),
            task_description=self.task.description,
            data_preview=DATA_PREVIEW,
            started_at=START,
            updated_at=updated,
            elapsed_s=round(self.elapsed, 3),
            seconds=seconds,
        )


@dataclass
class _SearchView:
    """What ``build_summary`` reads of a ``Search``, answered by the synthetic run."""

    run: _Run
    final: Node | None
    reruns: list[Any] = field(default_factory=list)
    error: str | None = None
    stop_detail: str | None = None

    @property
    def tree(self) -> SearchTree:
        return self.run.tree

    @property
    def parts(self) -> _SearchView:
        return self  # build_summary asks for parts.strategy

    @property
    def strategy(self) -> Strategy:
        return self.run.strategy

    @property
    def holdout(self) -> None:
        return None  # no host-held split: the final node is the strategy's

    def final_node(self) -> Node | None:
        return self.run.strategy.final_node(self.run.tree)

    @property
    def spending(self) -> Spending:
        return self.run.spending

    @property
    def journal(self) -> Journal:
        return self.run.journal

    def elapsed(self) -> float:
        return self.run.elapsed


def _info(spec: _Spec) -> dict[str, Any]:
    """summary.json's first fields, as ``api.runs`` fills them."""
    return {
        "task": TASK_ID,
        "competition_id": "passengers",
        "task_type": "tabular-classification",
        "complexity": "low",
        "obfuscated_description": False,
        "model": MODEL,
        "review_model": REVIEW_MODEL,
        "strategy": spec.strategy,
        "sandbox": "bwrap",
        "sandbox_detail": "bubblewrap 0.11.0, seccomp filter, cgroup v2 limits",
        "sandboxed": True,
        "isolation_gaps": [],
        "seed": spec.seed,
        "workers": spec.workers,
        "schedule": "reproducible",
        "budget": {"steps": spec.nodes, "time": None, "cost": None},
    }


def _config_toml(spec: _Spec) -> str:
    """The resolved config.toml, in ``RunConfig.to_toml``'s layout (the keys that matter here;
    building a RunConfig would import ``podium.api``, a second)."""
    return tomli_w.dumps(
        {
            "task": TASK_ID,
            "seed": spec.seed,
            "workers": spec.workers,
            "schedule": "reproducible",
            "model": {
                "name": MODEL,
                "review": REVIEW_MODEL,
                "prices": {m: {"input": p[0], "output": p[1]} for m, p in PRICES.items()},
            },
            "search": {
                "strategy": spec.strategy,
                "operators": "llm",
                "memory_chars": MEMORY_CHARS,
                "final_top_k": 1,
                **spec.params,
            },
            "budget": {"steps": spec.nodes},
            "exec": {"timeout": EXEC_TIMEOUT_S, "max_output_bytes": 65536},
            "sandbox": {"name": "bwrap", "memory": "8G"},
        }
    )


def _call(request: ModelRequest, response: ModelResponse, at: float, attempts: int) -> ModelCall:
    """The call as ``CallRecorder`` journals it, started ``at`` seconds into the run."""
    meta = request.meta
    return ModelCall(
        node_id=meta.node_id,
        role=meta.role,
        seq=meta.seq,
        request=request,
        response=response,
        model=response.model,
        attempts=attempts,
        started_at=START + timedelta(seconds=at),
    )


def _write_node_file(rd: RunDir, node_id: int, name: str, text: str) -> None:
    path = rd.node_file(node_id, name)
    if name == run_files.SOLUTION:  # the node's first file
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _ancestors(made: Mapping[int, Made], node_id: int) -> frozenset[int]:
    seen: set[int] = set()
    todo = [node_id]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(made[current].node.parent_ids)
    return frozenset(seen)


def _action(node: Node) -> Action:
    return Action(operator=node.operator, parent_ids=node.parent_ids)


_ROWS = [f"\n{10000 + i}," for i in range(TEST_ROWS)]
_PROBABILITIES = [f"{i / 1000:.3f}" for i in range(1, 1000)]


def _submission_csv(rng: random.Random, task: TaskText) -> str:
    """A submission.csv of the test set's shape (its values are noise)."""
    if task.lower_is_better:
        values: Any = rng.choices(_PROBABILITIES, k=TEST_ROWS)
    else:
        values = format(rng.getrandbits(TEST_ROWS), f"0{TEST_ROWS}b")
    return "PassengerId,Survived" + "".join(map(operator.add, _ROWS, values)) + "\n"


def write_synthetic_run(
    root: Path,
    nodes: int,
    *,
    strategy: str = "mcts",
    seed: int = 0,
    running: int = 0,
    lower_is_better: bool = False,
    workers: int = 4,
    params: Mapping[str, Any] | None = None,
    bug_rate: float = 0.25,
) -> SyntheticRun:
    """Write a run of ``nodes`` nodes into ``root`` (which must not exist); say what it holds.

    ``strategy``: greedy, mcts, evolutionary or random, with ``params`` (its ``search.*``
    keys, e.g. ``{"num_drafts": 5}``). ``workers``: nodes in flight (the schedule and the
    workers recorded follow it). ``running``: how many of the last nodes are still executing
    (at most ``workers``): the run is then caught live, its summary says running, and the
    finished nodes the reproducible schedule has not admitted yet have no step (``waiting``).
    The viewer shows them as running only while a process holds the run's lock
    (``RunDir(root).lock()``), else as interrupted. ``bug_rate``: an improve's chance to be
    buggy (a draft's and a crossover's are 1.2 times it, a debug's 1.6 times). The same
    arguments write the same run.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    if nodes < 1 or workers < 1 or not 0 <= running <= min(workers, nodes):
        raise ValueError("need nodes >= 1, workers >= 1 and 0 <= running <= min(workers, nodes)")
    started = time.perf_counter()
    spec = _Spec(
        nodes, strategy, seed, running, lower_is_better, workers, dict(params or {}), bug_rate
    )
    run = _Run(root, spec)
    run.grow()
    return run.finish(started)
