"""Runs a sweep's jobs as processes on this machine, a bounded number at a time.

Each run is its own process (``python -m podium.cli.sweep_worker``) in its own process group: a
crash of one run cannot take another down, and each can be pinned to its GPUs with
``CUDA_VISIBLE_DEVICES``. Every worker is told by the kernel to stop (SIGTERM) when the driver
dies, even by SIGKILL, so an interrupted sweep never leaves orphan runs writing into its runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import subprocess
import sys
from pathlib import Path

from podium.errors import UserError
from podium.experiments.sweeps.executor import LOG_NAME, Job
from podium.experiments.sweeps.hardware import available_cpus, nvidia_smi
from podium.processes import die_with_parent

STOP_GRACE_S = 60.0  # SIGTERM → the run marks its nodes interrupted and writes its summary


def detect_gpus() -> list[str]:
    """GPU indices this process may use: ``CUDA_VISIBLE_DEVICES`` when set (the user's own
    restriction is kept), else what ``nvidia-smi`` lists, else none."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [g.strip() for g in visible.split(",") if g.strip() and g.strip() != "-1"]
    return nvidia_smi("index")


class LocalExecutor:
    name = "local"

    def __init__(
        self,
        parallel: int | None = None,
        cpus_per_run: float = 1.0,
        gpus_per_run: int = 0,
        gpus: list[str] | None = None,
        stop_grace_s: float = STOP_GRACE_S,
    ) -> None:
        self.cpus_per_run, self.gpus_per_run = cpus_per_run, gpus_per_run
        self.gpus = detect_gpus() if gpus is None else list(gpus)
        self.stop_grace_s = stop_grace_s
        if gpus_per_run > len(self.gpus):
            raise UserError(
                f"--gpus-per-run {gpus_per_run}: this machine has {len(self.gpus)} usable GPU(s)",
                hint="lower --gpus-per-run, or check nvidia-smi / CUDA_VISIBLE_DEVICES",
            )
        fit = max(1, int(available_cpus() // max(cpus_per_run, 0.01)))
        if gpus_per_run:
            fit = min(fit, len(self.gpus) // gpus_per_run)
        self.parallel = parallel or fit
        self._free_gpus = list(self.gpus)

    def capacity(self) -> int:
        return self.parallel

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "parallel": self.parallel, "cpus_per_run": self.cpus_per_run,
                "gpus_per_run": self.gpus_per_run, "gpus": self.gpus}  # fmt: skip

    async def execute(self, job: Job) -> int:
        gpus = self._take_gpus(job.gpus)
        env = {**os.environ, **job.env}
        if job.gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
        try:
            with (job.run_dir / LOG_NAME).open("ab") as log:
                proc = await asyncio.create_subprocess_exec(
                    *job.argv(sys.executable), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, env=env, start_new_session=True,
                    preexec_fn=functools.partial(die_with_parent, os.getpid(), signal.SIGTERM),
                )  # fmt: skip
            try:
                return await proc.wait()
            except asyncio.CancelledError:
                await asyncio.shield(self._stop(proc))
                raise
        finally:
            self._free_gpus.extend(gpus)

    def _take_gpus(self, count: int) -> list[str]:
        if count > len(self._free_gpus):  # the driver never runs more than capacity() jobs
            raise RuntimeError(f"no {count} free GPU(s) left of {self.gpus}")
        taken, self._free_gpus = self._free_gpus[:count], self._free_gpus[count:]
        return taken

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """SIGTERM the run's process group (it marks nodes interrupted), then kill it."""
        for sig, wait in ((signal.SIGTERM, self.stop_grace_s), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                await asyncio.wait_for(proc.wait(), wait)
                return
            except TimeoutError:
                continue

    async def aclose(self) -> None:
        return None


def tail(path: Path, lines: int = 20) -> list[str]:
    """The last lines of a log (the reason a run that wrote no summary failed)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            return fh.read().decode("utf-8", "replace").splitlines()[-lines:]
    except OSError:
        return []
