"""The viewer served live (``podium view RUN``), driven in Chromium through the DOM contract:
the recorded run (tests/recorded_run.py), then a real run watched while it is going."""

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
from tests.support import TOY_TASK, cli_env, node_answers, solution, write_script
from tests.viewer import browser
from tests.viewer.browser import Watched
from tests.viewer.conftest import ViewServer

pytestmark = pytest.mark.slow

Serve = Callable[[Path], ViewServer]


@pytest.fixture
def live(recorded_run: RecordedRun, serve: Serve, watched: Watched) -> tuple[Watched, str]:
    """The recorded run served by ``podium view``; the page not loaded yet."""
    return watched, serve(recorded_run.root).url


def test_browser_live_shows_the_graph(live: tuple[Watched, str], recorded_run: RecordedRun) -> None:
    watch, url = live
    browser.load(watch, url, recorded_run)
    browser.check_graph(watch.page, recorded_run)


def test_browser_live_shows_a_nodes_details_and_why_it_failed(
    live: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = live
    browser.load(watch, url, recorded_run)
    browser.check_details(watch.page, recorded_run)


def test_browser_live_keeps_hostile_content_as_text(
    live: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = live
    browser.load(watch, url, recorded_run)
    browser.check_safety(watch.page, recorded_run)


def test_browser_live_filters_dim_the_other_nodes(
    live: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = live
    browser.load(watch, url, recorded_run)
    browser.check_filters(watch.page, recorded_run)


def test_browser_live_goto_best_and_the_url_hash(
    live: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = live
    browser.check_goto_best_and_hash(watch.page, url, recorded_run)


def test_browser_live_no_errors_and_nothing_from_the_network(
    live: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = live
    browser.exercise(watch.page, url, recorded_run)
    watch.assert_quiet()
    elsewhere = [u for u in watch.requests if not u.startswith(url)]
    assert not elsewhere, elsewhere
    assert any("/api/node/" in u for u in watch.requests), watch.requests
    assert any("/api/search?q=" in u for u in watch.requests), "the text filter asked no one"


# --- a real run, watched while it goes ----------------------------------------------------------

STEPS = 3
SLEEP_S = 2.0  # each node's solution: the run lasts ~8 s, long enough to watch nodes arrive


def test_browser_live_new_nodes_appear_while_a_run_is_going(
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
