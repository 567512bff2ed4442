"""The live viewer: a small HTTP server on 127.0.0.1 serving the page and the run as JSON.

Routes of a run (docs/viewer.md, "The page's contract"): ``/`` the page, ``/static/…`` its
script and style, ``/api/run`` (RunJSON, with an ETag so an unchanged run answers 304),
``/api/node/<id>`` (NodeDetail), ``/api/node/<id>/output`` (a running node's output so far) and
``/api/search?q=`` (``{"ids": [...]}``); else 404. Serving a sweep, ``/`` is the sweep's page,
``/api/sweep`` its grid (SweepJSON, ETag too), and each run's routes are under
``/runs/<run id>/``; the page asks relative URLs, so one page serves both. ``/api/schema`` is
the JSON Schema of every document (``podium.viewer.schema``, whose models each route sends).

Safety: the socket is bound to 127.0.0.1 only, and a request whose Host header is not
``127.0.0.1:PORT`` or ``localhost:PORT`` gets 403, so a web page the user visits cannot reach
the viewer by rebinding its own domain name to 127.0.0.1 (DNS rebinding). 127.0.0.1 is shared by
every user of the machine, so, as Jupyter does, the server makes a random token
(:data:`TOKEN_BYTES` from ``secrets``) and only its URL, ``http://127.0.0.1:PORT/?token=…``,
opens it: every request — the page, its static files, every ``/api`` route, a sweep's pages —
without that token gets 403. The token is accepted as the ``token`` query parameter, an
``Authorization: token …`` (or ``Bearer …``) header, or the cookie the first answer to a URL
with the token sets (``podium-viewer-PORT``, HttpOnly, SameSite=Strict, so the page's own script,
style and fetches carry it and the page needs no change), each compared in constant time
(``hmac.compare_digest``). Every response carries a strict Content-Security-Policy: the page
runs its own script and nothing else. A sweep's run is found by its id in the sweep's manifest,
never by a path taken from the URL.

Each request reads the run afresh (``open_run``): the run may be written at the same time by a
live ``podium run``, and SQLite connections cannot be shared between the server's threads.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import hmac
import json
import re
import secrets
import signal
import socketserver
import threading
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from podium.errors import UserError
from podium.formats import run_files
from podium.viewer import page, snapshot
from podium.viewer.run_data import RunView, open_run, run_is_live
from podium.viewer.schema import (
    Document,
    ErrorReply,
    NodeOutput,
    RunJSON,
    SearchResult,
    SweepJSON,
    Versioned,
    schemas,
)

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": CSP,
}
JSON_TYPE = "application/json; charset=utf-8"
PORT_HINT = "pick another with --port N, or --port 0 for any free port"
TOKEN_BYTES = 32  # of randomness: 43 URL-safe characters
TOKEN_PARAM = "token"
AUTH_SCHEMES = ("token", "bearer")  # Authorization: token <t> (Jupyter's), or Bearer <t>
COOKIE_FLAGS = "Path=/; HttpOnly; SameSite=Strict"  # never sent by another site's page
NO_TOKEN = b"403 forbidden: open the URL the viewer printed (it carries its token)\n"


RUN_PREFIX = re.compile(r"/runs/([A-Za-z0-9._=+-]{1,200})(/.*)?")


class SweepSource(Protocol):
    """A sweep as the viewer serves it (``podium.viewer.sweep_data`` reads a sweep dir).

    ``grid()`` is SweepJSON (docs/viewer.md): the sweep's header and one entry per run, each
    with its ``id``; ``run_dir(id)`` is that run's directory, or None for an id the sweep does
    not have."""

    @property
    def root(self) -> Path: ...

    def grid(self) -> SweepJSON: ...

    def run_dir(self, run_id: str) -> Path | None: ...


class ViewerServer(ThreadingHTTPServer):
    """Serves one run directory, or a sweep and each of its runs, to requests that carry
    ``token`` (a fresh random one unless given). Request threads are daemons: a client holding
    a connection open never delays the viewer's exit."""

    daemon_threads = True
    allow_reuse_port = False  # never share a port with another viewer (newer Pythons set it)

    def __init__(self, target: Path | SweepSource, port: int, token: str | None = None) -> None:
        self.sweep = None if isinstance(target, Path) else target
        self.run_dir = target if isinstance(target, Path) else target.root
        self.token = token or secrets.token_urlsafe(TOKEN_BYTES)
        self._caches: dict[Path, RunCache] = {}
        self._caches_lock = threading.Lock()
        super().__init__((HOST, port), _Handler)

    @property
    def runs(self) -> RunCache:
        """The served run's cache (a sweep's own directory has none: see ``cache``)."""
        return self.cache(self.run_dir)

    def cache(self, run_dir: Path) -> RunCache:
        with self._caches_lock:
            return self._caches.setdefault(run_dir, RunCache(run_dir))

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS lookup of the address (``getfqdn``), which
        can hang for seconds where DNS is broken; the name is known."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = HOST, self.port

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}/"

    @property
    def url(self) -> str:
        """The page's URL with the token: the one a user opens."""
        return f"{self.origin}?{TOKEN_PARAM}={self.token}"

    @property
    def cookie_name(self) -> str:
        """Per port: every viewer on 127.0.0.1 shares the browser's cookies for that host."""
        return f"podium-viewer-{self.port}"

    def allowed_hosts(self) -> frozenset[str]:
        return frozenset({f"{HOST}:{self.port}", f"localhost:{self.port}"})

    def is_token(self, given: str) -> bool:
        """``given`` is this server's token (compared in constant time)."""
        return hmac.compare_digest(
            given.encode("utf-8", "surrogateescape"), self.token.encode("utf-8")
        )

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a browser closing a connection mid-answer is normal; the rest was already
        answered as a 500 by the handler."""


class RunCache:
    """The last RunJSON, kept while the run's files are unchanged.

    The page polls ``/api/run`` every second for as long as it is open; re-reading a long run's
    journal each time would cost a noticeable share of a core beside the run itself (about
    80 ms per poll at 1000 nodes; perf/viewer_load.py). A commit to the journal changes the
    WAL file's size or mtime, a new summary or best node changes theirs, and a run that starts
    or stops changes its liveness: any of these reads the run again.
    """

    WATCHED = (
        run_files.JOURNAL,
        run_files.JOURNAL_WAL,
        run_files.SUMMARY,
        f"{run_files.BEST}/{run_files.NODE_INFO}",
    )

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._lock = threading.Lock()
        self._last: tuple[tuple[object, ...], RunJSON] | None = None

    def get(self) -> RunJSON:
        key = self._fingerprint()
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        data = snapshot.run_json(open_run(self.run_dir, light=True))
        with self._lock:
            self._last = (key, data)
        return data

    def _fingerprint(self) -> tuple[object, ...]:
        stamps: list[object] = []
        for name in self.WATCHED:
            try:
                st = (self.run_dir / name).stat()
            except OSError:
                stamps.append(None)
                continue
            stamps.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return (*stamps, run_is_live(self.run_dir))


def make_server(target: Path | SweepSource, port: int | None) -> ViewerServer:
    """A server of a run dir or a sweep, bound (and listening) on 127.0.0.1. ``port`` None:
    8765, or any free port when 8765 is taken; 0: any free port; a taken explicit port is a
    one-line error."""
    if port is None:
        try:
            return ViewerServer(target, DEFAULT_PORT)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise _bind_error(DEFAULT_PORT, exc) from None
            port = 0
    try:
        return ViewerServer(target, port)
    except OSError as exc:
        raise _bind_error(port, exc) from None


def _bind_error(port: int, exc: OSError) -> UserError:
    if exc.errno == errno.EADDRINUSE:
        return UserError(f"port {port} on {HOST} is already in use", hint=PORT_HINT)
    return UserError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}", hint=PORT_HINT)


def serve(target: Path | SweepSource, port: int | None, ready: Callable[[str], None]) -> None:
    """Serve a run dir or a sweep until SIGINT or SIGTERM, then stop cleanly and return.

    The target is read first (a missing or wrong run dir is a one-line error, before any port
    is taken). ``ready(url)`` is called once the socket listens, with the stop signals already
    caught, so a client may connect as soon as it hears of the URL (the token's: the only one
    that opens the page). Main thread only.
    """
    if isinstance(target, Path):
        open_run(target)
    else:
        target.grid()
    server = make_server(target, port)
    stop = threading.Event()
    with _stop_on_signals(stop):
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        thread.start()
        try:
            ready(server.url)
            stop.wait()
        finally:
            server.shutdown()
            thread.join()
            server.server_close()


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"  # keep-alive: the page polls /api/run every second
    error_content_type = "text/plain; charset=utf-8"
    error_message_format = "%(code)d %(message)s\n"
    head_only = False
    set_cookie = False  # this answer sets the token's cookie (the URL carried the token)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no line per request on the terminal."""

    def end_headers(self) -> None:
        """Every response, errors included, carries the security headers."""
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        if self.set_cookie:
            cookie = f"{self.server.cookie_name}={self.server.token}"
            self.send_header("Set-Cookie", f"{cookie}; {COOKIE_FLAGS}")
        super().end_headers()

    def do_GET(self) -> None:
        self._respond(head=False)

    def do_HEAD(self) -> None:
        self._respond(head=True)

    def _respond(self, head: bool) -> None:
        self.head_only, self.set_cookie = head, False
        if self.headers.get("Host", "").lower() not in self.server.allowed_hosts():
            self._send(HTTPStatus.FORBIDDEN, b"403 forbidden host\n", "text/plain; charset=utf-8")
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        in_url = any(self.server.is_token(t) for t in query.get(TOKEN_PARAM, []))
        if not (in_url or any(self.server.is_token(t) for t in self._tokens_given())):
            self._send(HTTPStatus.FORBIDDEN, NO_TOKEN, "text/plain; charset=utf-8")
            return
        self.set_cookie = in_url
        try:
            self._route(url.path, query)
        except Exception as exc:  # the thread answers and lives on; the page shows the error
            message = exc.message if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, ErrorReply(error=message))

    def _tokens_given(self) -> list[str]:
        """The tokens the request carries beside its URL: an ``Authorization`` header's and
        the viewer's cookie's (each may be anything)."""
        given = []
        scheme, _, value = self.headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() in AUTH_SCHEMES:
            given.append(value.strip())
        for header in self.headers.get_all("Cookie", []):
            for pair in header.split(";"):
                name, _, value = pair.strip().partition("=")
                if name == self.server.cookie_name:
                    given.append(value)
        return given

    def _route(self, path: str, query: dict[str, list[str]]) -> None:
        if path.startswith("/static/"):
            self._static(path[len("/static/") :])
        elif path == "/api/schema":
            self._send(HTTPStatus.OK, _schema_body(), JSON_TYPE)
        elif self.server.sweep is None:
            self._run_route(self.server.run_dir, path, query)
        elif path == "/":
            self._page(page.sweep_page())
        elif path == "/api/sweep":
            self._versioned(self.server.sweep.grid())
        elif match := RUN_PREFIX.fullmatch(path):
            self._sweep_run(match[1], match[2], query)
        else:
            self._not_found(path)

    def _sweep_run(self, run_id: str, rest: str | None, query: dict[str, list[str]]) -> None:
        assert self.server.sweep is not None
        run_dir = self.server.sweep.run_dir(run_id)
        if run_dir is None:
            self._json(HTTPStatus.NOT_FOUND, ErrorReply(error=f"this sweep has no run {run_id}"))
        elif rest is None:  # /runs/<id>: the page's relative URLs need the slash
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", f"/runs/{run_id}/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._run_route(run_dir, rest, query)

    def _run_route(self, run_dir: Path, path: str, query: dict[str, list[str]]) -> None:
        node = path.removeprefix("/api/node/") if path.startswith("/api/node/") else ""
        if path == "/":
            self._page(page.live_page())
        elif path == "/api/run":
            self._versioned(self.server.cache(run_dir).get())
        elif node.isascii() and node.isdigit():
            self._node(run_dir, int(node))
        elif node.endswith("/output") and node[:-7].isascii() and node[:-7].isdigit():
            self._json(HTTPStatus.OK, _live_output(run_dir, int(node[:-7])))
        elif path == "/api/search":
            ids = snapshot.search_ids(open_run(run_dir), query.get("q", [""])[0])
            self._json(HTTPStatus.OK, SearchResult(ids=ids))
        else:
            self._not_found(path)

    def _static(self, name: str) -> None:
        found = page.static_file(name)
        if found is None:
            self._not_found(f"/static/{name}")
        else:
            self._send(HTTPStatus.OK, found[0], found[1], cache="no-cache")

    def _page(self, html: str) -> None:
        self._send(
            HTTPStatus.OK, html.encode("utf-8"), "text/html; charset=utf-8", cache="no-cache"
        )

    def _not_found(self, path: str) -> None:
        self._json(HTTPStatus.NOT_FOUND, ErrorReply(error=f"not found: {path}"))

    def _versioned(self, document: Versioned) -> None:
        """A document whose ``version`` is its ETag: a poll of unchanged data answers 304."""
        etag = f'"{document.version}"'
        if _matches(etag, self.headers.get("If-None-Match", "")):
            self._send(HTTPStatus.NOT_MODIFIED, b"", None, etag=etag)
        else:
            self._json(HTTPStatus.OK, document, etag=etag)

    def _node(self, run_dir: Path, node_id: int) -> None:
        view = open_run(run_dir, light=True)  # node_detail reads the node and its parents whole
        if view.find(node_id) is None:
            self._json(HTTPStatus.NOT_FOUND, ErrorReply(error=f"no node {node_id}"))
        else:
            self._json(HTTPStatus.OK, snapshot.node_detail(view, node_id))

    def _json(self, status: HTTPStatus, document: Document, etag: str | None = None) -> None:
        """``document`` as compact UTF-8 JSON (its model's serialisation: the contract's)."""
        self._send(status, document.model_dump_json().encode("utf-8"), JSON_TYPE, etag=etag)

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        content_type: str | None,
        cache: str = "no-store",
        etag: str | None = None,
    ) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        if status is not HTTPStatus.NOT_MODIFIED:
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        if etag is not None:
            self.send_header("ETag", etag)
        self.end_headers()
        if body and not self.head_only:
            with contextlib.suppress(ConnectionError):
                self.wfile.write(body)


def _live_output(run_dir: Path, node_id: int) -> NodeOutput:
    """A running node's output so far, read from its file alone (no journal: the page asks
    every second while the node runs), with a digest the page compares to skip a redraw."""
    text = RunView.read_output(run_dir, node_id)
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    return NodeOutput(id=node_id, output=text, version=digest)


@functools.cache
def _schema_body() -> bytes:
    """``/api/schema``: the JSON Schema of each document by name (built once: it never
    changes while the viewer runs)."""
    return json.dumps(schemas(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _matches(etag: str, header: str) -> bool:
    """An If-None-Match header names ``etag`` (a weak tag compares equal, as RFC 9110 says for
    If-None-Match) or is ``*``."""
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return etag in tags or "*" in tags
