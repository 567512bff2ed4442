"""A plain data folder as a task: the competition as MLE-bench's harness hands it to an agent.

Inside MLE-bench's container the agent sees one folder, ``/home/data``: ``description.md`` and
the public files (train, test, sample submission) directly in it, and nothing else — no
``config.yaml``, no grader, no answers, no leaderboard. Beside it the harness puts its rules
(``/home/instructions.txt``) and, inside the container, a validation server that runs the real
grader on the private answers and answers "valid" or why not, never a score.

The contract of this module:

* :func:`is_data_folder` — a directory holding ``description.md`` and none of the files of a
  task in MLE-bench's *registry* layout (``config.yaml``, ``grade.py``, ``prepare.py``,
  ``leaderboard.csv``), which :func:`podium.benchmarks.folder.load_folder_task` loads: a
  registry folder missing its config must fail as such, never show its grader to an agent.
* :func:`load_data_folder` — the :class:`DataFolderTask`:

  - ``description``: ``description.md`` (``description_obfuscated.md`` with ``obfuscated``).
  - ``metric_name`` and ``lower_is_better``: Podium fixes the metric's direction once per task,
    before the search starts (a direction guessed per node inverts the search). A data folder
    has no leaderboard to read it from, so it is taken from what the description states (see
    :mod:`podium.benchmarks.metric_direction`); a description that names no known metric is
    refused, in one line saying so, rather than searched in a guessed direction. The name is
    the canonical key :mod:`podium.benchmarks.metric_reading` reads (``rmse_log`` for "RMSE
    between the logarithms"), the same a registry folder with this description gets.
  - ``rules``: the harness's own ``instructions.txt`` beside the folder (or the file
    ``MLEBENCH_INSTRUCTIONS`` names; ``instructions_obfuscated.txt`` with ``obfuscated`` where it
    exists), followed by :data:`IN_PODIUM`, which says what its paths are inside Podium. No
    instructions file: no rules.
  - ``check_submission``: MLE-bench's validation endpoint when it answers
    (``MLEBENCH_VALIDATION_URL``, default ``http://localhost:5000/validate``; empty: never
    asked; see :mod:`podium.benchmarks.validation_server`). No verdict from it means the
    answer-free structural check (:func:`podium.submission_check.check` against the sample
    submission) decides.
  - ``grade``: ``None``. The answers are not here; the harness grades after the run.
  - ``id``: ``$COMPETITION_ID`` (the harness sets it) or the folder's name.

:data:`MLEBENCH_RULES` is MLE-bench's rules in Podium's words, for MLE-bench tasks run from the
registry (``mlebench/<id>``), where no harness file exists.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from podium.benchmarks.folder import opened_within, read_description, sample_bound
from podium.benchmarks.metric_direction import DIRECTION_ENV, metric_from_env, read_metric
from podium.benchmarks.metric_reading import HEADING
from podium.benchmarks.validation_server import ServerVerdict, ValidationServer, validation_server
from podium.errors import TaskError
from podium.interfaces import Task
from podium.scaffolds import count_rows
from podium.submission_check import MIN_SIZE_CAP, Bounds, Invalid, bounds, check, find_sample
from podium.untrusted import Refused, open_untrusted

log = logging.getLogger("podium.benchmarks")

DESCRIPTION = "description.md"
# Any of these makes a folder a (perhaps broken) task in the registry layout instead, whose
# files must never all be shown to an agent as its data: the grader, the leaderboard.
REGISTRY_FILES = ("config.yaml", "grade.py", "prepare.py", "leaderboard.csv")
INSTRUCTIONS = "instructions.txt"
INSTRUCTIONS_OBFUSCATED = "instructions_obfuscated.txt"

COMPETITION_ID_ENV = "COMPETITION_ID"  # set by MLE-bench's harness in the container
INSTRUCTIONS_ENV = "MLEBENCH_INSTRUCTIONS"

MLEBENCH_RULES = """\
- This competition is an offline copy of a Kaggle competition. The benchmark made its own \
train/test split, so the files in ./input/ may differ a little from what the description says; \
work with the files you are given.
- Produce the submission by training a model and predicting the test set with it. Never label \
test rows by hand or write predictions from your own knowledge.
- Only ./submission/submission.csv is graded, in the format of the sample submission in \
./input/, whatever the description says about submission files.
- ./validate_submission.py tells whether a submission is well-formed; it never gives a score.
- Do not look for, download or copy other people's solutions to this competition: a \
plagiarised submission is disqualified. Use only the data you are given.
- Where the description disagrees with these rules, the rules win."""

IN_PODIUM = """\
How these rules apply here: your code runs in a fresh Python kernel whose working directory \
holds the competition's data in ./input/ (read-only; description.md is the task description \
you are given). \
Write the submission to ./submission/submission.csv in that directory and nowhere else: the \
best solution's submission is put where the rules above ask for it. Instead of the validation \
tool the rules name, check its format with ./validate_submission.py (from validate_submission \
import validate); every submission is also checked with the benchmark's own validator after \
the code has run. Neither gives a score."""


