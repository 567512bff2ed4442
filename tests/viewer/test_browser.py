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

from tests.recorded_run import AgenticRun, RecordedRun
from tests.support import (
    HELD_BACKSTOP_S,
    TOY_TASK,
    WAITING,
    cli_env,
    held_solution,
    node_answers,
    podium_cli,
    podium_popen,
    release_held,
    solution,
    wait_until,
    write_script,
)
from tests.viewer import browser
from tests.viewer.browser import Watched
from tests.viewer.conftest import ViewServer
from tests.viewer.test_sweep_page import DONE as SWEEP_DONE
from tests.viewer.test_sweep_page import make_sweep

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
    return _as_url(request.param, recorded_run.root, recorded_run.node_count, serve, watched)


def _as_url(
    how: str, root: Path, nodes: int, serve: Serve, watched: Watched
) -> tuple[Watched, str]:
    if how == "live":
        return watched, serve(root).url
    out = root.parent / "view.html"
    result = podium_cli("view", str(root), "--export", str(out))
    assert result.returncode == 0, result.stderr
    assert f"wrote {out} ({nodes} node{'s' if nodes != 1 else ''})" in result.stdout, result.stdout
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
    elsewhere = [u for u in watch.requests if not u.startswith(url.split("?")[0])]
    assert not elsewhere, elsewhere
    assert any("/api/node/" in u for u in watch.requests), watch.requests
    assert any("/api/search?q=" in u for u in watch.requests), "the text filter asked no one"


