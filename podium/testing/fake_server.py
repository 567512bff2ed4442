"""The machinery both fake providers share: a threaded HTTP/1.1 server on 127.0.0.1, the
request log, the reply queue, authentication, JSON in and out, delays and hang-ups.

Only the wire format is provider-specific. A subclass names its paths and headers and fills in
the hooks at the bottom of :class:`FakeServer` (validation, success and error bodies); this
module never mentions OpenAI or Anthropic shapes, except in :class:`Received`'s conveniences,
which read either.

Everything runs in the standard library, so the real SDK clients (and their HTTP stacks) are
exercised end to end: connection pooling, keep-alive, timeouts, status-code mapping.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import socket
import socketserver
import sys
import threading
import traceback
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self, TypeGuard, cast
from urllib.parse import urlsplit

from podium.testing.replies import Reply

Responder = Callable[["Received"], Reply]
"""Chooses the answer to a request once the queue is empty (a scripted or reactive model)."""

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The tool names both providers accept."""

DEFAULT_CACHE_MIN_TOKENS = 1024
"""The shortest prompt (prefix) the providers cache: OpenAI's for every model, Anthropic's for
most Claude models."""
CACHE_ENTRIES = 256
"""Prompt-cache entries a fake keeps; the least recently used go first."""

_POLL_S = 0.01  # how soon serve_forever notices stop(): the default 0.5 s would slow every test
_ids = itertools.count(1)


def next_id(prefix: str) -> str:
    """A response, call or request id unique in this process: ``chatcmpl-7``, ``toolu_8``."""
    return f"{prefix}{next(_ids)}"


@dataclass(frozen=True)
class Problem:
    """One way a request breaks the provider's schema. ``param`` and ``code`` fill the OpenAI
    error fields of the same names when this problem heads the 400."""

    message: str
    param: str | None = None
    code: str | None = None


@dataclass
class Received:
    """One request the fake got, as the test (or a responder) wants to inspect it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: dict[str, Any] | None
    """The parsed JSON object, or None when there was none or it was not a JSON object."""
    auth: str | None
    """How the key came: ``"bearer"`` (Authorization header), ``"x-api-key"``, or None."""
    key: str | None
    problems: list[str] = field(default_factory=list)
    """Schema violations found in this request; empty means the request was valid."""
    cache_read_tokens: int = 0
    """Prompt tokens the fake's prompt cache served (reported in the answer's usage)."""
    cache_write_tokens: int = 0
    """Prompt tokens the fake's prompt cache stored (Anthropic's cache writes)."""

    @property
    def prompt_text(self) -> str:
        """The system prompt and every message's text (tool results included), one per line:
        what a responder matches on, and what the usage estimate counts."""
        if self.body is None:
            return ""
        texts = _texts(self.body.get("system"))
        messages = self.body.get("messages")
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict):
                texts.extend(_texts(message.get("content")))
        return "\n".join(text for text in texts if text)

    @property
    def tools(self) -> list[str]:
        """Names of the tools offered (OpenAI ``function.name`` or Anthropic ``name``)."""
        tools = self.body.get("tools") if self.body else None
        names: list[str] = []
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            function = tool.get("function")
            spec: dict[str, Any] = function if isinstance(function, dict) else tool
            if isinstance(spec.get("name"), str):
                names.append(spec["name"])
        return names

    @property
    def forced_tool(self) -> str | None:
        """The tool the model must call: the one named by ``tool_choice``, or the only one
        offered when the choice is ``required`` (OpenAI) / ``any`` (Anthropic)."""
        choice = self.body.get("tool_choice") if self.body else None
        if isinstance(choice, dict):
            function = choice.get("function")
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                return cast(str, function["name"])
            if choice.get("type") == "tool" and isinstance(choice.get("name"), str):
                return cast(str, choice["name"])
            choice = choice.get("type")
        tools = self.tools
        if choice in ("required", "any") and len(tools) == 1:
            return tools[0]
        return None


def _texts(content: Any) -> list[str]:
    """The text inside a message content: a string, or blocks with ``text`` or nested
    ``content`` (Anthropic tool results)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            texts.extend(_texts(block.get("content")))
    return texts


