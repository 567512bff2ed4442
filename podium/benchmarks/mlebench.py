"""MLE-bench's 75 competitions, read from its own registry and graded by its own grader.

Where the registry comes from: ``$MLEBENCH_REPO`` (a checkout of MLE-bench, or any folder
in its layout: ``mlebench/competitions/<id>/config.yaml`` and ``experiments/splits/*.txt``), else
the checkout the importable ``mlebench`` package was installed from (``pip install -e``, as
MLE-bench's README says). The data is wherever ``mlebench prepare`` put it (``--data-dir``,
default MLE-bench's own ``~/.cache/mle-bench/data``); Podium never downloads or prepares it.
The agent gets ``<data>/<id>/prepared/public`` and the description (or its obfuscated rewrite).

Grading: with the ``mlebench`` package importable and serving the same checkout, reports come from
its ``grade_csv`` (MLE-bench's own code). Otherwise (a registry folder without the package, as in
our tests) the competition's ``grade_fn`` is loaded by path and MLE-bench's rules are applied by
:mod:`podium.benchmarks.grading`, which reproduces them exactly. A competition folder given by
path (``<checkout>/mlebench/competitions/<id>``) is this benchmark's task ``<id>``
(:func:`registry_competition`): its data is the one ``mlebench prepare`` made, never prepared
by Podium.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

from podium.benchmarks.data_folder import MLEBENCH_RULES
from podium.benchmarks.folder import (
    GRADE_DEADLINE_S,
    FolderTask,
    read_description,
    read_registry_config,
    read_scores,
)
from podium.benchmarks.grader_worker import GraderSource, GraderStopped
from podium.benchmarks.grading import (
    LFS_PREFIX,
    GradeFn,
    UnreadableSubmission,
    grade_report,
    is_lower_better,
    leaderboard_percentile,
    read_submission,
    submission_bounds,
)
from podium.benchmarks.metric_reading import task_metric
from podium.benchmarks.task_code import one_line
from podium.errors import TaskError
from podium.interfaces import Benchmark, Task, TaskSummary
from podium.records import GradeReport, utcnow
from podium.scaffolds import count_rows
from podium.secret_paths import mlebench_data_dir
from podium.submission_check import Bounds
from podium.untrusted import Refused, copy_untrusted

log = logging.getLogger("podium.benchmarks")

REPO_ENV = "MLEBENCH_REPO"
# Split name → file under experiments/splits/. "lite" is the paper's name for low complexity.
SPLITS = {"low": "low", "lite": "low", "medium": "medium", "high": "high", "dev": "dev",
          "all": "split75"}  # fmt: skip
COMPLEXITIES = ("low", "medium", "high")
INSTALL_HINT = (
    "install it from its repository: git clone https://github.com/openai/mle-bench && "
    "cd mle-bench && git lfs pull && pip install -e . (or set MLEBENCH_REPO to a checkout)"
)
DESCRIPTION = "MLE-bench's Kaggle competitions (needs mlebench installed and its data prepared)"
MLEBENCH_IN_WORKER = "podium.benchmarks.mlebench:grade_in_worker"


def default_data_dir() -> Path:
    """MLE-bench's own default (``appdirs.user_cache_dir()/mle-bench/data``) on Linux."""
    return mlebench_data_dir()


def package_repo() -> Path | None:
    """The checkout the ``mlebench`` package was installed from, without importing it."""
    try:
        spec = importlib.util.find_spec("mlebench")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent.parent


def registry_competition(folder: Path) -> tuple[Path, str] | None:
    """``(checkout, competition id)`` when ``folder`` is a competition of an MLE-bench registry,
    ``<checkout>/mlebench/competitions/<id>`` with a ``config.yaml``; else None.

    Such a folder is MLE-bench's own: its data is what ``mlebench prepare`` made in MLE-bench's
    data dir, and its ``prepare.py`` needs MLE-bench and the raw Kaggle download, so it is
    loaded as this benchmark's task rather than as a Podium task folder.
    """
    folder = folder.expanduser().resolve()
    competitions = folder.parent
    if (
        competitions.name == "competitions"
        and competitions.parent.name == "mlebench"
        and (folder / "config.yaml").is_file()
    ):
        return competitions.parent.parent, folder.name
    return None


def find_repo() -> Path:
    """The registry to read: ``$MLEBENCH_REPO``, else the installed package's checkout."""
    configured = os.environ.get(REPO_ENV)
    repo = Path(configured).expanduser() if configured else package_repo()
    if repo is None:
        raise TaskError(
            "MLE-bench is not installed (no module named 'mlebench')", hint=INSTALL_HINT
        )
    if not (repo / "mlebench" / "competitions").is_dir():
        where = f"{REPO_ENV}={configured}" if configured else f"the mlebench package at {repo}"
        raise TaskError(
            f"{where} has no mlebench/competitions folder",
            hint="point it at a checkout of MLE-bench, installed with pip install -e",
        )
    return repo.resolve()


