"""A host-held holdout (``search.holdout``): the task's public training rows split once more.

Why: a node's validation metric is the agent's own, on its own split of a training set that may
be small, so the node with the best validation metric is often not the best on the test set
(*selection regret*, see ``podium.benchmarks.selection``). Choosing the final node on labels the
agent never saw, scored by the task's own grader, removes the agent's noise from the choice.

How, for a task whose public data is a training table, a test table and a sample submission
(``train.csv``, ``test.csv``, ``sample_submission.csv``: the sample's first column is the id,
the others the targets, found in the training table and not in the test table), in
``<run dir>/holdout/``:

* ``public/``: what the agent gets instead of the task's public data: ``train.csv`` without the
  held-out rows, ``test.csv`` with their features mixed in (a seeded order), a sample
  submission with a row for each of them. A task whose public data holds any other file is
  refused: a file handed over as it is could carry the held-out rows' labels;
* ``answers/``: the held-out rows' ids and targets in the private answers' format (the sample's
  columns; a task whose answers have other columns is refused), where no sandbox binds them;
* ``checks/``: a sample submission of the held-out rows alone, which the format check holds
  a submission's held-out rows to (every row once, no empty value...);
* ``split.json``: the share, the seed, the held-out ids' digest and the source files' digests.

A submission is taken apart once per file, in a child process under a memory cap and a
deadline (``podium.submission_check.split_by_id``, streamed: it stops at the task's rows
bound), after the host has held its first bytes to the task's bounds
(``podium.submission_check.bounds``: size, header line, width): the host never reads it whole,
so a hostile file costs the host what a valid one does. The parts lie beside the submission
until the node keeps them (``separate``), and a file the check refused is never split again.
Its cells are written back as they were read. Ids are compared as text, except that ASCII
integers compare as integers (``7`` and ``7.0`` are one id: ``submission_check.id_key``).

What a holdout cannot hide: the held-out rows keep their ids. When the test ids lie outside the
training ids' range (``ids_reveal_split`` in ``split.json``), a solution can tell the held-out
rows from the test rows, and a model that learns from the id (a leak) scores on them what it
will not score on the test set. The run says so when it starts.

The split is a function of the public files, the share and the run's seed, written once: a
resumed run reuses it (and refuses when the task's data has changed since), a replayed run makes
the same one. Why not run the task's own ``prepare.py`` on its public data: a bundled task's
preparer reads its raw file's own format, and MLE-bench's read Kaggle's download; and a nested
preparation would give the agent a test set other than the real one, so the final node's real
submission would need another run on the full data. Time series are refused: a random row
split of a series leaks the future.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podium.benchmarks.folder import FolderTask, opened_within, sample_bound
from podium.errors import TaskError
from podium.interfaces import HeldOutScore, Holdout, Task
from podium.records import GradeReport
from podium.submission_check import INTEGER_ID, Unchecked, bounds, id_key, split_in_child

log = logging.getLogger("podium.benchmarks")
FORMAT = "podium-holdout/1"
TRAIN, TEST = "train.csv", "test.csv"
SPLIT = "split.json"
PUBLIC, ANSWERS, CHECKS = "public", "answers", "checks"
MAX_SHARE = 0.5
HINT = (
    "search.holdout needs a task whose public data is train.csv, test.csv and a sample submission"
)
SEED_SALT = 0x401D  # the split's RNG differs from every other use of the run's seed


@dataclass(frozen=True)
class Split:
    """The held-out rows of one run: their ids (as text) and where the split lives."""

    root: Path
    id_column: str
    ids: frozenset[str]
    record: dict[str, Any]

    @property
    def public(self) -> Path:
        return self.root / PUBLIC


@dataclass(frozen=True)
class _Plan:
    """A split computed, not yet written: the tables as text cells."""

    train: pd.DataFrame  # the kept training rows
    test: pd.DataFrame  # the test rows and the held-out rows' features, mixed
    sample: pd.DataFrame  # a row for each row of ``test``
    answers: pd.DataFrame  # the held-out rows' ids and targets
    id_column: str
    record: dict[str, Any]


def check_holdout(task: Task, share: float, seed: int) -> None:
    """Raise the TaskError :func:`make_holdout` would, without writing anything (a new run
    checks before it creates its directory, so a refused split leaves nothing behind)."""
    _plan(_splittable(task, share), share, seed)


def holdout_made(root: Path) -> bool:
    """Whether ``root`` holds a split (a run that has one keeps it)."""
    return (root / SPLIT).is_file()


def make_holdout(task: Task, root: Path, share: float, seed: int) -> HostHoldout:
    """The run's holdout in ``root`` (made now, or the one made before: see the module doc).
    Raises TaskError, one line with a hint, for a task it cannot split or a changed task."""
    folder = _splittable(task, share)
    expected = {"share": share, "seed": seed, "sources": _sources(folder)}
    if (root / SPLIT).is_file():
        return HostHoldout(folder, _reuse(root, expected))
    plan = _plan(folder, share, seed)
    staging = root.with_name(f"{root.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _write(folder, plan, staging)
        os.replace(staging, root)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise TaskError(f"cannot write the holdout split into {root}: {exc.strerror}") from None
    return HostHoldout(folder, _reuse(root, expected))


def _splittable(task: Task, share: float) -> FolderTask:
    if not 0 < share <= MAX_SHARE:
        raise TaskError(f"search.holdout must be in (0, {MAX_SHARE}]; got {share}", hint=HINT)
    if not isinstance(task, FolderTask) or getattr(task, "graded_by_package", False):
        raise TaskError(f"{task.id}: search.holdout needs a registry-layout task whose grader "
                        "can grade other answers", hint=HINT)  # fmt: skip
    if "series" in task.task_type or "forecast" in task.task_type:
        raise TaskError(f"{task.id} is a time series: a random holdout would leak the future",
                        hint="run it without search.holdout")  # fmt: skip
    for path in _tables(task):
        if not path.is_file() or path.parent != task.public_dir:
            raise TaskError(f"{task.id}: search.holdout found no {path.name} in its public data",
                            hint=HINT)  # fmt: skip
    others = sorted(p.name for p in task.public_dir.iterdir() if p not in _tables(task))
    if others:
        raise TaskError(
            f"{task.id}: its public data holds more than the three tables ({', '.join(others[:3])}"
            f"{', ...' if len(others) > 3 else ''}), which could carry the held-out rows' labels",
            hint=HINT,
        )
    return task


def _tables(task: FolderTask) -> tuple[Path, Path, Path]:
    return task.public_dir / TRAIN, task.public_dir / TEST, task.sample_submission


def _sources(task: FolderTask) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in _tables(task)}


def _read(path: Path) -> pd.DataFrame:
    """A CSV as text cells: written back, every value is the same text."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _plan(task: FolderTask, share: float, seed: int) -> _Plan:
    train, test, sample = (_read(p) for p in _tables(task))
    id_column, targets = _columns(task, train, test, sample)
    n = round(share * len(train))
    if n < 1 or len(train) - n < 2:
        raise TaskError(f"{task.id}: {len(train)} training rows cannot spare a share of {share:g}",
                        hint="raise search.holdout, or leave it off")  # fmt: skip
    rng = np.random.default_rng((seed, SEED_SALT))
    held = np.sort(rng.permutation(len(train))[:n])
    kept = np.setdiff1d(np.arange(len(train)), held)
    holdout = train.iloc[held]
    _check_ids(task, train[id_column], test[id_column])
    mixed = pd.concat([test, holdout[list(test.columns)]], ignore_index=True)
    mixed = mixed.iloc[rng.permutation(len(mixed))].reset_index(drop=True)
    defaults = sample.iloc[0][targets] if len(sample) else pd.Series(dict.fromkeys(targets, "0"))
    new_sample = pd.DataFrame({id_column: mixed[id_column]})
    for column in targets:
        given = dict(zip(sample[id_column], sample[column], strict=True))
        new_sample[column] = [given.get(i, defaults[column]) for i in mixed[id_column]]
    ids = sorted(str(i) for i in holdout[id_column])
    record = {
        "format": FORMAT, "share": share, "seed": seed, "rows": n, "train_rows": len(train),
        "id_column": id_column, "ids_sha256": _digest(ids), "sources": _sources(task),
        "ids_reveal_split": _ranges_apart(train[id_column], test[id_column]), "ids": ids,
    }  # fmt: skip
    answers = holdout[[id_column, *targets]]
    return _Plan(train.iloc[kept], mixed, new_sample, answers, id_column, record)


