"""A client of MLE-bench's validation endpoint: the real grader on the private answers, in
the harness's container, which answers "valid" or why not, never a score.

The wire format (MLE-bench's ``environment/grading_server.py``): a multipart POST of the file
as ``file`` to ``/validate``; JSON ``{"result": "Submission is valid."}`` or ``{"result":
"Submission invalid! ..."}``; ``GET /health`` answers ``{"status": "running"}``. Anything else
— refused connection, timeout, an HTTP error, a body that is not that JSON — is no verdict
(:class:`NoVerdict`), and the caller's structural check decides.

Who is at fault when no answer comes is settled by the server's ``/health``, never guessed from
one submission: MLE-bench's validator has no time limit of its own (nor has the final grading),
so a submission that takes longer than ``timeout_s`` to validate is slow, not invalid, and a
slow file says nothing about the next one. After any failed request the health endpoint is
asked (a cheap GET, ``health_timeout_s``): when it answers, the server is up and only that
submission went without a verdict (``cause="slow"``); when it does not, the server is down,
and it is not asked for the next ``RETRY_FIRST_S`` seconds, doubling on each failed re-probe
up to ``RETRY_MAX_S`` — the first submission after that probes ``/health`` again before its
file is sent, so a server that came back is asked again, and a hung one costs each retry the
health timeout, not the validation timeout.

One submission at a time: MLE-bench's server saves every upload to the same file
(``/tmp/submission_to_validate.csv``) before grading it, so two requests at once could each be
judged on the other's file. A submission waits at most ``timeout_s`` for its turn.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal

from podium.errors import TaskError

log = logging.getLogger("podium.benchmarks")

VALIDATION_URL_ENV = "MLEBENCH_VALIDATION_URL"
DEFAULT_VALIDATION_URL = "http://localhost:5000/validate"
VALIDATION_TIMEOUT_S = 300.0  # the real grader runs on the answers: large tasks take minutes
HEALTH_TIMEOUT_S = 30.0  # its /health does no work; long enough for a busy container
RETRY_FIRST_S = 30.0  # a down server is probed again after this long, then twice as long...
RETRY_MAX_S = 600.0  # ...up to this
UPLOAD_CHUNK_BYTES = 1 << 20  # a streamed submission is sent this much at a time
MAX_RESPONSE_BYTES = 1024 * 1024
MAX_REASON_CHARS = 500
VALID_ANSWER = "Submission is valid."
INVALID_PREFIX = "Submission invalid"


@dataclass(frozen=True)
class ServerVerdict:
    """The validation server's answer: ``valid``, or ``reason`` why not."""

    valid: bool
    reason: str = ""


@dataclass(frozen=True)
class NoVerdict:
    """Why the server gave no verdict on one submission.

    ``cause``: ``"slow"`` — the server is up (its /health answers) but this submission got no
    answer in time: this submission's outcome alone; ``"down"`` — the server does not answer
    (it is re-probed later); ``"answer"`` — it answered, but not a verdict (an HTTP error, a
    body that is not its JSON)."""

    reason: str
    cause: Literal["slow", "down", "answer"] = "answer"

    def __str__(self) -> str:
        return self.reason


@dataclass
class _Down:
    reason: str
    retry_at: float  # on the server's clock


