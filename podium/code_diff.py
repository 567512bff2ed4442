"""What a node changed: its code against its parent's, as hunks, unified text or side by side.

An improve, debug or crossover node is its parent's code edited; what the model changed is
the first question about it. :func:`code_diff` builds the hunks (on :mod:`difflib`), and the
rest presents them: :func:`as_json` for the viewer page (unified and side-by-side views),
:func:`unified_text` for a file or a pipe, :func:`side_by_side` for a terminal, :func:`counts`
for a one-line summary.

Both codes came from a model and may be anything: huge, one enormous line, binary-ish.
``difflib`` can take time quadratic in the lines it must align, so the work is bounded: the
lines both codes share at the start and at the end are set aside first (linear), only the
changed middle is aligned, and a middle past ``MAX_ALIGN_LINES`` on a side is shown as
replaced whole (still a true diff, not the smallest); inputs past ``MAX_CHARS`` or
``MAX_LINES`` are diffed on their beginning, the hunks stop after ``MAX_DIFF_LINES`` lines, and
a shown line is cut at ``MAX_LINE_CHARS``. Each of these is said in ``CodeDiff.cut``; the
counts always cover all that was compared. A missing newline at the end is not told apart.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

MAX_CHARS = 2_000_000  # per side; past it, the beginning is compared
MAX_LINES = 50_000  # per side, likewise
MAX_ALIGN_LINES = 3_000  # per side of the changed middle: difflib's worst there is ~1 s
MAX_DIFF_LINES = 5_000  # lines in all the hunks together
MAX_LINE_CHARS = 1_000  # a longer line is shown cut, with "…"

Tag = Literal[" ", "-", "+"]
RowKind = Literal["hunk", "same", "changed", "removed", "added"]


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk: kept (``" "``), removed (``"-"``) or added (``"+"``), with its
    1-based number in the old code and in the new (None on the side it is not in)."""

    tag: Tag
    text: str
    old: int | None
    new: int | None


@dataclass(frozen=True)
class Hunk:
    """A run of changes with its context, numbered as a unified diff's ``@@`` line: a start is
    1-based, and for an empty side it is the line before (0 at the top)."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[DiffLine, ...]

    @property
    def header(self) -> str:
        return (
            f"@@ -{_span(self.old_start, self.old_len)} +{_span(self.new_start, self.new_len)} @@"
        )


@dataclass(frozen=True)
class CodeDiff:
    """The hunks of one diff, the lines added and removed, and why it is incomplete (None:
    it is whole). Iterating it gives its hunks."""

    hunks: tuple[Hunk, ...]
    added: int
    removed: int
    cut: str | None = None

    def __iter__(self) -> Iterator[Hunk]:
        return iter(self.hunks)

    def __len__(self) -> int:
        return len(self.hunks)


@dataclass(frozen=True)
class Row:
    """One row of a side-by-side view: a hunk's header (``kind == "hunk"``, its text in
    ``old_text``), a kept line, a changed one (a removal paired with an addition), or a
    line only removed or only added (the other side empty)."""

    kind: RowKind
    old: int | None
    old_text: str
    new: int | None
    new_text: str


Opcode = tuple[str, int, int, int, int]
_LINE_END = re.compile(r"\r\n?|\n")


def source_lines(code: str) -> list[str]:
    """``code``'s lines as Python numbers them (and so IPython's tracebacks): a line ends at
    ``\\n``, ``\\r\\n`` or ``\\r`` only. (``str.splitlines`` also ends one at a form feed,
    ``\\v``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which a string literal may
    hold: every later line's number would be off.) A last line break ends the last line."""
    lines = _LINE_END.split(code) if "\r" in code else code.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def code_diff(old: str, new: str, context: int = 3) -> CodeDiff:
    """The hunks turning ``old`` into ``new``, each with ``context`` kept lines around its
    changes (as ``diff -u``); bounded in time and size (see the module)."""
    cuts: list[str] = []
    a, b = _lines(old, "old", cuts), _lines(new, "new", cuts)
    opcodes = _opcodes(a, b, cuts)
    added = sum(j2 - j1 for tag, _, _, j1, j2 in opcodes if tag != "equal")
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag != "equal")
    hunks = _hunks(a, b, _grouped(opcodes, max(context, 0)), cuts)
    return CodeDiff(hunks, added, removed, "; ".join(cuts) or None)