def test_diffs_tracebacks_and_the_lists_tools(
    opened: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    """What a long run needs, on the recorded run: the diff against each parent, the error
    pointing at the solution, sorting, hiding, the keyboard, collapsing, the metric chart;
    hostile content stays text in every one of them."""
    watch, url = opened
    browser.load(watch, url, recorded_run)
    page = watch.page
    browser.check_legible(page)
    browser.check_nodes_in_view(page, set(range(1, recorded_run.node_count + 1)), min_px=20)
    metrics = {int(k): float(v) for k, v in browser.METRICS.items()}
    browser.check_colours_follow_the_metric(page, metrics, lower=False)
    browser.check_diff(page, recorded_run)
    browser.check_traceback(page)
    browser.check_list_tools(page, recorded_run)
    browser.check_collapse(page, recorded_run)
    browser.check_chart(page, recorded_run)
    assert page.evaluate("typeof window.__pwned") == "undefined", "a hostile script ran"
    assert page.evaluate(browser._PARSED_JS) == [], "hostile markup was parsed as HTML"
    watch.assert_quiet()


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


# --- an agentic node: its notebook ------------------------------------------------------------


@pytest.mark.parametrize("how", ["live", "export"])
def test_an_agentic_nodes_notebook(
    how: str, agentic_run: AgenticRun, serve: Serve, watched: Watched
) -> None:
    """The node's panel lists its cells in order with their outputs and errors, the model's
    words between them and each turn's tokens, cost and time; the code, output and markdown
    put into it stay text (nothing runs, nothing is parsed, no markdown is rendered)."""
    watch, url = _as_url(how, agentic_run.root, agentic_run.node_count, serve, watched)
    watch.page.goto(url)
    browser.wait_nodes(watch.page, agentic_run.node_count)
    browser.check_notebook(watch.page, agentic_run)
    watch.assert_quiet()


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
        server = serve(run_dir)
        page = watched.page
        page.goto(server.url)
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
        elsewhere = [u for u in watched.requests if not u.startswith(server.origin)]
        assert not elsewhere, elsewhere
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            try:
                run.wait(timeout=20)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait()


# --- a running node's output, live ----------------------------------------------------------

LIVE_LINE = "epoch 1 <img src=x onerror=window.__pwned=7> loss 0.31"


def test_a_running_nodes_output_appears_while_it_runs(
    tmp_path: Path, data_dir: Path, serve: Serve, watched: Watched
) -> None:
    """A real run whose one node prints a line and then waits for the test: the page shows
    that line while the node is still executing, as text, then the rest when it ends."""
    code = held_solution(f"print({LIVE_LINE!r}, flush=True)\n")
    script = write_script(tmp_path / "script.jsonl", [node_answers(code)])
    run_dir = tmp_path / "run"
    run = podium_popen("run", str(TOY_TASK), "--model", f"scripted:{script}", "--steps", "1",
                       "--out", str(run_dir), "--data-dir", str(data_dir),
                       "-o", "sandbox.preimports=[]")  # fmt: skip
    try:
        wait_until(lambda: next(run_dir.rglob(WAITING), None) is not None, HELD_BACKSTOP_S)
        page = watched.page
        page.goto(serve(run_dir).url)
        browser.wait_nodes(page, 1)
        browser.open_node(page, 1)
        expect(page.locator("#output-live")).to_be_visible()
        expect(page.locator("#detail-output")).to_contain_text(LIVE_LINE, timeout=20_000)
        assert "running" in browser.node_classes(page, 1)
        release_held(run_dir)
        expect(page.locator("#detail-output")).to_contain_text("VALIDATION_METRIC", timeout=30_000)
        expect(page.locator("#output-live")).to_be_hidden()
        assert page.evaluate("typeof window.__pwned") == "undefined", "a hostile script ran"
        assert page.locator('img[src="x"]').count() == 0
        assert run.wait(timeout=HELD_BACKSTOP_S) == 0
        watched.assert_quiet()
    finally:
        release_held(run_dir)
        if run.poll() is None:
            run.kill()
            run.wait()


# --- the token --------------------------------------------------------------------------------


def test_only_the_printed_url_opens_the_page_and_its_cookie_keeps_it_open(
    recorded_run: RecordedRun, serve: Serve, watched: Watched
) -> None:
    """Without the token the page is a 403 and shows nothing of the run; the printed URL opens
    it, and the cookie it sets lets the page's script, style and fetches (and a reload of the
    bare address) through."""
    server = serve(recorded_run.root)
    page = watched.page
    refused = page.goto(server.origin)
    assert refused is not None and refused.status == 403
    assert "toy" not in page.content() and watched.requests == [server.origin]
    for seen in (watched.failed, watched.console, watched.requests):
        seen.clear()  # the 403 is reported as a failure: expected here
    browser.load(watched, server.url, recorded_run)
    page.goto(f"{server.origin}#node=3")  # the address without its token: the cookie opens it
    page.locator('#detail[data-node-id="3"]').wait_for()
    browser.wait_nodes(page, recorded_run.node_count)
    watched.assert_quiet()


# --- a sweep --------------------------------------------------------------------------------


def test_the_sweep_page_lists_every_run_and_opens_it(
    tmp_path: Path, serve: Serve, watched: Watched
) -> None:
    sweep_dir = make_sweep(tmp_path)
    page = watched.page
    page.goto(serve(sweep_dir).url)
    runs = page.locator("#sweep-grid a.run")
    expect(runs).to_have_count(4)
    expect(page.locator("#sweep-grid thead")).to_contain_text("greedy")
    expect(page.locator("#sweep-grid tbody")).to_contain_text("mini/adult")
    done = page.locator(f'a.run[data-run-id="{SWEEP_DONE}"]')
    expect(done).to_have_attribute("data-state", "finished")
    expect(done).to_contain_text("bronze")
    done.click()
    browser.wait_nodes(page, 9)  # the recorded run
    expect(page.locator("#run-title")).to_contain_text("toy")
    expect(page.locator("#back-to-sweep")).to_be_visible()
    browser.open_node(page, 5)
    expect(page.locator("#detail-code")).to_contain_text("print(0.82)")
    page.locator("#back-to-sweep").click()
    expect(page.locator("#sweep-grid a.run")).to_have_count(4)
    watched.assert_quiet()
