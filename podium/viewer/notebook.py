"""An agentic node's notebook read back, for the page and ``podium show``.

An agentic node (``search.operators = "agentic"``) keeps its record as a Jupyter notebook,
``RunDir.node_notebook(id)``, written by :mod:`podium.formats.notebook`: code cells in the order
they ran with their output (a ``stream``) and error (an ``error`` output: name, value, traceback
lines), the model's words as markdown cells (fenced as inert text by
:mod:`podium.formats.inert_words`, read back as the model wrote them), and Podium's facts in
``metadata.podium`` (a cell's ``turn``, ``status`` and ``duration_s``; the notebook's
``finished``, ``ending`` and ``turns``).
A cell's ``turn`` is the ``meta.turn`` of the node's ``code`` model call that asked for it:
:func:`calls_by_turn` joins the two.

A run dir may come from anyone, so the file is read as a file of unknown origin, as the node's
output is (``RunView.read_output``): no link followed below the run dir, a regular file of at
most :data:`NOTEBOOK_READ_CAP` bytes; and its content as hostile: every text made inert (no
terminal escape, no raw control character) and clipped (:func:`podium.viewer.run_data.clip`),
at most :data:`MAX_CELLS` cells kept. A file that cannot be read or is not a notebook is a
:class:`NodeNotebook` whose ``problem`` says so in one line, never an exception.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from podium.formats import RunDir
from podium.formats.inert_words import unfenced
from podium.formats.notebook import METADATA, CellMeta, NotebookMeta
from podium.records import ModelCall
from podium.tracebacks import SOLUTION_FILE, ParsedTraceback, parse_traceback
from podium.untrusted import Refused, inert, read_untrusted
from podium.viewer.run_data import clip

NOTEBOOK_READ_CAP = 32 * 1024 * 1024
MAX_CELLS = 2_000  # far more than a node's turns (agentic.max_turns, 30 by default) make
MAX_CELL_TEXT = 1_000_000  # each text of a cell, as each text of a node's panel
MAX_PROBLEM_CHARS = 200
CELL_FRAME = "a cell"  # how a frame in one of the node's cells is named (cell_traceback)

CellKind = Literal["code", "words"]


@dataclass(frozen=True)
class CellError:
    """A cell's error output: the exception's name and value, its traceback as one text."""

    name: str
    value: str
    traceback: str


@dataclass(frozen=True)
class NotebookCell:
    """One cell, in the order the node ran it. ``words``: what the model said (a markdown
    cell; ``source`` is that text, never rendered). ``number`` is a code cell's execution
    count; ``turn`` the model call that asked for it (None when the file does not say)."""

    kind: CellKind
    source: str
    turn: int | None
    number: int | None = None
    status: str | None = None
    duration_s: float | None = None
    output: str = ""
    error: CellError | None = None


@dataclass(frozen=True)
class NodeNotebook:
    """The notebook as read. ``problem``: why it could not be read (one line; no cells then).
    ``cells_left_out``: cells past :data:`MAX_CELLS`, not kept."""

    cells: tuple[NotebookCell, ...] = ()
    finished: bool | None = None
    ending: str | None = None
    turns: int | None = None
    cells_left_out: int = 0
    problem: str | None = None

    @property
    def code_cells(self) -> int:
        return sum(c.kind == "code" for c in self.cells)


class NotANotebook(ValueError):
    """The file is JSON of another shape; the message says where, in words."""


def read_notebook(root: Path, node_id: int) -> NodeNotebook | None:
    """Node ``node_id``'s notebook in the run dir ``root``; None when it has none (a one-shot
    node, or an agentic one whose conversation has not ended yet)."""
    path = RunDir(root).node_notebook(node_id)
    try:
        data = read_untrusted(path, trusted=root, max_bytes=NOTEBOOK_READ_CAP)
    except FileNotFoundError:
        return None
    except (Refused, OSError) as exc:
        return _unread(f"the notebook was not read: {exc}")
    try:
        return parse_notebook(data)
    except (ValueError, RecursionError) as exc:  # JSON, UTF-8, NotANotebook: all ValueErrors
        return _unread(f"{path} is not a readable notebook: {_why(exc)}")


def _unread(problem: str) -> NodeNotebook:
    return NodeNotebook(problem=inert(" ".join(problem.split()))[: MAX_PROBLEM_CHARS * 2])


def _why(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return " ".join(str(exc).split())[:MAX_PROBLEM_CHARS]  # JSON's own says where


def parse_notebook(data: bytes) -> NodeNotebook:
    """An nbformat-4 notebook's bytes read leniently (fields Podium does not use are ignored,
    a missing ``metadata.podium`` is None), but strictly typed: a field of the wrong type
    raises :class:`NotANotebook` naming it. Bytes that are not UTF-8 JSON raise what
    ``json.loads`` raises (a ValueError, or RecursionError when nested too deeply)."""
    nb = json.loads(data.decode("utf-8"))
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotANotebook("it has no list of cells")
    meta = cast(NotebookMeta, _podium(nb.get("metadata")))
    raw = nb["cells"]
    read = (_cell(cell, index) for index, cell in enumerate(raw[:MAX_CELLS], start=1))
    cells = tuple(cell for cell in read if cell is not None)
    return NodeNotebook(
        cells=cells,
        finished=_typed(meta.get("finished"), bool, "the notebook's 'finished'"),
        ending=_text_or_none(meta.get("ending"), "the notebook's 'ending'"),
        turns=_int(meta.get("turns"), "the notebook's 'turns'"),
        cells_left_out=max(0, len(raw) - MAX_CELLS),
    )


def _cell(cell: Any, index: int) -> NotebookCell | None:
    """One cell (``index``: its place in the file, for the message); None for a cell type the
    node never writes (raw)."""
    where = f"cell {index}"
    if not isinstance(cell, dict):
        raise NotANotebook(f"{where} is not an object")
    kind = cell.get("cell_type")
    meta = cast(CellMeta, _podium(cell.get("metadata"), where))
    source = _raw_text(cell.get("source", ""), f"{where}'s source")
    turn = _int(meta.get("turn"), f"{where}'s turn")
    if kind == "markdown":
        return NotebookCell(kind="words", source=_clean(unfenced(source)), turn=turn)
    if kind != "code":
        return None
    output, error = _outputs(cell.get("outputs", []), where)
    return NotebookCell(
        kind="code",
        source=_code(source),
        turn=turn,
        number=_int(cell.get("execution_count"), f"{where}'s execution_count"),
        status=_text_or_none(meta.get("status"), f"{where}'s status"),
        duration_s=_number(meta.get("duration_s"), f"{where}'s duration_s"),
        output=output,
        error=error,
    )


def _outputs(outputs: Any, where: str) -> tuple[str, CellError | None]:
    """A code cell's printed text (its streams and plain-text results, in order) and its
    error (the last one, as a kernel gives one per cell)."""
    if not isinstance(outputs, list):
        raise NotANotebook(f"{where}'s outputs are not a list")
    texts: list[str] = []
    error = None
    for out in outputs:
        if not isinstance(out, dict):
            raise NotANotebook(f"an output of {where} is not an object")
        kind = out.get("output_type")
        if kind == "stream":
            texts.append(_raw_text(out.get("text", ""), f"{where}'s output"))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data")
            plain = data.get("text/plain") if isinstance(data, dict) else None
            if plain is not None:
                texts.append(_raw_text(plain, f"{where}'s result") + "\n")
        elif kind == "error":
            error = _error(out, where)
    return _clean("".join(texts)), error


def _error(out: dict[str, Any], where: str) -> CellError:
    lines = out.get("traceback", [])
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise NotANotebook(f"{where}'s traceback is not a list of lines")
    return CellError(
        name=_text(out.get("ename", ""), f"{where}'s error name"),
        value=_text(out.get("evalue", ""), f"{where}'s error value"),
        traceback=_clean("\n".join(lines)),
    )


def _podium(metadata: Any, where: str = "the notebook") -> dict[str, Any]:
    """``metadata.podium`` (empty when absent: a notebook Podium did not write), its keys
    typed by :class:`NotebookMeta` / :class:`CellMeta` once the caller casts it."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise NotANotebook(f"{where}'s metadata is not an object")
    podium = metadata.get(METADATA, {})
    if not isinstance(podium, dict):
        raise NotANotebook(f"{where}'s metadata.podium is not an object")
    return podium