def _lines(text: str, side: str, cuts: list[str]) -> list[str]:
    if len(text) > MAX_CHARS:
        cuts.append(
            f"the {side} code is {len(text):,} characters: its first {MAX_CHARS:,} compared"
        )
        text = text[:MAX_CHARS]
    lines = source_lines(text)
    if len(lines) > MAX_LINES:
        cuts.append(f"the {side} code has {len(lines):,} lines: its first {MAX_LINES:,} compared")
        del lines[MAX_LINES:]
    return lines


def _opcodes(a: list[str], b: list[str], cuts: list[str]) -> list[Opcode]:
    """``SequenceMatcher.get_opcodes`` for the whole, aligning only the changed middle."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a_mid, b_mid = a[start : len(a) - end], b[start : len(b) - end]
    if max(len(a_mid), len(b_mid)) > MAX_ALIGN_LINES:
        cuts.append(
            f"{len(a_mid):,} changed lines against {len(b_mid):,}: too many to align line by "
            "line, shown as replaced"
        )
        middle: Sequence[Opcode] = [("replace", 0, len(a_mid), 0, len(b_mid))]
    elif not a_mid and not b_mid:
        middle = []
    else:
        matcher = difflib.SequenceMatcher(None, a_mid, b_mid)
        middle = matcher.get_opcodes()
    shifted = [(t, i1 + start, i2 + start, j1 + start, j2 + start) for t, i1, i2, j1, j2 in middle]
    ops: list[Opcode] = [("equal", 0, start, 0, start)] if start else []
    ops += [op for op in shifted if op[0] != "equal" or op[2] > op[1]]
    if end:
        ops.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    return ops


def _grouped(opcodes: list[Opcode], context: int) -> list[list[Opcode]]:
    """The opcodes in hunks with ``context`` kept lines around each change: difflib's own
    ``get_grouped_opcodes``, on opcodes made here."""
    codes = list(opcodes)
    if not codes:
        return []
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:  # a long run unchanged ends a hunk
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    groups.append(group)
    return [g for g in groups if any(op[0] != "equal" for op in g)]


def _hunks(
    a: list[str], b: list[str], groups: list[list[Opcode]], cuts: list[str]
) -> tuple[Hunk, ...]:
    """The groups' lines, as hunks, until ``MAX_DIFF_LINES`` lines have been given."""
    hunks: list[Hunk] = []
    budget = MAX_DIFF_LINES
    for number, group in enumerate(groups):
        lines = _group_lines(a, b, group)
        if len(lines) > budget or (budget == 0 and number < len(groups)):
            cuts.append(f"the diff is longer than {MAX_DIFF_LINES:,} lines: the rest left out")
            if budget:
                hunks.append(_hunk(group, lines[:budget]))
            break
        budget -= len(lines)
        hunks.append(_hunk(group, lines))
    return tuple(hunks)


def _group_lines(a: list[str], b: list[str], group: list[Opcode]) -> list[DiffLine]:
    lines: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines += [DiffLine(" ", _shown(a[i]), i + 1, j1 + i - i1 + 1) for i in range(i1, i2)]
            continue
        lines += [DiffLine("-", _shown(a[i]), i + 1, None) for i in range(i1, i2)]
        lines += [DiffLine("+", _shown(b[j]), None, j + 1) for j in range(j1, j2)]
    return lines


def _hunk(group: list[Opcode], lines: list[DiffLine]) -> Hunk:
    """The hunk of ``lines`` (all of its group, or the part kept under the cap)."""
    i1, j1 = group[0][1], group[0][3]
    old_len = sum(1 for line in lines if line.tag != "+")
    new_len = sum(1 for line in lines if line.tag != "-")
    return Hunk(
        i1 + 1 if old_len else i1, old_len, j1 + 1 if new_len else j1, new_len, tuple(lines)
    )


