"""A client of MLE-bench's validation endpoint: the real grader on the private answers, in
the harness's container, which answers "valid" or why not, never a score.

The wire format: a multipart POST of the file as ``file``; JSON ``{"result": "Submission is
valid."}`` or ``{"result": "Submission invalid! ..."}``. Anything else — refused connection,
timeout, an HTTP error, a body that is not that JSON — is no verdict.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass

from podium.errors import TaskError

VALIDATION_URL_ENV = "MLEBENCH_VALIDATION_URL"
DEFAULT_VALIDATION_URL = "http://localhost:5000/validate"
VALIDATION_TIMEOUT_S = 300.0  # the real grader runs on the answers: large tasks take minutes
MAX_RESPONSE_BYTES = 1024 * 1024
MAX_REASON_CHARS = 500
VALID_ANSWER = "Submission is valid."
INVALID_PREFIX = "Submission invalid"


@dataclass(frozen=True)
class ServerVerdict:
    """The validation server's answer: ``valid``, or ``reason`` why not."""

    valid: bool
    reason: str = ""


class ValidationServer:
    """A client of MLE-bench's validation endpoint (the grader on the private answers, in the
    harness's container). ``ask`` returns its verdict, or None when it gave none we can trust.

    Only http(s) URLs; no proxy (the server is local to the container by design). After a
    timeout it is not asked again in this process: a server that hangs would cost every node
    the full timeout."""

    def __init__(self, url: str, timeout_s: float = VALIDATION_TIMEOUT_S) -> None:
        scheme = urllib.parse.urlsplit(url).scheme
        if scheme not in ("http", "https"):
            raise TaskError(
                f"{VALIDATION_URL_ENV}={url!r}: not an http(s) URL",
                hint=f"e.g. {DEFAULT_VALIDATION_URL}, or empty to never ask a server",
            )
        self.url = url
        self.timeout_s = timeout_s
        self.down: str | None = None  # why it is no longer asked
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ask(self, data: bytes, filename: str = "submission.csv") -> ServerVerdict | str:
        """The verdict on a submission's bytes, or (a string) why there is none."""
        if self.down is not None:
            return self.down
        boundary = uuid.uuid4().hex
        while boundary.encode() in data:
            boundary = uuid.uuid4().hex
        body = b"".join([
            f"--{boundary}\r\n".encode(),
            f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'.encode(),
            b"Content-Type: text/csv\r\n\r\n", data, f"\r\n--{boundary}--\r\n".encode(),
        ])  # fmt: skip
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                raw = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            return f"it answered HTTP {exc.code}"
        except TimeoutError:
            self.down = f"it did not answer within {self.timeout_s:.0f} s"
            return self.down
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                self.down = f"it did not answer within {self.timeout_s:.0f} s"
                return self.down
            return f"it cannot be reached ({reason})"
        if len(raw) > MAX_RESPONSE_BYTES:
            return f"its answer is over {MAX_RESPONSE_BYTES:,} bytes"
        return _verdict(raw)


def _verdict(raw: bytes) -> ServerVerdict | str:
    try:
        answer = json.loads(raw)
    except ValueError:
        return "its answer is not JSON"
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, str):
        return "its answer has no result"
    text = " ".join(result.split())
    if text == VALID_ANSWER:
        return ServerVerdict(True)
    if text.startswith(INVALID_PREFIX):
        if len(text) > MAX_REASON_CHARS:
            text = text[: MAX_REASON_CHARS - 3] + "..."
        return ServerVerdict(False, f"MLE-bench's validator: {text}")
    return f"its result is neither valid nor invalid ({text[:80]!r})"


def validation_server() -> ValidationServer | None:
    """The server ``MLEBENCH_VALIDATION_URL`` names (default: the harness's); None when empty."""
    url = os.environ.get(VALIDATION_URL_ENV, DEFAULT_VALIDATION_URL).strip()
    return ValidationServer(url) if url else None