class ValidationServer:
    """A client of MLE-bench's validation endpoint (the grader on the private answers, in the
    harness's container). ``ask`` returns its verdict, or a :class:`NoVerdict`.

    Only http(s) URLs; no proxy (the server is local to the container by design). Safe to call
    from several threads: the requests themselves go one at a time (see the module's
    docstring). ``clock`` is the time the retry delays count in (a test's own)."""

    def __init__(
        self,
        url: str,
        timeout_s: float = VALIDATION_TIMEOUT_S,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        scheme = urllib.parse.urlsplit(url).scheme
        if scheme not in ("http", "https"):
            raise TaskError(
                f"{VALIDATION_URL_ENV}={url!r}: not an http(s) URL",
                hint=f"e.g. {DEFAULT_VALIDATION_URL}, or empty to never ask a server",
            )
        self.url = url
        self.health_url = urllib.parse.urljoin(url, "health")  # beside /validate
        self.timeout_s = timeout_s
        self.health_timeout_s = health_timeout_s
        self._clock = clock
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._asking = threading.Lock()  # one request at a time
        self._state = threading.Lock()
        self._down: _Down | None = None
        self._retry_s = RETRY_FIRST_S  # the wait after the next failed probe

    @property
    def down(self) -> str | None:
        """Why the server is taken for down now, or None while it is asked."""
        with self._state:
            return self._down.reason if self._down is not None else None

    def ask(
        self, submission: bytes | BinaryIO, filename: str = "submission.csv"
    ) -> ServerVerdict | NoVerdict:
        """The verdict on a submission (its bytes, or a file open at its start, which is
        streamed: the host never holds it), or why there is none."""
        if (waiting := self._waiting()) is not None:
            return waiting
        if not self._asking.acquire(timeout=self.timeout_s):
            return NoVerdict(
                f"it was busy with other submissions for {self.timeout_s:.0f} s", "slow"
            )
        try:
            if (waiting := self._waiting()) is not None:
                return waiting
            if self.down is not None:  # its retry is due: is it back?
                problem = self._health()
                if problem is not None:
                    return self._went_down(problem)
                self._came_back()
            return self._post(submission, filename)
        finally:
            self._asking.release()

    def _post(self, submission: bytes | BinaryIO, filename: str) -> ServerVerdict | NoVerdict:
        body, length, boundary = _multipart(submission, filename)
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(length),
            },
        )
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                raw = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            return NoVerdict(f"it answered HTTP {exc.code}")
        except OSError as exc:  # URLError is one; a timeout too
            return self._no_answer(f"it {_failure(exc, self.timeout_s)}")
        if len(raw) > MAX_RESPONSE_BYTES:
            return NoVerdict(f"its answer is over {MAX_RESPONSE_BYTES:,} bytes")
        return _verdict(raw)

    def _no_answer(self, failure: str) -> NoVerdict:
        """A request that got no answer: the server's fault only when its /health says so."""
        problem = self._health()
        if problem is None:
            return NoVerdict(f"{failure} on this submission (the server is up)", "slow")
        return self._went_down(f"{failure}, and {problem}")

    def _health(self) -> str | None:
        """None when the server answers ``GET /health`` (any HTTP answer: its process is up),
        else why not."""
        try:
            with self._opener.open(self.health_url, timeout=self.health_timeout_s) as response:
                response.read(MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError:
            return None
        except OSError as exc:
            return f"its /health {_failure(exc, self.health_timeout_s)}"
        return None

    def _waiting(self) -> NoVerdict | None:
        """While the server is down and its retry is not due: why it is not asked."""
        with self._state:
            down = self._down
            now = self._clock()
            if down is None or now >= down.retry_at:
                return None
            left = down.retry_at - now
        return NoVerdict(f"{down.reason} (asked again in {left:.0f} s)", "down")

    def _went_down(self, reason: str) -> NoVerdict:
        with self._state:
            wait = self._retry_s
            self._retry_s = min(wait * 2, RETRY_MAX_S)
            self._down = _Down(reason, self._clock() + wait)
        log.warning(
            "the validation server %s is down: %s; submissions get the structural check, "
            "and it is asked again in %.0f s",
            self.url, reason, wait,
        )  # fmt: skip
        return NoVerdict(reason, "down")

    def _came_back(self) -> None:
        with self._state:
            self._down = None
            self._retry_s = RETRY_FIRST_S
        log.warning("the validation server %s answers again", self.url)


def _multipart(
    submission: bytes | BinaryIO, filename: str
) -> tuple[bytes | Iterator[bytes], int, str]:
    """The form MLE-bench's server reads (the file as ``file``): its body, whole or as chunks
    read as they are sent, its length and its boundary. A streamed file's boundary is 128
    random bits drawn after the file was written, which its writer cannot have put in it."""
    boundary = uuid.uuid4().hex
    while isinstance(submission, bytes) and boundary.encode() in submission:
        boundary = uuid.uuid4().hex
    head = (
        f"--{boundary}\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    if isinstance(submission, bytes):
        return head + submission + tail, len(head) + len(submission) + len(tail), boundary
    size = os.fstat(submission.fileno()).st_size - submission.tell()
    return _chunks(head, submission, size, tail), len(head) + size + len(tail), boundary


def _chunks(head: bytes, fh: BinaryIO, size: int, tail: bytes) -> Iterator[bytes]:
    """``head``, then exactly ``size`` bytes of ``fh`` a chunk at a time, then ``tail``."""
    yield head
    left = size
    while left > 0:
        chunk = fh.read(min(UPLOAD_CHUNK_BYTES, left))
        if not chunk:  # shorter than it was: the length sent must still hold
            chunk = b"\n" * min(UPLOAD_CHUNK_BYTES, left)
        left -= len(chunk)
        yield chunk
    yield tail


def _failure(exc: OSError, timeout_s: float) -> str:
    """A request's failure in words (after "it"): a timeout, or why it could not connect."""
    reason = getattr(exc, "reason", exc)
    if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
        return f"did not answer within {timeout_s:.0f} s"
    return f"cannot be reached ({reason})"


def _verdict(raw: bytes) -> ServerVerdict | NoVerdict:
    try:
        answer = json.loads(raw)
    except ValueError:
        return NoVerdict("its answer is not JSON")
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, str):
        return NoVerdict("its answer has no result")
    text = " ".join(result.split())
    if text == VALID_ANSWER:
        return ServerVerdict(True)
    if text.startswith(INVALID_PREFIX):
        if len(text) > MAX_REASON_CHARS:
            text = text[: MAX_REASON_CHARS - 3] + "..."
        return ServerVerdict(False, f"MLE-bench's validator: {text}")
    return NoVerdict(f"its result is neither valid nor invalid ({text[:80]!r})")


def validation_server(in_harness: bool) -> ValidationServer | None:
    """The server ``MLEBENCH_VALIDATION_URL`` names; None when it is empty. Unset, the
    harness's own, but only inside its container (``in_harness``): elsewhere a port on
    localhost is any local user's to listen on, and a "valid" from whoever answers there
    would let any file pass."""
    url = os.environ.get(VALIDATION_URL_ENV)
    if url is None:
        url = DEFAULT_VALIDATION_URL if in_harness else ""
    return ValidationServer(url.strip()) if url.strip() else None