# --- the task -----------------------------------------------------------------------------------


@dataclass
class DataFolderTask(Task):
    """A competition as a plain public data folder (MLE-bench's ``/home/data``): ungraded."""

    id: str
    name: str
    description: str
    public_dir: Path
    lower_is_better: bool
    metric_name: str
    metric_source: str = ""  # how the metric and its direction were found (for the record)
    rules: str | None = None
    server: ValidationServer | None = None
    task_type: str = "unknown"
    complexity: str | None = None
    _warned: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    @property
    def competition_id(self) -> str:
        return self.id

    @cached_property
    def sample_submission(self) -> Path | None:
        """The public sample submission, or None when the folder has no single one."""
        try:
            return find_sample(self.public_dir)
        except Invalid as exc:  # none, or several candidates
            self._warn_once("sample", f"{exc}: submissions get no structural check")
            return None

    def check_submission(self, path: Path) -> str | None:
        """The validation server's verdict when it gives one, else the structural check.

        The host streams the file (to the server, then to the structural check's child) and
        never holds it: its memory does not depend on the file. A submission out of the
        sample's bounds is refused on its first bytes, before the server is asked. A
        submission the server was too slow on is said in the log, by its path (its node's);
        a server that is down says so itself (``ValidationServer``) when it goes and comes
        back; any other answer without a verdict is warned of once."""
        sample = self.sample_submission
        try:
            limits = bounds(sample) if sample is not None else None
        except Invalid as exc:
            return str(exc)
        with _opened(path, limits) as opened:
            if isinstance(opened, str):
                return opened
            verdict = self._ask_server(path, opened)
            if verdict is not None:
                return None if verdict.valid else verdict.reason
            opened.seek(0)
            if sample is None:
                return None if _has_text(opened) else "the submission is empty"
            return check(opened, sample, limits.max_bytes if limits else None)

    def max_submission_bytes(self) -> int | None:
        return sample_bound(self.sample_submission) or MIN_SIZE_CAP

    def _ask_server(self, path: Path, submission: BinaryIO) -> ServerVerdict | None:
        """The server's verdict, or None (said in the log) when it gives none."""
        if self.server is None:
            return None
        verdict = self.server.ask(submission)
        if isinstance(verdict, ServerVerdict):
            return verdict
        if verdict.cause == "slow":
            log.warning(
                "%s: %s: the validation server gave no verdict: %s; the structural "
                "check decides for this submission",
                self.id, path, verdict,
            )  # fmt: skip
        elif verdict.cause == "answer":
            self._warn_once(
                "server",
                f"the validation server {self.server.url} gave no verdict: {verdict}; "
                "submissions get the structural check instead",
            )
        return None

    def train_rows(self) -> int | None:
        trains = sorted(self.public_dir.glob("*train*.csv")) or sorted(
            self.public_dir.glob("*.csv")
        )
        return count_rows(trains[0]) if trains else None

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s: %s", self.id, message)


