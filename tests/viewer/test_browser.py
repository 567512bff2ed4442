"""The viewer in Chromium, driven through the DOM contract: the recorded run
(tests/recorded_run.py) served live by ``podium view RUN`` and exported by ``--export FILE``
(opened from file:// with the network off) must show the same graph, details, filters and
safety; then a real run is watched while it is going."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.recorded_run import RecordedRun
from tests.support import TOY_TASK, cli_env, node_answers, podium_cli, solution, write_script
from tests.viewer import browser
from tests.viewer.browser import Watched
from tests.viewer.conftest import ViewServer

pytestmark = pytest.mark.slow

Serve = Callable[[Path], ViewServer]


@pytest.fixture(params=["live", "export"])
def opened(
    request: pytest.FixtureRequest,
    recorded_run: RecordedRun,
    serve: Serve,
    watched: Watched,
    tmp_path: Path,
) -> tuple[Watched, str]:
    """The recorded run as a URL, not loaded yet: served by ``podium view``, or exported to one
    file that the page may not go beyond (the browser offline)."""
    if request.param == "live":
        return watched, serve(recorded_run.root).url
    out = tmp_path / "view.html"
    result = podium_cli("view", str(recorded_run.root), "--export", str(out))
    assert result.returncode == 0, result.stderr
    assert f"wrote {out} ({recorded_run.node_count} nodes)" in result.stdout, result.stdout
    url = out.as_uri()
    watched.allowed = lambda u: u.split("#")[0] == url
    watched.page.context.set_offline(True)
    return watched, url


def test_shows_the_graph(opened: tuple[Watched, str], recorded_run: RecordedRun) -> None:
    watch, url = opened
    browser.load(watch, url, recorded_run)
    browser.check_graph(watch.page, recorded_run)


def test_shows_a_nodes_details_and_why_it_failed(
    opened: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = opened
    browser.load(watch, url, recorded_run)
    browser.check_details(watch.page, recorded_run)


def test_keeps_hostile_content_as_text(
    opened: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = opened
    browser.load(watch, url, recorded_run)
    browser.check_safety(watch.page, recorded_run)


def test_filters_dim_the_other_nodes(
    opened: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = opened
    browser.load(watch, url, recorded_run)
    browser.check_filters(watch.page, recorded_run)


def test_goto_best_and_the_url_hash(opened: tuple[Watched, str], recorded_run: RecordedRun) -> None:
    watch, url = opened
    browser.check_goto_best_and_hash(watch.page, url, recorded_run)


def test_no_errors_and_nothing_from_the_network(
    opened: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    """Live: every request goes to the viewer itself; export: nothing but the file."""
    watch, url = opened
    browser.exercise(watch.page, url, recorded_run)
    browser.check_details(watch.page, recorded_run)
    watch.assert_quiet()
    if url.startswith("file:"):
        assert {u.split("#")[0] for u in watch.requests} == {url}, watch.requests
        return
    elsewhere = [u for u in watch.requests if not u.startswith(url)]
    assert not elsewhere, elsewhere
    assert any("/api/node/" in u for u in watch.requests), watch.requests
    assert any("/api/search?q=" in u for u in watch.requests), "the text filter asked no one"


def test_the_export_keeps_node_content_inside_its_data(
    recorded_run: RecordedRun, tmp_path: Path
) -> None:
    out = tmp_path / "view.html"
    result = podium_cli("view", str(recorded_run.root), "--export", str(out))
    assert result.returncode == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert 'id="podium-data"' in html
    assert browser.XSS_CODE_LINE not in html, "node content can close the data's <script>"
    assert "<img src=x" not in html


# --- a real run, watched while it goes ----------------------------------------------------------

STEPS = 3
SLEEP_S = 2.0  # each node's solution: the run lasts ~8 s, long enough to watch nodes arrive


def test_new_nodes_appear_while_a_run_is_going(
    tmp_path: Path, data_dir: Path, serve: Serve, watched: Watched
) -> None:
    answers = [node_answers(solution(0.5 + i / 10, sleep=SLEEP_S)) for i in range(STEPS)]
    script = write_script(tmp_path / "script.jsonl", answers)
    run_dir = tmp_path / "run"
    log = tmp_path / "run.log"
    with log.open("w") as out:
        run = subprocess.Popen(
            [sys.executable, "-m", "podium", "run", str(TOY_TASK), "--model", f"scripted:{script}",
             "--steps", str(STEPS), "--out", str(run_dir), "--data-dir", str(data_dir),
             "-o", "sandbox.preimports=[]"],
            stdout=out, stderr=subprocess.STDOUT, text=True, env=cli_env(),
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while not (run_dir / "journal.sqlite").is_file():
            assert run.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the run made no journal in 15 s"
            time.sleep(0.05)
        url = serve(run_dir).url
        page = watched.page
        page.goto(url)
        page.wait_for_function("() => document.querySelectorAll('g.node').length > 0")
        page.evaluate("window.__sameDocument = true")  # gone if the page reloads
        first = browser.node_count(page)
        assert first < STEPS, "the run finished before the page loaded: nothing to watch"
        expect(page.locator("#live")).to_be_visible()
        expect(page.locator("#live")).to_have_text("live")
        expect(page.locator("#run-status")).to_contain_text("running")
        # Open the newest node while it runs: its detail refreshes when it finishes.
        newest = first
        browser.open_node(page, newest)
        browser.wait_nodes(page, STEPS, timeout=20_000)
        expect(page.locator("#run-status")).to_contain_text("finished", timeout=15_000)
        expect(page.locator("#live")).to_be_hidden()  # the run let go of its lock
        expect(page.locator("#node-count")).to_have_text(f"{STEPS} nodes")
        expect(page.locator("#detail-output")).to_contain_text("VALIDATION_METRIC", timeout=10_000)
        assert page.locator(f'#detail[data-node-id="{newest}"]').count() == 1
        assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
        for node_id in range(1, STEPS + 1):
            assert "good" in browser.node_classes(page, node_id)
        assert run.wait(timeout=20) == 0, log.read_text()
        watched.assert_quiet()
        elsewhere = [u for u in watched.requests if not u.startswith(url)]
        assert not elsewhere, elsewhere
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            try:
                run.wait(timeout=20)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait()