@dataclass(frozen=True)
class HttpRequest:
    """A request as read off the socket, before any interpretation."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class HttpReply:
    """An answer to write back. The handler adds Content-Type and Content-Length."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


# --- validation helpers the provider modules share ---------------------------------------


def is_int(value: object) -> TypeGuard[int]:
    """An integer that is not a bool (JSON ``true`` is no token count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[float]:
    """A finite JSON number (bools excluded)."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(cast(float, value))


def present(body: Mapping[str, Any], key: str) -> bool:
    """Whether an optional field was really sent: both APIs read ``null`` as absent."""
    return body.get(key) is not None


def range_problem(body: Mapping[str, Any], key: str, low: float, high: float) -> list[Problem]:
    """A problem when the optional number ``key`` is sent but not within [low, high]."""
    value = body.get(key)
    if value is None or (is_number(value) and low <= value <= high):
        return []
    return [
        Problem(f"Invalid '{key}': expected a number in [{low:g}, {high:g}], got {value!r}.", key)
    ]


def retry_after_text(seconds: float) -> str:
    """How a ``retry-after`` header writes seconds: ``2`` rather than ``2.0``."""
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


# --- the HTTP layer -------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    """One thread per connection; never waits for handler threads (a handler may be sleeping
    through a ``Reply.hang``), and remembers open connections so stop() can end them."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # a burst of parallel clients must not overflow the backlog

    def __init__(self, fake: FakeServer) -> None:
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse-DNS lookup of the host (slow with no network)."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def track(self, connection: socket.socket, *, is_open: bool) -> None:
        with self._connections_lock:
            if is_open:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def close_connections(self) -> None:
        """End idle keep-alive connections, whose handler threads would otherwise wait on them
        until the client goes away."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-answer (timeouts, disconnect tests) are expected; only report
        anything else."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Reads one request at a time off a keep-alive connection and writes the fake's answer."""

    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one segment...

    def _http_server(self) -> _HTTPServer:
        return cast(_HTTPServer, self.server)

    def setup(self) -> None:
        super().setup()
        # ...and at once: without this, Nagle's algorithm and the client's delayed ACK add
        # 40 ms to every request after the first on a keep-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._http_server().track(self.connection, is_open=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self._http_server().track(self.connection, is_open=False)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean: the request log is ``fake.received``."""

    def _serve(self) -> None:
        request = HttpRequest(
            method=self.command,
            path=urlsplit(self.path).path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self._read_body(),
        )
        reply = self._http_server().fake.handle(request)
        if reply is None:  # hang up without a word
            self.close_connection = True
            return
        self._write(reply)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            chunks.append(self.rfile.read(size))
            self.rfile.readline()  # the CRLF after each chunk
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(chunks)

    def _write(self, reply: HttpReply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except OSError:  # the client gave up (e.g. timed out while we slept)
            self.close_connection = True


# --- the fake ---------------------------------------------------------------------------------


class FakeServer(ABC):
    """A fake model provider over real HTTP. Answers each completion request with the next
    queued :class:`Reply`, else the responder's, else a default (a call of the forced tool,
    or "OK"). Requests that break the provider's schema get the provider's 400 instead, and
    the problems are kept in ``received[i].problems`` and ``problems`` for the test to assert.

    Use as a context manager, or start() / stop(). Thread-safe: handlers run concurrently.
    """

    completion_path: ClassVar[str]
    """The endpoint that generates (``/v1/chat/completions``, ``/v1/messages``)."""
    models_path: ClassVar[str]
    url_suffix: ClassVar[str]
    """What the SDK's base URL adds after host and port."""
    auth_order: ClassVar[tuple[str, ...]]
    """The key forms the provider accepts, preferred first (``"bearer"``, ``"x-api-key"``)."""
    request_id_header: ClassVar[str]
    malformed_body: ClassVar[bytes]
    """What ``Reply.malformed()`` sends: the start of a plausible body, cut off."""

    def __init__(
        self,
        *,
        api_key: str = "test-key",
        responder: Responder | None = None,
        models: Collection[str] | None = None,
        echo_key_in_errors: bool = False,
        cache_min_tokens: int = DEFAULT_CACHE_MIN_TOKENS,
    ) -> None:
        """``models``: the model names served (None accepts any; others get the provider's
        404). ``echo_key_in_errors``: the 401 message carries the full key received, to test
        that callers redact it. ``cache_min_tokens``: the shortest prompt prefix (in estimated
        tokens) the prompt cache keeps, as the provider's minimum for a model (1024 for most;
        some Claude models want 4096)."""
        self.api_key = api_key
        self.responder = responder
        self.models: tuple[str, ...] | None = None if models is None else tuple(models)
        self.echo_key_in_errors = echo_key_in_errors
        self.cache_min_tokens = cache_min_tokens
        self._prompt_cache: OrderedDict[str, Any] = OrderedDict()
        self.received: list[Received] = []
        self.problems: list[str] = []
        self.hits = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._http: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._http is None:
            raise RuntimeError(f"{type(self).__name__} is not running: call start() first")
        return self._http.server_port

    @property
    def url(self) -> str:
        """The base URL to give the SDK (``base_url=`` / ``api_base=``)."""
        return f"http://127.0.0.1:{self.port}{self.url_suffix}"

    def start(self) -> Self:
        """Listen on a free port of 127.0.0.1 and serve in a daemon thread."""
        if self._http is not None:
            raise RuntimeError(f"{type(self).__name__} is already running")
        self._stopping.clear()
        self._http = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": _POLL_S},
            name=f"{type(self).__name__}:{self._http.server_port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end open connections and wake sleeping handlers. Idempotent; never
        waits on a handler."""
        http, thread = self._http, self._thread
        if http is None:
            return
        self._http = self._thread = None
        self._stopping.set()
        http.shutdown()
        http.server_close()
        http.close_connections()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def queue(self, *replies: Reply) -> None:
        """Answer the next completion requests with these, in order, before the responder."""
        with self._lock:
            self._queue.extend(replies)

    # --- request handling (on handler threads) ---------------------------------------------

    def handle(self, request: HttpRequest) -> HttpReply | None:
        """The answer to one HTTP request; None means close the connection without one. A bug
        here, or an exception in the responder, becomes a 500 naming it."""
        try:
            return self._route(request)
        except Exception as exc:
            traceback.print_exc()
            return self.error_reply(500, f"fake server error: {type(exc).__name__}: {exc}")

    def _route(self, request: HttpRequest) -> HttpReply | None:
        completion = request.path == self.completion_path
        received = self._receive(request, count_hit=completion and request.method == "POST")
        if completion and request.method == "POST":
            return self._complete(received, request)
        if completion:
            return self.error_reply(405, f"Method {request.method} not allowed.")
        if request.path == self.models_path and request.method == "GET":
            if not self._authorized(received):
                return self._auth_failure(received)
            return self.json_reply(200, self._models_payload())
        return self.error_reply(404, f"Unknown request URL: {request.method} {request.path}.")

    def _complete(self, received: Received, request: HttpRequest) -> HttpReply | None:
        if not self._authorized(received):
            return self._auth_failure(received)
        problems = self._problems(received, request)
        if problems:
            return self._reject(received, problems)
        model = received.body.get("model") if received.body else None
        if self.models is not None and model not in self.models:
            return self._unknown_model(str(model))
        reply = self._next_reply(received)
        if reply.delay_s and self._stopping.wait(reply.delay_s):
            return None  # stopped while sleeping: nobody is listening any more
        return self._render(reply, received)

    def _receive(self, request: HttpRequest, *, count_hit: bool) -> Received:
        """Log the request (every one, whatever its path) before judging it."""
        auth, key = self._credentials(request.headers)
        received = Received(
            method=request.method,
            path=request.path,
            headers=request.headers,
            body=_json_object(request.body),
            auth=auth,
            key=key,
        )
        with self._lock:
            self.received.append(received)
            if count_hit:
                self.hits += 1
        return received

    def _credentials(self, headers: Mapping[str, str]) -> tuple[str | None, str | None]:
        """How the key came and what it was, preferring the provider's own forms."""
        forms: dict[str, str] = {}
        if headers.get("x-api-key"):
            forms["x-api-key"] = headers["x-api-key"]
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            forms["bearer"] = token.strip()
        for form in (*self.auth_order, *forms):
            if form in forms:
                return form, forms[form]
        return None, None

    def _authorized(self, received: Received) -> bool:
        return received.auth in self.auth_order and received.key == self.api_key

    def _problems(self, received: Received, request: HttpRequest) -> list[Problem]:
        if received.body is None:
            what = "is empty" if not request.body.strip() else "is not a JSON object"
            return [Problem(f"The request body {what}; expected a JSON object.")]
        return self._validate(received)

    def _reject(self, received: Received, problems: list[Problem]) -> HttpReply:
        """Keep the problems for the test, and answer the provider's 400 naming them."""
        messages = [problem.message for problem in problems]
        with self._lock:
            received.problems.extend(messages)
            self.problems.extend(messages)
        first = problems[0]
        return self.error_reply(400, "; ".join(messages), code=first.code, param=first.param)

    def _next_reply(self, received: Received) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(received)
        forced = received.forced_tool
        return Reply.tool_call(forced, {}) if forced else Reply.text("OK")

    def _render(self, reply: Reply, received: Received) -> HttpReply | None:
        if reply.kind == "disconnect":
            return None
        if reply.kind == "malformed":
            return HttpReply(200, self.malformed_body, self._headers())
        if reply.kind == "error":
            return self.error_reply(
                reply.status,
                reply.message,
                error_type=reply.error_type,
                code=reply.error_code,
                headers=_retry_headers(reply),
            )
        if reply.kind in ("overloaded", "context_too_long"):
            return self._special_error(reply)
        usage = _usage(reply, received)
        read, written = self._cache_usage(received, usage[0])
        with self._lock:
            received.cache_read_tokens, received.cache_write_tokens = read, written
        return self.json_reply(200, self._message_payload(reply, received, usage))

    # --- the prompt cache ------------------------------------------------------------------

    def _cache_usage(self, received: Received, prompt_tokens: int) -> tuple[int, int]:
        """(read, written): the parts of the prompt's ``prompt_tokens`` that the provider's
        prompt cache served and stored for this (answered) request. None by default; a
        provider with a prompt cache overrides it, keeping its entries with :meth:`_cached`
        and :meth:`_cache_entry`. Deterministic: entries never expire (the providers keep
        them 5 minutes or more, longer than a test), the oldest go past
        :data:`CACHE_ENTRIES`."""
        return 0, 0

    def _cache_entry(self, key: str) -> Any:
        """The entry stored under ``key`` (None: none), now the most recently used."""
        with self._lock:
            if key not in self._prompt_cache:
                return None
            self._prompt_cache.move_to_end(key)
            return self._prompt_cache[key]

    def _cache_store(self, key: str, entry: Any) -> None:
        with self._lock:
            self._prompt_cache[key] = entry
            self._prompt_cache.move_to_end(key)
            while len(self._prompt_cache) > CACHE_ENTRIES:
                self._prompt_cache.popitem(last=False)

    def _cached(self) -> list[Any]:
        """Every entry, the most recently used last."""
        with self._lock:
            return list(self._prompt_cache.values())

    # --- building answers --------------------------------------------------------------------

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return {self.request_id_header: next_id("req_"), **(extra or {})}

    def json_reply(
        self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> HttpReply:
        """``payload`` as a JSON answer, with the provider's request-id header."""
        return HttpReply(status, json.dumps(payload).encode(), self._headers(headers))

    def error_reply(
        self,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> HttpReply:
        """An error in the provider's format; ``error_type`` defaults per status."""
        kind = error_type or self._default_error_type(status)
        return self.json_reply(
            status, self._error_payload(status, message, kind, code, param), headers
        )

    # --- what each provider fills in ----------------------------------------------------------

    @abstractmethod
    def _validate(self, received: Received) -> list[Problem]:
        """Every way the request (body and headers) breaks the provider's schema."""

    @abstractmethod
    def _default_error_type(self, status: int) -> str:
        """The provider's error type for a status (``rate_limit_error``, ``server_error``...)."""

    @abstractmethod
    def _error_payload(
        self, status: int, message: str, error_type: str, code: str | None, param: str | None
    ) -> dict[str, Any]:
        """The provider's error body."""

    @abstractmethod
    def _auth_failure(self, received: Received) -> HttpReply:
        """The provider's 401 for a missing or wrong key."""

    @abstractmethod
    def _unknown_model(self, model: str) -> HttpReply:
        """The provider's 404 for a model it does not serve."""

    @abstractmethod
    def _special_error(self, reply: Reply) -> HttpReply:
        """``Reply.overloaded()`` and ``Reply.context_too_long()``, in the provider's words."""

    @abstractmethod
    def _message_payload(
        self, reply: Reply, received: Received, usage: tuple[int, int]
    ) -> dict[str, Any]:
        """The provider's success body for a text or tool-call reply; usage is (in, out)."""

    @abstractmethod
    def _models_payload(self) -> dict[str, Any]:
        """The provider's model list."""


def canonical(value: Any) -> str:
    """``value`` as stable JSON (keys sorted, no spaces): what a prompt cache compares."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def content_texts(content: Any) -> list[str]:
    """The texts of a message content (or a system prompt) that the usage estimate counts."""
    return _texts(content)


class TextCounter:
    """Estimated tokens of a prompt read piece by piece, exactly as the usage estimate counts
    the whole (``Received.prompt_text``: the non-empty texts joined by newlines, four
    characters a token), so a prefix's count never exceeds the prompt's."""

    def __init__(self) -> None:
        self.chars = 0
        self.pieces = 0

    def add(self, texts: list[str]) -> None:
        for text in texts:
            if text:
                self.chars += len(text) + (1 if self.pieces else 0)
                self.pieces += 1

    def separator(self) -> int:
        """The newline before the next non-empty text (0 before the first)."""
        return 1 if self.pieces else 0

    @property
    def tokens(self) -> int:
        return math.ceil(self.chars / 4)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw.strip() else None
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _retry_headers(reply: Reply) -> dict[str, str]:
    headers: dict[str, str] = {}
    if reply.retry_after is not None:
        headers["retry-after"] = retry_after_text(reply.retry_after)
    if reply.retry_after_ms is not None:
        headers["retry-after-ms"] = str(reply.retry_after_ms)
    return headers


def _usage(reply: Reply, received: Received) -> tuple[int, int]:
    """(input, output) tokens: the reply's own, else about four characters a token."""
    answer = reply.content
    if reply.kind == "tool_call":
        answer += reply.raw_arguments or json.dumps(dict(reply.tool_input))
    estimated_in = math.ceil(len(received.prompt_text) / 4)
    estimated_out = math.ceil(len(answer) / 4)
    return (
        estimated_in if reply.input_tokens is None else reply.input_tokens,
        estimated_out if reply.output_tokens is None else reply.output_tokens,
    )
