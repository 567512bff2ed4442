"""A stand-in for MLE-bench's grading server, speaking its wire format on 127.0.0.1.

``POST /validate`` with a multipart form whose field ``file`` holds the submission; the answer
is JSON ``{"result": "Submission is valid."}`` or ``{"result": "Submission invalid! ..."}``
(HTTP 200), or ``{"error": ..., "details": ...}`` with HTTP 500 when the server itself fails;
``GET /health`` answers ``{"status": "running"}`` (``health`` may answer otherwise, or hang).
The form is parsed with the standard library's MIME parser, so a malformed request from the
client under test fails here, as it would at the real server (HTTP 400).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VALID = (200, {"result": "Submission is valid."})
RUNNING = (200, {"status": "running"})
Answer = Callable[[bytes], tuple[int, object]]  # the file's bytes -> (status, JSON body)


class FakeGradingServer:
    """``port``: 0 for any free one, or a port to take again (a server that comes back)."""

    def __init__(
        self,
        answer: Answer = lambda _: VALID,
        health: Callable[[], tuple[int, object]] = lambda: RUNNING,
        port: int = 0,
    ) -> None:
        self.answer = answer
        self.health = health
        self.received: list[bytes] = []  # the submitted files, in order
        self.health_checks = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/validate"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                data = _file_field(self.headers.get("Content-Type", ""), body)
                if self.path != "/validate" or data is None:
                    self._send(400, {"error": "no file"})
                    return
                fake.received.append(data)
                self._send(*fake.answer(data))

            def do_GET(self) -> None:
                if self.path != "/health":
                    self._send(404, {"error": "not found"})
                    return
                fake.health_checks += 1
                self._send(*fake.health())

            def _send(self, status: int, payload: object) -> None:
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    @contextmanager
    def running(self) -> Iterator[FakeGradingServer]:
        thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
            thread.join()


def _file_field(content_type: str, body: bytes) -> bytes | None:
    """The bytes of the form's ``file`` field, or None when there is none."""
    if not content_type.startswith("multipart/form-data"):
        return None
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None
