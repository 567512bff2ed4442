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
:mod:`podium.benchmarks.grading`, which reproduces them exactly.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from podium.benchmarks.folder import FolderTask, read_description, read_registry_config, read_scores
from podium.benchmarks.grading import LFS_PREFIX, is_lower_better, leaderboard_percentile
from podium.errors import TaskError
from podium.interfaces import Benchmark, Task, TaskSummary
from podium.records import GradeReport
from podium.scaffolds import count_rows
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


def default_data_dir() -> Path:
    """MLE-bench's own default (``appdirs.user_cache_dir()/mle-bench/data``) on Linux."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mle-bench" / "data"


def package_repo() -> Path | None:
    """The checkout the ``mlebench`` package was installed from, without importing it."""
    try:
        spec = importlib.util.find_spec("mlebench")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent.parent


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
        return MLEBenchTask(
            id=f"mlebench/{task_id}",
            name=str(config["name"]),
            description=read_description(description_path, obfuscated),
            public_dir=public,
            private_dir=data / task_id / "prepared" / "private",
            lower_is_better=is_lower_better(scores),
            metric_name=str(config["grader"].get("name") or "the competition metric"),
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

    def grade(self, submission: Path, sandboxed: bool | None = None) -> GradeReport:
        if not self.graded_by_package:
            return super().grade(submission, sandboxed)
        report = grade_with_mlebench(self.competition_id, self.data_dir, submission, sandboxed)
        percentile = leaderboard_percentile(report.score, self.leaderboard)
        return report.model_copy(update={"leaderboard_percentile": percentile})


def grade_with_mlebench(
    competition_id: str, data_dir: Path, submission: Path, sandboxed: bool | None
) -> GradeReport:
    """MLE-bench's own ``grade_csv``, its report carried over field by field. MLE-bench only
    logs why it rejected a submission; that log line becomes the report's ``error``."""
    from mlebench.grade import grade_csv  # type: ignore[import-not-found]
    from mlebench.registry import registry  # type: ignore[import-not-found]

    competition = registry.set_data_dir(data_dir).get_competition(competition_id)
    said, refused = _Said(), None
    grader_log = logging.getLogger("mlebench.grade_helpers")
    grader_log.addHandler(said)
    with tempfile.TemporaryDirectory(prefix="podium-grade-") as tmp:
        try:  # MLE-bench reads by path: hand it a copy made through podium.untrusted
            copy_untrusted(submission, Path(tmp, submission.name), shown="the submission")
            graded = Path(tmp, submission.name)
        except FileNotFoundError:
            graded = submission
        except Refused as exc:
            refused, graded = str(exc), Path(tmp, "refused", submission.name)
        try:
            report: Any = grade_csv(graded, competition)
        finally:
            grader_log.removeHandler(said)
    fields = {k: v for k, v in report.to_dict().items() if k in GradeReport.model_fields}
    fields["submission_path"] = str(submission)
    if fields.get("score") is None and fields.get("submission_exists"):
        reason = said.lines[-1] if said.lines else "see its log"
        fields["error"] = f"MLE-bench's grader rejected the submission: {reason}"
    if refused is not None:
        fields["error"] = refused
    return GradeReport(**fields, sandboxed=sandboxed)


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