def _shown(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def _span(start: int, length: int) -> str:
    return str(start) if length == 1 else f"{start},{length}"


def counts(diff: CodeDiff) -> tuple[int, int]:
    """``(added, removed)``: the lines the new code added and the old code lost."""
    return diff.added, diff.removed


def as_json(diff: CodeDiff) -> dict[str, Any]:
    """The diff as the viewer page gets it::

        {"hunks": [{"old_start": int, "old_len": int,     # as a unified diff's "@@" line:
                    "new_start": int, "new_len": int,     # 1-based; an empty side's start is
                    "header": "@@ -3,7 +3,8 @@",          # the line before it (0: the top)
                    "lines": [{"tag": " " | "-" | "+",    # kept, removed, added
                               "text": str,               # the line, no newline
                               "old": int | null,         # its 1-based number in the old code
                               "new": int | null}]}],     # ... and in the new (null: not there)
         "added": int, "removed": int,                    # lines, over all that was compared
         "cut": str | null}                               # why the diff is incomplete

    A unified view prints each hunk's header, then its lines with their tag; a side-by-side
    view pairs, in each hunk, each run of ``-`` lines with the ``+`` lines that follow it
    (:func:`side_by_side` does it for a terminal).
    """
    return {
        "hunks": [
            {
                "old_start": hunk.old_start,
                "old_len": hunk.old_len,
                "new_start": hunk.new_start,
                "new_len": hunk.new_len,
                "header": hunk.header,
                "lines": [
                    {"tag": line.tag, "text": line.text, "old": line.old, "new": line.new}
                    for line in hunk.lines
                ],
            }
            for hunk in diff.hunks
        ],
        "added": diff.added,
        "removed": diff.removed,
        "cut": diff.cut,
    }


def unified_text(
    old: str, new: str, old_name: str = "old", new_name: str = "new", context: int = 3
) -> str:
    """The diff as ``diff -u`` prints it (no dates), with a last line saying what was cut;
    empty when the codes are the same."""
    diff = code_diff(old, new, context)
    if not diff.hunks:
        return f"[diff cut: {diff.cut}]\n" if diff.cut else ""
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for hunk in diff.hunks:
        out.append(hunk.header)
        out += [line.tag + line.text for line in hunk.lines]
    if diff.cut:
        out.append(f"[diff cut: {diff.cut}]")
    return "\n".join(out) + "\n"


def side_by_side(diff: CodeDiff | Sequence[Hunk]) -> list[Row]:
    """The hunks as rows of old | new: each hunk's header, then its lines, a removal paired
    with the addition that replaces it (``changed``), lines only on one side left alone."""
    rows: list[Row] = []
    for hunk in diff:
        rows.append(Row("hunk", None, hunk.header, None, ""))
        removed: list[DiffLine] = []
        added: list[DiffLine] = []
        for line in (*hunk.lines, None):
            if line is not None and line.tag == "-" and not added:
                removed.append(line)
                continue
            if line is not None and line.tag == "+":
                added.append(line)
                continue
            rows += _paired(removed, added)
            removed, added = [], []
            if line is None:
                continue
            if line.tag == "-":
                removed.append(line)
            else:
                rows.append(Row("same", line.old, line.text, line.new, line.text))
    return rows


def _paired(removed: list[DiffLine], added: list[DiffLine]) -> list[Row]:
    rows = []
    for index in range(max(len(removed), len(added))):
        old = removed[index] if index < len(removed) else None
        new = added[index] if index < len(added) else None
        kind: RowKind = "changed" if old and new else ("removed" if old else "added")
        rows.append(
            Row(kind, old.old if old else None, old.text if old else "",
                new.new if new else None, new.text if new else "")
        )  # fmt: skip
    return rows
