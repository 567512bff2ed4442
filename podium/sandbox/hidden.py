"""What a kernel's sandbox binds of the solutions' environment, and every path it must hide.

The solutions' interpreter is probed once, run as a kernel runs it (``-E -s``: no
``PYTHONPATH``, no user site, as the kernel's cleared environment has none), for:

* what to bind read-only (:func:`python_paths`): its prefixes, and every site directory on
  its ``sys.path`` (``site-packages``, ``dist-packages``), so the packages of another
  environment that a ``.pth`` file adds import inside too. Another directory a ``.pth`` adds
  (an editable install's project) is not bound: the rest of a project (its data, its runs,
  a ``.env``) would be readable with it;
* every copy of Podium it could import from (each ``sys.path`` directory's ``podium``, and
  where its import system finds ``podium``, an editable install's included): a wheel installed
  there ships the bundled tasks' raw data (``podium.secret_paths.bundled_answers``).

:func:`secret_paths` is then every path no kernel may read: Podium's own
(``podium.secret_paths.podium_secret_paths``), the bundled raw data of every copy of Podium the
interpreter sees or that a Python installation under a bound root holds (``/usr/local``'s
site-packages, say), and what the run declared (``Sandbox.hide``). ``bwrap_command`` masks those
that lie under what it binds.
"""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

from podium.errors import SandboxError
from podium.secret_paths import bundled_answers, podium_secret_paths

_PROBE = """
import importlib.util, json, os, sys
prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]
path = [p for p in sys.path if os.path.isabs(p) and os.path.exists(p)]
podium = [os.path.join(p, "podium") for p in path]
try:
    spec = importlib.util.find_spec("podium")
    podium += list(spec.submodule_search_locations or []) if spec else []
except Exception:
    pass
print(json.dumps({"prefixes": prefixes, "path": path, "podium": podium}))
"""
# Where a Python installation under a bound root keeps its packages (a Podium installed there
# by another interpreter is readable too: /usr/local/lib/python3.11/dist-packages/podium).
SITE_PACKAGES = ("lib/python3*/*-packages/podium", "local/lib/python3*/*-packages/podium",
                 "lib64/python3*/*-packages/podium")  # fmt: skip
SYSTEM_ROOTS = (Path("/usr"),)


@functools.cache
def _probe(python: str) -> dict[str, list[str]]:
    try:
        out = subprocess.run(
            [python, "-E", "-s", "-c", _PROBE], capture_output=True, text=True, timeout=60,
            check=True,
        ).stdout  # fmt: skip
        found = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise SandboxError(f"cannot run the solutions' interpreter {python}: {exc}") from exc
    return {key: [str(p) for p in found[key]] for key in ("prefixes", "path", "podium")}


def python_paths(python: str) -> tuple[Path, ...]:
    """The directories an interpreter needs (venv, base installation, every site directory
    on its ``sys.path``), to bind read-only; sorted."""
    found = _probe(python)
    sites = [p for p in found["path"] if Path(p).name.endswith("-packages")]
    paths = sorted({Path(p) for p in (*found["prefixes"], *sites)})
    # Each once: a site directory inside a prefix comes with it (bound again, it would be one
    # more mount point in a forked kernel than in a cold one).
    return tuple(p for p in paths if not any(p.is_relative_to(q) and p != q for q in paths))


@functools.cache
def bundled_copies(python: str) -> tuple[Path, ...]:
    """The bundled tasks' raw data of every copy of Podium ``python`` can see or a Python
    installation under a root it binds holds (what a wheel, a conda or a system install
    ships); sorted."""
    packages = {Path(p) for p in _probe(python)["podium"]}
    for root in (*python_paths(python), *SYSTEM_ROOTS):
        for pattern in SITE_PACKAGES:
            packages.update(root.glob(pattern))
    return tuple(sorted({raw for package in packages for raw in bundled_answers(package)}))


def secret_paths(python: str, declared: Iterable[Path]) -> tuple[Path, ...]:
    """Every path a kernel running ``python`` must not read: Podium's own, the bundled copies
    it can see, and ``declared`` (the run's task); sorted, each once."""
    return tuple(sorted({*podium_secret_paths(), *bundled_copies(python), *declared}))
