"""One run dir → one typed :class:`Run` record: what a report needs, read once.

A run dir (see ``podium.formats.rundir``) holds ``summary.json`` (the outcome, read as a
:class:`~podium.scaffolds.RunSummary`), ``config.toml`` (the resolved config), ``grade.json``
once graded (MLE-bench's report plus ``leaderboard_percentile``), and, when a sweep ran it,
``curve.json`` (best-so-far percentile per step) and ``host.json`` (the machine); the names are
``podium.formats.run_files``'. Only ``summary.json`` is required; the others may be missing
(an ungraded task, a run made by ``podium run``), never corrupt: a file that exists but cannot
be parsed is a UserError naming it.

The journal (``journal.sqlite``) gives the run's search-tree fingerprint (:func:`tree_fingerprint`),
so a report can tell two runs that made exactly the same choices. It is the one file read
leniently: a journal that is missing, of another schema, or unreadable leaves the fingerprint
None ("not checked"), because the tree is a check on the numbers, not one of them.

Grades: ``grade.json`` wins over the ``grade`` section of ``summary.json`` (which holds fewer
fields). A run's grade counts only when the run finished: a failed, interrupted or still-running
run counts as no medal, invalid, percentile 0 (:meth:`Run.outcome`), as MLE-bench counts a run
without a result, so failures cannot flatter a strategy.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.errors import RunDirError, UserError
from podium.experiments.reports.files import read_object, read_optional_object, read_run_config
from podium.formats import Journal, RunDir, RunSummary, run_files
from podium.interfaces import SUBMISSION
from podium.records import GRADE_OUTCOMES, Node

MEDALS = ("gold", "silver", "bronze")
OUTCOMES = GRADE_OUTCOMES  # the boolean outcomes a report counts, as seed_summary does


@dataclass(frozen=True, order=True)
class Cell:
    """One cell of a sweep's grid: the run of ``strategy`` with ``model`` on ``task``, ``seed``."""

    strategy: str
    model: str
    task: str
    seed: int

    @property
    def label(self) -> str:
        return f"{self.task} / {self.strategy} / {self.model} / seed {self.seed}"


@dataclass(frozen=True)
class CurvePoint:
    """After ``step`` finished nodes (``elapsed_s`` into the run): the leaderboard percentile of
    the best node so far (by validation metric), 0 before any good node."""

    step: int
    elapsed_s: float
    percentile: float


@dataclass(frozen=True)
class Run:
    """A run dir as a report sees it. ``leaderboard_percentile`` is None when the grade did not
    record one (an invalid submission's is 0, see :meth:`percentile`)."""

    path: Path
    task: str
    competition_id: str
    complexity: str | None
    strategy: str
    model: str
    review_model: str | None
    plan_model: str | None
    seed: int
    status: str  # finished | failed | interrupted | running
    sandbox: str | None
    sandboxed: bool | None
    isolation_gaps: tuple[str, ...]  # what the sandbox lacked on the run's machine
    obfuscated_description: bool | None
    podium_version: str | None
    graded: bool
    score: float | None
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    valid_submission: bool
    above_median: bool
    submission_exists: bool
    leaderboard_percentile: float | None
    input_tokens: int
    output_tokens: int
    usd: float
    elapsed_s: float
    nodes: int
    buggy: int
    budget: dict[str, Any]
    config: dict[str, Any]
    host: dict[str, Any] | None
    curve: tuple[CurvePoint, ...] | None
    tree: str | None = None  # tree_fingerprint of its journal; None: no readable journal

    @property
    def cpu_share(self) -> float | None:
        """Cores the run had to itself, as its ``host.json`` recorded (``cpu_share``); None
        when it did not record one (a report may still derive it from the sweep's executor)."""
        value = (self.host or {}).get("cpu_share")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return None
        return float(value)

    @property
    def cell(self) -> Cell:
        return Cell(self.strategy, self.model, self.task, self.seed)

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def medal(self) -> str | None:
        return next((m for m in MEDALS if getattr(self, f"{m}_medal")), None)

    def outcome(self, field: str) -> bool:
        """One of :data:`OUTCOMES`, counted only for a finished run."""
        if field not in OUTCOMES:
            raise ValueError(f"unknown outcome {field!r}")
        return self.finished and bool(getattr(self, field))

    def percentile(self) -> float:
        """The leaderboard percentile a report counts: 0 unless the run finished with a valid
        submission (and 0 when its grade recorded none; :func:`load_run`'s caller notes it)."""
        if not self.outcome("valid_submission"):
            return 0.0
        return self.leaderboard_percentile or 0.0


def is_run_summary(data: Mapping[str, Any]) -> bool:
    """A run's summary.json, not another summary.json (a report's own has ``format``)."""
    return "format" not in data and "status" in data


