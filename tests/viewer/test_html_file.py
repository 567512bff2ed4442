"""``export_html``: one self-contained, offline HTML file whose embedded data node content
cannot break out of, and whose Content-Security-Policy admits only its own inline blocks."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from podium.errors import UserError
from podium.viewer import packing
from podium.viewer.html_file import export_html
from podium.viewer.run_data import open_run
from podium.viewer.snapshot import export_data
from tests.recorded_run import XSS_CODE, XSS_OUTPUT, RecordedRun

DATA_OPEN = re.compile(r'<script\b[^>]*\bid="podium-data"[^>]*>')
DETAILS_OPEN = re.compile(r'<script\b[^>]*\bid="podium-details"[^>]*>')


@pytest.fixture
def exported(recorded_run: RecordedRun, tmp_path: Path) -> str:
    dest = tmp_path / "out" / "run.html"
    dest.parent.mkdir()
    assert export_html(recorded_run.root, dest) == recorded_run.node_count
    assert [p.name for p in dest.parent.iterdir()] == ["run.html"]  # no temporary file left
    return dest.read_text(encoding="utf-8")


def split_data(html: str, opening: re.Pattern[str] = DATA_OPEN) -> tuple[str, str]:
    """(a data block's text, the page without it). The block ends at the first ``</script``
    after it opens, as an HTML parser would end it."""
    found = opening.search(html)
    assert found is not None, f"no {opening.pattern} block"
    end = html.lower().index("</script", found.end())
    assert 'type="application/json"' in found.group(0)
    return html[found.end() : end], html[: found.start()] + html[end:]


def page_only(html: str) -> str:
    """The page without its two data blocks."""
    return split_data(split_data(html)[1], DETAILS_OPEN)[1]


def test_the_embedded_data_is_the_whole_run(exported: str, recorded_run: RecordedRun) -> None:
    run: dict[str, Any] = json.loads(split_data(exported)[0])
    packed: dict[str, Any] = json.loads(split_data(exported, DETAILS_OPEN)[0])
    assert (run, packed) == export_data(open_run(recorded_run.root))
    details = packing.unpack(packed)
    assert details["1"]["code"] == XSS_CODE
    assert details["1"]["output"].startswith(XSS_OUTPUT)
    assert len(run["nodes"]) == recorded_run.node_count == len(details)


@pytest.mark.parametrize("opening", [DATA_OPEN, DETAILS_OPEN])
def test_node_content_cannot_close_the_data_tag(exported: str, opening: re.Pattern[str]) -> None:
    block, _ = split_data(exported, opening)
    assert "<" not in block and ">" not in block and "&" not in block
    assert "</script" not in block.lower()
    if opening is DETAILS_OPEN:
        assert "\\u003c/script\\u003e" in block  # the hostile code is there, escaped


def test_nothing_is_loaded_from_the_network(exported: str) -> None:
    page = page_only(exported)
    urls = re.findall(r"""\b(?:src|href|action|srcset)\s*=\s*["']?([^"'\s>]*)""", page, re.I)
    assert not [u for u in urls if re.match(r"(?:https?:)?//", u, re.I)]
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page, re.I)


def b64_sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def test_the_csp_admits_exactly_the_inline_script_and_style(exported: str) -> None:
    page = page_only(exported)
    metas = re.findall(
        r'<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"', page, re.I
    )
    assert len(metas) == 1
    policy = {d.split()[0]: d.split()[1:] for d in metas[0].split(";") if d.strip()}
    assert policy["default-src"] == ["'none'"]
    scripts = [
        body
        for attrs, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.S | re.I)
        if "src=" not in attrs
    ]
    styles = re.findall(r"<style\b[^>]*>(.*?)</style>", page, re.S | re.I)
    assert scripts and styles
    assert sorted(policy["script-src"]) == sorted({f"'sha256-{b64_sha256(s)}'" for s in scripts})
    assert sorted(policy["style-src"]) == sorted({f"'sha256-{b64_sha256(s)}'" for s in styles})
    assert not re.search(r"<script\b[^>]*\bsrc=", page, re.I)  # everything inline


def test_export_replaces_an_existing_file(recorded_run: RecordedRun, tmp_path: Path) -> None:
    dest = tmp_path / "run.html"
    dest.write_text("old")
    export_html(recorded_run.root, dest)
    assert dest.read_text(encoding="utf-8").startswith("<!")


def test_a_destination_in_a_missing_directory(recorded_run: RecordedRun, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist") as exc:
        export_html(recorded_run.root, tmp_path / "nowhere" / "run.html")
    assert exc.value.hint
    assert not (tmp_path / "nowhere").exists()


def test_a_destination_that_is_a_directory(recorded_run: RecordedRun, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a directory"):
        export_html(recorded_run.root, tmp_path)


def test_not_a_run_dir_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a Podium run directory"):
        export_html(tmp_path, tmp_path / "run.html")
    assert list(tmp_path.iterdir()) == []
