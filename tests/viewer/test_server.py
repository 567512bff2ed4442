"""The live viewer's HTTP server (``podium.viewer.server``), in this process: the routes of the
contract, 127.0.0.1 only, the Host check, the security headers, ETags, and a run that changes
while it is served."""

from __future__ import annotations

import contextlib
import errno
import http.client
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from podium.errors import UserError
from podium.formats import RunDir
from podium.viewer import highlight
from podium.viewer.notebook import NOTEBOOK_READ_CAP
from podium.viewer.server import (
    CSP,
    DEFAULT_PORT,
    SweepSource,
    ViewerServer,
    make_server,
    serve,
)
from tests.recorded_run import XSS_CELL_CODE, XSS_WORDS, AgenticRun, RecordedRun
from tests.viewer.test_snapshot import add_node


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        assert self.headers["Content-Type"] == "application/json; charset=utf-8"
        return json.loads(self.body)


@contextlib.contextmanager
def serving(target: Path | SweepSource) -> Iterator[ViewerServer]:
    """A run dir (or a sweep) served on a free port from a thread of this process."""
    srv = make_server(target, 0)
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        thread.join()
        srv.server_close()


@pytest.fixture
def server(recorded_run: RecordedRun) -> Iterator[ViewerServer]:
    """The recorded run, served."""
    with serving(recorded_run.root) as srv:
        yield srv


@pytest.fixture
def agentic_server(agentic_run: AgenticRun) -> Iterator[ViewerServer]:
    """The run of one agentic node (tests/recorded_run.py), served."""
    with serving(agentic_run.root) as srv:
        yield srv


def request(
    srv: ViewerServer,
    path: str,
    headers: dict[str, str] | None = None,
    method: str = "GET",
    token: bool = True,
) -> Reply:
    """One request (http.client: the Host header is ours to set when a test gives one), with
    the server's token in an Authorization header unless ``token`` is False."""
    given = {"Authorization": f"token {srv.token}"} if token else {}
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        conn.request(method, path, headers={**given, **(headers or {})})
        response = conn.getresponse()
        return Reply(response.status, response.headers, response.read())
    finally:
        conn.close()


def plant(path: Path, kind: str, secret: Path, huge: int) -> None:
    """Replace a run dir's file with what a hostile run dir may hold there: a link to a secret,
    a FIFO no writer opens, a directory, or a sparse file of ``huge`` bytes (no disk taken)."""
    path.unlink(missing_ok=True)
    if kind == "symlink":
        path.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        with path.open("wb") as fh:
            fh.truncate(huge)


def test_binds_127_0_0_1_only(server: ViewerServer) -> None:
    assert server.socket.getsockname()[0] == "127.0.0.1"
    assert server.url == f"http://127.0.0.1:{server.port}/?token={server.token}"
    others = other_local_addresses()
    if not others:
        pytest.skip("this machine has no non-loopback address to try")
    for address in others:
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            with pytest.raises(ConnectionRefusedError):
                sock.connect((str(address), server.port))


def other_local_addresses() -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """This machine's own non-loopback addresses (``hostname -I``), link-local ones left out
    (they need an interface name to connect to)."""
    if shutil.which("hostname") is None:
        return []
    listed = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False)
    addresses = []
    for word in listed.stdout.split():
        with contextlib.suppress(ValueError):
            address = ipaddress.ip_address(word)
            if not (address.is_loopback or address.is_link_local):
                addresses.append(address)
    return addresses


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1",
                                  "127.0.0.1:1", "localhost.evil.example:{port}", ""])  # fmt: skip
def test_a_foreign_host_header_is_refused(server: ViewerServer, host: str) -> None:
    """DNS rebinding: a page on another name that resolves to 127.0.0.1 gets nothing."""
    for path in ("/api/run", "/", "/api/node/1"):
        reply = request(server, path, {"Host": host.format(port=server.port)})
        assert reply.status == 403
        assert b"podium" not in reply.body
        assert reply.headers["Content-Security-Policy"] == CSP


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_the_own_host_names_are_served(server: ViewerServer, host: str) -> None:
    assert request(server, "/api/run", {"Host": host.format(port=server.port)}).status == 200


@pytest.mark.parametrize("path", ["/api/run", "/api/node/5", "/api/search?q=x", "/nope", "/"])
def test_security_headers_on_every_response(server: ViewerServer, path: str) -> None:
    headers = request(server, path).headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Content-Security-Policy"] == (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    if path.startswith("/api"):
        assert headers["Cache-Control"] == "no-store"


def test_api_run(server: ViewerServer, recorded_run: RecordedRun) -> None:
    reply = request(server, "/api/run")
    assert reply.status == 200
    data = reply.json()
    assert reply.headers["ETag"] == f'"{data["version"]}"'
    assert [n["id"] for n in data["nodes"]] == list(range(1, recorded_run.node_count + 1))
    assert data["run"]["best_node"] == recorded_run.best


