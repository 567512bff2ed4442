"""The model's words as markdown that no notebook viewer renders into anything but text.

An agentic node's ``notebook.ipynb`` holds what the model said between its cells. The model is
not trusted: its words may hold ``![](http://attacker/x.png)``, ``<img src=...>``, an
``<iframe>``, HTML blocks or links, and a markdown cell is rendered when the notebook is opened
(Jupyter, nbconvert, GitHub), so a beacon in it would be fetched by whoever looks.

:func:`fenced` writes the words as one fenced code block (CommonMark section 4.5): its content
is literal text in every CommonMark renderer — no inline markup, no HTML, no autolink. The
fence is one backtick longer than the longest run of backticks in the words (three at least),
so no line of them can close the block early; its info string is ``text`` (never a language a
viewer would run or draw, such as mermaid). The words stay readable as written, in monospace.
:func:`unfenced` gives them back to Podium's own readers (the viewer, ``podium show``), which
show them as text.
"""

from __future__ import annotations

import re

INFO = "text"
_BACKTICKS = re.compile(r"`+")
_FENCED = re.compile(rf"(?P<fence>`{{3,}}){INFO}\n(?P<text>.*)\n(?P=fence)", re.DOTALL)


def fenced(text: str) -> str:
    """``text`` as a markdown cell's source that renders as that text and nothing else."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{INFO}\n{text}\n{fence}"


def unfenced(source: str) -> str:
    """The words :func:`fenced` wrote; any other markdown (a notebook written before, or by
    someone else) as it is."""
    match = _FENCED.fullmatch(source)
    return match["text"] if match is not None else source
