"""Which code ran: the git commit of Podium's source, and of each plugin package loaded.

A version number says little about a checkout being edited: two runs of "0.1.0" may have run
different code. So a run records, for Podium and for every plugin package loaded through its
entry point, the commit of the package's source directory and whether that source differed from
the commit (``dirty``) — when the directory is part of a git work tree. An installed wheel
(``site-packages``) or a directory git does not track has no commit: None, never a guess (a
virtual environment inside a checkout would otherwise report the checkout's commit).

Git is asked with a short timeout, at most once per directory per process (the answer is
cached), and any problem (no git, a timeout, a repository git refuses) gives None: provenance
never fails a run.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from podium import __version__

GIT_TIMEOUT_S = 3.0
INSTALLED = frozenset({"site-packages", "dist-packages"})  # an installed package's parents


@dataclass(frozen=True)
class SourceState:
    """A source directory's git commit (40 hex digits) and whether its files differ from it
    (modified, staged or untracked files under the directory); both None outside a checkout."""

    commit: str | None = None
    dirty: bool | None = None


@dataclass(frozen=True)
class PackageState:
    """A loaded plugin package: its distribution's version and its source's git state."""

    version: str | None
    source: SourceState


def podium_source() -> SourceState:
    """The git state of the ``podium`` package's own directory."""
    return source_state(Path(__file__).resolve().parent)


def loaded_plugin_packages(group: str) -> dict[str, PackageState]:
    """The packages providing the ``group`` entry points whose module this process imported
    (the plugins that are loaded, not every one installed), by distribution name."""
    found: dict[str, PackageState] = {}
    for name, version, module in _entry_points(group):
        if module in sys.modules and name not in found:
            directory = module_directory(module)
            source = source_state(directory) if directory is not None else SourceState()
            found[name] = PackageState(version, source)
    return found


@functools.cache
def _entry_points(group: str) -> tuple[tuple[str, str | None, str], ...]:
    """(distribution name, version, module) of each entry point of ``group``; read once."""
    listed = []
    for ep in importlib.metadata.entry_points(group=group):
        dist = ep.dist
        listed.append((dist.name if dist else ep.name, dist.version if dist else None, ep.module))
    return tuple(listed)


def module_directory(module: str) -> Path | None:
    """The directory holding a module's top-level package (or the module's file), found
    without importing anything; None when it cannot be found."""
    top = module.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(spec.origin).resolve().parent if spec.origin else None


@functools.cache
def source_state(directory: Path) -> SourceState:
    """``directory``'s git state (see :class:`SourceState`); cached per process.

    None/None unless the directory is inside a git work tree *and* holds files git tracks there
    (an ignored virtual environment inside a checkout does not), and never for an installed
    package. Git runs with optional locks off, so asking never blocks another git command.
    """
    if INSTALLED & set(directory.parts) or not directory.is_dir():
        return SourceState()
    head = _git(directory, "rev-parse", "--is-inside-work-tree", "HEAD")
    if head is None or head.split()[:1] != ["true"] or len(head.split()) != 2:
        return SourceState()
    tracked = _git(directory, "ls-files", "--", ".")
    if not tracked:
        return SourceState()
    status = _git(directory, "status", "--porcelain", "--", ".")
    return SourceState(head.split()[1], None if status is None else bool(status.strip()))


def _git(directory: Path, *args: str) -> str | None:
    """``git ARGS`` run in ``directory``: its stdout, or None on any failure."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # no GIT_DIR
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        done = subprocess.run(
            ["git", *args], cwd=directory, env=env, capture_output=True, text=True,
            timeout=GIT_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout if done.returncode == 0 else None


def version_line() -> str:
    """What ``podium --version`` prints."""
    return f"podium {__version__}"