def is_data_folder(path: Path) -> bool:
    """A directory with ``description.md`` and none of a registry-layout task's files
    (``config.yaml``, ``grade.py``, ``prepare.py``, ``leaderboard.csv``): MLE-bench's
    ``/home/data``. Everything in it is the agent's to read."""
    return (
        path.is_dir()
        and (path / DESCRIPTION).is_file()
        and not any((path / name).exists() for name in REGISTRY_FILES)
    )


def load_data_folder(path: Path, obfuscated: bool = False) -> DataFolderTask:
    """The task a data folder holds (see the module's docstring for every field's source)."""
    folder = path.expanduser().resolve()
    if not is_data_folder(folder):
        raise TaskError(
            f"{path} is not a data folder",
            hint=f"a data folder holds {DESCRIPTION} and the public data files, "
            f"and none of {', '.join(REGISTRY_FILES)}",
        )
    description = read_description(folder / DESCRIPTION, obfuscated)
    reading = metric_from_env(read_metric(description))
    if reading is None:
        raise TaskError(
            f"{folder / DESCRIPTION} names no metric Podium knows, so it cannot tell "
            "whether a lower or a higher score is better",
            hint=f"set {DIRECTION_ENV}=lower (or higher)",
        )
    task_id = os.environ.get(COMPETITION_ID_ENV, "").strip() or folder.name
    return DataFolderTask(
        id=task_id,
        name=_title(description) or task_id,
        description=description,
        public_dir=folder,
        lower_is_better=reading.lower_is_better,
        metric_name=reading.key,
        metric_source=reading.source,
        rules=read_rules(folder, obfuscated),
        server=validation_server(in_harness=COMPETITION_ID_ENV in os.environ),
    )


def read_rules(folder: Path, obfuscated: bool = False) -> str | None:
    """The harness's instructions for the agent, then what they mean inside Podium; None when
    there is no instructions file."""
    named = os.environ.get(INSTRUCTIONS_ENV, "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise TaskError(f"{INSTRUCTIONS_ENV}={named}: no such file")
    else:
        path = folder.parent / INSTRUCTIONS
        if obfuscated and (folder.parent / INSTRUCTIONS_OBFUSCATED).is_file():
            path = folder.parent / INSTRUCTIONS_OBFUSCATED
        if not path.is_file():
            return None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read the benchmark's instructions {path}: {exc}") from None
    return f"{text}\n\n{IN_PODIUM}" if text else None


def _title(description: str) -> str | None:
    """The description's first heading, unless it is a generic one ("Overview", "Task")."""
    for match in HEADING.finditer(description):
        title = match.group(2).strip("*_ ")
        if title and title.lower() not in {"overview", "task", "description"}:
            return title
        break
    return None


@contextlib.contextmanager
def _opened(path: Path, limits: Bounds | None) -> Iterator[BinaryIO | str]:
    """The submission open within the sample's ``limits`` (``opened_within``), or within the
    smallest size cap where the folder has no sample; else why not, as text."""
    if limits is not None:
        with opened_within(path, limits) as within:
            yield within
        return
    with contextlib.ExitStack() as stack:
        opened: BinaryIO | str
        try:
            opened = stack.enter_context(
                open_untrusted(path, max_bytes=MIN_SIZE_CAP, shown="the submission")
            )
        except FileNotFoundError:
            opened = f"the submission {path} does not exist"
        except Refused as exc:
            opened = str(exc)
        yield opened


def _has_text(fh: BinaryIO, chunk: int = 1 << 20) -> bool:
    """Whether the file holds anything but whitespace, read a chunk at a time."""
    while block := fh.read(chunk):
        if block.strip():
            return True
    return False
