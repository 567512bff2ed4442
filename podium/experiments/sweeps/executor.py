"""Where a sweep's runs execute: the contract every executor keeps.

A job is one run of the grid. The executor runs the sweep worker (``Job.worker``, the module the
caller hands down: the command line's sweep worker; ``WORKER RUN_DIR`` as ``python -m`` would
run it, but wherever the driver was started: ``Job.argv``) with the job's resources and returns
its exit status; when ``execute`` returns, ``job.run_dir`` on the driver holds every file the
run wrote. That is all the driver relies on, so an executor may run the worker anywhere (a
local process, a Ray worker on another machine with its own disk) as long as the run dir comes
back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from podium.processes import module_argv

LOG_NAME = "run.log"  # the worker's stdout and stderr, appended, inside the run dir

# Exit statuses of the worker (the driver reads summary.json for the rest).
EXIT_FINISHED = 0
EXIT_FAILED = 1
EXIT_REFUSED = 2  # refused before starting (a config or sandbox problem): retrying won't help
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Job:
    """One run to execute. ``run_dir`` already holds ``plan.json`` (and, when the run is being
    resumed, the files of its earlier attempts)."""

    run_id: str
    run_dir: Path
    worker: str  # the module that runs one run of a sweep (it lives above this room)
    cpus: float = 1.0
    gpus: int = 0
    env: dict[str, str] = field(default_factory=dict)  # extra environment for the worker

    def argv(self, python: str, run_dir: Path | None = None) -> list[str]:
        """The worker's command line; ``run_dir`` is where the run dir is on the worker's side.
        Not ``python -m``: a ``podium`` folder in the working directory would shadow Podium."""
        return module_argv(python, self.worker, str(run_dir or self.run_dir))


class Executor(Protocol):
    """Runs jobs. ``execute`` is called concurrently, at most ``capacity()`` at a time.

    Cancelling ``execute`` (asyncio cancellation: the sweep was interrupted) must stop the
    worker — SIGTERM first, so the run marks its nodes interrupted and stays resumable, then a
    kill after a grace period — and bring back whatever the run dir holds, before re-raising.
    """

    name: str

    def capacity(self) -> int:
        """How many jobs may run at once."""
        ...

    def describe(self) -> dict[str, object]:
        """For the manifest and the disclosure card: name, parallelism, resources per run."""
        ...

    async def execute(self, job: Job) -> int:
        """Run the worker for ``job``; return its exit status."""
        ...

    async def aclose(self) -> None: ...
