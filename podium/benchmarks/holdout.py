"""A host-held holdout (``search.holdout``): the task's public training rows split once more.

Why: a node's validation metric is the agent's own, on its own split of a training set that may
be small, so the node with the best validation metric is often not the best on the test set
(*selection regret*, see ``podium.api.selection``). Choosing the final node on labels the
agent never saw, scored by the task's own grader, removes the agent's noise from the choice.

How, for a task whose public data is a training table, a test table and a sample submission
(``train.csv``, ``test.csv``, ``sample_submission.csv``: the sample's first column is the id,
the others the targets, found in the training table and not in the test table), in
``<run dir>/holdout/``:

* ``public/``: what the agent gets instead of the task's public data: ``train.csv`` without the
  held-out rows, ``test.csv`` with their features mixed in (a seeded order), a sample
  submission with a row for each of them, every other file as it is;
* ``answers/``: the held-out rows' ids and targets in the private answers' format (the sample's
  columns; a task whose answers have other columns is refused), where no sandbox binds them;
* ``split.json``: the share, the seed, the held-out ids' digest and the source files' digests.

The split is a function of the public files, the share and the run's seed, written once: a
resumed run reuses it (and refuses when the task's data has changed since), a replayed run makes
the same one. Why not run the task's own ``prepare.py`` on its public data: a bundled task's
preparer reads its raw file's own format, and MLE-bench's read Kaggle's download; and a nested
preparation would give the agent a test set other than the real one, so the final node's real
submission would need another run on the full data. Time series are refused: a random row
split of a series leaks the future.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podium.benchmarks.folder import FolderTask, read_handed_over
from podium.errors import TaskError
from podium.interfaces import HeldOutScore, Holdout, Task
from podium.records import GradeReport
from podium.submission_check import bounds

FORMAT = "podium-holdout/1"
TRAIN, TEST = "train.csv", "test.csv"
SPLIT = "split.json"
PUBLIC, ANSWERS = "public", "answers"
MAX_SHARE = 0.5
HINT = "search.holdout needs a task with train.csv, test.csv and a sample submission"
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

    @property
    def answers_dir(self) -> Path:
        return self.root / ANSWERS


def make_holdout(task: Task, root: Path, share: float, seed: int) -> HostHoldout:
    """The run's holdout in ``root`` (made now, or the one made before: see the module doc).
    Raises TaskError, one line with a hint, for a task it cannot split or a changed task."""
    folder = _splittable(task, share)
    sources = _sources(folder)
    expected = {"share": share, "seed": seed, "sources": sources}
    if (root / SPLIT).is_file():
        return HostHoldout(folder, _reuse(root, expected))
    staging = root.with_name(f"{root.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _write_split(folder, staging, share, seed, sources)
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
    for path in (task.public_dir / TRAIN, task.public_dir / TEST, task.sample_submission):
        if not path.is_file():
            raise TaskError(f"{task.id}: search.holdout found no {path.name} in its public data",
                            hint=HINT)  # fmt: skip
    return task


def _sources(task: FolderTask) -> dict[str, str]:
    files = (task.public_dir / TRAIN, task.public_dir / TEST, task.sample_submission)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _read(path: Path) -> pd.DataFrame:
    """A CSV as text cells: written back, every value is the same text."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _write_split(
    task: FolderTask, root: Path, share: float, seed: int, sources: dict[str, str]
) -> None:
    train, test, sample = (_read(p) for p in _tables(task))
    id_column, targets = _columns(task, train, test, sample)
    rng = np.random.default_rng((seed, SEED_SALT))
    n = round(share * len(train))
    if n < 1 or len(train) - n < 2:
        raise TaskError(f"{task.id}: {len(train)} training rows cannot spare {share:.0%}",
                        hint="raise search.holdout, or leave it off")  # fmt: skip
    held = np.sort(rng.permutation(len(train))[:n])
    kept = np.setdiff1d(np.arange(len(train)), held)
    holdout = train.iloc[held]
    _check_ids(task, holdout[id_column], test[id_column])
    mixed = pd.concat([test, holdout[list(test.columns)]], ignore_index=True)
    mixed = mixed.iloc[rng.permutation(len(mixed))].reset_index(drop=True)
    defaults = sample.iloc[0][targets] if len(sample) else pd.Series(dict.fromkeys(targets, "0"))
    new_sample = pd.DataFrame({id_column: mixed[id_column]})
    for column in targets:
        given = dict(zip(sample[id_column], sample[column], strict=True))
        new_sample[column] = [given.get(i, defaults[column]) for i in mixed[id_column]]
    public, answers = root / PUBLIC, root / ANSWERS
    _copy_public(task.public_dir, public, skip={TRAIN, TEST, task.sample_submission.name})
    answers.mkdir(parents=True)
    train.iloc[kept].to_csv(public / TRAIN, index=False)
    mixed.to_csv(public / TEST, index=False)
    new_sample.to_csv(public / task.sample_submission.name, index=False)
    holdout[[id_column, *targets]].to_csv(answers / task.answers.name, index=False)
    ids = sorted(str(i) for i in holdout[id_column])
    record = {
        "format": FORMAT, "share": share, "seed": seed, "rows": n, "train_rows": len(train),
        "id_column": id_column, "ids_sha256": _digest(ids), "sources": sources, "ids": ids,
    }  # fmt: skip
    (root / SPLIT).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def _tables(task: FolderTask) -> tuple[Path, Path, Path]:
    return task.public_dir / TRAIN, task.public_dir / TEST, task.sample_submission


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


