"""Syntax-highlighted code for the viewer, as HTML the page can insert as it is.

``code_html`` is the one string of node content the page inserts as HTML (into
``<pre class="hl"><code>``), so it must be escaped here: pygments' HTML formatter escapes
``&``, ``<`` and ``>`` in every token, and with ``nowrap`` it emits only ``<span class="…">``
around them. Colours come from classes (``css()``), never inline ``style=`` attributes: the page's
Content-Security-Policy allows no inline styles except its own hashed stylesheet.
"""

from __future__ import annotations

import html
from functools import cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

STYLE = "default"  # a light style with readable contrast (pygments' own default)
SCOPE = ".hl"  # the class of the <pre> that holds code_html


MAX_HIGHLIGHTED_CHARS = 200_000  # longer code is shown escaped but not coloured
MAX_HIGHLIGHTED_LINE = 10_000  # ... and so is code with a line this long (a token soup)


def code_html(code: str) -> str:
    """Python source as escaped HTML spans with pygments' token classes (no wrapper element).

    Leading and trailing blank lines are kept, so line numbers match the solution file. Code
    past the bounds above is escaped without colours: pygments costs ~2 µs per character, so
    a megabyte of code (which a journal may hold) would take seconds per request.
    """
    if len(code) > MAX_HIGHLIGHTED_CHARS or any(
        len(line) > MAX_HIGHLIGHTED_LINE for line in code.split("\n")
    ):
        return html.escape(code, quote=False)
    lexer = PythonLexer(stripnl=False, ensurenl=False)
    return str(highlight(code, lexer, HtmlFormatter(nowrap=True)))


@cache
def css() -> str:
    """The colours of ``code_html``'s classes, scoped to ``.hl`` (page.py adds it to style.css).

    Only the background and token rules: pygments' line-number rules include a bare
    ``pre { … }`` that would restyle every ``<pre>`` on the page.
    """
    formatter = HtmlFormatter(style=STYLE)
    background = formatter.get_background_style_defs(SCOPE)  # type: ignore[no-untyped-call]
    tokens = formatter.get_token_style_defs(SCOPE)  # type: ignore[no-untyped-call]
    rules = [*background, *tokens]
    return "\n".join(rules) + "\n"
