"""Tasks stored as folders in MLE-bench's registry layout.

```
<folder>/config.yaml       id, name, dataset.answers, dataset.sample_submission, grader.grade_fn
<folder>/description.md    the competition description the agent reads
<folder>/prepare.py        prepare(raw, public, private): writes the public and private data
<folder>/grade.py          grade(submission, answers) -> score
<folder>/leaderboard.csv   the private leaderboard (a ``score`` column, in rank order)
```
The data is prepared on first use into ``<data_dir>/<id>/prepared/{public,private}``; the agent
only ever gets ``public``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from podium.benchmarks.prepare import prepare_data
from podium.benchmarks.submission_format import check_against_sample
from podium.errors import TaskError
from podium.interfaces import Task

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
REQUIRED_KEYS = ("id", "name", "dataset.answers", "dataset.sample_submission", "grader.grade_fn")


def default_data_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "podium" / "data"


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

    @property
    def sample_submission(self) -> Path:
        return self.public_dir / Path(self.config["dataset"]["sample_submission"]).name

    def check_submission(self, path: Path) -> str | None:
        return check_against_sample(path, self.sample_submission)


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


def leaderboard_lower_is_better(path: Path) -> bool:
    """MLE-bench's rule: lower is better iff the first leaderboard score is below the last."""
    import pandas as pd

    try:
        scores = pd.read_csv(path)["score"]
    except (KeyError, ValueError, OSError) as exc:
        raise TaskError(
            f"{path} has no readable 'score' column ({exc})",
            hint=f"leaderboard.csv holds {REQUIRED_FILES['leaderboard.csv']}",
        ) from None
    if len(scores) < 2 or scores.iloc[0] == scores.iloc[-1]:
        raise TaskError(f"{path}: cannot tell the metric's direction from fewer than two scores")
    return bool(scores.iloc[0] < scores.iloc[-1])


def load_folder_task(folder: Path, data_dir: Path | None, task_id: str | None = None) -> FolderTask:
    folder = folder.resolve()
    config = read_registry_config(folder)
    tid = task_id or str(config["id"])
    prepared = prepare_data(folder, str(config["id"]), data_dir or default_data_dir())
    sample = prepared.public / Path(config["dataset"]["sample_submission"]).name
    if not sample.is_file():
        raise TaskError(
            f"{folder}/prepare.py did not write {sample.name} into the public data",
            hint="dataset.sample_submission in config.yaml names the sample submission file",
        )
    return FolderTask(
        id=tid,
        name=str(config["name"]),
        description=(folder / "description.md").read_text(encoding="utf-8"),
        public_dir=prepared.public,
        private_dir=prepared.private,
        lower_is_better=leaderboard_lower_is_better(folder / "leaderboard.csv"),
        metric_name=str(config.get("grader", {}).get("name") or "the competition metric"),
        folder=folder,
        config=config,
    )