def test_etag_answers_304_until_the_journal_changes(
    server: ViewerServer, recorded_run: RecordedRun
) -> None:
    etag = request(server, "/api/run").headers["ETag"]
    for header in (etag, f"W/{etag}", f'"other", {etag}'):
        reply = request(server, "/api/run", {"If-None-Match": header})
        assert (reply.status, reply.body, reply.headers["ETag"]) == (304, b"", etag)
    new = recorded_run.node_count + 1
    add_node(recorded_run.root, new)  # a live run writes a node while the page polls
    reply = request(server, "/api/run", {"If-None-Match": etag})
    assert reply.status == 200
    assert reply.headers["ETag"] != etag
    assert [n["id"] for n in reply.json()["nodes"]][-1] == new
    assert "\x1b" not in request(server, f"/api/node/{new}").json()["output"]


def test_a_running_node_while_the_run_is_locked(
    server: ViewerServer, recorded_run: RecordedRun
) -> None:
    rd = RunDir(recorded_run.root)
    rd.lock()
    try:
        data = request(server, "/api/run").json()
    finally:
        rd.unlock()
    assert data["live"] is True
    assert data["nodes"][recorded_run.running - 1]["kind"] == "running"
    assert request(server, "/api/run").json()["live"] is False


def test_a_running_nodes_output_so_far(server: ViewerServer, recorded_run: RecordedRun) -> None:
    """What the loop last wrote to a running node's output.txt, as text; the page compares
    ``version`` to skip redrawing an output that did not change."""
    rd = RunDir(recorded_run.root)
    rd.write_live_output(recorded_run.running, "epoch 1 \x1b[31mred\x1b[0m <b>\n")
    first = request(server, f"/api/node/{recorded_run.running}/output").json()
    assert first["output"] == "epoch 1 red <b>\n"
    assert request(server, f"/api/node/{recorded_run.running}/output").json() == first
    rd.write_live_output(recorded_run.running, "epoch 1 red <b>\nepoch 2\n")
    second = request(server, f"/api/node/{recorded_run.running}/output").json()
    assert second["output"].endswith("epoch 2\n") and second["version"] != first["version"]
    detail = request(server, f"/api/node/{recorded_run.running}").json()
    assert detail["output_live"] is True and detail["output"].endswith("epoch 2\n")


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "huge"])
def test_an_output_file_that_is_not_a_plain_small_file_is_not_read(
    server: ViewerServer, recorded_run: RecordedRun, tmp_path: Path, kind: str
) -> None:
    """A run dir may come from anyone: its output.txt may point at a secret, block a reader
    forever or be enormous. The viewer says so in one line and reads nothing else."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    plant(RunDir(recorded_run.root).node_output(recorded_run.running), kind, secret, 5 * 1024**3)
    reply = request(server, f"/api/node/{recorded_run.running}/output")
    assert reply.status == 200
    text = reply.json()["output"]
    assert "TOP-SECRET" not in text and text.startswith("[the output file was not read:")
    assert len(text) < 500


def test_api_node_gives_an_agentic_nodes_notebook(
    agentic_server: ViewerServer, agentic_run: AgenticRun
) -> None:
    detail = request(agentic_server, f"/api/node/{agentic_run.node}").json()
    cells = detail["notebook"]["cells"]
    assert [(c["type"], c["number"]) for c in cells] == [
        ("words", None), ("code", 1), ("code", 2), ("words", None)
    ]  # fmt: skip
    assert (cells[0]["source"], cells[1]["source"]) == (XSS_WORDS, XSS_CELL_CODE)
    assert [c["call"]["input_tokens"] for c in cells] == [2000, 2000, 2100, 2200]


SECRET_NOTEBOOK = {"cells": [{"cell_type": "markdown", "source": "TOP-SECRET"}]}


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "huge", "damaged"])
def test_a_notebook_that_is_not_a_plain_small_notebook_is_one_line(
    agentic_server: ViewerServer, agentic_run: AgenticRun, tmp_path: Path, kind: str
) -> None:
    """A run dir may come from anyone: its notebook may point at a secret, block a reader
    forever, be enormous or not be a notebook. The node's panel says so in one line and reads
    nothing else; the server answers 200, never a 500 or a traceback."""
    secret = tmp_path / "secret.ipynb"
    secret.write_text(json.dumps(SECRET_NOTEBOOK))
    path = RunDir(agentic_run.root).node_notebook(agentic_run.node)
    if kind == "damaged":
        path.write_text('{"cells": [{"cell_type": "code", "outputs": 5}]}')
    else:
        plant(path, kind, secret, NOTEBOOK_READ_CAP + 1)
    reply = request(agentic_server, f"/api/node/{agentic_run.node}")
    assert reply.status == 200
    detail = reply.json()
    problem = detail["notebook"]["problem"]
    assert "TOP-SECRET" not in reply.body.decode() and detail["notebook"]["cells"] == []
    why = "is not a readable notebook" if kind == "damaged" else "the notebook was not read:"
    assert why in problem and "\n" not in problem and len(problem) < 500, problem
    assert detail["code"] and detail["output"]  # the rest of the panel is there


def test_api_node(server: ViewerServer, recorded_run: RecordedRun) -> None:
    reply = request(server, f"/api/node/{recorded_run.crossover}")
    assert reply.status == 200
    detail = reply.json()
    assert detail["parents"] == [3, 4] and detail["children"] == [6, 7]
    assert "&lt;/script&gt;" not in detail["code_html"]  # node 5's code is harmless
    assert [c["role"] for c in detail["calls"]] == ["code", "review"]
    assert "&lt;/script&gt;" in request(server, "/api/node/1").json()["code_html"]


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("/api/node/99", "no node 99"),
        ("/api/node/0", "no node 0"),
        ("/api/node/abc", "not found: /api/node/abc"),
        ("/api/node/-1", "not found: /api/node/-1"),
        ("/api/node/", "not found: /api/node/"),
        ("/api/nodes", "not found: /api/nodes"),
        ("/static/../server.py", "not found: /static/../server.py"),
        ("/static/index.html", "not found: /static/index.html"),
        ("/index.html", "not found: /index.html"),
    ],
)
def test_not_found_is_json(server: ViewerServer, path: str, error: str) -> None:
    reply = request(server, path)
    assert (reply.status, reply.json()) == (404, {"error": error})


def test_api_search(server: ViewerServer) -> None:
    assert request(server, "/api/search?q=SCRIPT").json() == {"ids": [1]}
    assert request(server, "/api/search?q=timed%20out").json() == {"ids": [6]}
    assert request(server, "/api/search?q=").json() == {"ids": [1, 2, 3, 4, 5, 6, 7, 8, 9]}
    assert request(server, "/api/search").json() == {"ids": [1, 2, 3, 4, 5, 6, 7, 8, 9]}


def test_head_has_no_body(server: ViewerServer) -> None:
    reply = request(server, "/api/run", method="HEAD")
    assert (reply.status, reply.body) == (200, b"")
    assert int(reply.headers["Content-Length"]) > 0


def test_a_broken_run_dir_is_a_json_500(server: ViewerServer, recorded_run: RecordedRun) -> None:
    (recorded_run.root / "journal.sqlite").rename(recorded_run.root / "moved.sqlite")
    reply = request(server, "/api/run")
    assert reply.status == 500
    assert "not a Podium run directory" in reply.json()["error"]


def test_the_page_and_its_static_files(server: ViewerServer) -> None:
    page = request(server, "/")
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert b'src="/static/app.js"' in page.body and b'href="/static/style.css"' in page.body
    script = request(server, "/static/app.js")
    assert script.status == 200 and "javascript" in script.headers["Content-Type"]
    style = request(server, "/static/style.css")
    assert style.status == 200 and style.headers["Content-Type"].startswith("text/css")
    assert highlight.css() in style.body.decode("utf-8")


def test_keep_alive_serves_several_requests_on_one_connection(server: ViewerServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for _ in range(3):
            conn.request("GET", "/api/run", headers={"Authorization": f"token {server.token}"})
            response = conn.getresponse()
            assert response.status == 200
            response.read()
    finally:
        conn.close()


def test_default_port_falls_back_when_taken(recorded_run: RecordedRun) -> None:
    with socket.socket() as holder:
        try:
            holder.bind(("127.0.0.1", DEFAULT_PORT))
            holder.listen()
        except OSError as exc:  # taken by someone else already: as good for this test
            assert exc.errno == errno.EADDRINUSE
        srv = make_server(recorded_run.root, None)
        srv.server_close()
    assert srv.port != DEFAULT_PORT


def test_an_explicit_taken_port_is_a_one_line_error(recorded_run: RecordedRun) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(UserError, match=f"port {port} on 127.0.0.1 is already in use") as exc:
            make_server(recorded_run.root, port)
    assert exc.value.hint is not None and "--port 0" in exc.value.hint


def test_two_viewers_never_share_a_port(server: ViewerServer, recorded_run: RecordedRun) -> None:
    with pytest.raises(UserError, match="already in use"):
        make_server(recorded_run.root, server.port)


def test_serve_stops_cleanly_on_a_signal(recorded_run: RecordedRun) -> None:
    """``serve`` answers until SIGINT, then returns (the CLI then exits 0) and puts the
    previous signal handlers back."""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    got: list[Any] = []

    def client(url: str) -> None:
        origin, query = url.split("?")
        with urllib.request.urlopen(f"{origin}api/run?{query}", timeout=10) as response:
            got.append(json.loads(response.read()))
        os.kill(os.getpid(), signal.SIGINT)

    def ready(url: str) -> None:
        got.append(url)
        threading.Thread(target=client, args=(url,), daemon=True).start()

    serve(recorded_run.root, 0, ready)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{43}", got[0])
    assert len(got[1]["nodes"]) == recorded_run.node_count
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_serve_checks_the_run_dir_first(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        serve(tmp_path / "missing", 0, lambda url: pytest.fail("served a missing run"))
