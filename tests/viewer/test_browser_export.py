"""The offline export (``podium view RUN --export FILE``), opened from file:// in Chromium with
the network off: the same graph, details, filters and safety as the live page, and nothing is
requested but the file itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recorded_run import RecordedRun
from tests.support import podium_cli
from tests.viewer import browser
from tests.viewer.browser import Watched

pytestmark = pytest.mark.slow


@pytest.fixture
def exported(recorded_run: RecordedRun, tmp_path: Path, watched: Watched) -> tuple[Watched, str]:
    """The recorded run exported to one file; a page that may fetch nothing but that file,
    with the network emulated offline."""
    out = tmp_path / "view.html"
    result = podium_cli("view", str(recorded_run.root), "--export", str(out))
    assert result.returncode == 0, result.stderr
    assert f"wrote {out} ({recorded_run.node_count} nodes)" in result.stdout, result.stdout
    url = out.as_uri()
    watched.allowed = lambda u: u.split("#")[0] == url
    watched.page.context.set_offline(True)
    return watched, url


def test_browser_export_file_keeps_node_content_inside_its_data(
    recorded_run: RecordedRun, tmp_path: Path
) -> None:
    out = tmp_path / "view.html"
    result = podium_cli("view", str(recorded_run.root), "--export", str(out))
    assert result.returncode == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert 'id="podium-data"' in html
    assert browser.XSS_CODE_LINE not in html, "node content can close the data's <script>"
    assert "<img src=x" not in html


def test_browser_export_shows_the_graph(
    exported: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = exported
    browser.load(watch, url, recorded_run)
    browser.check_graph(watch.page, recorded_run)


def test_browser_export_shows_a_nodes_details_and_why_it_failed(
    exported: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = exported
    browser.load(watch, url, recorded_run)
    browser.check_details(watch.page, recorded_run)


def test_browser_export_keeps_hostile_content_as_text(
    exported: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = exported
    browser.load(watch, url, recorded_run)
    browser.check_safety(watch.page, recorded_run)


def test_browser_export_filters_dim_the_other_nodes(
    exported: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = exported
    browser.load(watch, url, recorded_run)
    browser.check_filters(watch.page, recorded_run)


def test_browser_export_goto_best_and_the_url_hash(
    exported: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = exported
    browser.check_goto_best_and_hash(watch.page, url, recorded_run)


def test_browser_export_works_offline_requesting_nothing_but_itself(
    exported: tuple[Watched, str], recorded_run: RecordedRun
) -> None:
    watch, url = exported
    browser.exercise(watch.page, url, recorded_run)
    browser.check_details(watch.page, recorded_run)
    watch.assert_quiet()
    assert {u.split("#")[0] for u in watch.requests} == {url}, watch.requests
