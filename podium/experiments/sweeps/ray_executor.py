"""The Ray executor: each run of a sweep is one Ray task, on a local Ray or a cluster.

No shared filesystem is assumed. The driver packs the run dir (``plan.json`` and whatever an
earlier attempt left) into a ``.tar.gz`` (:mod:`podium.experiments.sweeps.shipping`) and hands
it to the task; the task unpacks it into a fresh directory on its worker's local disk, runs the
sweep worker there as a subprocess (stdout and stderr appended to ``run.log``; the environment
is the Ray worker's, which carries the ``CUDA_VISIBLE_DEVICES`` Ray chose, plus ``job.env``),
packs the run dir again and returns ``(exit status, archive)``. The driver swaps the archive's
contents in for ``job.run_dir`` atomically.

Cancelling ``execute`` cancels the task (``ray.cancel``, not forced): Ray raises
``KeyboardInterrupt`` in the task, which sends SIGTERM to the worker, waits up to ``grace_s``,
then kills its process group, and posts the run dir as it stands to a small mailbox actor before
letting the cancellation finish; the driver collects it from there, so an interrupted run
resumes from its interrupted state. If the task does not finish within the grace period plus a
margin, it is cancelled by force and the run dir stays as it was shipped (the run then starts
over from that state). A task that never started leaves the run dir untouched.

Ray failures (a lost node, a crashed worker) make ``execute`` return :data:`EXIT_INTERRUPTED`
with a line in the driver's ``run.log``, so the run is resumable; anything else Ray reports is
:data:`EXIT_FAILED`. Ray itself retries a task once when its worker dies.

The cluster's workers need Podium installed (the task imports this module and runs
``python -m podium.cli.sweep_worker``); ``ray://`` addresses need the ``ray[client]`` extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from podium.errors import UserError
from podium.experiments.sweeps.executor import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    LOG_NAME,
    Job,
)
from podium.experiments.sweeps.shipping import pack_dir, replace_dir, unpack_dir

GRACE_S = 60.0  # SIGTERM → kill, on the worker's side (as the local executor waits)
SHIP_MARGIN_S = 60.0  # beyond the grace period: for packing and shipping an interrupted run dir
CONNECT_TIMEOUT_S = 10.0
AUTH_HINT = (  # recent Ray (2.60 here): `ray start` clusters want a token by default
    "if the cluster uses token authentication, set RAY_AUTH_MODE=token and its token "
    "(RAY_AUTH_TOKEN, or the file ~/.ray/auth_token)"
)
_RESUMABLE_ERRORS = (
    "TaskCancelledError",
    "WorkerCrashedError",
    "NodeDiedError",
    "ObjectLostError",
    "LocalRayletDiedError",
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

T = TypeVar("T")


def import_ray() -> ModuleType:
    """Ray, or the one-line error saying how to get it."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise UserError(
            f"the ray executor needs Ray: it is not installed ({exc})",
            hint="pip install 'podium[ray]'",
        ) from None


