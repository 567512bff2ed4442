"""``podium view`` as a user runs it: the URL line, the API answering, a clean stop on Ctrl-C or
SIGTERM, ``--open``, ``--export``, and every mistake as one ``error:`` line with a hint."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.recorded_run import RecordedRun
from tests.support import cli_env, podium_cli, podium_popen

URL_LINE = re.compile(
    r"^viewer: ((http://127\.0\.0\.1:\d+/)\?token=([\w-]{43}))  \(Ctrl-C to stop\)$"
)

pytestmark = pytest.mark.slow  # each test starts the CLI in a fresh Python


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)
    into.put("")


class Viewer:
    """A ``podium view`` process and the URL it printed."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = podium_popen("view", *args, env=env)
        assert self.process.stdout is not None
        self.stdout: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=_lines, args=(self.process.stdout, self.stdout), daemon=True
        ).start()
        line = self.stdout.get(timeout=30)
        found = URL_LINE.match(line.rstrip("\n"))
        if found is None:
            self.process.kill()
            _, err = self.process.communicate()
            pytest.fail(f"no URL line: {line!r}\nstderr: {err}")
        self.url, self.origin, self.token = found.groups()

    def get(self, path: str, token: bool = True) -> Any:
        """``path``'s JSON, asked with the token (a header) unless ``token`` is False."""
        given = {"Authorization": f"token {self.token}"} if token else {}
        request = urllib.request.Request(self.origin + path, headers=given)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stop(self, sig: signal.Signals) -> tuple[int, str]:
        self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=10)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        assert self.process.stderr is not None
        return code, self.process.stderr.read()


@pytest.fixture
def viewers() -> Iterator[list[Viewer]]:
    started: list[Viewer] = []
    yield started
    for viewer in started:
        if viewer.process.poll() is None:
            viewer.process.kill()
            viewer.process.wait()


def test_serves_the_run_until_ctrl_c(recorded_run: RecordedRun, viewers: list[Viewer]) -> None:
    viewer = Viewer(str(recorded_run.root), "--port", "0")
    viewers.append(viewer)
    data = viewer.get("api/run")
    assert [n["id"] for n in data["nodes"]] == list(range(1, recorded_run.node_count + 1))
    assert viewer.get("api/node/5")["parents"] == [3, 4]
    with pytest.raises(urllib.error.HTTPError) as refused:  # another local user has no token
        viewer.get("api/run", token=False)
    assert refused.value.code == 403
    code, err = viewer.stop(signal.SIGINT)
    assert (code, err) == (0, "")


def test_sigterm_stops_cleanly_and_open_opens_the_url(
    recorded_run: RecordedRun, viewers: list[Viewer], tmp_path: Path
) -> None:
    """The browser is handed a private redirect file, never the token's URL (a command line
    any user can read); the file is gone once the viewer stops."""
    opened = tmp_path / "opened"
    page = tmp_path / "page"
    browser = tmp_path / "browser"  # webbrowser runs $BROWSER with the URL as its argument
    browser.write_text(
        f'#!/bin/sh\nfile="${{1#file://}}"\ncp "$file" {page}\n'
        f'stat -c %a "$file" "$(dirname "$file")" >> {page}\n'
        f'echo "$1" > {opened}.tmp && mv {opened}.tmp {opened}\n'
    )
    browser.chmod(0o755)
    viewer = Viewer(
        str(recorded_run.root), "--port", "0", "--open", env=cli_env(BROWSER=str(browser))
    )
    viewers.append(viewer)
    deadline = time.monotonic() + 20
    while not opened.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    code, err = viewer.stop(signal.SIGTERM)
    assert (code, err) == (0, "")
    handed = opened.read_text().strip()
    assert handed.startswith("file:///") and viewer.token not in handed
    assert f'content="0;url={viewer.url}"' in page.read_text()
    assert page.read_text().splitlines()[-2:] == ["600", "700"]
    assert not Path(handed.removeprefix("file://")).exists()


def test_export(recorded_run: RecordedRun, tmp_path: Path) -> None:
    dest = tmp_path / "run.html"
    done = podium_cli("view", str(recorded_run.root), "--export", str(dest))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"wrote {dest} ({recorded_run.node_count} nodes)\n"
    assert 'id="podium-data"' in dest.read_text(encoding="utf-8")


def _sweep(tmp_path: Path) -> Path:
    (tmp_path / "sweep" / "runs").mkdir(parents=True)
    return tmp_path / "sweep"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", r"error: .*missing does not exist"),
        ("empty", r"error: .*empty is not a Podium run directory \(no journal\)"),
        ("sweep", r"error: .*sweep is not a Podium run directory \(no journal\)"),
        ("busy", r"error: port \d+ on 127\.0\.0\.1 is already in use"),
        ("export-dir", r"error: cannot write .*run\.html: .*nowhere does not exist"),
        ("bad-port", r"error: --port 70000 is not a port"),
    ],
)
def test_mistakes_are_one_error_line_and_a_hint(
    recorded_run: RecordedRun, tmp_path: Path, case: str, message: str
) -> None:
    (tmp_path / "empty").mkdir()
    run = str(recorded_run.root)
    args = {
        "missing": [str(tmp_path / "missing")],
        "empty": [str(tmp_path / "empty")],
        "sweep": [str(_sweep(tmp_path))],
        "export-dir": [run, "--export", str(tmp_path / "nowhere" / "run.html")],
        "bad-port": [run, "--port", "70000"],
    }
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        args["busy"] = [run, "--port", str(holder.getsockname()[1])]
        done = podium_cli("view", *args[case])
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert re.fullmatch(message, lines[0]), lines[0]
    assert lines[1].startswith("hint: ")
    if case == "sweep":
        assert "runs/" in lines[1]