class MLEBench(Benchmark):
    name = "mlebench"
    description = DESCRIPTION

    def __init__(self, repo: Path | None = None) -> None:
        self._repo = repo

    @cached_property
    def repo(self) -> Path:
        return self._repo or find_repo()

    @property
    def competitions(self) -> Path:
        return self.repo / "mlebench" / "competitions"

    @cached_property
    def graded_by_package(self) -> bool:
        """MLE-bench's own grader serves this registry (it only knows its own checkout)."""
        installed = package_repo()
        return installed is not None and installed == self.repo

    def task_ids(self, split: str | None = None) -> list[str]:
        if split is None:
            return sorted(p.parent.name for p in self.competitions.glob("*/config.yaml"))
        return self._split(split)

    def _split(self, split: str) -> list[str]:
        if split not in SPLITS:
            raise TaskError(
                f"mlebench has no split {split!r}",
                hint="splits: low (= lite, 22 tasks), medium (38), high (15), dev (7), all (75)",
            )
        path = self.repo / "experiments" / "splits" / f"{SPLITS[split]}.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            raise TaskError(
                f"the split file {path} is missing",
                hint="MLE-bench must be installed from a full checkout (pip install -e .)",
            ) from None
        return [line.strip() for line in text.splitlines() if line.strip()]

    @cached_property
    def _complexity(self) -> dict[str, str]:
        """Competition id → its complexity split, for reports."""
        found: dict[str, str] = {}
        for split in COMPLEXITIES:
            try:
                found.update(dict.fromkeys(self._split(split), split))
            except TaskError:
                continue
        return found

    def load_task(self, task_id: str, data_dir: Path | None, obfuscated: bool = False) -> Task:
        folder = self._folder(task_id)
        config = read_registry_config(folder)
        data = (data_dir or default_data_dir()).expanduser().resolve()
        public = data / task_id / "prepared" / "public"
        answers = data / str(config["dataset"]["answers"])
        if not _has_files(public) or not answers.is_file():
            raise TaskError(
                f"mlebench/{task_id} is not prepared in {data}", hint=_prepare_hint(task_id, data)
            )
        scores = read_scores(folder / "leaderboard.csv")
        description_path = self.repo / str(config.get("description") or "")
        if not description_path.is_file():
            description_path = folder / "description.md"
        description = read_description(description_path, obfuscated)
        return MLEBenchTask(
            id=f"mlebench/{task_id}",
            name=str(config["name"]),
            description=description,
            public_dir=public,
            private_dir=data / task_id / "prepared" / "private",
            lower_is_better=is_lower_better(scores),
            metric_name=task_metric(str(config["grader"].get("name") or ""), description),
            folder=folder,
            config=config,
            leaderboard=scores,
            complexity=self._complexity.get(task_id),
            data_dir=data,
            graded_by_package=self.graded_by_package,
        )

    def summary(self, task_id: str, data_dir: Path | None) -> TaskSummary:
        """A listing row from the registry alone: works before any data is prepared."""
        folder = self._folder(task_id)
        config = read_registry_config(folder)
        data = (data_dir or default_data_dir()).expanduser()
        public = data / task_id / "prepared" / "public"
        board = folder / "leaderboard.csv"
        problems, lower, teams = [], None, None
        if not _has_files(public):
            problems.append(f"not prepared (mlebench prepare -c {task_id})")
        if _is_lfs_pointer(board):
            problems.append("leaderboard is a Git LFS pointer (git lfs pull)")
        else:
            try:
                scores = read_scores(board)
                lower, teams = is_lower_better(scores), len(scores)
            except TaskError as exc:
                problems.append(exc.message)
        trains = sorted(public.glob("*train*.csv")) if public.is_dir() else []
        return TaskSummary(
            id=task_id,
            task_type=str(config.get("competition_type") or "unknown"),
            metric=str(config["grader"].get("name") or "?"),
            lower_is_better=lower,
            rows=count_rows(trains[0]) if trains else None,
            teams=teams,
            complexity=self._complexity.get(task_id),
            status="; ".join(problems) or "ready",
        )

    def _folder(self, task_id: str) -> Path:
        folder = self.competitions / task_id
        if "/" in task_id or not (folder / "config.yaml").is_file():
            raise TaskError(
                f"unknown MLE-bench competition {task_id!r}", hint="podium tasks mlebench"
            )
        return folder


