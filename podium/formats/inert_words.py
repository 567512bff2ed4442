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

import json
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


# What a notebook viewer renders as a page rather than text, in a cell's output.
_RENDERED_TYPES = ("text/html", "text/markdown", "image/svg+xml", "application/javascript",
                   "text/latex")  # fmt: skip


def inert_notebook(text: str) -> str:
    """A notebook's JSON text (a plugin operator's, written by code Podium does not own) with
    nothing a viewer would fetch or run when it is opened: each markdown cell :func:`fenced`
    (unless it is already), each raw cell's format forgotten (nbconvert writes a raw cell of
    ``text/html`` into its page as it is), each output's HTML, markdown, SVG, LaTeX and
    JavaScript dropped (its plain text and pictures kept). Text that is no notebook is kept
    as it is: no viewer opens it."""
    try:
        nb = json.loads(text)
        cells = nb["cells"]
    except (ValueError, TypeError, KeyError):
        return text
    if not isinstance(cells, list):
        return text
    changed = [_make_inert(cell) for cell in cells if isinstance(cell, dict)]
    if not any(changed):
        return text  # as its writer wrote it (an agentic node's notebook is inert already)
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _make_inert(cell: dict[str, object]) -> bool:
    """Make one cell inert in place; whether anything changed."""
    before = json.dumps(cell, sort_keys=True)
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    if cell.get("cell_type") == "markdown" and unfenced(source) == source:
        cell["source"] = fenced(source)
    metadata = cell.get("metadata")
    if cell.get("cell_type") == "raw" and isinstance(metadata, dict):
        metadata.pop("format", None)
        metadata.pop("raw_mimetype", None)
    outputs = cell.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        data = output.get("data") if isinstance(output, dict) else None
        if isinstance(data, dict):
            for kind in _RENDERED_TYPES:
                data.pop(kind, None)
    return json.dumps(cell, sort_keys=True) != before