def _write(task: FolderTask, plan: _Plan, root: Path) -> None:
    for folder in (PUBLIC, ANSWERS, CHECKS):
        (root / folder).mkdir(parents=True)
    (root / ANSWERS).chmod(0o700)  # the labels: no other local user reads them either
    sample_name = task.sample_submission.name
    plan.train.to_csv(root / PUBLIC / TRAIN, index=False)
    plan.test.to_csv(root / PUBLIC / TEST, index=False)
    plan.sample.to_csv(root / PUBLIC / sample_name, index=False)
    plan.answers.to_csv(root / ANSWERS / task.answers.name, index=False)
    held = plan.sample[plan.sample[plan.id_column].isin(set(plan.answers[plan.id_column]))]
    held.to_csv(root / CHECKS / sample_name, index=False)
    (root / SPLIT).write_text(json.dumps(plan.record, indent=1) + "\n", encoding="utf-8")


def _columns(
    task: FolderTask, train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame
) -> tuple[str, list[str]]:
    """The id column and the targets, as the layout in the module doc has them; TaskError
    when the task's tables or answers are shaped otherwise."""
    id_column, targets = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    answers = list(pd.read_csv(task.answers, nrows=0).columns) if task.answers.is_file() else []
    problems = [
        (id_column not in train or id_column not in test, f"no id column {id_column!r} in both"),
        (not targets or any(t not in train for t in targets), "targets missing from train.csv"),
        (any(t in test for t in targets), "test.csv holds a target column"),
        (answers != list(sample.columns), "the answers' columns are not the sample's"),
    ]
    for failed, what in problems:
        if failed:
            raise TaskError(f"{task.id}: search.holdout cannot split this task: {what}", hint=HINT)
    return id_column, targets