@dataclass
class MLEBenchTask(FolderTask):
    """A prepared MLE-bench competition. ``data_dir`` is MLE-bench's data folder (the answers'
    paths in config.yaml are relative to it)."""

    data_dir: Path = Path()
    graded_by_package: bool = False
    rules: str | None = MLEBENCH_RULES

    def grader_source(self) -> GraderSource:
        """MLE-bench's package serves its graders by module name; a registry folder by path."""
        if not self.graded_by_package:
            return super().grader_source()
        return GraderSource(str(self.config["grader"]["grade_fn"]))

    @property
    def competition_id(self) -> str:
        """The id MLE-bench knows it by: reports carry it, so MLE-bench's tools can read them."""
        return str(self.config["id"])

    @property
    def sample_submission(self) -> Path:
        return self.data_dir / str(self.config["dataset"]["sample_submission"])

    @property
    def answers(self) -> Path:
        return self.data_dir / str(self.config["dataset"]["answers"])

    def secret_paths(self) -> tuple[Path, ...]:
        """MLE-bench's whole data dir (every competition's Kaggle download, raw files and
        private answers; the public data is bound on its own) and the answers, wherever the
        config puts them."""
        return (self.data_dir, self.answers, self.private_dir)

    def grade_on(self, submission: Path, answers: Path) -> GradeReport | None:
        """MLE-bench's package graders read their own answers: no other answers here."""
        return None if self.graded_by_package else super().grade_on(submission, answers)

    def grade(self, submission: Path, sandboxed: bool | None = None) -> GradeReport:
        """MLE-bench's own ``grade_csv`` (:func:`grade_with_mlebench`), run in the task's
        grader worker as every grading is (see ``FolderTask.grader_score``): a grader stopped
        there (its deadline, its memory) gives a report without a score, saying so."""
        if not self.graded_by_package:
            return super().grade(submission, sandboxed)
        kwargs = {"competition_id": self.competition_id, "data_dir": str(self.data_dir),
                  "submission": str(submission.absolute()), "sandboxed": sandboxed,
                  "answers": str(self.answers), "sample": str(self.sample_submission)}  # fmt: skip
        worker = self._grader_for(self.sample_submission)
        try:
            fields = worker.call(MLEBENCH_IN_WORKER, kwargs, GRADE_DEADLINE_S)
        except GraderStopped as exc:
            why = str(exc)
            return grade_report(
                self.competition_id, submission, self.leaderboard, lambda _: (None, why), sandboxed
            )
        report = GradeReport.model_validate(fields)
        percentile = leaderboard_percentile(report.score, self.leaderboard)
        return report.model_copy(update={"leaderboard_percentile": percentile})


_import_lock = threading.Lock()


@contextlib.contextmanager
def _working_dir_elsewhere() -> Iterator[None]:
    """Run the block with the working directory in a temporary directory, removed afterwards
    (and nothing switched when the current directory no longer exists)."""
    try:
        Path.cwd()
    except FileNotFoundError:
        yield
        return
    with (
        tempfile.TemporaryDirectory(prefix="podium-mlebench-", ignore_cleanup_errors=True) as tmp,
        contextlib.chdir(tmp),
    ):
        yield


def _mlebench() -> tuple[ModuleType, ModuleType, ModuleType]:
    """MLE-bench's ``grade``, ``registry`` and ``data`` modules, imported without side effects
    on the user's directory.

    ``mlebench/data.py`` opens its checksum cache at import time as
    ``diskcache.Cache("cache")``, a path relative to the working directory: importing it makes
    ``./cache/cache.db`` wherever the user happens to be (and fails in a directory they cannot
    write). That cache only serves ``mlebench prepare``, which Podium never runs, so the first
    import runs with the working directory switched to a temporary one (removed afterwards).
    The switch is process-wide for the moment of the import, which happens before any grading
    work; the top-level package is imported first, where it is, so it is found the same way.
    """
    with _import_lock:
        importlib.import_module("mlebench")
        if "mlebench.data" not in sys.modules:
            with _working_dir_elsewhere():
                importlib.import_module("mlebench.data")
                importlib.import_module("mlebench.grade")
        return (
            importlib.import_module("mlebench.grade"),
            importlib.import_module("mlebench.registry"),
            sys.modules["mlebench.data"],
        )


def grade_in_worker(
    grade_fn: GradeFn,
    competition_id: str,
    data_dir: str,
    submission: str,
    sandboxed: bool | None,
    answers: str,
    sample: str,
) -> dict[str, Any]:
    """:func:`grade_with_mlebench` as a grader worker's call (``GraderWorker.call``; MLE-bench
    loads its own grader, so ``grade_fn`` is unused): the submission held to the bounds of the
    answers and the sample, the report as JSON."""
    limits = submission_bounds(Path(answers), Path(sample))
    report = grade_with_mlebench(
        competition_id, Path(data_dir), Path(submission), sandboxed, limits
    )
    return report.model_dump(mode="json")