class RayExecutor:
    """Runs each job as one Ray task with the job's CPUs and GPUs.

    ``address`` None starts a local Ray instance (``num_cpus`` CPUs and ``num_gpus`` GPUs,
    default: all there are; reused if this process already has Ray initialised); otherwise it
    is the cluster to connect to (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``).
    ``max_parallel`` caps the number of runs at once (default: what the cluster's resources
    fit). The worker's command line is ``job.argv(python, run dir)``, called on the Ray worker.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None,
        cpus_per_run: float,
        gpus_per_run: int,
        max_parallel: int | None = None,
        *,
        num_cpus: int | None = None,
        num_gpus: int | None = None,
        grace_s: float = GRACE_S,
    ) -> None:
        if cpus_per_run < 0 or gpus_per_run < 0:
            raise UserError("the resources per run cannot be negative")
        if max_parallel is not None and max_parallel < 1:
            raise UserError(f"max parallel runs must be at least 1, got {max_parallel}")
        self.address = address
        self.cpus_per_run = cpus_per_run
        self.gpus_per_run = gpus_per_run
        self.max_parallel = max_parallel
        self.grace_s = grace_s
        self._ray = import_ray()
        self._owned = False  # True when aclose should shut Ray down
        self._connect(num_cpus, num_gpus)
        self._remote = self._ray.remote(max_retries=1)(_run_job)
        self._mailbox_handle: Any = None
        self._check_fits()

    # --- connecting ---------------------------------------------------------------------

    def _connect(self, num_cpus: int | None, num_gpus: int | None) -> None:
        ray = self._ray
        if self.address is not None:
            _check_reachable(self.address)
        if ray.is_initialized():
            return  # this process already talks to a Ray (a test, an embedding program)
        if self.address is None:
            failed = "cannot start a local Ray instance"
        else:
            failed = f"cannot connect to the Ray cluster at {self.address}"
        kwargs: dict[str, Any] = {
            "logging_level": logging.ERROR,
            "log_to_driver": False,
            "include_dashboard": False,
        }
        if self.address is None:
            kwargs.update(num_cpus=num_cpus, num_gpus=num_gpus)
        with _keep_signal_handlers():  # ray.init installs a SIGTERM handler of its own
            try:
                ray.init(address=self.address or "local", **kwargs)  # "local": a new one
            except Exception as exc:
                with contextlib.suppress(Exception):
                    ray.shutdown()
                hint = None
                if "ray[client]" in str(exc):
                    hint = "pip install 'ray[client]' (ray:// addresses need it)"
                elif self.address is not None:
                    hint = AUTH_HINT
                raise UserError(f"{failed}: {_one_line(exc)}", hint=hint) from None
        self._owned = True

    def _check_fits(self) -> None:
        """A local Ray that can never fit one run would leave every task pending forever."""
        if self.address is not None:
            return  # a cluster may grow (an autoscaler adds nodes on demand)
        cpus, gpus, _ = self._cluster()
        if self.gpus_per_run > gpus:
            raise UserError(
                f"each run asks for {self.gpus_per_run} GPU(s) but this machine's Ray has {gpus:g}",
                hint="lower --gpus-per-run, or give a cluster --address",
            )
        if self.cpus_per_run > cpus:
            raise UserError(
                f"each run asks for {self.cpus_per_run:g} CPU(s) but this machine's Ray has "
                f"{cpus:g}",
                hint="lower --cpus-per-run",
            )

    def _cluster(self) -> tuple[float, float, int]:
        resources = self._ray.cluster_resources()
        nodes = sum(1 for node in self._ray.nodes() if node.get("Alive"))
        return float(resources.get("CPU", 0.0)), float(resources.get("GPU", 0.0)), nodes

    # --- the Executor protocol ----------------------------------------------------------

    def capacity(self) -> int:
        if self.max_parallel is not None:
            return self.max_parallel
        cpus, gpus, _ = self._cluster()
        fits: list[int] = []
        if self.cpus_per_run > 0:
            fits.append(int(cpus // self.cpus_per_run))
        if self.gpus_per_run > 0:
            fits.append(int(gpus // self.gpus_per_run))
        return max(1, min(fits)) if fits else max(1, int(cpus))

    def describe(self) -> dict[str, object]:
        cpus, gpus, nodes = self._cluster()
        return {
            "name": self.name,
            "address": self.address,
            "cpus_per_run": self.cpus_per_run,
            "gpus_per_run": self.gpus_per_run,
            "parallel": self.capacity(),
            "cluster": {"cpus": cpus, "gpus": gpus, "nodes": nodes},
        }

    async def execute(self, job: Job) -> int:
        ray = self._ray
        archive = await asyncio.to_thread(pack_dir, job.run_dir)
        key = f"{job.run_id}/{uuid.uuid4().hex}"
        options = {"num_cpus": job.cpus, "num_gpus": job.gpus, "name": f"podium:{job.run_id}"}
        ref = self._remote.options(**options).remote(
            job, archive, self.grace_s, self._mailbox(), key
        )
        del archive
        result = _future(ref)
        try:
            code, data = await asyncio.shield(result)
        except asyncio.CancelledError:
            await self._cancel(ref, result, job, key)
            raise
        except ray.exceptions.RayError as exc:
            return await self._failed(job, key, exc)
        self._mailbox().take.remote(key)  # an attempt Ray retried may have left a run dir there
        await _uncancellable(asyncio.to_thread(replace_dir, job.run_dir, data))
        return int(code)

    async def aclose(self) -> None:
        if self._mailbox_handle is not None and self._ray.is_initialized():
            with contextlib.suppress(Exception):
                self._ray.kill(self._mailbox_handle)
            self._mailbox_handle = None
        if self._owned and self._ray.is_initialized():
            await asyncio.to_thread(self._ray.shutdown)
        self._owned = False

    # --- interruptions and failures -----------------------------------------------------

    def _mailbox(self) -> Any:
        if self._mailbox_handle is None:
            actor = self._ray.remote(num_cpus=0, max_restarts=0)(Mailbox)
            self._mailbox_handle = actor.remote()
        return self._mailbox_handle

    async def _cancel(self, ref: Any, result: asyncio.Future[Any], job: Job, key: str) -> None:
        """Stop the task gracefully and bring back the run dir as it stands, if it started."""
        ray = self._ray
        with contextlib.suppress(Exception):  # already finished, or Ray is gone
            ray.cancel(ref, force=False, recursive=False)
        data: bytes | None = None
        try:
            try:
                waited = self.grace_s + SHIP_MARGIN_S
                _, data = await asyncio.wait_for(asyncio.shield(result), waited)
            except ray.exceptions.RayError:
                data = await self._take(key)
            except TimeoutError:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True, recursive=False)
            if data is not None:
                await _uncancellable(asyncio.to_thread(replace_dir, job.run_dir, data))
        except asyncio.CancelledError:  # cancelled again: stop waiting
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True, recursive=False)
            raise

    async def _failed(self, job: Job, key: str, exc: BaseException) -> int:
        """The task did not return: keep what it posted, if anything, and say why in run.log."""
        data = await self._take(key)
        if data is not None:
            await _uncancellable(asyncio.to_thread(replace_dir, job.run_dir, data))
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        resumable = bool(kinds.intersection(_RESUMABLE_ERRORS)) and "OutOfMemoryError" not in kinds
        text = _ANSI.sub("", str(exc)).strip()
        with (job.run_dir / LOG_NAME).open("a", encoding="utf-8") as log:
            log.write(f"[podium] the Ray task failed: {type(exc).__name__}: {text}\n")
        return EXIT_INTERRUPTED if resumable else EXIT_FAILED

    async def _take(self, key: str) -> bytes | None:
        try:
            taken = _future(self._mailbox().take.remote(key))
            posted = await asyncio.wait_for(asyncio.shield(taken), 30.0)
        except (TimeoutError, self._ray.exceptions.RayError):
            return None
        return posted if isinstance(posted, bytes) else None


class Mailbox:
    """A Ray actor holding the run dirs of cancelled tasks until the driver collects them."""

    def __init__(self) -> None:
        self._posts: dict[str, bytes] = {}

    def put(self, key: str, data: bytes) -> None:
        self._posts[key] = data

    def take(self, key: str) -> bytes | None:
        return self._posts.pop(key, None)


# --- the task (runs on a Ray worker) -----------------------------------------------------


def _run_job(
    job: Job,
    archive: bytes,
    grace_s: float,
    mailbox: Any,
    key: str,
) -> tuple[int, bytes]:
    """Unpack the run dir locally, run the worker in it, return its status and the run dir."""
    with _interruptible():
        return _run_worker(job, archive, grace_s, mailbox, key)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Let ``ray.cancel`` interrupt this task: it calls ``_thread.interrupt_main()``, which does
    nothing while SIGINT is ignored, as it is in a Ray started from a background job."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _run_worker(
    job: Job,
    archive: bytes,
    grace_s: float,
    mailbox: Any,
    key: str,
) -> tuple[int, bytes]:
    workdir = Path(tempfile.mkdtemp(prefix="podium-ray-"))
    run_dir = workdir / (job.run_dir.name or "run")
    proc: subprocess.Popen[bytes] | None = None
    try:
        unpack_dir(archive, run_dir)
        del archive
        argv = job.argv(sys.executable, run_dir)
        env = {**os.environ, **job.env}
        if "CUDA_VISIBLE_DEVICES" in os.environ:  # the GPUs Ray gave this task win
            env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
        with (run_dir / LOG_NAME).open("ab") as log:
            log.write(f"[podium] ray: {socket.gethostname()}:{run_dir}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killed whole if it must be
            )
        while True:  # short waits: Ray's KeyboardInterrupt arrives between them
            try:
                code = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                continue
        _kill_group(proc)  # anything the worker left running
        return code, pack_dir(run_dir)
    except (KeyboardInterrupt, SystemExit):  # ray.cancel, or the Ray worker is stopping
        if proc is not None:
            _stop(proc, grace_s)
            with contextlib.suppress(BaseException):
                import_ray().get(mailbox.put.remote(key, pack_dir(run_dir)), timeout=60)
        raise
    finally:
        if proc is not None and proc.poll() is None:
            _stop(proc, 0.0)
        shutil.rmtree(workdir, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the worker's group (the run marks itself interrupted), SIGKILL it after
    ``grace_s``."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(KeyboardInterrupt):  # a second cancel must not cut this short
            time.sleep(0.1)
    _kill_group(proc)
    with contextlib.suppress(KeyboardInterrupt):
        proc.wait()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


# --- helpers ---------------------------------------------------------------------------------


def _future(ref: Any) -> asyncio.Future[Any]:
    """An ObjectRef's result as an asyncio future (also for a Ray Client ref, whose
    ``__await__`` does not work). Await it through :func:`asyncio.shield`: cancelling Ray's own
    future makes Ray Client log an error when the result arrives."""
    future = asyncio.wrap_future(ref.future())
    future.add_done_callback(_retrieve)  # read where it matters; never "never retrieved"
    return future


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def _uncancellable(aw: Awaitable[T]) -> T:
    """Finish ``aw`` even if the caller is cancelled meanwhile (then re-raise the cancel)."""
    task = asyncio.ensure_future(aw)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


def _check_reachable(address: str) -> None:
    """Fail fast on an address nothing listens at (Ray itself retries for minutes)."""
    hostport = address.removeprefix("ray://")
    if hostport == "auto" or ":" not in hostport:
        return
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        raise UserError(
            f"cannot connect to the Ray cluster at {address}: {_one_line(exc)}",
            hint="check --address: ray://HEAD:10001 (Ray Client), HEAD:6379, or auto on a node",
        ) from None


@contextlib.contextmanager
def _keep_signal_handlers() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