def _check_ids(task: FolderTask, train: pd.Series, test: pd.Series) -> None:
    """Every training id distinct from the others and from every test id, as the split
    compares them (:func:`_id_key`): else a held-out row could not be told from a test row."""
    train_keys, test_keys = train.map(_id_key), set(test.map(_id_key))
    if train_keys.duplicated().any() or train_keys.isin(test_keys).any():
        raise TaskError(f"{task.id}: the training ids repeat or occur in test.csv: "
                        "held-out rows could not be told apart", hint=HINT)  # fmt: skip


def _ranges_apart(train: pd.Series, test: pd.Series) -> bool | None:
    """Whether integer ids of the test rows lie all above or all below the training ids' (a
    solution can then tell held-out rows from test rows); None for ids that are not integers."""
    if not all(INTEGER_ID.fullmatch(str(v).strip()) for v in (*train, *test)) or test.empty:
        return None
    a, b = train.map(_id_key).astype(int), test.map(_id_key).astype(int)
    return bool(b.min() > a.max() or b.max() < a.min())


def _digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def _reuse(root: Path, expected: dict[str, Any]) -> Split:
    try:
        record = json.loads((root / SPLIT).read_text(encoding="utf-8"))
        ids = [str(i) for i in record["ids"]]
        same = all(record.get(k) == v for k, v in expected.items())
        sound = record.get("format") == FORMAT and _digest(ids) == record["ids_sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TaskError(
            f"{root / SPLIT} is damaged ({type(exc).__name__})",
            hint="start a new run: the run's holdout cannot be trusted",
        ) from None
    if not (same and sound):
        raise TaskError(
            f"{root / SPLIT} was made from other data or settings than the run's now",
            hint="the task's public data, search.holdout and the seed must stay as they were",
        )
    return Split(root, str(record["id_column"]), frozenset(ids), record)


