"""An agentic node's record: its cells with their outputs and the model's words between them.

What the node ran is kept three ways, each for its reader:

* :meth:`Notebook.ipynb`: a real Jupyter notebook (nbformat v4, validated), every cell in the
  order it ran with its output and error, the model's words as markdown cells that render as
  plain text (:func:`podium.formats.inert_words.fenced`: a remote image, HTML or link in
  them is never fetched by whoever opens the notebook); opened in Jupyter or the viewer.
  Podium's own facts about a cell (status, duration, the model call that asked for it) sit in
  the cell's ``metadata.podium``.
* :meth:`Notebook.script`: the node's ``solution.py``, the cells that ran without an error in
  their order, each after a ``# %%`` line (the percent format editors read as cells). It is
  what ``podium rerun``, the top-k re-runs and the format check run again on a fresh kernel,
  so a cell that failed (and was fixed by a later one) is left out of it.
* :meth:`Notebook.result`: the node's :class:`ExecResult`, its output every cell's output in
  order under a ``[cell N]`` line, capped as one execution's output is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import nbformat as _nbformat

from podium.exec_output import capped
from podium.formats.inert_words import fenced
from podium.records import ExecResult, ExecStatus

nbformat: Any = _nbformat  # untyped: its cells are dicts with attribute access

CELL_MARK = "# %%"  # a cell's first line in solution.py (the percent format)
METADATA = "podium"  # Podium's key in the notebook's metadata and in each cell's


class NotebookMeta(TypedDict, total=False):
    """The notebook's ``metadata.podium``: how the node's conversation went. Written by the
    agentic operator, read back by the viewer and ``podium show`` (a key may be missing in a
    notebook Podium did not write, hence ``total=False``)."""

    operator: str
    finished: bool  # the model called finish
    ending: str | None  # why the conversation ended otherwise
    turns: int


class CellMeta(TypedDict, total=False):
    """A cell's ``metadata.podium``: the model call (turn) that wrote it; a code cell's status
    and duration too."""

    turn: int
    status: str
    duration_s: float


@dataclass(frozen=True)
class Cell:
    number: int  # 1, 2, ... in the order cells ran
    code: str
    result: ExecResult
    turn: int  # the model call (0, 1, ...) that asked for it


@dataclass(frozen=True)
class Words:
    text: str  # what the model said beside a call, or the plan it finished with
    turn: int


class Notebook:
    def __init__(self) -> None:
        self.entries: list[Cell | Words] = []

    @property
    def cells(self) -> list[Cell]:
        return [e for e in self.entries if isinstance(e, Cell)]

    def say(self, text: str, turn: int) -> None:
        if text.strip():
            self.entries.append(Words(text.strip(), turn))

    def add_cell(self, code: str, result: ExecResult, turn: int) -> Cell:
        cell = Cell(len(self.cells) + 1, code, result, turn)
        self.entries.append(cell)
        return cell

    def script(self) -> str:
        """``solution.py``: the cells that ran without an error, in order."""
        parts = [
            f"{CELL_MARK} [cell {c.number}]\n{c.code.rstrip()}\n"
            for c in self.cells
            if c.result.status is ExecStatus.OK
        ]
        return "\n".join(parts)

    def result(self, ending: str | None, refused: str | None, max_output_bytes: int) -> ExecResult:
        """The node's result. Its status is the last cell's when that cell stopped the kernel
        (a timeout, a death: the node ended there), else ``ok``: an error in a cell is part
        of the work (the model saw it); what judges the node is its metric line and its
        submission. ``ending`` says why the node ended early (a budget), in the output."""
        cells = self.cells
        last = cells[-1].result if cells else None
        stopped = last is not None and last.status in (ExecStatus.TIMEOUT, ExecStatus.DIED)
        text = "".join(f"[cell {c.number}]\n{_ended(c.result.output)}" for c in cells)
        if ending:
            text += f"[the node ended: {ending}]\n"
        output, truncated = capped(text, max_output_bytes)
        return ExecResult(
            status=last.status if stopped and last is not None else ExecStatus.OK,
            output=output,
            output_bytes=sum(c.result.output_bytes for c in cells),
            output_truncated=truncated or any(c.result.output_truncated for c in cells),
            error_name=last.error_name if stopped and last is not None else None,
            error_value=last.error_value if stopped and last is not None else None,
            traceback=last.traceback if stopped and last is not None else None,
            duration_s=sum(c.result.duration_s for c in cells),
            kernel_start_s=cells[0].result.kernel_start_s if cells else 0.0,
            timed_out=stopped and last is not None and last.timed_out,
            killed_reason=last.killed_reason if stopped and last is not None else None,
            peak_memory_bytes=max(
                (c.result.peak_memory_bytes or 0 for c in cells), default=0
            ) or None,
            submission_refused=refused,
        )  # fmt: skip

    def ipynb(self, metadata: NotebookMeta) -> str:
        """The notebook's JSON text (nbformat v4, validated)."""
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        nb.metadata["language_info"] = {"name": "python"}
        nb.metadata[METADATA] = metadata
        for entry in self.entries:
            if isinstance(entry, Words):
                cell = nbformat.v4.new_markdown_cell(fenced(entry.text))
                cell.metadata[METADATA] = CellMeta(turn=entry.turn)
            else:
                cell = _code_cell(entry)
            nb.cells.append(cell)
        nbformat.validate(nb)
        return str(nbformat.writes(nb))


def _code_cell(cell: Cell) -> Any:
    result = cell.result
    outputs = []
    if result.output:
        outputs.append(nbformat.v4.new_output("stream", name="stdout", text=result.output))
    if result.error_name or result.killed_reason:
        outputs.append(
            nbformat.v4.new_output(
                "error",
                ename=result.error_name or result.status.value,
                evalue=result.error_value or result.killed_reason or "",
                traceback=(result.traceback or "").split("\n") if result.traceback else [],
            )
        )
    code = nbformat.v4.new_code_cell(cell.code, execution_count=cell.number, outputs=outputs)
    code.metadata[METADATA] = CellMeta(
        turn=cell.turn, status=result.status.value, duration_s=round(result.duration_s, 3)
    )
    return code


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
