"""Runs a competition's grader on submissions in a child process: the host is not the grader's.

A submission is hostile input to a trusted grader: a mask string that decodes to a terabyte, a
file that sends a metric into a loop. So :mod:`podium.benchmarks.grader_check` runs in a
process of its own, started once per task and reused for every node, with a cap on its address
space, one thread per numeric library, no secrets in its environment and its own scratch
directory as working directory (MLE-bench's package writes a ``./cache`` when imported). Every
question has a deadline (``verdict(data, timeout_s)``), which covers the wait for the worker
(another node's question, a start) as well as the answer; a worker that dies or overruns on a
submission gives the verdict "unknown", which the caller answers with the structural check,
and a fresh worker is started at once in the background for the next question (a hostile file
costs its own node the deadline, never the check, and never another node more than its own
deadline). A grader that does not load (its module fails to import, the function is missing) is
said once, as :meth:`GraderWorker.load`'s TaskError (its one message, which a run raises
before its first node and ``podium grade`` at its grading); a worker that fails to start
otherwise is retried ``MAX_START_FAILURES`` times, then the task stops asking. The worker
runs in a process group of its own, killed whole, and dies with its parent
(``PR_SET_PDEATHSIG``); scratch directories of dead hosts are swept.

The same worker grades (:meth:`GraderWorker.call`): the final grade, every node's grade after
the run, a holdout's score. Nothing a grader does with a submission runs in Podium's process:
the worker reads the submission itself (by its path, through ``podium.untrusted``, within the
task's bounds: pandas stops past the rows bound), under the same memory cap, and each grading
has a deadline; a grader that overruns either is stopped and said to have been
(:class:`GraderStopped`), and the worker is replaced for the next question.

Protocol (JSON lines over the child's stdin and a private copy of its stdout; the grader's own
prints go to its stderr, which is discarded): the first line configures it, the child answers
``{"loaded": true}`` once the grade function is loaded (or ``{"error": ..., "hint": ...,
"load": true}`` when it is not), then ``{"ready": N}`` (N trusted stand-ins) or
``{"error": ...}``; then each ``{"path": P}`` (the
submission's file, or a copy of its bytes in the scratch directory) is answered
``{"outcome": ..., "reason": ...}``, and each ``{"call": "module:function", "kwargs": {...}}``
with ``{"result": ...}`` (the function's, called with the grade function and ``kwargs``),
``{"stopped": why}`` (the grader ran out of memory) or ``{"task_error": ..., "hint": ...}``.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from podium.benchmarks.grader_check import GradeFn, OutOfMemory, Verdict
from podium.errors import TaskError
from podium.processes import pid_alive
from podium.sandbox import thread_env

START_TIMEOUT_S = 600.0  # imports, the grader, and one grading per stand-in
VERDICT_TIMEOUT_S = 300.0
MAX_START_FAILURES = 3
SCRATCH_PREFIX = "podium-grader-"
MEMORY_BYTES = 8 * 1024**3
MAX_LINE = 1024 * 1024
PR_SET_PDEATHSIG = 1  # prctl(2)
_PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "MLEBENCH_REPO", "XDG_CACHE_HOME")


@dataclass(frozen=True)
class GraderSource:
    """Where the grade function lives: ``spec`` (``module:function``) in a registry folder's
    files, loaded by path, or (``folder`` None) importable, as MLE-bench's package serves it."""

    spec: str
    folder: str | None = None

    def load(self) -> GradeFn:
        if self.folder is not None:
            from podium.benchmarks.grading import load_grade_fn

            return load_grade_fn(Path(self.folder), self.spec)
        module, _, name = self.spec.rpartition(":")
        return cast(GradeFn, getattr(importlib.import_module(module), name))