def _id_key(value: Any) -> str:
    """An id as the split compares it (:func:`podium.submission_check.id_key`)."""
    return id_key(str(value))


@dataclass(frozen=True)
class _Parts:
    """A submission taken apart: its own rows and its held-out rows, each a CSV file under the
    submission's header, beside it (host-made, mode 0644) until the node keeps them."""

    own: Path
    held: Path

    def discard(self) -> None:
        for path in (self.own, self.held):
            path.unlink(missing_ok=True)


_Identity = tuple[int, int, int, int] | None  # a file's device, inode, size and mtime


class HostHoldout(Holdout):
    """The split of one run, and what the loop asks of it (see ``Holdout``)."""

    def __init__(self, inner: FolderTask, split: Split) -> None:
        self.inner, self.split = inner, split
        self.task: Task = HeldOutTask(inner, split, self)
        self.sample = split.public / inner.sample_submission.name
        self.held_sample = split.root / CHECKS / inner.sample_submission.name
        self.answers = split.root / ANSWERS / inner.answers.name
        self._known: dict[Path, tuple[_Identity, _Parts | str]] = {}
        self._lock = threading.Lock()
        if split.record.get("ids_reveal_split"):
            log.warning(
                "the test ids of %s lie outside its training ids: a solution can tell the "
                "held-out rows from the test rows by their ids",
                inner.id,
            )

    def describe(self) -> dict[str, Any]:
        r = self.split.record
        keys = ("share", "seed", "rows", "train_rows", "id_column", "ids_sha256")
        return {**{k: r[k] for k in keys}, "ids_reveal_split": r.get("ids_reveal_split")}

    def check(self, path: Path) -> str | None:
        """The task's own format check, on each part against its own sample: the task's rows
        against the task's sample, the held-out rows against theirs (``checks/``). The parts
        are kept for :meth:`separate`; a refusal is remembered instead, so the file is never
        split again."""
        parts = self._parts(path)
        if isinstance(parts, str):
            return parts
        problem = self.inner.check_submission(parts.own)
        if problem is None:
            problem = self.inner.check_against(parts.held, self.held_sample)
        if problem is not None:
            self._remember(path, problem)
        return problem

    def separate(self, submission: Path, predictions: Path) -> str | None:
        """The held-out rows moved out of ``submission`` into ``predictions``: the parts the
        check made of this very file, or (a file the check never saw: a top-k re-run) made
        now; a file the check refused gets its refusal, unread."""
        parts = self._parts(submission)
        with self._lock:
            self._known.pop(submission, None)
        if isinstance(parts, str):
            return parts
        shutil.move(parts.held, predictions)  # a rename in the node's directory
        shutil.move(parts.own, submission)
        return None

    def score(self, predictions: Path) -> HeldOutScore:
        try:
            report: GradeReport | None = self.inner.grade_on(predictions, self.answers)
        except Exception as exc:  # a grader's failure is the node's, never the run's
            return HeldOutScore(None, f"the grader failed: {type(exc).__name__}: {exc}"[:300])
        if report is None:
            return HeldOutScore(None, "the task cannot grade the held-out rows")
        return HeldOutScore(report.score, report.error)

    def _parts(self, path: Path) -> _Parts | str:
        """What the split made of the file at ``path``: asked again for the same file (same
        inode, size and time), the first answer; else the file split now."""
        identity = _identity(path)
        with self._lock:
            known = self._known.get(path)
        if known is not None and known[0] == identity:
            return known[1]
        outcome = self._split(path)
        self._remember(path, outcome, identity)
        return outcome

    def _remember(self, path: Path, outcome: _Parts | str, identity: _Identity = None) -> None:
        """Keep ``outcome`` for the file at ``path`` (by default as the file is now); parts
        made of it before and not kept are removed."""
        identity = identity or _identity(path)
        with self._lock:
            old = self._known.get(path)
            self._known[path] = (identity, outcome)
        if old is not None and isinstance(old[1], _Parts) and old[1] != outcome:
            old[1].discard()

    def _split(self, path: Path) -> _Parts | str:
        """The submission's rows split by id in a child (see the module's docstring), or why
        they cannot be. Held to the bounds of the holdout's sample before a row is parsed."""
        limits = bounds(self.sample)
        with opened_within(path, limits) as opened:
            if isinstance(opened, str):
                return opened
            try:
                with _part_files(path) as (parts, files):
                    problem = split_in_child(
                        opened, self.split.id_column, self.split.root / SPLIT, limits.max_rows,
                        files,
                    )  # fmt: skip
            except Unchecked as exc:
                return f"the submission could not be split: {exc}"
            except OSError as exc:
                return f"the host could not split the submission: {exc.strerror}"
        if problem is not None:
            parts.discard()
            return problem
        return parts


