"""The contracts plugins implement: Task, Backend, Strategy, Sandbox, Benchmark, OperatorSet.

Each is a small abstract class; a plugin subclasses one and hands a factory to Podium through a
hook (see ``podium.plugins.hookspecs``). They live at the bottom of the package, beside the
records, so every room can use them without an import cycle.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from podium.errors import SandboxError
from podium.records import (
    Action,
    EnvironmentInfo,
    ExecResult,
    GradeReport,
    MemoryRecord,
    ModelRequest,
    ModelResponse,
    Node,
)
from podium.tree import SearchTree


class Task(ABC):
    """One competition as the agent sees it, plus the host-side checks the agent never reaches.

    ``public_dir`` holds what the solution may read (train, test, sample submission); private
    answers are never reachable from here.
    """

    id: str
    name: str
    description: str
    public_dir: Path
    lower_is_better: bool
    metric_name: str
    task_type: str = "unknown"  # e.g. tabular-classification
    complexity: str | None = None  # the benchmark's difficulty split (MLE-bench: low/medium/high)
    # The benchmark's rules for agents (MLE-bench's: own split, no hand-labelling, no copied
    # solutions, ...), worded for the solution's working directory; the code model's system
    # prompt ends with them (``podium.scaffolds.prompts.rules_section``). None: it sets none.
    rules: str | None = None

    @abstractmethod
    def check_submission(self, path: Path) -> str | None:
        """Would the benchmark grade this submission file? ``None`` when yes, else the reason.

        Never reveals a score: it may run the task's grader on public stand-ins, look at
        columns, ids and row count, but never at the private answers. Called from a worker
        thread; it may block.
        """

    def max_submission_bytes(self) -> int | None:
        """The largest submission ``check_submission`` could pass, or None where no bound is
        known: the hand-over copies nothing larger into the run dir (a refused file of a
        gigabyte per node would otherwise stay there)."""
        return None

    def warm_up(self) -> None:
        """Get ready what ``check_submission`` needs (a grader process), so that the first node
        does not wait for it. Called once per run (and per resume), from a worker thread,
        before the run dir is made; optional. Raises TaskError when the task can never be
        checked or graded here (its grader does not import): the run stops before it starts,
        with that line. What takes long (a grader's trial gradings) goes on in the
        background."""
        return  # nothing to prepare by default

    def grade(self, submission: Path, sandboxed: bool | None = None) -> GradeReport | None:
        """Grade on the private answers — host side, after the run, never during it.

        ``None`` means the task cannot be graded (it has no answers or leaderboard).
        """
        return None

    def grade_on(self, submission: Path, answers: Path) -> GradeReport | None:
        """Grade with the task's own grader on ``answers``, a file in the private answers'
        format holding other rows (a host-held holdout's labels). ``None``: the task cannot
        (the default); an invalid submission is a report with ``score`` None."""
        return None

    def train_rows(self) -> int | None:
        """Rows of the training table, for listings; None when not known."""
        return None

    def secret_paths(self) -> tuple[Path, ...]:
        """Host paths from which this task's answers can be derived (its private answers, the
        raw data its preparation reads, a holdout's labels): no kernel may read them, and the
        run tells the sandbox so (:meth:`Sandbox.hide`). A directory stands for all it holds;
        ``public_dir`` may lie inside one (it is bound on its own). Paths Podium knows whatever
        the task (its bundled tasks' raw data, the default data directories) need not be
        listed: ``podium.secret_paths`` owns them. The default: none."""
        return ()


@dataclass(frozen=True)
class HeldOutScore:
    """A node's predictions for the held-out rows, scored on the host; ``score`` is None when
    they could not be (``problem`` says why)."""

    score: float | None
    problem: str | None = None


class Holdout(ABC):
    """A host-held split of the task's public training data (``search.holdout``).

    The agent works on :attr:`task`: its training table lacks the held-out rows, whose features
    are mixed into its test table, so every submission predicts them too. The held-out labels
    stay on the host, where no sandbox binds them; the host scores each node's predictions of
    those rows with the task's own grader and chooses the final node on that score. No model
    and no strategy is ever told it: the loop keeps it beside the node, never in its record.
    """

    task: Task  # the task as the agent sees it

    @abstractmethod
    def separate(self, submission: Path, predictions: Path) -> str | None:
        """Move the held-out rows of ``submission`` (a host-made copy) into ``predictions``,
        leaving the task's own rows in ``submission``; the reason when they cannot be (the
        files are then left as they were)."""

    @abstractmethod
    def score(self, predictions: Path) -> HeldOutScore:
        """The task's grader on the held-out labels; never raises for a bad file."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What summary.json records of the split (share, rows, seed, digest)."""


class Benchmark(ABC):
    """A source of tasks, addressed as ``<benchmark name>/<task id>``."""

    name: str
    description: str = ""

    @abstractmethod
    def task_ids(self, split: str | None = None) -> list[str]:
        """Task ids in this benchmark (or in one of its splits)."""

    @abstractmethod
    def load_task(self, task_id: str, data_dir: Path | None, obfuscated: bool = False) -> Task:
        """Load one task with its data under ``data_dir`` (None: the benchmark's default).

        ``obfuscated`` asks for the task's rewritten description (MLE-bench's contamination
        check); a benchmark without one raises TaskError.
        """

    def summary(self, task_id: str, data_dir: Path | None) -> TaskSummary:
        """One listing row. The default loads the task; a benchmark whose tasks need data
        prepared by hand (MLE-bench) overrides it so that listing never needs the data."""
        task = self.load_task(task_id, data_dir)
        return TaskSummary(
            id=task.id,
            task_type=task.task_type,
            metric=task.metric_name,
            lower_is_better=task.lower_is_better,
            rows=task.train_rows(),
            teams=len(getattr(task, "leaderboard", []) or []) or None,
            complexity=task.complexity,
        )


@dataclass(frozen=True)
class TaskSummary:
    """What ``podium tasks`` shows of a task; None where it is not known without the data."""

    id: str
    task_type: str
    metric: str
    lower_is_better: bool | None
    rows: int | None
    teams: int | None
    complexity: str | None = None
    status: str = "ready"  # e.g. "not prepared", "leaderboard is a Git LFS pointer"


class Backend(ABC):
    """A chat model. One instance serves one model name (``provider/model``) for a whole run.

    Implementations translate :class:`ModelRequest` to their provider's wire format and back,
    report usage with its USD cost, and turn every failure into a
    :class:`podium.errors.ModelError` subclass: ``ModelTransientError`` (Podium retries it),
    ``ModelContextLengthError``, ``ModelFatalError``/``ModelAuthError`` (the run stops), or plain
    ``ModelError`` (this node fails). They make one attempt per ``complete``: retries, the
    per-provider concurrency cap, recording and the cost budget belong to Podium.
    """

    model: str

    @property
    def provider(self) -> str:
        """Calls to one provider share a concurrency cap; by default the model name's prefix."""
        return self.model.replace(":", "/").split("/", 1)[0]

    @abstractmethod
    async def complete(self, request: ModelRequest) -> ModelResponse: ...

    def max_cost_usd(self, request: ModelRequest) -> float | None:
        """The most this request could cost, checked against ``--cost`` before it is sent.

        ``None`` (the default) means unknown: a run with ``--cost`` then refuses this model,
        since the budget could not be enforced.
        """
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook, default no-op
        """Release connections; called once when the run ends."""


SUBMISSION_WRITTEN = "submission/submission.csv"  # where a solution writes, in its workspace
SUBMISSION = "submission.csv"  # where the sandbox hands it over, in ``Workspace.root``


@dataclass(frozen=True)
class Workspace:
    """Where one execution runs and what it leaves behind (the hand-over contract).

    The solution sees ``input/`` (``input_dir``, the public data, read-only), ``working/`` and
    ``submission/`` in its working directory. Once every process it started is dead, the
    sandbox leaves in ``root``: ``SUBMISSION``, a file the host created holding the bytes of the
    regular file the solution wrote at ``SUBMISSION_WRITTEN`` (absent when there was none or it
    was refused: ``ExecResult.submission_refused`` says why), and ``working/`` only with
    ``keep_working``: regular files and directories only, no setuid/setgid bit, at most
    64 levels deep (deeper: kept empty). Nothing else of the solution's files.

    ``on_output``, when given, is told the output so far while the solution runs, so that a
    long execution is not a black box (the loop rewrites ``nodes/<id>/output.txt`` with it).
    It is called with the whole output so far, capped (head and tail) and made inert exactly as
    ``ExecResult.output`` will be (``execute_solution`` masks secrets in it as in the result),
    from the event loop, whenever new output arrived: at once for the first, then at most
    about once a second, and within about a second of output followed by silence; and a last
    time, with ``ExecResult.output`` itself, when the execution ends (not when it is cancelled
    or the sandbox fails). It must be quick (it runs on the event loop) and may raise: the
    builtin sandboxes swallow its exceptions (logged once per execution), so it can never
    change the execution or its result. It lives here rather than in ``Sandbox.execute``'s
    signature so that a third-party sandbox written before it keeps working unchanged: such a
    sandbox simply never calls it, and the output reaches its readers when the execution
    ends, as before. It takes no part in comparing workspaces.
    """

    root: Path
    input_dir: Path
    keep_working: bool = False
    max_submission_bytes: int | None = None  # the task's bound (None: the sandbox's own cap)
    on_output: Callable[[str], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    max_output_bytes: int = 256 * 1024


class Sandbox(ABC):
    """Runs a solution in a fresh Jupyter kernel whose working directory is the workspace.

    ``isolated`` is False for a sandbox that protects nothing (the ``local`` one): runs made with
    it are stamped as not sandboxed.
    """

    name: str
    isolated: bool
    notice: str | None = None  # a warning the run should show (e.g. why ``auto`` fell back)

    def describe(self) -> str:
        """One line for the run log: the isolation and each limit with how it is enforced."""
        return self.name

    def isolation_gaps(self) -> list[str]:
        """Protections this sandbox gives elsewhere but cannot on this machine, one phrase
        each: a run prints them loudly and records them (``isolation_gaps``). Empty: none."""
        return []

    def hide(self, paths: Iterable[Path]) -> None:  # noqa: B027 - optional hook, default no-op
        """No kernel started from now on may read ``paths`` (``Task.secret_paths``), on top of
        what ``podium.secret_paths`` names. Called by the run before :meth:`warm_up`, and again
        with more; each call adds. A sandbox that binds host paths masks every one of them that
        lies under what it binds, and raises ``SandboxUnavailable`` (one line and a hint) when
        one cannot be masked. The default does nothing: without a mount namespace (``local``,
        ``container``) nothing can be masked, and such a sandbox is not ``isolated``."""

    async def warm_up(self, scratch: Path, input_dir: Path, kernels: int) -> None:  # noqa: B027
        """Pre-start ``kernels`` kernels for ``input_dir``, with slots under ``scratch``.

        Optional. ``scratch`` is on the same filesystem as the node directories, so outputs
        can be moved, not copied. Without it, each execution starts a kernel cold.
        """

    @abstractmethod
    async def environment(self) -> EnvironmentInfo:
        """The solutions' interpreter and the notable packages it can import."""

    @abstractmethod
    async def execute(self, code: str, workspace: Workspace, limits: Limits) -> ExecResult:
        """Run ``code`` in a fresh kernel; never raises for the solution's own failures.

        A sandbox that can tells ``workspace.on_output`` the output so far while it runs (see
        :class:`Workspace`); one that does not is still a complete sandbox."""

    async def open_session(self, workspace: Workspace, limits: Limits) -> KernelSession:
        """A fresh kernel in ``workspace`` kept across cells (an agentic node's), with the
        isolation and limits of :meth:`execute`; ``limits.timeout_s`` is the most one cell may
        take. Optional: a sandbox without it cannot run agentic nodes, and says so here."""
        raise SandboxError(
            f"the {self.name} sandbox cannot keep a kernel across cells, which agentic nodes "
            "need (the builtin sandboxes can; or use search.operators = 'llm')"
        )

    async def aclose(self) -> None:  # noqa: B027 - optional hook, default no-op
        """Stop anything still running (pre-started kernels, watchdogs)."""


class KernelSession(ABC):
    """One kernel kept alive across cells: what an agentic node works in.

    State persists between cells (a variable set in one is there in the next). Every cell's
    result is an :class:`ExecResult` as :meth:`Sandbox.execute` returns one (output capped,
    text inert); a cell that timed out or killed the kernel ends the session: ``alive`` is then
    False and further cells are refused. :meth:`close` kills the kernel and hands the workspace
    over exactly as the end of :meth:`Sandbox.execute` does (the submission copied by the host
    into ``Workspace.root``); it returns why the submission was refused, if it was.

    The limits hold between cells too (what a cell started runs on while no cell does): a
    kernel that passes one then is killed, ``alive`` turns False, the next cell does not run
    (its result says why) and ``stopped_between_cells`` keeps that result for a caller that
    asks for no further cell.
    """

    limits: Limits  # what :meth:`Sandbox.open_session` was given

    @property
    @abstractmethod
    def alive(self) -> bool:
        """False once a cell stopped the kernel (or the session was closed)."""

    @property
    def stopped_between_cells(self) -> ExecResult | None:
        """The kernel killed while no cell ran (a limit passed), as the result of the cell
        that could then not run; None while that did not happen."""
        return None

    @abstractmethod
    async def run_cell(self, code: str, timeout_s: float) -> ExecResult: ...

    @abstractmethod
    async def close(self) -> str | None: ...


class Strategy(ABC):
    """A search policy: picks the next action, learns from results, picks the final node.

    Contract with the loop:

    * ``next_action`` gets the tree (finished nodes plus ``tree.pending`` actions already handed
      out) and the run's one seeded RNG; all randomness must come from that RNG. Returning
      ``None`` means the strategy has nothing left to try, and the run stops.
    * ``observe`` is called once per finished node, in step order. On resume the loop
      replays ``observe`` over every finished node, so a strategy's state must be a function of
      the finished nodes it has observed: that is how state survives a crash.
    * ``final_node`` must choose by validation metric only (never by anything derived from the
      private answers).
    """

    name: str

    @abstractmethod
    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        """What to do next. None: nothing now; with nodes in flight the strategy is asked
        again as each finishes (it may wait for them), with none the run ends."""

    def observe(self, node: Node, tree: SearchTree) -> None:  # noqa: B027 - optional
        """Learn from a finished node (e.g. MCTS back-propagation)."""

    def final_node(self, tree: SearchTree) -> Node | None:
        """The node to submit; by default the best good node by validation metric."""
        return tree.best_node()


class Memory(Protocol):
    """What earlier attempts taught (``search`` with ``memory.retrieve`` > 0): this run's
    finished nodes the node may see and, under ``memory.dir``, earlier runs' records frozen as
    the run started (``podium.scaffolds.experience``). Deterministic: a resume or replay
    recalls the same."""

    def recall(self, query: str, exclude: Collection[int] = ()) -> list[MemoryRecord]:
        """The records most like ``query``, most similar first (at most ``memory.retrieve``);
        ``exclude``: this run's node ids not to recall (those a prompt already shows)."""
        ...


class ModelClient(Protocol):
    """How operators reach the model: the loop's wrapper records and accounts every call.

    ``role`` (``podium.records.Role``) picks the model that answers and the line the call and
    its cost are counted on: ``code`` for solutions, ``plan`` for a plan made apart from the
    code, ``review`` for a verdict, or an operator's own lower-case word (answered by the
    code model).
    """

    async def ask(self, request: ModelRequest, role: str) -> ModelResponse: ...


@dataclass(frozen=True)
class BudgetView:
    """What is left of the run, as the prompts may mention it."""

    steps_left: int
    time_left_s: float | None
    exec_timeout_s: float


@dataclass
class OperatorContext:
    """Everything an operator may use to propose one node."""

    task: Task
    action: Action
    parents: list[Node]
    tree: SearchTree
    environment: EnvironmentInfo
    budget: BudgetView
    model: ModelClient
    rng: random.Random = field(default_factory=random.Random)
    refs: list[Node] = field(default_factory=list)  # the action's references, finished nodes
    memory: Memory | None = None  # None: the run's memory is off (memory.retrieve = 0)

    def analyses(self) -> list[Node]:
        """The analyses whose findings this node acts on: those its action cites, else its
        first parent's, newest first (what a ``refine`` reads, whichever operator set)."""
        cited = [n for n in self.refs if n.kind == "analysis"]
        if cited or not self.parents:
            return cited
        return self.tree.analyses(self.parents[0].id)

    # A kernel in the node's own workspace, kept across cells, with the node's limits (an
    # agentic operator set works in it; one-shot operators never call it). The caller of the
    # operator closes nothing: the operator closes what it opened.
    open_kernel: Callable[[], Awaitable[KernelSession]] | None = None


@dataclass(frozen=True)
class Proposal:
    """An operator's output: a plan and the code to run (empty code makes the node buggy).

    An operator that ran its code itself, in ``OperatorContext.open_kernel``'s kernel, gives
    the node's result as ``executed`` (its submission is already in the node's directory, and
    the loop runs nothing more) and may give the record of what it ran as ``notebook`` (the
    text of a Jupyter notebook, saved beside ``solution.py``).

    An operator may give its code as an ``edit`` of its first parent's: SEARCH/REPLACE blocks
    (:mod:`podium.code_edit`; ``code`` is then ignored), which the loop applies, one rule for
    every operator set. The result is the node's code; an edit that does not apply, or leaves
    the code as it was, makes the node buggy with the reason (the block, the nearest lines),
    and nothing runs.

    A task the operator set can never do (a layout it does not read) is not a buggy node to
    debug, which the search would ask for again and again: the proposal says so with
    ``beyond``, what the user can do instead (a hint), and ``problem``, in one line what the
    set would need. The node is recorded buggy with that line and the run stops at once (stop
    reason ``beyond``, a non-zero exit).
    """

    plan: str
    code: str
    problem: str | None = None  # why the code is unusable, when the operator knows
    edit: str | None = None  # SEARCH/REPLACE blocks of the first parent's code, instead of code
    executed: ExecResult | None = None
    notebook: str | None = None
    beyond: str | None = None  # the task is beyond this operator set: what to do instead


class OperatorSet(ABC):
    """Implements draft / improve / debug (and optionally more) for some kind of model."""

    name: str
    operators: tuple[str, ...] = ("draft", "improve", "debug")
    # Those of ``operators`` whose nodes are analyses (``podium.records.NodeKind``): run and
    # summarised, never a submission. Their output's ``ABLATION <part>: <score>`` lines are
    # the convention for an ablation's results (``podium.exec_output.ablation_results``).
    analyses: tuple[str, ...] = ()

    @abstractmethod
    async def propose(self, ctx: OperatorContext) -> Proposal:
        """The node's code; for a task this set can never do, a proposal with ``beyond`` (see
        :class:`Proposal`), which stops the run. An exception fails the node alone."""


@dataclass(frozen=True)
class RunInfo:
    """What run-event hooks are told about the run."""

    run_dir: Path
    task_id: str
    model: str
    strategy: str