def grade_with_mlebench(
    competition_id: str,
    data_dir: Path,
    submission: Path,
    sandboxed: bool | None,
    limits: Bounds | None = None,
) -> GradeReport:
    """MLE-bench's own ``grade_csv``, its report carried over field by field. MLE-bench only
    logs why it rejected a submission; that log line becomes the report's ``error``.

    MLE-bench reads the submission with ``pd.read_csv`` and lets a parse error escape, so a
    file pandas cannot read (wrong encoding, broken quoting) would end grading in a traceback.
    The copy it is handed is read first with the same reader (:func:`read_submission`); an
    unreadable one is an invalid submission, reported as ``grade_csv`` reports one without a
    score: MLE-bench's own leaderboard, thresholds and direction, no medal. Anything else that
    makes MLE-bench's code fail (its data, its grader's result) is a TaskError, never a
    traceback. With ``limits``, a submission out of them is unreadable (read within them).

    It runs MLE-bench's grader in this process: a task calls it in its grader worker.
    """
    try:
        grade, registry, data = _mlebench()
    except ImportError as exc:  # installed, but a dependency of its grader is missing
        raise TaskError(
            f"cannot import MLE-bench's grader: {one_line(exc)}", hint=INSTALL_HINT
        ) from None
    said, refused, unreadable = _Said(), None, None
    grader_log = logging.getLogger("mlebench.grade_helpers")
    with tempfile.TemporaryDirectory(prefix="podium-grade-") as tmp:
        graded = Path(tmp, submission.name)
        try:  # MLE-bench reads by path: hand it a copy made through podium.untrusted
            copy_untrusted(submission, graded, shown="the submission")
        except FileNotFoundError:
            graded = submission
        except Refused as exc:
            refused, graded = str(exc), Path(tmp, "refused", submission.name)
        exists = graded.is_file() and graded.suffix.lower() == ".csv"  # grade_csv's own test
        if exists:
            try:
                read_submission(graded, limits)
            except UnreadableSubmission as exc:
                unreadable = str(exc)
            except MemoryError:
                unreadable = "cannot read the submission: out of memory"
        grader_log.addHandler(said)
        try:
            competition = registry.registry.set_data_dir(data_dir).get_competition(competition_id)
            if unreadable is None:
                fields: dict[str, Any] = grade.grade_csv(graded, competition).to_dict()
            else:
                fields = _report_without_score(data, competition, graded)
        except Exception as exc:
            raise TaskError(
                f"MLE-bench's grading of {competition_id} failed: {one_line(exc)}",
                hint=f"the submission is not the cause; check the competition's data "
                f"(mlebench prepare -c {competition_id}) and its grader",
            ) from None
        finally:
            grader_log.removeHandler(said)
    fields = {k: v for k, v in fields.items() if k in GradeReport.model_fields}
    fields["submission_path"] = str(submission)
    if refused is not None:
        fields["error"] = refused
    elif unreadable is not None:
        fields["error"] = unreadable
    elif not fields.get("submission_exists"):
        fields["error"] = (
            f"{submission} is not a .csv file" if submission.exists() else
            f"no submission at {submission}"
        )  # fmt: skip
    elif fields.get("score") is None:
        reason = said.lines[-1] if said.lines else "see its log"
        fields["error"] = f"MLE-bench's grader rejected the submission: {reason}"
    return GradeReport(**fields, sandboxed=sandboxed)


def _report_without_score(data: ModuleType, competition: Any, graded: Path) -> dict[str, Any]:
    """The report ``grade_csv`` gives an existing submission whose grade is None: from
    MLE-bench's own readiness check, leaderboard, ``rank_score`` and direction rule."""
    if not data.is_dataset_prepared(competition, grading_only=True):
        raise ValueError(f"the dataset of {competition.id} is not prepared")
    board = data.get_leaderboard(competition)
    ranked = competition.grader.rank_score(None, board)
    medals = {k: bool(ranked[k]) for k in ("gold_medal", "silver_medal", "bronze_medal")}
    return {
        "competition_id": competition.id,
        "score": None,
        **{k: float(ranked[k]) for k in (
            "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")},
        "any_medal": any(medals.values()),
        **medals,
        "above_median": bool(ranked["above_median"]),
        "submission_exists": True,
        "valid_submission": False,
        "is_lower_better": bool(competition.grader.is_lower_better(board)),
        "created_at": utcnow(),
        "submission_path": str(graded),
    }  # fmt: skip


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(" ".join(record.getMessage().split()))


def _has_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def _is_lfs_pointer(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(len(LFS_PREFIX)) == LFS_PREFIX
    except OSError:
        return False


def _prepare_hint(task_id: str, data: Path) -> str:
    flag = "" if data == default_data_dir().resolve() else f" --data-dir {data}"
    return f"run: mlebench prepare -c {task_id}{flag} (or pass --data-dir where it is prepared)"
