"""Which code ran: a source directory's git commit and dirty state, and the plugin packages a
process loaded through entry points. Real git repositories in tmp dirs (a few ms each)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from podium import versions
from podium.versions import PackageState, SourceState, loaded_plugin_packages, source_state

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with a committed package ``pkg`` and an ignored ``venv``."""
    source_state.cache_clear()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "venv" / "lib" / "plugin").mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("venv/\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_a_committed_package_has_its_commit_and_is_clean(repo: Path) -> None:
    assert source_state(repo / "pkg") == SourceState(git(repo, "rev-parse", "HEAD"), False)


@pytest.mark.parametrize("change", ["edit", "untracked"])
def test_an_edited_or_added_file_makes_it_dirty(repo: Path, change: str) -> None:
    name = "__init__.py" if change == "edit" else "new.py"
    (repo / "pkg" / name).write_text("x = 1\n")
    assert source_state(repo / "pkg").dirty is True


def test_the_answer_is_cached_per_process(repo: Path) -> None:
    before = source_state(repo / "pkg")
    (repo / "pkg" / "__init__.py").write_text("x = 1\n")
    assert source_state(repo / "pkg") is before  # git is asked once per directory


def test_no_commit_outside_a_checkout_or_for_what_git_does_not_track(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("plain")
    installed = repo / "site-packages" / "plugin"
    installed.mkdir(parents=True)
    (installed / "mod.py").write_text("")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a vendored wheel")
    for directory in (elsewhere, repo / "venv" / "lib" / "plugin", installed, repo / "nope"):
        assert source_state(directory) == SourceState(), directory


def test_the_plugins_are_the_loaded_entry_points_packages(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = (("podium-extra", "1.2", "json"), ("podium-unloaded", "0.1", "no_such_module_xyz"))
    monkeypatch.setattr(versions, "_entry_points", lambda group: listed)
    assert json.__name__ == "json"  # imported: a loaded plugin's module
    assert loaded_plugin_packages("podium") == {
        "podium-extra": PackageState("1.2", SourceState())  # the standard library: no checkout
    }