def _check_ids(task: FolderTask, held: pd.Series, test: pd.Series) -> None:
    if held.duplicated().any() or held.isin(set(test)).any():
        raise TaskError(f"{task.id}: the training ids repeat or occur in test.csv: "
                        "held-out rows could not be told apart", hint=HINT)  # fmt: skip


def _copy_public(source: Path, target: Path, skip: set[str]) -> None:
    """Every other public file, hard-linked where the filesystem allows (data can be large),
    else copied; links are not followed (the task's data is the host's, but a link could
    point anywhere)."""

    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError:
            shutil.copy2(src, dst, follow_symlinks=False)

    shutil.copytree(
        source,
        target,
        symlinks=True,
        ignore=lambda d, names: [n for n in names if Path(d) == source and n in skip],
        copy_function=link_or_copy,
    )


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


class HostHoldout(Holdout):
    """The split of one run, and what the loop asks of it (see ``Holdout``)."""

    def __init__(self, inner: FolderTask, split: Split) -> None:
        self.inner, self.split = inner, split
        self.task: Task = HeldOutTask(inner, split, self)
        self.sample = split.public / inner.sample_submission.name
        self.answers = split.answers_dir / inner.answers.name

    def describe(self) -> dict[str, Any]:
        r = self.split.record
        keys = ("share", "seed", "rows", "train_rows", "id_column", "ids_sha256")
        return {k: r[k] for k in keys}

    def parts(self, data: bytes) -> tuple[pd.DataFrame, pd.DataFrame] | str:
        """A submission's own rows and its held-out rows (text cells), or why not."""
        try:
            frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
        except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            return f"the submission cannot be read as CSV: {str(exc).splitlines()[0][:200]}"
        column = self.split.id_column
        if column not in frame.columns:
            return f"the submission has no {column!r} column"
        keys = frame[column].map(_id_key)
        held = keys.isin({_id_key(i) for i in self.split.ids})
        missing = len(self.split.ids) - int(keys[held].nunique())
        if missing:
            return (
                f"the submission has no row for {missing} of the {TEST} ids: it must predict "
                f"every row of {TEST}"
            )
        return frame[~held], frame[held]

    def separate(self, submission: Path, predictions: Path) -> str | None:
        data = read_handed_over(submission, bounds(self.sample).max_bytes)
        if isinstance(data, str):
            return data
        parts = self.parts(data)
        if isinstance(parts, str):
            return parts
        own, held = parts
        _write_csv(predictions, held)
        _write_csv(submission, own)
        return None

    def score(self, predictions: Path) -> HeldOutScore:
        try:
            report: GradeReport | None = self.inner.grade_on(predictions, self.answers)
        except Exception as exc:  # a grader's failure is the node's, never the run's
            return HeldOutScore(None, f"the grader failed: {type(exc).__name__}: {exc}"[:300])
        if report is None:
            return HeldOutScore(None, "the task cannot grade the held-out rows")
        return HeldOutScore(report.score, report.error)


def _id_key(value: Any) -> str:
    """Ids compared as their numbers where they are numbers (``7`` and ``7.0`` are one id)."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else repr(number)


def _write_csv(path: Path, frame: pd.DataFrame) -> None:
    """Whole or not at all: a temporary file in the same directory, renamed over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            frame.to_csv(out, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class HeldOutTask(Task):
    """The task as the agent sees it under a holdout: the split's public data; a submission
    must predict the held-out rows too, and the rest is checked as the task checks it."""

    def __init__(self, inner: FolderTask, split: Split, holdout: HostHoldout) -> None:
        self.inner, self.holdout = inner, holdout
        self.id, self.name, self.description = inner.id, inner.name, inner.description
        self.public_dir = split.public
        self.lower_is_better, self.metric_name = inner.lower_is_better, inner.metric_name
        self.task_type, self.complexity, self.rules = inner.task_type, inner.complexity, inner.rules

    def __getattr__(self, name: str) -> Any:  # the rest (leaderboard, competition_id) as is
        return getattr(self.inner, name)

    def check_submission(self, path: Path) -> str | None:
        data = read_handed_over(path, bounds(self.holdout.sample).max_bytes)
        if isinstance(data, str):
            return data
        parts = self.holdout.parts(data)
        if isinstance(parts, str):
            return parts
        with tempfile.TemporaryDirectory(prefix="podium-holdout-") as tmp:
            own = Path(tmp) / path.name
            _write_csv(own, parts[0])
            return self.inner.check_submission(own)

    def warm_up(self) -> None:
        self.inner.warm_up()

    def grade(self, submission: Path, sandboxed: bool | None = None) -> GradeReport | None:
        return self.inner.grade(submission, sandboxed)

    def grade_on(self, submission: Path, answers: Path) -> GradeReport | None:
        return self.inner.grade_on(submission, answers)

    def train_rows(self) -> int | None:
        return int(self.holdout.split.record["train_rows"]) - int(self.holdout.split.record["rows"])
