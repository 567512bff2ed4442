"""Fixtures shared by every test module (helpers they build on: ``tests/support.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from podium.benchmarks import load_folder_task
from podium.benchmarks.folder import FolderTask
from tests.recorded_run import RecordedRun, write_recorded_run
from tests.support import REPO, TITANIC, TOY_TASK, UNPRIVILEGED_USER

pytest_plugins = ["podium.testing.fixtures"]  # fake_openai, fake_anthropic


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with the toy task prepared once for the whole session."""
    path = tmp_path_factory.mktemp("data")
    load_folder_task(TOY_TASK, path)
    return path


@pytest.fixture
def toy_task(data_dir: Path) -> FolderTask:
    return load_folder_task(TOY_TASK, data_dir)


@pytest.fixture(scope="session")
def titanic(data_dir: Path) -> FolderTask:
    """mini/titanic, prepared once per session in the shared data dir."""
    return load_folder_task(TITANIC, data_dir, task_id="mini/titanic")


@pytest.fixture(scope="session")
def user_venv() -> Path:
    """A venv with Podium that an ordinary user can run.

    As root (CI): user ``podium-tester``'s venv on Debian's /usr/bin/python3, made by
    ``scripts/unprivileged-venv`` (a second interpreter, too). Otherwise: this venv.
    """
    if os.getuid() != 0:
        return Path(sys.prefix)
    script = REPO / "scripts" / "unprivileged-venv"
    made = subprocess.run([script, UNPRIVILEGED_USER], capture_output=True, text=True, check=True)
    return Path(made.stdout.strip())


@pytest.fixture(autouse=True)
def _no_podium_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never inherit PODIUM_* settings from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("PODIUM_"):
            monkeypatch.delenv(name)


@pytest.fixture
def recorded_run(tmp_path: Path) -> RecordedRun:
    """A finished-looking run with every node kind and hostile content (tests/recorded_run.py)."""
    return write_recorded_run(tmp_path / "run")
