"""A run directory's file names, and the one way to read its JSON and TOML files back.

:class:`~podium.formats.rundir.RunDir` writes a run dir (its docstring draws the layout); every
program that reads one (the viewer, ``podium show``, a report, a sweep's bookkeeping, the
MLE-bench export, ``podium rerun``) takes the names from here, so a file is named in one place,
and reads through :func:`read_json` / :func:`read_toml`, so a missing file, a damaged one and
one that holds the wrong kind of value are told apart the same way everywhere. What a problem
means is the reader's choice: a report stops with one line naming the file
(:class:`RunFileError`); a viewer of a run that is being written shows what it can
(``damaged_ok``).

``summary.json`` is read as a :class:`RunSummary`, the typed record of what
``podium.scaffolds.build_summary`` writes. Its fields are the contract with the readers,
MLE-bench's harness scripts under ``agents/`` included; keys it does not know (an older or
newer Podium's, a plugin's) are kept, so a record read and written again loses nothing.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, ValidationError

from podium.errors import UserError
from podium.interfaces import SUBMISSION
from podium.untrusted import Refused, read_untrusted

# --- the names ---------------------------------------------------------------------------------

CONFIG = "config.toml"  # the resolved config (a resume rewrites it with the budgets it raised)
JOURNAL = "journal.sqlite"  # every node and model call; SQLite keeps -wal and -shm beside it
JOURNAL_WAL = f"{JOURNAL}-wal"  # a commit changes it: what a watcher of a live run looks at
SUMMARY = "summary.json"  # the run's outcome: a RunSummary, refreshed after every node
GRADE = "grade.json"  # the final submission graded (a GradeReport), once graded
NODES = "nodes"  # nodes/<id>/: one directory per node
BEST = "best"  # best/: the final node's files, replaced whole when the choice changes
LOCK = ".lock"  # held (flock) by the one process writing the run dir
SANDBOX_SCRATCH = ".sandbox"  # the sandbox's kernel slots, on the node directories' filesystem
CURVE = "curve.json"  # a sweep's run only: best-so-far leaderboard percentile per step
HOST = "host.json"  # a sweep's run only: the machine it ran on
HOLDOUT = "holdout"  # search.holdout only: the host-held split (public/, answers/, split.json)
SELECTION = "selection.json"  # every good node graded after the run: selection regret
MEMORY_COPY = "memory.jsonl"  # memory.dir: what the run read from it as it started (frozen)

# In nodes/<id>/ (and best/, which holds a copy of the final node's):
SOLUTION = "solution.py"  # the node's code
OUTPUT = "output.txt"  # what it printed (cut to the configured size)
NOTEBOOK = "notebook.ipynb"  # an agentic node's cells, outputs and the model's words
NODE_SUBMISSION = SUBMISSION  # submission.csv, when it wrote one
NODE_INFO = "node.json"  # best/ only: which node it is, its operator, step and metric
FRESH_RUN = "fresh"  # nodes/<id>/fresh/: an agentic node's solution.py run on a fresh kernel
FINAL_RERUN = "rerun"  # nodes/<id>/rerun/: the final choice's second run of a top-k node
RERUNS = "reruns"  # nodes/<id>/reruns/<n>/: what ``podium rerun`` ran, with RERUN_REPORT
RERUN_REPORT = "rerun.json"
HELD_OUT = "holdout.json"  # search.holdout: the node's score on the held-out labels
HELD_OUT_PREDICTIONS = "holdout_predictions.csv"  # its rows for them, taken out

# --- reading -----------------------------------------------------------------------------------

Problem = Literal["missing", "unreadable", "not-text", "invalid", "not-object"]
# A run dir may come from anyone: its small files are read as files of unknown origin (no
# link followed at the last step, a regular file only, a FIFO never waited on), at most this.
MAX_RUN_FILE_BYTES = 64 * 1024 * 1024
Format = Literal["JSON", "TOML"]


class RunFileError(UserError):
    """A run-dir file that cannot be used: one line naming it and what is wrong.

    ``problem``: ``missing`` (no such file), ``unreadable`` (any other OSError: a directory,
    no permission; or not a plain file of at most ``MAX_RUN_FILE_BYTES``), ``not-text`` (a
    JSON file that is not UTF-8), ``invalid`` (not JSON or TOML
    syntax; for TOML, not UTF-8 either), ``not-object`` (JSON that is not an object, e.g. a
    list). ``cause`` is the exception behind it, for a caller that words its own message.
    """

    def __init__(
        self,
        path: Path,
        problem: Problem,
        fmt: Format,
        cause: BaseException | None = None,
        found: str | None = None,
    ) -> None:
        self.path, self.problem, self.fmt, self.cause = path, problem, fmt, cause
        super().__init__(_message(path, problem, fmt, cause, found))


def _message(
    path: Path, problem: Problem, fmt: Format, cause: BaseException | None, found: str | None
) -> str:
    if problem in ("missing", "unreadable"):
        reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else cause
        return f"cannot read {path}: {reason}"
    if problem == "not-text":
        reason = cause.reason if isinstance(cause, UnicodeDecodeError) else cause
        return f"{path} is not UTF-8 text: {reason}"
    if problem == "invalid":
        return f"{path} is not valid {fmt}: {cause}"
    return f"{path} holds {found}, not a JSON object"


@overload
def read_json(
    path: Path, *, missing_ok: Literal[False] = False, damaged_ok: Literal[False] = False
) -> dict[str, Any]: ...
@overload
def read_json(
    path: Path, *, missing_ok: bool = False, damaged_ok: bool = False
) -> dict[str, Any] | None: ...
def read_json(
    path: Path, *, missing_ok: bool = False, damaged_ok: bool = False
) -> dict[str, Any] | None:
    """The JSON object in ``path``. Every JSON file of a run dir holds an object.

    None instead of a :class:`RunFileError` when the file does not exist (``missing_ok``), or
    for any problem at all, a missing file included (``damaged_ok``: what a reader of a run that
    may be mid-write, or of a file someone edited, wants).
    """
    return _read(path, "JSON", json.loads, missing_ok=missing_ok, damaged_ok=damaged_ok)


@overload
def read_toml(
    path: Path, *, missing_ok: Literal[False] = False, damaged_ok: Literal[False] = False
) -> dict[str, Any]: ...
@overload
def read_toml(
    path: Path, *, missing_ok: bool = False, damaged_ok: bool = False
) -> dict[str, Any] | None: ...
def read_toml(
    path: Path, *, missing_ok: bool = False, damaged_ok: bool = False
) -> dict[str, Any] | None:
    """The TOML table in ``path`` (a run's ``config.toml``); None as for :func:`read_json`."""
    return _read(path, "TOML", tomllib.loads, missing_ok=missing_ok, damaged_ok=damaged_ok)


def _read(
    path: Path,
    fmt: Format,
    parse: Callable[[str], Any],
    *,
    missing_ok: bool,
    damaged_ok: bool,
) -> dict[str, Any] | None:
    try:
        data = _parsed(path, fmt, parse)
    except RunFileError as exc:
        if (missing_ok and exc.problem == "missing") or damaged_ok:
            return None
        raise
    return data


def _parsed(path: Path, fmt: Format, parse: Callable[[str], Any]) -> dict[str, Any]:
    try:
        text = read_untrusted(path, max_bytes=MAX_RUN_FILE_BYTES).decode("utf-8")
    except FileNotFoundError as exc:
        raise RunFileError(path, "missing", fmt, exc) from None
    except (OSError, Refused) as exc:
        raise RunFileError(path, "unreadable", fmt, exc) from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 by definition: for it, invalid TOML
        raise RunFileError(path, "not-text" if fmt == "JSON" else "invalid", fmt, exc) from None
    try:
        data = parse(text)
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError both are
        raise RunFileError(path, "invalid", fmt, exc) from None
    if not isinstance(data, dict):
        raise RunFileError(path, "not-object", fmt, found=type(data).__name__)
    return data


# --- summary.json ------------------------------------------------------------------------------


class _Section(BaseModel):
    """A part of summary.json. Every field is optional (an older file may lack it, a run that
    died early never wrote it) and unknown keys are kept. ``to_dict`` gives back exactly the
    keys that were given, so what is read or built can be written again unchanged."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, validate_assignment=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class UsageTotals(_Section):
    """Tokens and money spent on model calls (``podium.records.Usage`` as summary.json holds
    it); a counter the file lacks reads as 0."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    cache_read_tokens: int = 0  # parts of input_tokens read from, or written to, a prompt cache
    cache_write_tokens: int = 0


class SummaryUsage(UsageTotals):
    """``usage``: the run's total (every call, those of discarded nodes too), the part of it
    answered from a recording, and the same split by role and by model."""

    replayed: UsageTotals | None = None
    by_role: dict[str, UsageTotals] | None = None
    by_model: dict[str, UsageTotals] | None = None


class SummaryRerun(_Section):
    """One of ``final_reruns``: a top-k candidate run once more (``final_choice.Rerun``)."""

    node_id: int | None = None
    metric: float | None = None
    rerun_metric: float | None = None
    problem: str | None = None
    mean: float | None = None
    scored_on: str | None = None  # validation, or held-out (search.holdout: the host's score)


class PluginVersion(_Section):
    """One of ``versions.plugins``: an installed plugin package that was loaded (by its entry
    point), its version, and the git commit of its source when that is a checkout."""

    version: str | None = None
    commit: str | None = None  # None: not a git checkout (an installed wheel), or unknown
    dirty: bool | None = None  # its source differed from ``commit`` (edited or untracked files)


class SummaryVersions(_Section):
    """``versions``: what wrote the run. ``podium_commit`` / ``podium_dirty`` as for a plugin
    (:class:`PluginVersion`); runs written before they existed lack them (None)."""

    podium: str | None = None
    python: str | None = None
    journal_schema: int | None = None
    podium_commit: str | None = None
    podium_dirty: bool | None = None
    plugins: dict[str, PluginVersion] | None = None  # by distribution name


class SummaryGrade(_Section):
    """``grade``: the part of ``grade.json`` a quick look needs (grade.json has every field)."""

    score: float | None = None
    valid_submission: bool | None = None
    any_medal: bool | None = None
    above_median: bool | None = None
    sandboxed: bool | None = None
    leaderboard_percentile: float | None = None
    medal: str | None = None


class RunSummary(_Section):
    """``summary.json``: a run's outcome in one small file, written (``build_summary``) when the run
    starts, after every node and when it stops (``status`` is then no longer ``running``).

    The fields are in the order the file has always had them (what the run is, how it went, its
    grade), so writing :meth:`to_dict` keeps the file as it was, byte for byte.
    """

    # What the run is (the config and task it was started with).
    task: str | None = None
    competition_id: str | None = None
    task_type: str | None = None
    complexity: str | None = None  # the benchmark's difficulty split (MLE-bench: low/medium/high)
    obfuscated_description: bool | None = None
    model: str | None = None
    review_model: str | None = None
    plan_model: str | None = None
    strategy: str | None = None
    operators: str | None = None  # the operator set that ran (a model may bring its own)
    sandbox: str | None = None
    sandbox_detail: str | None = None
    sandboxed: bool | None = None  # False: the code ran without isolation (not clean-track)
    isolation_gaps: list[str] | None = None  # what the sandbox lacked on that machine
    seed: int | None = None
    workers: int | None = None
    schedule: str | None = None
    budget: dict[str, Any] | None = None  # the config's [budget] section, as it was
    holdout: dict[str, Any] | None = None  # search.holdout's split: share, rows, seed, digest
    # How it went.
    status: str | None = None  # running | finished | interrupted | failed
    stop_reason: str | None = None  # None while running; steps, time, cost, error...
    error: str | None = None
    steps: int | None = None  # finished nodes
    good_nodes: int | None = None
    buggy_nodes: int | None = None
    analysis_nodes: int | None = None  # of the steps, analyses (an ablation): never submitted
    best_node: int | None = None  # the final node's id
    best_metric: float | None = None  # its validation metric
    best_held_out: float | None = None  # search.holdout: its score on the held-out labels
    final_reruns: list[SummaryRerun] | None = None
    lower_is_better: bool | None = None
    elapsed_s: float | None = None
    stop_detail: str | None = None  # e.g. why the cost budget stopped the run
    usage: SummaryUsage | None = None
    discarded_nodes: int | None = None  # nodes a crash cut short, dropped on resume
    updated_at: str | None = None  # ISO 8601, UTC
    versions: SummaryVersions | None = None
    # Its grade, once graded (added after the search, with grade.json).
    grade: SummaryGrade | None = None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> RunSummary:
        """``data`` as the record; ValueError, in one line (the first field that does not fit
        and why), when a field holds the wrong kind of value. For readers that must not count
        a malformed run (a report)."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "summary"
            raise ValueError(f"{where}: {first['msg']}") from None

    @classmethod
    def lenient(cls, data: Mapping[str, Any]) -> RunSummary:
        """``data`` as the record, a field that does not fit its type read as missing. For
        readers that show what they can (the viewer, a sweep's bookkeeping)."""
        fields = dict(data)
        while True:
            try:
                return cls.model_validate(fields)
            except ValidationError as exc:
                bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
                if not bad & fields.keys():
                    return cls()
                fields = {k: v for k, v in fields.items() if k not in bad}
