"""The graders fixture (``tests/fixtures/graders``): a fake MLE-bench registry of seven
competitions whose graders imitate real MLE-bench graders that broke Podium's submission
checks, with submissions labelled by what MLE-bench's grader says about them.

``REPO`` is the registry (``MLEBench(repo=REPO)``), ``DATA`` its prepared data dir, ``cases()``
every labelled submission. ``grade_like_mlebench`` runs a competition's grader the way
MLE-bench's ``grade_csv`` does, without Podium's grading code, so the labels can be checked
against the graders themselves. The data and submissions are written by
``tests/fixtures/graders/make_fixture.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from podium.benchmarks.task_code import load_task_function

REPO = Path(__file__).resolve().parents[1] / "fixtures" / "graders"
DATA = REPO / "data"
SUBMISSIONS = REPO / "submissions"
COMPETITIONS: list[str] = sorted(
    p.parent.name for p in (REPO / "mlebench" / "competitions").glob("*/config.yaml")
)


@dataclass(frozen=True)
class Case:
    """One labelled submission. ``valid`` is MLE-bench's verdict, ``why`` the reason.

    ``reader_fails``: pandas' ``read_csv`` raises on the file (MLE-bench's ``grade_csv`` lets
    that escape instead of answering; Podium must report it invalid). ``quirk``: the verdict
    follows from an accident of the real grader's code (numpy broadcasting, an unchecked range,
    a NaN score), not from a rule a format check would state. ``answer_dependent``: only the
    private answers could tell (no case is, so far).
    """

    competition: str
    submission: Path
    valid: bool
    why: str
    answer_dependent: bool = False
    quirk: bool = False
    reader_fails: bool = False

    @property
    def id(self) -> str:
        """``<competition>/<valid|invalid>/<file>``, for test ids."""
        return f"{self.competition}/{self.submission.parent.name}/{self.submission.name}"


def cases() -> list[Case]:
    """Every labelled submission, competition by competition. Raises ValueError if a file and
    its label in ``cases.json`` disagree, or a file has no label."""
    found: list[Case] = []
    for competition in COMPETITIONS:
        folder = SUBMISSIONS / competition
        entries = json.loads((folder / "cases.json").read_text(encoding="utf-8"))
        listed = set()
        for entry in entries:
            path = folder / entry["file"]
            if not path.is_file() or path.parent.name != ("valid" if entry["valid"] else "invalid"):
                raise ValueError(f"{competition}: {entry['file']} is missing or misfiled")
            listed.add(path)
            found.append(
                Case(
                    competition=competition,
                    submission=path,
                    valid=bool(entry["valid"]),
                    why=str(entry["why"]),
                    answer_dependent=bool(entry.get("answer_dependent", False)),
                    quirk=bool(entry.get("quirk", False)),
                    reader_fails=bool(entry.get("reader_fails", False)),
                )
            )
        on_disk = {p for kind in ("valid", "invalid") for p in (folder / kind).iterdir()}
        if on_disk != listed:
            raise ValueError(f"{competition}: unlabelled files {sorted(on_disk - listed)}")
    return found


@cache
def config(competition: str) -> dict[str, Any]:
    folder = REPO / "mlebench" / "competitions" / competition
    loaded: dict[str, Any] = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    return loaded


def sample_submission(competition: str) -> Path:
    return DATA / str(config(competition)["dataset"]["sample_submission"])


def answers_path(competition: str) -> Path:
    return DATA / str(config(competition)["dataset"]["answers"])


def load_answers(competition: str) -> Any:
    """The answers as MLE-bench hands them to a grader: a DataFrame for a .csv, a list of dicts
    (one per line) for a .jsonl."""
    path = answers_path(competition)
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh]
    return pd.read_csv(path)


def grade_like_mlebench(competition: str, submission: Path) -> float | None:
    """MLE-bench's ``grade_csv`` on this fixture's grader: None unless the file is a ``.csv``;
    an empty file is an empty DataFrame; any grader exception means None; otherwise the score
    rounded to 5 places (NaN included: MLE-bench counts it valid). Like MLE-bench, it does not
    catch what ``read_csv`` raises for an unreadable file."""
    if not (submission.is_file() and submission.suffix.lower() == ".csv"):
        return None
    try:
        frame = pd.read_csv(submission)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    try:
        score = grade_fn(competition)(frame, load_answers(competition))
    except Exception:
        return None
    return float(round(score, 5))


@cache
def grade_fn(competition: str) -> Callable[..., Any]:
    """The competition's ``grade(submission, answers)``, loaded by path as Podium loads it."""
    folder = REPO / "mlebench" / "competitions" / competition
    spec = str(config(competition)["grader"]["grade_fn"])
    return load_task_function(folder, spec, "grader.grade_fn", "(submission, answers)")
