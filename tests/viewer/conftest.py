"""Fixtures for the viewer's browser tests: one headless Chromium per session (Debian's, never a
downloaded one), a watched page per test, and ``podium view`` servers started as real processes.

The watched page records console errors and warnings, page errors, failed requests and every
request it made, and aborts any request that leaves 127.0.0.1 (or, for an export, the file
itself), so a test can assert "no errors, nothing from the network".
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.recorded_run import AgenticRun, write_agentic_run
from tests.support import podium_popen

pytest.register_assert_rewrite("tests.viewer.browser")  # its checks fail with the values shown
from tests.viewer.browser import Watched  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
URL_LINE = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=[\w-]+")
SERVER_START_S = 20.0  # python start-up, imports, reading the run
SERVER_STOP_S = 10.0


@pytest.fixture
def agentic_run(tmp_path: Path) -> AgenticRun:
    """A run of one agentic node: its notebook and its model calls by turn
    (tests/recorded_run.py)."""
    return write_agentic_run(tmp_path / "agentic")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (the ``playwright`` package, no browser download).

    Per module, not per session: while Playwright's sync API is started it keeps an asyncio
    loop running in the main thread, and every later test calling ``asyncio.run`` would fail.
    """
    if not CHROMIUM.is_file():
        pytest.fail(
            f"the viewer's browser tests need Chromium at {CHROMIUM}; "
            ".ci/run installs it (apt-get install chromium)",
            pytrace=False,
        )
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    except Exception:
        playwright.stop()
        raise
    yield chromium
    chromium.close()
    playwright.stop()


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    """A fresh page (own context) that records errors and requests and blocks the network."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(5000)
    watch = Watched(page=page)

    def route(route: Any) -> None:
        url = route.request.url
        if watch.allowed(url):
            route.continue_()
        else:
            watch.blocked.append(url)
            route.abort()

    def on_console(message: Any) -> None:
        if message.type in ("error", "warning"):
            where = message.location
            watch.console.append(f"{message.type}: {message.text} ({where.get('url')})")

    def on_failed(request: Any) -> None:
        # Blocked ones are listed already; ERR_ABORTED is the page itself cancelling a fetch
        # (a superseded search) or a navigation cutting a poll short: normal use.
        if watch.allowed(request.url) and request.failure != "net::ERR_ABORTED":
            watch.failed.append(f"{request.method} {request.url}: {request.failure}")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            watch.failed.append(f"{response.request.method} {response.url}: {response.status}")

    context.route(lambda url: True, route)
    page.on("request", lambda request: watch.requests.append(request.url))
    page.on("requestfailed", on_failed)
    page.on("response", on_response)
    page.on("console", on_console)
    page.on("pageerror", lambda error: watch.errors.append(str(error)))
    yield watch
    context.close()


def _drain(stream: IO[str], into: list[str], lines: queue.Queue[str] | None = None) -> None:
    for line in stream:
        into.append(line)
        if lines is not None:
            lines.put(line)
    if lines is not None:
        lines.put("")  # EOF


@dataclass
class ViewServer:
    """A running ``podium view RUN --port 0``; ``url`` the one it printed (with its token)."""

    process: subprocess.Popen[str]
    url: str
    stdout: list[str]
    stderr: list[str]
    readers: list[threading.Thread]

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT/``: what every URL of the page starts with."""
        return self.url.split("?")[0]

    def stop(self) -> int:
        """Ctrl-C, as a user would; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            code = self.process.wait(timeout=SERVER_STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = -9
        for reader in self.readers:
            reader.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return code


def start_view(run_dir: Path, *extra: str) -> ViewServer:
    """Start ``podium view`` and wait for its URL line (read from stdout, as a user would)."""
    process = podium_popen("view", str(run_dir), "--port", "0", *extra)
    assert process.stdout is not None and process.stderr is not None
    stdout: list[str] = []
    stderr: list[str] = []
    lines: queue.Queue[str] = queue.Queue()
    readers = [
        threading.Thread(target=_drain, args=(process.stdout, stdout, lines), daemon=True),
        threading.Thread(target=_drain, args=(process.stderr, stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    url = None
    try:
        while url is None:
            line = lines.get(timeout=SERVER_START_S)
            if not line:
                break  # the process closed stdout: it exited
            found = URL_LINE.search(line)
            if found:
                url = found.group(0)
    except queue.Empty:
        pass
    server = ViewServer(process, url or "", stdout, stderr, readers)
    if url is None:
        code = server.stop()
        pytest.fail(
            f"podium view printed no URL line (exit {code})\n"
            f"stdout: {''.join(stdout)}\nstderr: {''.join(stderr)}",
            pytrace=False,
        )
    return server


@pytest.fixture
def serve() -> Iterator[Callable[[Path], ViewServer]]:
    """Start ``podium view`` servers; each is stopped with SIGINT at teardown and must exit 0
    without a traceback."""
    servers: list[ViewServer] = []

    def start(run_dir: Path) -> ViewServer:
        server = start_view(run_dir)
        servers.append(server)
        return server

    yield start
    failures = []
    for server in servers:
        code = server.stop()
        err = "".join(server.stderr)
        if code != 0 or "Traceback" in err:
            failures.append(f"podium view exited {code} on SIGINT; stderr:\n{err}")
    assert not failures, "\n".join(failures)
