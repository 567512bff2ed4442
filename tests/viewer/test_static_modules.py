"""The page's script is the files of ``podium/viewer/static/js/`` joined in ``page.APP_MODULES``'
order: every file is listed once, each takes from the shared ``podiumViewer`` object only what
the files before it put there (so the declared order is one the script can run in), and the
live ``/static/app.js`` and an export's one inline script are that same text, each file in it
once."""

from __future__ import annotations

import re
from collections import Counter
from importlib.resources import files

from podium.viewer import page
from podium.viewer.server import ViewerServer
from tests.viewer.test_html_file import exported, page_only
from tests.viewer.test_server import request, server

__all__ = ["exported", "server"]  # the fixtures, used by name

MAX_LINES = 200  # a file one reads whole
TAKES = re.compile(r"^  const \{([^}]*)\} = podiumViewer;$", re.M)
GIVES = re.compile(r"^  Object\.assign\(podiumViewer, \{([^}]*)\}\);$", re.M)
OPENS = "(() => {\n  'use strict';\n"
INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def names(found: list[str]) -> list[str]:
    """The names of one destructuring or one object of shorthand properties."""
    return [name.strip() for group in found for name in group.split(",") if name.strip()]


def test_every_file_of_static_js_is_in_the_order_exactly_once() -> None:
    on_disk = sorted(p.name for p in files("podium.viewer").joinpath("static", "js").iterdir())
    listed = Counter(page.APP_MODULES)
    assert [name for name, count in listed.items() if count > 1] == []
    assert sorted(listed) == on_disk
    assert page.APP_MODULES[0] == "core.js"  # it makes the namespace the others share


def test_each_file_is_one_function_run_once_and_short() -> None:
    for name in page.APP_MODULES:
        text = page.module_text(name)
        outside, opened, _ = text.partition("\n" + OPENS)
        assert opened, f"{name} is not wrapped in {OPENS!r}"
        declared = [ln for ln in outside.splitlines() if ln and not ln.startswith("//")]
        assert declared == (["const podiumViewer = {};"] if name == "core.js" else []), name
        assert text.endswith("\n})();\n") and text.count(OPENS) == 1, name
        assert len(text.splitlines()) <= MAX_LINES, f"{name}: split it"


def test_each_file_takes_only_what_the_files_before_it_give() -> None:
    given: dict[str, str] = {}  # name -> the file that gives it
    taken: set[str] = set()
    for name in page.APP_MODULES:
        text = page.module_text(name)
        takes, gives = names(TAKES.findall(text)), names(GIVES.findall(text))
        assert len(TAKES.findall(text)) <= 1 and len(GIVES.findall(text)) <= 1, name
        early = [n for n in takes if n not in given]
        assert early == [], f"{name} takes {early} before any file gives them"
        again = {n: given[n] for n in gives if n in given}
        assert again == {}, f"{name} gives again what others gave: {again}"
        given.update(dict.fromkeys(gives, name))
        taken.update(takes)
    assert sorted(set(given) - taken) == []  # nothing given that no later file takes


def test_the_live_script_is_the_files_in_order(server: ViewerServer) -> None:
    reply = request(server, "/static/app.js")
    assert reply.status == 200
    script = reply.body.decode("utf-8")
    assert script == page.app_script()
    at = [script.index(page.module_text(name)) for name in page.APP_MODULES]
    assert at == sorted(at)


def test_the_export_inlines_the_same_script_each_file_once(exported: str) -> None:
    assert INLINE_SCRIPT.findall(page_only(exported)) == [page.app_script()]
    for name in page.APP_MODULES:
        assert exported.count(page.module_text(name)) == 1, name
