"""Tasks stored as folders in MLE-bench's registry layout.

```
<folder>/config.yaml       id, name, dataset.answers, dataset.sample_submission, grader.grade_fn
<folder>/description.md    the competition description the agent reads
<folder>/prepare.py        prepare(raw, public, private): writes the public and private data
<folder>/grade.py          grade(submission, answers) -> score
<folder>/leaderboard.csv   the private leaderboard (a ``score`` column, in rank order)
```
The data is prepared on first use into ``<data_dir>/<id>/prepared/{public,private}``, unless
complete data is there already (prepared elsewhere, e.g. by ``mlebench prepare``); the agent
only ever gets ``public``. A folder inside an MLE-bench checkout's registry
(``mlebench/competitions/<id>``) is resolved as the ``mlebench`` benchmark's task instead (see
``resolve_task``).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from podium.benchmarks.grader_worker import GraderSource, GraderStopped, GraderWorker
from podium.benchmarks.grading import grade_report, is_lower_better, read_leaderboard
from podium.benchmarks.metric_reading import task_metric
from podium.benchmarks.prepare import prepare_data
from podium.errors import TaskError
from podium.interfaces import Task
from podium.records import GradeReport
from podium.scaffolds import count_rows
from podium.secret_paths import RAW, podium_data_dir
from podium.submission_check import Bounds, Invalid, bound_problem, bounds, check, key_columns
from podium.untrusted import Refused, open_untrusted

REQUIRED_FILES = {
    "config.yaml": "the task's registry entry: id, name, dataset.answers, "
    "dataset.sample_submission and grader.grade_fn (MLE-bench's config format)",
    "description.md": "the competition description the agent reads (markdown)",
    "prepare.py": "a function prepare(raw, public, private) that writes the public data "
    "(train, test, sample submission) and the private answers",
    "grade.py": "a function grade(submission, answers) returning the score",
    "leaderboard.csv": "the private leaderboard with a 'score' column in rank order "
    "(its order tells whether lower is better)",
}
# The node check's deadlines (see FolderTask.check_submission): a grader that needs longer on
# public stand-ins gives no verdict, and the structural check decides.
GRADER_DEADLINE_S = 40.0
STRUCTURAL_DEADLINE_S = 20.0
# A grading's deadline (the final grade, every node's after the run, a holdout's score): in
# the format check's worker, under its memory cap. Longer than the check's, which has the
# structural check to fall back on; a grade has nothing to fall back on.
GRADE_DEADLINE_S = 300.0
SCORE_IN_WORKER = "podium.benchmarks.grading:score_in_worker"
REQUIRED_KEYS = ("id", "name", "dataset.answers", "dataset.sample_submission", "grader.grade_fn")


def default_data_dir() -> Path:
    return podium_data_dir()


@dataclass
class FolderTask(Task):
    id: str
    name: str
    description: str
    public_dir: Path
    private_dir: Path
    lower_is_better: bool
    metric_name: str
    folder: Path
    config: dict[str, Any]
    leaderboard: list[float]
    task_type: str = "unknown"
    complexity: str | None = None
    _grader_checks: dict[Path, GraderWorker] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def competition_id(self) -> str:
        """The id grade reports carry."""
        return self.id

    @property
    def sample_submission(self) -> Path:
        return self.public_dir / Path(self.config["dataset"]["sample_submission"]).name

    @property
    def answers(self) -> Path:
        return self.private_dir / Path(self.config["dataset"]["answers"]).name

    def max_submission_bytes(self) -> int | None:
        return sample_bound(self.sample_submission)

    def check_submission(self, path: Path) -> str | None:
        """The competition's grader on public stand-ins decides where it can (see
        ``grader_check``); elsewhere the structural check does.

        Bounded by construction: a file out of the bounds (:func:`bound_problem`: its size,
        its header line's length and width against the sample's) is refused in milliseconds
        before the grader or pandas read it; the host reads no more than its first bytes, the
        grader's worker and the structural check's child read the file themselves, under
        their memory caps, and stop past the bounds' rows; the grader gets
        ``GRADER_DEADLINE_S`` (then the verdict is "unknown"), the structural check
        ``STRUCTURAL_DEADLINE_S`` (then the file passes unchecked, logged): at most about a
        minute whatever the file."""
        return self.check_against(path, self.sample_submission)

    def check_against(self, path: Path, sample: Path) -> str | None:
        """:meth:`check_submission` for the rows another sample submission lists (a host-held
        holdout's): the same bounds, grader and structural check, with ``sample`` for the
        task's own sample."""
        limits = bounds(sample)
        with opened_within(path, limits) as opened:
            if isinstance(opened, str):
                return opened
            worker = self._grader_for(sample)
            verdict = worker.verdict(path, timeout_s=GRADER_DEADLINE_S)
            if verdict.outcome != "unknown":
                return verdict.reason if verdict.outcome == "invalid" else None
            return check(opened, sample, limits.max_bytes, keys=worker.keys,
                         timeout_s=STRUCTURAL_DEADLINE_S)  # fmt: skip

    def warm_up(self) -> None:
        """The grader's worker started, its grade function loaded (TaskError, the worker's one
        message, when it cannot be); its stand-ins are graded on in the background."""
        self._grader_for(self.sample_submission).load()

    def grader_source(self) -> GraderSource:
        """Where the format check's worker loads this task's grade function from."""
        return GraderSource(str(self.config["grader"]["grade_fn"]), str(self.folder))

    def _grader_for(self, sample: Path) -> GraderWorker:
        """One grader worker per sample, started on first use and kept for the run."""
        worker = self._grader_checks.get(sample)
        if worker is None:
            worker = GraderWorker(self.grader_source(), sample, key_columns(sample), self.id)
            self._grader_checks[sample] = worker
        return worker

    def grade(self, submission: Path, sandboxed: bool | None = None) -> GradeReport:
        """MLE-bench's grading: the task's own grade_fn on the private answers, run in the
        task's grader worker (see :meth:`grader_score`)."""
        return grade_report(
            self.competition_id,
            submission,
            self.leaderboard,
            lambda path: self.grader_score(path, self.answers),
            sandboxed,
        )

    def grade_on(self, submission: Path, answers: Path) -> GradeReport | None:
        """The task's grade_fn on other answers of the private answers' format (no medals
        mean anything there: only ``score`` and ``error`` do)."""
        return grade_report(
            self.competition_id,
            submission,
            self.leaderboard,
            lambda path: self.grader_score(path, answers),
        )

    def grader_score(self, submission: Path, answers: Path) -> tuple[float | None, str | None]:
        """``(round(score, 5), None)`` or ``(None, why)`` for ``submission`` on ``answers``,
        from the grader in the format check's worker: never in this process, under the
        worker's memory cap, within ``GRADE_DEADLINE_S`` (a grader that overruns either is
        stopped, and that is the reason). Raises TaskError when the grader cannot be run or
        the answers are unusable."""
        kwargs = {"submission": str(submission.absolute()), "answers": str(answers),
                  "sample": str(self.sample_submission)}  # fmt: skip
        worker = self._grader_for(self.sample_submission)
        try:
            score, error = worker.call(SCORE_IN_WORKER, kwargs, GRADE_DEADLINE_S)
        except GraderStopped as exc:
            return None, str(exc)
        return (None if score is None else float(score)), error

    def train_rows(self) -> int | None:
        trains = sorted(self.public_dir.glob("*train*.csv")) or sorted(
            self.public_dir.glob("*.csv")
        )
        return count_rows(trains[0]) if trains else None

    def secret_paths(self) -> tuple[Path, ...]:
        """The answers, the private dir, the whole data dir the task was prepared in (every
        task's raw data and answers there; its public data is bound on its own) and the task
        folder's raw data, from which its ``prepare.py`` rebuilds the answers."""
        return (self.answers, self.private_dir, *_data_dir(self.private_dir, self.id),
                self.folder / RAW)  # fmt: skip


def _data_dir(private_dir: Path, task_id: str) -> tuple[Path, ...]:
    """The data dir and the task's own directory in it, for data laid out as Podium and
    MLE-bench prepare it (``<data dir>/<task id>/prepared/private``); none otherwise."""
    root = private_dir.parent.parent
    depth = len(Path(task_id).parts)
    if private_dir.parent.name != "prepared" or len(root.parents) <= depth:
        return ()
    data = root.parents[depth - 1]
    return (data, root) if data / task_id == root else ()


def sample_bound(sample: Path | None) -> int | None:
    """The most bytes a submission answering ``sample`` may have (``bounds``), or None
    without a sample to size it by."""
    try:
        return bounds(sample).max_bytes if sample is not None else None
    except Invalid:
        return None


@contextlib.contextmanager
def opened_within(path: Path, limits: Bounds) -> Iterator[BinaryIO | str]:
    """A node's submission open for reading (through ``podium.untrusted``: no link followed,
    at most ``limits.max_bytes``) and at its start, if it is within ``limits`` (its size,
    header line and width: :func:`bound_problem`, on its first bytes); else why not, as text.

    The host reads no more of it than the header's bound: whoever reads on (a child process)
    streams the file itself, so the host's memory never depends on the file."""
    with contextlib.ExitStack() as stack:
        opened: BinaryIO | str
        try:
            fh = stack.enter_context(
                open_untrusted(path, max_bytes=limits.max_bytes, shown="the submission")
            )
        except FileNotFoundError:
            opened = f"the submission {path} does not exist"
        except Refused as exc:
            opened = str(exc)
        else:
            head = fh.read(limits.max_header_bytes + 1)
            problem = bound_problem(head, os.fstat(fh.fileno()).st_size, limits)
            fh.seek(0)
            opened = fh if problem is None else problem
        yield opened


def read_registry_config(folder: Path) -> dict[str, Any]:
    """Validate the folder's layout and return its ``config.yaml``."""
    if not folder.is_dir():
        raise TaskError(f"task folder not found: {folder}")
    for name, holds in REQUIRED_FILES.items():
        if not (folder / name).is_file():
            raise TaskError(f"task folder {folder} has no {name}", hint=f"{name} holds {holds}")
    try:
        config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskError(f"{folder / 'config.yaml'} is not valid YAML: {exc}") from None
    if not isinstance(config, dict):
        raise TaskError(f"{folder / 'config.yaml'} must be a mapping of keys")
    for dotted in REQUIRED_KEYS:
        value: Any = config
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if not value:
            raise TaskError(
                f"{folder / 'config.yaml'} lacks {dotted}",
                hint=f"config.yaml holds {REQUIRED_FILES['config.yaml']}",
            )
    return config


def read_description(path: Path, obfuscated: bool) -> str:
    """The description the agent reads, or its obfuscated twin (``description_obfuscated.md``,
    MLE-bench's rewrite that hides which Kaggle competition this is)."""
    if obfuscated:
        path = path.with_name("description_obfuscated.md")
        if not path.is_file():
            raise TaskError(
                f"this task has no obfuscated description ({path} does not exist)",
                hint="run it without --obfuscated-description",
            )
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskError(f"cannot read the description {path}: {exc.strerror}") from None


def read_scores(path: Path) -> list[float]:
    """The leaderboard's scores; its order must tell the direction (MLE-bench's rule: first
    below last means lower is better).

    Blank scores inside the board are kept (thresholds follow MLE-bench, see
    ``medal_thresholds``), but not at either end: MLE-bench would compare with NaN there and
    silently call any metric higher-is-better, which would also point the search the wrong way.
    """
    scores = read_leaderboard(path)
    for line, end in ((2, "first"), (len(scores) + 1, "last")):
        if math.isnan(scores[line - 2]):
            raise TaskError(
                f"{path}: the {end} score (line {line}) is empty, so the metric's direction "
                "cannot be told",
                hint="MLE-bench tells the direction by comparing the first and last scores; "
                "remove the rows without a score",
            )
    if len(scores) < 2 or scores[0] == scores[-1]:
        raise TaskError(f"{path}: cannot tell the metric's direction from fewer than two scores")
    return scores


def load_folder_task(
    folder: Path, data_dir: Path | None, task_id: str | None = None, obfuscated: bool = False
) -> FolderTask:
    """Load a registry-layout folder; ``task_id`` (e.g. ``mini/titanic``) also names its data
    directory, so two benchmarks' tasks with the same config id never share prepared data.
    ``obfuscated`` gives the agent ``description_obfuscated.md`` instead of the description."""
    folder = folder.resolve()
    config = read_registry_config(folder)
    tid = task_id or str(config["id"])
    scores = read_scores(folder / "leaderboard.csv")
    preparer = str(config.get("preparer") or "prepare:prepare")
    answers = Path(config["dataset"]["answers"]).name
    prepared = prepare_data(folder, tid, data_dir or default_data_dir(), preparer, answers)
    sample = prepared.public / Path(config["dataset"]["sample_submission"]).name
    if not sample.is_file():
        where = (
            f"the data found prepared in {prepared.public} has no {sample.name}"
            if prepared.as_found
            else f"{folder}/prepare.py did not write {sample.name} into the public data"
        )
        raise TaskError(
            where, hint="dataset.sample_submission in config.yaml names the sample submission file"
        )
    return FolderTask(
        id=tid,
        name=str(config["name"]),
        description=read_description(folder / "description.md", obfuscated),
        public_dir=prepared.public,
        private_dir=prepared.private,
        lower_is_better=is_lower_better(scores),
        metric_name=task_metric(
            str(config.get("grader", {}).get("name") or ""),
            read_description(folder / "description.md", obfuscated),
        ),
        folder=folder,
        config=config,
        leaderboard=scores,
        task_type=str(config.get("task_type") or "unknown"),
    )