def load_run(path: Path, summary: Mapping[str, Any] | None = None) -> Run:
    """Read the run dir ``path`` (``summary`` when the caller already read summary.json).

    Raises UserError naming the file for an unreadable or malformed file (a summary.json field
    of the wrong type included: a report does not count a run it cannot read).
    """
    rd = RunDir(path)
    data = summary if summary is not None else read_object(rd.summary)
    try:
        record = RunSummary.parse(data)
        grade = {
            **(record.grade.to_dict() if record.grade else {}),
            **(read_optional_object(rd.grade) or {}),
        }
        return _record(rd, record, grade)
    except (TypeError, ValueError, AttributeError) as exc:
        raise UserError(
            f"{rd.summary} is not a Podium run summary ({exc})",
            hint="a run dir's summary.json is written by podium run",
        ) from None


def _record(rd: RunDir, summary: RunSummary, grade: dict[str, Any]) -> Run:
    usage = summary.usage
    medal = grade.get("medal")
    return Run(
        path=rd.root,
        task=_required(summary.task, "task"),
        competition_id=summary.competition_id or _required(summary.task, "task"),
        complexity=summary.complexity,
        strategy=_required(summary.strategy, "strategy"),
        model=_required(summary.model, "model"),
        review_model=summary.review_model,
        plan_model=summary.plan_model,
        seed=summary.seed or 0,
        status=summary.status or "running",
        sandbox=summary.sandbox,
        sandboxed=_sandboxed(summary, grade),
        isolation_gaps=tuple(summary.isolation_gaps or ()),
        obfuscated_description=summary.obfuscated_description,
        podium_version=summary.versions.podium if summary.versions else None,
        graded=bool(grade),
        score=_optional_float(grade.get("score")),
        any_medal=bool(grade.get("any_medal", medal is not None)),
        gold_medal=bool(grade.get("gold_medal", medal == "gold")),
        silver_medal=bool(grade.get("silver_medal", medal == "silver")),
        bronze_medal=bool(grade.get("bronze_medal", medal == "bronze")),
        valid_submission=bool(grade.get("valid_submission", False)),
        above_median=bool(grade.get("above_median", False)),
        submission_exists=_submission_exists(rd, grade),
        leaderboard_percentile=_optional_float(grade.get("leaderboard_percentile")),
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        usd=usage.cost_usd if usage else 0.0,
        elapsed_s=summary.elapsed_s or 0.0,
        nodes=summary.steps or 0,
        buggy=summary.buggy_nodes or 0,
        budget=dict(summary.budget or {}),
        config=read_run_config(rd.config),
        host=read_optional_object(rd.root / run_files.HOST),
        curve=_curve(rd.root / run_files.CURVE),
        tree=read_tree_fingerprint(rd),
    )


def _required(value: str | None, key: str) -> str:
    if value is None or value == "":
        raise ValueError(f"no {key!r}")
    return value


def _optional_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _sandboxed(summary: RunSummary, grade: dict[str, Any]) -> bool | None:
    """The run's isolation; a grade that says its code ran unsandboxed overrides a summary."""
    value = summary.sandboxed
    if grade.get("sandboxed") is False:
        return False
    return _optional_bool(value if value is not None else grade.get("sandboxed"))


def _submission_exists(rd: RunDir, grade: dict[str, Any]) -> bool:
    if "submission_exists" in grade:
        return bool(grade["submission_exists"])
    return bool(grade.get("valid_submission")) or (rd.best / SUBMISSION).is_file()


def _curve(path: Path) -> tuple[CurvePoint, ...] | None:
    data = read_optional_object(path)
    if data is None:
        return None
    try:
        points = [
            CurvePoint(
                step=int(p["step"]),
                elapsed_s=float(p.get("elapsed_s") or 0.0),
                percentile=float(p.get("percentile") or 0.0),
            )
            for p in data.get("points") or []
        ]
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise UserError(
            f"{path} is not a curve file ({type(exc).__name__}: {exc})",
            hint="curve.json holds {'points': [{'step', 'elapsed_s', 'percentile'}, ...]}",
        ) from None
    return tuple(sorted(points, key=lambda p: p.step))


def tree_fingerprint(nodes: Iterable[Node]) -> str:
    """A SHA-256 digest of a search tree: per node, in the order given (the journal's node
    order), its code, parent ids, operator and validation metric value (None without one).

    Two runs with the same fingerprint proposed the same code in the same places of the same
    tree and measured the same metrics: they made the same choices. Plans, outputs, timings and
    usage are left out: they differ between identical trees (wall time, the model's wording).
    """
    digest = hashlib.sha256()
    for node in nodes:
        metric = node.metric.value if node.metric is not None else None
        record = [node.code, list(node.parent_ids), node.operator, metric]
        digest.update(json.dumps(record, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def read_tree_fingerprint(rd: RunDir) -> str | None:
    """The :func:`tree_fingerprint` of the run's journal (all its nodes, in id order); None
    when there is no journal or it cannot be read (see the module doc)."""
    if not rd.journal.is_file():
        return None
    try:
        journal = Journal.open(rd.journal)
    except (RunDirError, sqlite3.Error):
        return None
    try:
        return tree_fingerprint(journal.nodes())
    except (sqlite3.Error, ValueError):  # a damaged row, a record this Podium cannot parse
        return None
    finally:
        journal.close()
