"""The viewer's page: as the live server serves it, and as one self-contained HTML export.

The page is ``static/index.html`` with its script and ``static/style.css`` (package data, read
with importlib.resources). The script is the files of ``static/js/``, one job each, joined in
the one order :data:`APP_MODULES` declares (:func:`app_script`). The live page loads it as one
``/static/app.js`` and the style from ``/static/…``. An export inlines both, the script as the
very same text, embeds the run's data as JSON, and carries a Content-Security-Policy that allows
exactly those two inline blocks (by their sha256) and nothing else: no network, no other script.

Node content in the embedded JSON is untrusted: ``<``, ``>`` and ``&`` are written as JSON
escapes, so no string in it can close the ``<script>`` element that holds it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib.resources import files
from typing import Any

from podium.viewer import highlight

APP_MODULES: tuple[str, ...] = (
    "core.js", "format.js", "tree.js", "unpack.js", "source.js", "colour.js", "geometry.js",
    "graph.js", "tags.js", "minimap.js", "view.js", "filters.js", "collapse.js", "list.js",
    "chart.js", "header.js", "traceback.js", "calls.js", "notebook.js", "code.js", "output.js",
    "panel.js", "select.js", "keyboard.js", "poll.js", "main.js",
)  # fmt: skip
"""The page's script: the files of ``static/js/`` in the order they run. Each takes from the
shared ``podiumViewer`` object only what the files before it put there, so this order is the
one the script needs; the live page and an export both use it (``app_script``)."""

JS_DIR = "js"
STYLE_LINK = '<link rel="stylesheet" href="/static/style.css">'
SCRIPT_TAG = '<script src="/static/app.js" defer></script>'
CONTENT_TYPES = {
    "app.js": "text/javascript; charset=utf-8",
    "sweep.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}


def _read(*path: str) -> str:
    return files("podium.viewer").joinpath("static", *path).read_text(encoding="utf-8")


def module_text(name: str) -> str:
    """One file of ``static/js/`` as it is on disk."""
    return _read(JS_DIR, name)


def app_script() -> str:
    """The page's one script: each of :data:`APP_MODULES` after a comment line naming it (so a
    line of ``/static/app.js`` in a browser's console leads back to its file).

    One text, not a ``<script>`` per file: the live page runs exactly what an export inlines
    and hashes for its CSP, ``index.html`` keeps its one script tag, and a page load is one
    request.
    """
    return "".join(f"// ---- {JS_DIR}/{name} ----\n{module_text(name)}" for name in APP_MODULES)


def live_page() -> str:
    """index.html as the server sends it: styles and script from ``/static/``."""
    return _read("index.html")


def sweep_page() -> str:
    """sweep.html: a sweep's grid of runs, each linking to its run's page."""
    return _read("sweep.html")


def _stylesheet() -> str:
    """style.css followed by the colours of highlighted code (pygments, scoped to ``.hl``)."""
    return _read("style.css") + "\n/* highlighted code (pygments) */\n" + highlight.css()


def static_file(name: str) -> tuple[bytes, str] | None:
    """``(body, content type)`` for one of ``CONTENT_TYPES``; None for any other name."""
    if name not in CONTENT_TYPES:
        return None
    built = {"app.js": app_script, "style.css": _stylesheet}.get(name)
    text = built() if built is not None else _read(name)
    return text.encode("utf-8"), CONTENT_TYPES[name]


def embed_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def export_page(run: dict[str, Any], details: dict[str, Any]) -> str:
    """One HTML file that shows the run with no server and no network.

    ``run`` is RunJSON, embedded as ``#podium-data``; ``details`` the packed NodeDetails
    (``packing.pack``), as ``#podium-details``, which the page parses only when a node is first
    opened or searched. The page's script runs in export mode when it finds ``#podium-data``.
    """
    css, js = _stylesheet(), app_script()
    # Our own files: these would end their inline element early (never true, checked anyway).
    if "</style" in css.lower() or "</script" in js.lower() or "<!--" in js:
        raise ValueError("the viewer's static files cannot be inlined as they are")
    csp = (
        f"default-src 'none'; script-src {_sha256(js)}; style-src {_sha256(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    page = live_page()
    head = '<meta charset="utf-8">'
    for needle in (head, STYLE_LINK, SCRIPT_TAG, "</body>"):
        if page.count(needle) != 1:
            raise ValueError(f"static/index.html must hold {needle!r} exactly once")
    page = page.replace(
        head, f'{head}\n<meta http-equiv="Content-Security-Policy" content="{csp}">'
    )
    page = page.replace(STYLE_LINK, f"<style>{css}</style>")
    page = page.replace(SCRIPT_TAG + "\n", "").replace(SCRIPT_TAG, "")
    body_end = (
        f'<script type="application/json" id="podium-data">{embed_json(run)}</script>\n'
        f'<script type="application/json" id="podium-details">{embed_json(details)}</script>\n'
        f"<script>{js}</script>\n</body>"
    )
    return page.replace("</body>", body_end)
