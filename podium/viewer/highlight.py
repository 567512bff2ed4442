"""Syntax-highlighted code for the viewer, as HTML the page can insert as it is.

``code_html`` is the one string of node content the page inserts as HTML (into
``<pre class="hl"><code>``), so it must be escaped here: pygments' HTML formatter escapes
``&``, ``<`` and ``>`` in every token, and with ``nowrap`` it emits only ``<span class="…">``
around them. Colours come from classes (``css()``), never inline ``style=`` attributes: the page's
Content-Security-Policy allows no inline styles except its own hashed stylesheet.
"""

from __future__ import annotations

from functools import cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

STYLE = "default"  # a light style with readable contrast (pygments' own default)
SCOPE = ".hl"  # the class of the <pre> that holds code_html


def code_html(code: str) -> str:
    """Python source as escaped HTML spans with pygments' token classes (no wrapper element).

    Leading and trailing blank lines are kept, so line numbers match the solution file.
    """
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
