"""Loads the code a task folder names: ``module.path:function`` specs from its config.yaml.

MLE-bench's configs name functions by module path (``grader.grade_fn``, ``preparer``), and
those paths may contain hyphens (``mlebench.competitions.spooky-author-identification.grade``),
so they are not imported by name: the path's last component names a file in the task folder
(``grade`` → ``<folder>/grade.py``), loaded by path under a fresh module name so two tasks'
files never collide. The file is loaded as a module of a synthetic package rooted at the
folder, so its relative imports (``from .classes import CLASSES``) find its siblings.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import itertools
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from podium.errors import TaskError

_module_ids = itertools.count()
_NON_IDENTIFIER = re.compile(r"\W")
MAX_REASON_CHARS = 300


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line, cut to a readable length (messages can embed frames)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 1] + "…"
    return text


def load_task_function(folder: Path, spec: str, key: str, contract: str) -> Callable[..., Any]:
    """The function ``spec`` names in ``folder``. ``key`` (the config key) and ``contract``
    (what the function takes and returns) go into the errors, which name the file: missing,
    failing to import, or lacking the function."""
    module_path, colon, fn_name = spec.rpartition(":")
    stem = module_path.rsplit(".", 1)[-1]
    if not colon or not stem or not fn_name:
        raise TaskError(
            f"{key} {spec!r} in {folder} is not 'module:function'",
            hint="for example grade_fn: mlebench.competitions.<id>.grade:grade",
        )
    path = folder / f"{stem}.py"
    if not path.is_file():
        raise TaskError(
            f"module not found: {path} ({key} is {spec!r})",
            hint=f"{stem}.py holds a function {fn_name}{contract}",
        )
    package = f"_podium_task_{next(_module_ids)}_{_NON_IDENTIFIER.sub('_', folder.name)}"
    module_name = f"{package}.{stem}"
    file_spec = importlib.util.spec_from_file_location(module_name, path)
    if file_spec is None or file_spec.loader is None:
        raise TaskError(f"cannot load {path}")
    parent = types.ModuleType(package)
    parent.__path__ = [str(folder)]
    parent.__spec__ = importlib.machinery.ModuleSpec(package, None, is_package=True)
    module = importlib.util.module_from_spec(file_spec)
    # Registered before running it: dataclasses and relative imports look modules up by name.
    sys.modules[package] = parent
    sys.modules[module_name] = module
    try:
        file_spec.loader.exec_module(module)
    except Exception as exc:
        _forget_package(package)
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        raise TaskError(
            f"{path} failed to import: {one_line(exc)}",
            hint=f"it needs {missing!r}: install it where Podium runs" if missing else None,
        ) from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        _forget_package(package)
        raise TaskError(
            f"{path} defines no function {fn_name}() ({key} is {spec!r})",
            hint=f"add def {fn_name}{contract}",
        )
    return cast(Callable[..., Any], fn)


def _forget_package(package: str) -> None:
    """Drop a module that failed (and whatever it imported relatively) from sys.modules."""
    for name in [m for m in list(sys.modules) if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
