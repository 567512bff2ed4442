"""The library under the command line: what each ``podium`` command does, as functions.

Every command of :mod:`podium.cli` parses its arguments and prints; the work is here, so a
script does exactly what the command does (``podium.run(config)`` is ``podium run``). This
layer may import every room below it and is imported only by the CLI and by users.
"""

from podium.api.config import RunConfig, load_config
from podium.api.runs import RunResult, RunStart, load_registry, resume, run

__all__ = [
    "RunConfig",
    "RunResult",
    "RunStart",
    "load_config",
    "load_registry",
    "resume",
    "run",
]
