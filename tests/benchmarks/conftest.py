"""Fixtures of the bundled tasks' test modules: each module names its task folder ``FOLDER``
(and ``TASK_ID`` when the task is loaded by another id than ``mini/<folder name>``)."""

from __future__ import annotations

from types import ModuleType

import pandas as pd
import pytest

from podium.benchmarks import load_folder_task
from podium.benchmarks.folder import FolderTask
from tests.support import task_module


@pytest.fixture(scope="module")
def task(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> FolderTask:
    """The module's task, prepared once per module in its own data dir."""
    folder = request.module.FOLDER
    task_id = getattr(request.module, "TASK_ID", f"mini/{folder.name}")
    return load_folder_task(folder, tmp_path_factory.mktemp(folder.name), task_id=task_id)


@pytest.fixture(scope="module")
def grade_module(request: pytest.FixtureRequest) -> ModuleType:
    return task_module(request.module.FOLDER, "grade")


@pytest.fixture(scope="module")
def answers(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.answers)


@pytest.fixture(scope="module")
def train(task: FolderTask) -> pd.DataFrame:
    """The public training table (a module whose task has another layout defines its own)."""
    return pd.read_csv(task.public_dir / "train.csv")


@pytest.fixture(scope="module")
def test_frame(task: FolderTask) -> pd.DataFrame:
    """The public test table, without answers."""
    return pd.read_csv(task.public_dir / "test.csv")


@pytest.fixture
def sample(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.sample_submission)