def _identity(path: Path) -> _Identity:
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


@contextlib.contextmanager
def _part_files(path: Path) -> Iterator[tuple[_Parts, tuple[Any, Any]]]:
    """Two new files beside ``path`` (mode 0644, as the run dir's other files), open for
    writing; removed again if the block fails."""
    made: list[Path] = []
    try:
        with contextlib.ExitStack() as stack:
            files = []
            for part in ("own", "held"):
                fd, made_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{part}-")
                made.append(Path(made_name))
                os.fchmod(fd, 0o644)
                files.append(stack.enter_context(os.fdopen(fd, "wb")))
            yield _Parts(made[0], made[1]), (files[0], files[1])
    except BaseException:
        for made_path in made:
            made_path.unlink(missing_ok=True)
        raise


class HeldOutTask(Task):
    """The task as the agent sees it under a holdout: the split's public data; a submission
    must predict the held-out rows too, each row checked as the task checks its own."""

    def __init__(self, inner: FolderTask, split: Split, holdout: HostHoldout) -> None:
        self.inner, self.holdout = inner, holdout
        self.id, self.name, self.description = inner.id, inner.name, inner.description
        self.public_dir = split.public
        self.lower_is_better, self.metric_name = inner.lower_is_better, inner.metric_name
        self.task_type, self.complexity, self.rules = inner.task_type, inner.complexity, inner.rules

    def __getattr__(self, name: str) -> Any:  # the rest (leaderboard, competition_id) as is
        return getattr(self.inner, name)

    def check_submission(self, path: Path) -> str | None:
        return self.holdout.check(path)

    def max_submission_bytes(self) -> int | None:
        return sample_bound(self.public_dir / self.inner.sample_submission.name)

    def warm_up(self) -> None:
        self.inner.warm_up()

    def grade(self, submission: Path, sandboxed: bool | None = None) -> GradeReport | None:
        return self.inner.grade(submission, sandboxed)

    def grade_on(self, submission: Path, answers: Path) -> GradeReport | None:
        return self.inner.grade_on(submission, answers)

    def secret_paths(self) -> tuple[Path, ...]:
        """The task's own, its full public data (the held-out rows' labels are in its
        training table) and the held-out labels (``answers/``)."""
        return (*self.inner.secret_paths(), self.inner.public_dir, self.holdout.answers.parent)

    def train_rows(self) -> int | None:
        record = self.holdout.split.record
        return int(record["train_rows"]) - int(record["rows"])
