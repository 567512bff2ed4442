"""Small facts about processes on this machine, shared by the rooms that sweep leftovers, and
the one way a child of Podium's is tied to its parent's life."""

from __future__ import annotations

import ctypes
import os
import signal
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1  # prctl(2)


def _find_prctl() -> Any:
    """libc's prctl, looked up here, in the parent: a child between fork and exec should not
    load anything (another thread of the parent may have held the loader's lock)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _find_prctl()


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """In a child (between fork and exec): Linux sends it ``signum`` when ``parent`` dies.

    ``parent`` is the parent's pid as the *parent* read it before the fork: a parent that dies
    before the request is made never sends the signal (the child has already been handed to a
    reaper), so once it is made the parent is looked at again and, if it is not ``parent`` any
    more, the child is killed at once, as the signal would have killed it. With that, no
    instant exists at which the parent may die and the child go on. SIGKILL here, whatever
    ``signum`` is: nothing of the child's own has run yet that a gentler signal would let
    finish. Not Linux (no prctl): nothing is done.
    """
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signum)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


# ``python -m MODULE`` puts the working directory first on sys.path, so a folder named like a
# package there (a clone of Podium named ``podium``, say) shadows the installed one. This runs
# the module as -m would, but under -P (nothing prepended) and with the directory this Podium
# was imported from put first if that interpreter would not find it anyway (a source checkout
# run in place), so the child runs the same Podium as its parent, wherever it was started.
_RUN_MODULE = (
    "import runpy, sys\n"
    "root = sys.argv.pop(1)\n"
    "if root not in sys.path:\n"
    "    sys.path.insert(0, root)\n"
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n"
)


def module_argv(python: str, module: str, *args: str) -> list[str]:
    """The command line running Podium's ``module`` (``podium.cli.sweep_worker``, say) with
    ``args`` in ``python`` (3.11 or later: ``-P``), immune to the working directory."""
    return [python, "-P", "-c", _RUN_MODULE, _podium_root(), module, *args]


def _podium_root() -> str:
    """The sys.path entry this process's ``podium`` package was found under."""
    import podium

    return str(Path(podium.__file__).resolve().parent.parent)