def _raw_text(value: Any, what: str) -> str:
    """nbformat's multi-line string: one string, or a list of lines to join."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise NotANotebook(f"{what} is not text")


def _text(value: Any, what: str) -> str:
    return _clean(_raw_text(value, what))


def _text_or_none(value: Any, what: str) -> str | None:
    return None if value is None else _text(value, what)


def _clean(text: str) -> str:
    """Agent-written text as every reader of it gets it: inert, and clipped."""
    return clip(inert(text), MAX_CELL_TEXT)


def _code(text: str) -> str:
    """A cell's code made inert without losing what it says: an escape sequence in it (in a
    string literal, say) is shown as ``\\x1b…``, as ``podium show`` shows a node's code, not
    dropped as one in an output is."""
    return _clean(text.replace("\x1b", "\\x1b"))


def _typed(value: Any, kind: type, what: str) -> Any:
    if value is not None and not isinstance(value, kind):
        raise NotANotebook(f"{what} is not a {kind.__name__}")
    return value


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotANotebook(f"{what} is not a whole number")
    return value


def _number(value: Any, what: str) -> float | None:
    """A duration: a number, or None (also for NaN, infinity or a negative one, which JSON
    as Python writes it allows and no reader can show)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotANotebook(f"{what} is not a number")
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def cell_traceback(text: str) -> ParsedTraceback:
    """A cell's traceback parsed (:func:`podium.tracebacks.parse_traceback`), its notebook
    frames named :data:`CELL_FRAME`: the parser calls any kernel cell ``solution.py``, whose
    line numbers are not an agentic node's (its ``solution.py`` is its clean cells joined), and
    IPython's ``In [N]`` need not be this cell (a function defined in an earlier one)."""
    return _in_cells(parse_traceback(text))


def _in_cells(parsed: ParsedTraceback) -> ParsedTraceback:
    frames = tuple(
        replace(f, file=CELL_FRAME) if f.file == SOLUTION_FILE else f for f in parsed.frames
    )
    return replace(parsed, frames=frames, causes=tuple(_in_cells(c) for c in parsed.causes))


def calls_by_turn(calls: Iterable[ModelCall]) -> dict[int, ModelCall]:
    """The node's ``code`` calls by their ``meta.turn``: the call that asked for the cells
    and words of that turn (the review's calls have turns of their own, and are left out).
    A turn asked twice (a node re-run on resume) is its last call's."""
    return {c.request.meta.turn: c for c in calls if c.role == "code"}
