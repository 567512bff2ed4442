"""The ``podium`` command line: one module per command group, on top of :mod:`podium.api`.

Every command module imports the shared console (:mod:`podium.cli.console`) and the library
below; nothing imports :mod:`podium.cli.app`, which only assembles the commands. ``main`` is
the console script; ``run_cli`` runs one command line in this process and returns its exit
status (what the tests drive).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

VERSION_ARGS = (["--version"], ["version"])  # answered before the command line is assembled


def main() -> None:
    """The ``podium`` console script. ``podium --version`` answers at once: assembling the
    command line (typer, every command's options) costs more than everything else it does."""
    if sys.argv[1:] in VERSION_ARGS:
        from podium.versions import version_line

        print(version_line(), flush=True)
        return
    from podium.cli.app import main as _main

    _main()


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run one ``podium`` command line here; its exit status."""
    from podium.cli.app import run_cli as _run_cli

    return _run_cli(argv)
