"""Where the answers are: every host path from which a task's answers can be derived.

A kernel's sandbox binds host paths (the system, the solutions' Python environment, the public
data); nothing this module names may be readable through them. It owns what Podium itself
knows of such paths, whatever task runs:

* the bundled tasks of a copy of the package (:func:`bundled_answers`): each task folder's
  ``raw/`` holds the full data, labels included, from which its deterministic ``prepare.py``
  rebuilds ``private/`` byte for byte. A wheel installs them into site-packages, which is the
  solutions' environment when Podium is installed there (``pip install podium``, Ray
  workers, MLE-bench's agent image);
* the data directories Podium and MLE-bench prepare tasks into by default (every task's raw
  download and private answers);
* the answers MLE-bench's harness keeps inside its agent container, ``/private``.

A task adds its own (``Task.secret_paths``: its private dir, its data dir, a holdout's labels),
which the run tells the sandbox (``Sandbox.hide``). A sandbox with a mount namespace masks each
that lies under what it binds, and refuses to start where it cannot (``podium.sandbox.hidden``).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).parent
BUNDLED_SUITES = Path("benchmarks")  # inside a copy of the package: <suite>/<task>/raw
RAW = "raw"  # a registry-layout task folder's raw data, which its prepare.py reads
MLEBENCH_CONTAINER_ANSWERS = Path("/private")


def bundled_tasks(suite: str, package: Path = PACKAGE) -> Path:
    """The folder of a bundled suite's tasks (``mini``, ``arena``) in the copy of the package
    at ``package``."""
    return package / BUNDLED_SUITES / suite


def bundled_answers(package: Path = PACKAGE) -> list[Path]:
    """Every bundled task's raw data in the copy of the package at ``package`` (every suite's
    and task's, not one run's: any of them gives its answers away), sorted; none where there is
    no copy. A generated task keeps its generator and seed in ``raw/`` too, since they rebuild
    its answers. Found by the layout, not by a list, so a new suite is masked without a change
    here."""
    try:
        found = (package / BUNDLED_SUITES).glob(f"*/*/{RAW}")
        return sorted(p for p in found if p.is_dir())
    except OSError:
        return []


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def podium_data_dir() -> Path:
    """Where Podium prepares registry-layout tasks by default (``--data-dir`` overrides it)."""
    return _cache_dir() / "podium" / "data"


def mlebench_data_dir() -> Path:
    """MLE-bench's own default data dir (``appdirs.user_cache_dir()/mle-bench/data``) on Linux."""
    return _cache_dir() / "mle-bench" / "data"


def podium_secret_paths() -> tuple[Path, ...]:
    """What no sandbox may expose, whatever the task: this copy's bundled raw data, the default
    data directories and MLE-bench's container answers. Paths that do not exist are kept (a
    sandbox skips them: nothing is there to read)."""
    return (
        *bundled_answers(),
        podium_data_dir(),
        mlebench_data_dir(),
        MLEBENCH_CONTAINER_ANSWERS,
    )