class GraderWorker:
    """The host's handle on one task's grader process (started on the first question)."""

    def __init__(
        self, source: GraderSource, sample: Path, keys: tuple[str, ...], task: str = ""
    ) -> None:
        self.keys = keys  # the sample's key columns, which the structural check needs too
        self._source, self._task = source, task  # named in the grader's load failure
        self._memory = MEMORY_BYTES
        self._config = {"source": asdict(source), "sample": str(sample), "keys": list(keys),
                        "memory": self._memory, "host": os.getpid()}  # fmt: skip
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._scratch: Path | None = None
        self._lines: _Lines | None = None  # the running worker's protocol
        self._ready = False  # it answered "ready" (its stand-ins are graded)
        self._start_by = 0.0  # when its start overruns START_TIMEOUT_S
        self._start_failures = 0
        self._broken = ""
        self._unloadable: TaskError | None = None  # the grader does not load: said so, always
        self._closed = False
        # Restarts come from one long-lived daemon thread: the worker's PR_SET_PDEATHSIG fires
        # when the *thread* that started it ends, so a thread per restart would kill its worker.
        self._requests: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._starter: threading.Thread | None = None
        weakref.finalize(self, self._requests.put, False)
        self._finalizer = weakref.finalize(self, _stop, [None, None])

    def verdict(self, submission: bytes | Path, timeout_s: float | None = None) -> Verdict:
        """The grader's verdict on a submission (its bytes, or its file, which the worker
        reads itself) within ``timeout_s`` (default ``VERDICT_TIMEOUT_S``; waiting for the
        worker included); "unknown" whenever it cannot say in that time."""
        if timeout_s is None:
            timeout_s = VERDICT_TIMEOUT_S
        deadline = time.monotonic() + timeout_s
        if not self._lock.acquire(timeout=max(timeout_s, 0.0)):
            return Verdict("unknown", "the grader is busy (starting, or on another submission)")
        try:
            proc, scratch = self._running(deadline)
            if isinstance(submission, bytes):
                copy = scratch / "submission.csv"
                copy.write_bytes(submission)
                submission = copy
            message = {"path": str(submission.absolute())}
            reply = self._ask(proc, message, deadline - time.monotonic())
            return Verdict(reply["outcome"], str(reply.get("reason") or ""))
        except _Failed as exc:
            self._stop()
            self._restart_later()
            return Verdict("unknown", f"the grader could not be run: {exc}")
        finally:
            self._lock.release()

    def call(self, function: str, kwargs: dict[str, Any], timeout_s: float) -> Any:
        """``function`` (``module:function``, importable in the worker) called there with the
        grade function and ``kwargs`` (JSON), its JSON-able result returned; ``timeout_s``
        bounds the call, not the wait for another question's end (each has its own deadline)
        nor a start. Raises :class:`GraderStopped` when the grader overran the deadline or the
        worker's memory (or died), TaskError when it cannot be run at all or the function
        says the task is at fault."""
        with self._lock:
            try:
                proc, _ = self._running()
            except _Failed as exc:
                self._stop()
                raise self._unloadable or TaskError(
                    f"the task's grader could not be run: {exc}",
                    hint="check the task's grade function (it must load and grade its sample)",
                ) from None
            try:
                reply = self._ask(proc, {"call": function, "kwargs": kwargs}, timeout_s)
            except _Failed as exc:
                self._stop()
                self._restart_later()
                raise GraderStopped(_stopped_reason(exc, timeout_s, self._memory)) from None
        if "task_error" in reply:
            raise TaskError(str(reply["task_error"]), hint=reply.get("hint"))
        if "stopped" in reply:
            raise GraderStopped(str(reply["stopped"]))
        return reply.get("result")

    def start(self) -> None:
        """Start the worker now (it otherwise starts on the first question); never raises."""
        with self._lock:
            if self._closed:
                return
            try:
                self._running()
            except _Failed:
                self._stop()

    def load(self) -> None:
        """Start the worker if it is not running and wait until it has loaded the grade
        function (its stand-ins are graded after, in the background, for the first question).
        Raises TaskError, the one message for a grader that does not load (a module its
        ``grade.py`` imports is not installed, the function is missing), and for a worker
        that cannot start at all; a task that can never be graded or checked is said before
        any work is spent on it."""
        with self._lock:
            if self._closed:
                return
            try:
                if not self._alive():
                    self._spawn(None)
            except _Failed as exc:
                self._stop()
                raise self._unloadable or TaskError(
                    f"{self._named()}the grader {self._source.spec} could not be started: {exc}",
                    hint="check the task's grade function (it must load and grade its sample)",
                ) from None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()
        self._requests.put(False)

    def _restart_later(self) -> None:
        """Start a fresh worker in the background (unless the grader cannot start at all), so
        the next question finds it ready instead of paying for the start in its deadline."""
        if not self._closed and not self._broken and self._start_failures < MAX_START_FAILURES:
            if self._starter is None:
                self._starter = threading.Thread(
                    target=_start_on_request, args=(weakref.ref(self), self._requests),
                    name="grader-start", daemon=True,
                )  # fmt: skip
                self._starter.start()
            self._requests.put(True)

    def _running(self, deadline: float | None = None) -> tuple[subprocess.Popen[bytes], Path]:
        """The running worker, started if need be and ready: within ``START_TIMEOUT_S`` of its
        start, and before ``deadline`` (a start cut short by the deadline is not counted as
        the grader's failure to start)."""
        if self._proc is None or self._scratch is None or (self._ready and not self._alive()):
            self._spawn(deadline)  # one that died while starting still says why, below
        assert self._proc is not None and self._scratch is not None
        if not self._ready:
            self._start_reply(None, deadline)
            self._ready = True
        return self._proc, self._scratch

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._scratch is not None

    def _named(self) -> str:
        return f"{self._task}: " if self._task else ""

    def _spawn(self, deadline: float | None) -> None:
        """A fresh worker, configured, with its grade function loaded (not yet ready)."""
        if self._closed:
            raise _Failed("it was closed")
        if self._broken or self._start_failures >= MAX_START_FAILURES:
            raise _Failed(self._broken or f"it failed to start {self._start_failures} times")
        self._stop()
        _sweep_scratch()
        scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        env = {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}
        env.update(thread_env(1), PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen(
            [sys.executable, "-m", __name__], cwd=scratch, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self._proc, self._scratch, self._ready = proc, scratch, False
        assert proc.stdout is not None
        self._lines = _Lines(proc.stdout.fileno())
        self._start_by = time.monotonic() + START_TIMEOUT_S
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop, [proc, scratch])
        self._start_reply(self._config, deadline)

    def _start_reply(self, message: dict[str, Any] | None, deadline: float | None) -> None:
        """The worker's next answer during its start (``loaded``, then ``ready``), after
        sending ``message`` if any; an ``error`` there makes the grader broken for good (the
        same grader on the same sample would fail again), a load error said as such."""
        assert self._proc is not None
        limit = self._start_by - time.monotonic()
        own_limit = deadline is None or deadline >= self._start_by
        if deadline is not None:
            limit = min(limit, deadline - time.monotonic())
        try:
            reply = self._ask(self._proc, message, limit)
        except _TimedOut:
            if own_limit:  # the start's own limit, not the question's deadline
                self._start_failures += 1
            raise
        except _Failed:
            self._start_failures += 1
            raise
        if "error" in reply:
            self._broken = str(reply["error"])
            if reply.get("load"):
                self._unloadable = self._load_failure(self._broken, reply.get("hint"))
            raise _Failed(self._broken)

    def _load_failure(self, reason: str, hint: Any) -> TaskError:
        """The one message for a grader that does not load (run, grade and bench say it)."""
        default = "its module, and every module it imports, must import where Podium runs"
        return TaskError(
            f"{self._named()}the grader {self._source.spec} cannot be imported: {reason}",
            hint=str(hint) if hint else default,
        )

    def _ask(
        self, proc: subprocess.Popen[bytes], message: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        """Send ``message`` (None: nothing) and read the worker's next line."""
        assert proc.stdin is not None and self._lines is not None
        try:
            if message is not None:
                proc.stdin.write(json.dumps(message).encode() + b"\n")
                proc.stdin.flush()
        except OSError:
            raise _Failed("it exited") from None
        line = self._lines.read(time.monotonic() + timeout)
        try:
            reply = json.loads(line)
        except ValueError:
            raise _Failed("it answered something else") from None
        if not isinstance(reply, dict):
            raise _Failed("it answered something else")
        return reply

    def _stop(self) -> None:
        _stop([self._proc, self._scratch])
        self._proc = self._scratch = self._lines = None


def _start_on_request(worker: weakref.ref[GraderWorker], requests: queue.SimpleQueue[bool]) -> None:
    """The starter thread: start the worker on each request, until told to stop (a False, put
    by ``close`` or when the handle is collected; the thread holds no reference to it)."""
    while requests.get():
        handle = worker()
        if handle is None:
            return
        handle.start()
        del handle


class GraderStopped(Exception):
    """The grader was stopped before it answered: the deadline, the worker's memory cap, a
    crash. The message says which, in one line; the submission gets no score."""


class _Failed(Exception):
    pass


class _TimedOut(_Failed):
    pass


def _stopped_reason(exc: _Failed, timeout_s: float, memory: int) -> str:
    if isinstance(exc, _TimedOut):
        return f"the grader did not finish within {timeout_s:g} s, and was stopped"
    return (
        f"the grader's process ended without an answer ({exc}: a crash, or its "
        f"{memory / 1024**3:g} GiB memory cap)"
    )


class _Lines:
    """The worker's protocol lines, read from ``fd`` (the child writes nothing else); what
    was read past a line (its start answers two in a row) is kept for the next."""

    def __init__(self, fd: int) -> None:
        self.fd, self.got = fd, b""

    def read(self, deadline: float) -> bytes:
        """The next line, before ``deadline``."""
        while b"\n" not in self.got:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _TimedOut("it took too long")
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise _Failed("it exited")
            self.got += chunk
            if len(self.got) > MAX_LINE:
                raise _Failed("it answered too much")
        line, _, self.got = self.got.partition(b"\n")
        return line


def _stop(parts: list[Any]) -> None:
    proc, scratch = parts
    if proc is not None:
        try:  # the whole group: a grader's own children (joblib workers) too
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
    if proc is not None:
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


def _sweep_scratch() -> None:
    """Remove the scratch directories of hosts that died without cleaning up (``os._exit``,
    SIGKILL): their names carry the host's pid."""
    for path in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = path.name[len(SCRATCH_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


# --- the child ------------------------------------------------------------------------------


def _die_with_parent(host: int) -> None:
    """SIGKILL this process when the host dies (Linux), so no grader outlives its run."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != host:  # the host died before the request took effect
        os._exit(1)


def main() -> int:
    """The worker: configure from the first line, then answer one line per submission."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the grader's prints must not reach the protocol
    requests = sys.stdin
    config = json.loads(requests.readline() or "{}")
    _die_with_parent(int(config.get("host", os.getppid())))
    import resource

    memory = int(config["memory"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    from podium.benchmarks.task_code import one_line

    try:
        grade_fn = GraderSource(**config["source"]).load()
    except TaskError as exc:  # the folder's loader says which file and what it needs
        _send(protocol, {"error": exc.message, "hint": exc.hint, "load": True})
        return 1
    except Exception as exc:  # an importable grader (MLE-bench's package) that is not
        _send(protocol, {"error": one_line(exc), "load": True})
        return 1
    _send(protocol, {"loaded": True})
    try:
        check = _configure(config, grade_fn)
    except Exception as exc:
        _send(protocol, {"error": one_line(exc)})
        return 1
    _send(protocol, {"ready": len(check.trusted)})
    for line in requests:
        request = json.loads(line)
        if "call" in request:
            _send(protocol, _called(request, check.grade_fn, int(config["memory"])))
            continue
        verdict = check.verdict(Path(request["path"]))
        _send(protocol, {"outcome": verdict.outcome, "reason": verdict.reason})
    return 0


def _configure(config: dict[str, Any], grade_fn: GradeFn) -> Any:
    """The stand-in check of the loaded ``grade_fn`` on the configured sample."""
    from podium.benchmarks.grader_check import StandInCheck
    from podium.benchmarks.grading import read_submission
    from podium.submission_check import bounds

    sample_path = Path(config["sample"])
    sample = read_submission(sample_path.read_bytes())
    return StandInCheck(grade_fn, sample, config["keys"], bounds(sample_path))


def _called(request: dict[str, Any], grade_fn: GradeFn, memory: int) -> dict[str, Any]:
    """The child's answer to a ``call`` (see the module's docstring). ``grade_fn`` is the
    stand-in check's, which raises :class:`OutOfMemory` for a MemoryError: that stops the
    call, as the grader's running out of the worker's memory."""
    module, _, name = str(request["call"]).rpartition(":")
    try:
        function = getattr(importlib.import_module(module), name)
        return {"result": function(grade_fn, **request["kwargs"])}
    except OutOfMemory:
        return {
            "stopped": f"the grader ran out of memory (the worker's cap: {memory / 1024**3:g} GiB)"
        }
    except TaskError as exc:
        return {"task_error": exc.message, "hint": exc.hint}
    except MemoryError:
        return {
            "stopped": f"grading ran out of memory (the worker's cap: {memory / 1024**3:g} GiB)"
        }
    except Exception as exc:  # a failure of the grading code, not the submission's
        from podium.benchmarks.task_code import one_line

        return {"task_error": f"grading failed: {one_line(exc)}", "hint": None}


def _send(protocol: Any, message: dict[str, Any]) -> None:
    protocol.write(json.dumps(message) + "\n")
    protocol.flush()


if __name__ == "__main__":
    sys.exit(main())
