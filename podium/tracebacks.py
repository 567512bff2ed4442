"""A solution's traceback read back: its frames, its error, its chain of causes.

A solution runs as one IPython cell, so the traceback a kernel reports (``ExecResult.traceback``,
colours already stripped) is IPython's: the solution's frames read ``Cell In[1], line 12`` (or
``Cell In[1], line 12, in fit(x)``) followed by context lines with a ``---->`` arrow on the
failing one; a library's read ``File /…/pandas/core/frame.py:4330, in DataFrame.__getitem__(…)``.
A SyntaxError, and an error raised while IPython itself runs the cell, come in Python's own
plainer layout (indented ``File`` lines, the code line below each); both are read here, and so
are Python's ``File "x.py", line 3, in f`` and the layouts of IPython 7 and 8.0.

A viewer wants the few lines that matter on a big run: the error, where in the solution it
happened, and how much library code lay between. :func:`parse_traceback` turns the text into
:class:`ParsedTraceback`, :func:`as_json` into the page's shape, :func:`render_text` into lines
for a terminal, and :func:`output_without_traceback` drops the copy of the traceback the kernel
also wrote at the end of the output, so a viewer shows the error once.

Everything here reads text a solution controls (its messages, its source lines, its file
names), so the parser is total and bounded: any text parses without raising, in time linear in
its length, into a result of bounded size (frames, lines and characters capped; what was left
out is counted). A message may print what looks like frames: once the error's lines have begun,
only a chained-exception separator (the exact sentence, between blank lines, followed by a new
traceback's header) ends them, so a fake frame inside a message stays part of the message. A
message that forges a whole separator and header cannot be told from a real chain by its text.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from podium.exec_output import KERNEL_NOTE, OMITTED

SOLUTION_FILE = "solution.py"  # what every frame of the solution's cell is called

MAX_INPUT_CHARS = 1_000_000  # longer: its head and tail are read, the middle's frames counted
INPUT_HEAD_CHARS = 200_000
MAX_LINE_CHARS = 2_000  # a longer line is cut, with "…"
MAX_FRAMES = 50  # per traceback: the outermost HEAD_FRAMES and the innermost rest are kept
HEAD_FRAMES = 20
MAX_CONTEXT_LINES = 30  # per frame, around the arrowed line
MAX_ERROR_LINES = 40
MAX_ERROR_CHARS = 8_000
MAX_CAUSES = 5  # the chained exceptions nearest the final one are kept

CAUSE = "cause"  # "The above exception was the direct cause of the following exception:"
CONTEXT = "context"  # "During handling of the above exception, another exception occurred:"
_LINKS = {
    "The above exception was the direct cause of the following exception:": CAUSE,
    "During handling of the above exception, another exception occurred:": CONTEXT,
}
NO_SOURCE = "'Could not get source, probably due dynamically evaluated source code.'"

# Frame headers, matched whole on a line with no indent or exactly two spaces of it.
_CELL = re.compile(r"Cell In\[\d{1,9}\], line (\d{1,9})(?:, in (.+))?")  # IPython >= 8.4
_INPUT = re.compile(r"Input In \[\d{1,9}\], in (.+)")  # IPython 8.0-8.3: in <cell line: 5>()
_IPY7_CELL = re.compile(r"<ipython-input-\d{1,9}-[0-9a-f]+> in (.+)")  # IPython 7
_PY_FILE = re.compile(r'File "(.+?)", line (\d{1,9})(?:, in (.+))?')  # Python's own
_FILE = re.compile(r"File (.+?):(\d{1,9})(?:,? in (.+))?")  # IPython >= 8: File /x.py:3, in f()
_IPY7_FILE = re.compile(r"(\S+\.(?:py|pyx|pxd|pxi)) in (.+)")  # IPython 7: ~/x/frame.py in f()
_HEADER_START = re.compile(r"^(?:  )?(?:Cell In\[|File |Input In \[|<ipython-input-)", re.M)
_CELL_LINE = re.compile(r"<cell line: (\d{1,9})>")
_CELL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py")  # the cell's file, in Python's layout
# What starts a traceback (or a link of its chain), and the lines that only decorate one.
_IPYTHON_HEAD = re.compile(r"\S+ +Traceback \(most recent call last\)")
_PY_HEAD = "Traceback (most recent call last):"
_DECORATIONS = re.compile(
    r"-{20,}|An exception has occurred, use %tb to see the full traceback\."
    r"|\[\.\.\. skipping .*\]|\[\.\.\. \d+ characters of the traceback omitted \.\.\.\]"
)
_GUTTER = re.compile(r"(-*>)? *(\d{1,9})(?: (.*))?")  # "----> 12 code", "     11 code"
_LIBRARY_ROOTS = re.compile(r"/(?:site|dist)-packages(?=/)|/lib/python\d[\d.]*(?=/)|/lib/pypy")
_FROZEN = re.compile(r"<frozen ([\w.]+)>")


@dataclass(frozen=True)
class Frame:
    """One frame, as printed. ``file`` is ``solution.py`` for the solution's cell, and
    ``working/…`` for a file the solution wrote under working/; ``line`` and ``function``
    are None where the header gives none (``function`` is None at module level too).
    ``context`` holds the context lines as printed (gutter and arrow included); ``code_line``
    is the failing line's code, without its gutter (None when the kernel had no source)."""

    file: str
    line: int | None
    function: str | None
    context: tuple[str, ...]
    code_line: str | None
    in_solution: bool

    @property
    def package(self) -> str:
        """The top-level package a library frame is in (``pandas``), for a folded summary."""
        return _package(self.file)


@dataclass(frozen=True)
class ParsedTraceback:
    """One exception's traceback: frames outermost first, then its error line(s).

    ``causes`` are the exceptions chained before it, oldest first, each a ParsedTraceback
    whose ``link`` says how it led to the next one: ``"cause"`` (``raise … from``: it was the
    direct cause) or ``"context"`` (the next was raised while handling it); ``link`` is None
    on the final exception. ``dropped`` counts the frames left out (the middle of a very long
    traceback, and all of a cause left out); ``dropped_causes`` the causes left out (the
    oldest).
    """

    error: str
    frames: tuple[Frame, ...] = ()
    causes: tuple[ParsedTraceback, ...] = ()
    dropped: int = 0
    dropped_causes: int = 0
    link: str | None = None


# --- parsing --------------------------------------------------------------------------------


@dataclass
class _Chunk:
    """One exception's traceback while it is read: bounded whatever arrives."""

    head: list[Frame] = field(default_factory=list)
    tail: deque[Frame] = field(default_factory=lambda: deque(maxlen=MAX_FRAMES - HEAD_FRAMES))
    seen: int = 0
    error: list[str] = field(default_factory=list)
    error_chars: int = 0
    error_more: int = 0

    def add(self, frame: Frame) -> None:
        self.seen += 1
        (self.head.append if len(self.head) < HEAD_FRAMES else self.tail.append)(frame)

    def add_error(self, line: str) -> None:
        if len(self.error) < MAX_ERROR_LINES and self.error_chars + len(line) <= MAX_ERROR_CHARS:
            self.error.append(line)
            self.error_chars += len(line) + 1
        else:
            self.error_more += 1

    def done(self, extra_dropped: int = 0, link: str | None = None) -> ParsedTraceback:
        frames = (*self.head, *self.tail)
        error = "\n".join(self.error).strip("\n").rstrip()
        if self.error_more:
            error += f"\n[… {self.error_more} more lines]"
        dropped = self.seen - len(frames) + extra_dropped
        return ParsedTraceback(error=error, frames=frames, dropped=dropped, link=link)


@dataclass
class _Open:
    """The frame being read: its header's fields and its context lines so far."""

    file: str
    line: int | None
    function: str | None
    plain: bool  # Python's layout: the code line has no gutter and no arrow
    context: list[str] = field(default_factory=list)
    code: str | None = None
    arrowed: bool = False

    def add(self, text: str) -> None:
        gutter = None if self.plain else _GUTTER.fullmatch(text.lstrip(" "))
        if gutter and gutter.group(1) and not self.arrowed:
            self.arrowed = True
            self.code = (gutter.group(3) or "").strip()
            if self.line is None:  # IPython 7's cell header gives no line: the arrow's it is
                self.line = int(gutter.group(2))
        elif self.plain and self.code is None:
            self.code = text.strip()
        if len(self.context) < MAX_CONTEXT_LINES:
            self.context.append(text)
        elif not self.arrowed:  # keep the lines nearest the arrow still to come
            self.context.pop(0)
            self.context.append(text)

    def frame(self) -> Frame:
        code = None if not self.code or self.code == NO_SOURCE else self.code
        in_solution = self.file == SOLUTION_FILE or not _is_library(self.file)
        file = _shown_file(self.file) if in_solution else self.file
        return Frame(file, self.line, self.function, tuple(self.context), code, in_solution)


def parse_traceback(text: str) -> ParsedTraceback:
    """``text`` read as a traceback; never raises, linear time, bounded result (see the module).

    Text that is not a traceback gives no frames and the text (capped) as ``error``.
    """
    lines, cut_frames = _bounded_lines(text)
    reader = _Reader()
    i = 0
    while i < len(lines):
        i = reader.error_line(lines, i) if reader.in_error else reader.frames_line(lines[i], i)
    return reader.result(cut_frames)


class _Reader:
    """Reads a traceback line by line: frames until the error's first line, then the error
    until a chain's separator (a new exception's frames follow), to the end."""

    def __init__(self) -> None:
        self.causes: deque[ParsedTraceback] = deque(maxlen=MAX_CAUSES)
        self.left_out = self.left_out_frames = 0
        self.chunk, self.in_error = _Chunk(), False
        self.frame: _Open | None = None

    def frames_line(self, line: str, i: int) -> int:
        header = _header(line) if line.strip() else None
        if header is not None or not line.strip():  # a frame begins, or one ends
            self._close_frame()
            self.frame = header
        elif _is_decoration(line):
            pass
        elif self.frame is not None and line[:1] in (" ", "-"):
            self.frame.add(line)
        else:  # the error's first line: from here on, everything is the error's
            self._close_frame()
            self.in_error = True
            self.chunk.add_error(line)
        return i + 1

    def error_line(self, lines: list[str], i: int) -> int:
        link = _link_at(lines, i)
        if link is None:
            self.chunk.add_error(lines[i])
            return i + 1
        if len(self.causes) == self.causes.maxlen:  # the oldest goes
            self.left_out += 1
            self.left_out_frames += len(self.causes[0].frames) + self.causes[0].dropped
        self.causes.append(self.chunk.done(link=link))
        self.chunk, self.in_error = _Chunk(), False
        return i + 2  # past the sentence and its blank line: the next header

    def result(self, cut_frames: int) -> ParsedTraceback:
        self._close_frame()
        final = self.chunk.done(extra_dropped=cut_frames + self.left_out_frames)
        return ParsedTraceback(
            error=final.error,
            frames=final.frames,
            causes=tuple(self.causes),
            dropped=final.dropped,
            dropped_causes=self.left_out,
        )

    def _close_frame(self) -> None:
        if self.frame is not None:
            self.chunk.add(self.frame.frame())
        self.frame = None


def _bounded_lines(text: str) -> tuple[list[str], int]:
    """The lines to read (each cut to ``MAX_LINE_CHARS``) and the frames in a middle left out.

    A text past ``MAX_INPUT_CHARS`` is read as its head and its tail (where the error is), cut
    between frames where it can be, so that no frame is read half."""
    cut_frames = 0
    if len(text) > MAX_INPUT_CHARS:
        head_end = _boundary_before(text, INPUT_HEAD_CHARS)
        tail_start = _boundary_after(text, len(text) - (MAX_INPUT_CHARS - INPUT_HEAD_CHARS))
        middle = text[head_end:tail_start]
        cut_frames = len(_HEADER_START.findall(middle))
        omitted = f"[... {len(middle)} characters of the traceback omitted ...]"
        text = f"{text[:head_end]}\n{omitted}\n{text[tail_start:]}"
    lines = [
        line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"
        for line in text.splitlines()
    ]
    return lines, cut_frames


_SEARCH_CHARS = 50_000  # how far a cut looks for a frame's end (a blank line), then a line's


def _boundary_before(text: str, at: int) -> int:
    """Where a head cut near ``at`` ends: before a blank line, else at a line's end."""
    for mark in ("\n\n", "\n"):
        found = text.rfind(mark, max(0, at - _SEARCH_CHARS), at)
        if found >= 0:
            return found
    return at


def _boundary_after(text: str, at: int) -> int:
    """Where a tail cut near ``at`` starts: after a blank line, else at a line's start."""
    for mark in ("\n\n", "\n"):
        found = text.find(mark, at, at + _SEARCH_CHARS)
        if found >= 0:
            return found + len(mark)
    return at


def _header(line: str) -> _Open | None:
    """The frame a header line opens, or None if ``line`` is no frame header."""
    plain = line.startswith("  ")
    body = line[2:] if plain else line
    if body[:1] == " ":
        return None
    if m := _CELL.fullmatch(body):
        return _Open(SOLUTION_FILE, int(m.group(1)), _function(m.group(2)), plain)
    if m := _INPUT.fullmatch(body):
        number = _CELL_LINE.match(m.group(1))
        line_no = int(number.group(1)) if number else None
        function = None if number else _function(m.group(1))
        return _Open(SOLUTION_FILE, line_no, function, plain)
    if m := _IPY7_CELL.fullmatch(body):
        return _Open(SOLUTION_FILE, None, _function(m.group(1)), plain)
    if m := _PY_FILE.fullmatch(body):
        file = SOLUTION_FILE if _CELL_FILE.fullmatch(m.group(1)) else m.group(1)
        return _Open(file, int(m.group(2)), _function(m.group(3)), True)
    if m := _FILE.fullmatch(body):
        file = SOLUTION_FILE if _CELL_FILE.fullmatch(m.group(1)) else m.group(1)
        return _Open(file, int(m.group(2)), _function(m.group(3)), plain)
    if m := _IPY7_FILE.fullmatch(body):
        return _Open(m.group(1), None, _function(m.group(2)), plain)
    return None


def _function(text: str | None) -> str | None:
    """``fit(self, X)`` → ``fit``, ``<listcomp>(.0)`` → ``<listcomp>``; module level → None."""
    text = (text or "").strip()
    if text.startswith("<") and ">" in text:
        name = text[: text.index(">") + 1]
    else:
        name = text.split("(", 1)[0].strip()
    return None if not name or name == "<module>" else name


def _is_decoration(line: str) -> bool:
    return bool(_IPYTHON_HEAD.fullmatch(line) or line == _PY_HEAD or _DECORATIONS.fullmatch(line))


def _link_at(lines: list[str], i: int) -> str | None:
    """The chain link that starts at line ``i``: its sentence alone between blank lines,
    followed by a traceback's header; None anywhere else."""
    link = _LINKS.get(lines[i])
    if link is None or (i > 0 and lines[i - 1].strip()):
        return None
    rest = lines[i + 1 : i + 3]
    if len(rest) < 2 or rest[0].strip():
        return None
    return link if _IPYTHON_HEAD.fullmatch(rest[1]) or rest[1] == _PY_HEAD else None


def _is_library(path: str) -> bool:
    """Installed or standard-library code, or compiled code named relative to its package."""
    return bool(_LIBRARY_ROOTS.search(path)) or not path.startswith(("/", "~"))


def _shown_file(path: str) -> str:
    """A file of the solution as the solution names it: ``working/helpers.py``, the same in
    every sandbox (``/workspace/working/…`` in bwrap, the slot's own path in local)."""
    at = path.rfind("/working/")
    return path[at + 1 :] if at >= 0 else path


def _package(path: str) -> str:
    if frozen := _FROZEN.match(path):
        return frozen.group(1).split(".")[0]
    roots = list(_LIBRARY_ROOTS.finditer(path))
    rest = path[roots[-1].end() :].lstrip("/") if roots else path.lstrip("~/")
    top = rest.split("/", 1)[0]
    return top.removesuffix(".py") or "?"


# --- the page's shape -----------------------------------------------------------------------


def as_json(parsed: ParsedTraceback) -> dict[str, Any]:
    """The traceback as the viewer page gets it::

        {"error": str,                      # the final error line(s), e.g. "KeyError: 'target'"
         "frames": [{"file": str,           # "solution.py", "working/x.py" or the path printed
                     "line": int | null, "function": str | null,   # null: module level
                     "code_line": str | null,                      # the failing line's code
                     "context": [str],      # the context lines as printed (gutter, arrow)
                     "in_solution": bool}], # outermost first
         "causes": [<the same shape>],      # the chained exceptions before it, oldest first
         "dropped": int,                    # frames left out (a long traceback's middle)
         "dropped_causes": int,             # chained exceptions left out (the oldest)
         "link": "cause" | "context" | null}   # a cause's relation to the next exception

    A cause's own ``causes`` is always empty (the chain is flat, on the final exception).
    """
    return {
        "error": parsed.error,
        "frames": [_frame_json(frame) for frame in parsed.frames],
        "causes": [as_json(cause) for cause in parsed.causes],
        "dropped": parsed.dropped,
        "dropped_causes": parsed.dropped_causes,
        "link": parsed.link,
    }


def _frame_json(frame: Frame) -> dict[str, Any]:
    return {
        "file": frame.file,
        "line": frame.line,
        "function": frame.function,
        "code_line": frame.code_line,
        "context": list(frame.context),
        "in_solution": frame.in_solution,
    }


# --- the output without its copy ------------------------------------------------------------


def output_without_traceback(output: str, traceback: str | None) -> str:
    """``output`` without the copy of ``traceback`` the kernel wrote at its end.

    Removed only when the output really ends with it (trailing newlines aside): after it may
    come only the one line the kernel adds when it stops an execution (``TimeoutError:
    execution exceeded …``), which is kept. When the output was cut (``[... N bytes of output
    omitted ...]``) inside the copy, the copy's tail and head are removed, and so is the marker
    when all that was omitted was the copy. Anything else: ``output`` unchanged.
    """
    if not traceback or not traceback.strip():
        return output
    note = KERNEL_NOTE.search(output, max(0, len(output) - 1_000))
    body = output[: note.start()] if note else output
    kept = _without_copy(body, traceback)
    if kept is None:
        return output
    if not note:
        return kept
    return kept + (note.group().lstrip("\n") if not kept or kept.endswith("\n") else note.group())


def _without_copy(body: str, traceback: str) -> str | None:
    copy, trimmed = traceback.rstrip("\n"), body.rstrip("\n")
    if trimmed.endswith(copy):
        return trimmed[: len(trimmed) - len(copy)]
    # The last marker: the real one comes before the whole tail, a copy of the traceback.
    markers = OMITTED.finditer(body, max(0, len(body) - len(traceback) - 200))
    marker = deque(markers, maxlen=1)
    return _without_cut_copy(body, traceback + "\n", marker[0]) if marker else None


def _without_cut_copy(body: str, written: str, marker: re.Match[str]) -> str | None:
    """The output cut inside the copy: ``head … marker … tail-of-the-copy``."""
    head, tail = body[: marker.start()], body[marker.end() :].lstrip("\ufffd")
    if not tail or not written.endswith(tail):
        return None
    omitted = int(marker.group(1))
    in_middle = len(written.encode()) - len(tail.encode())  # the copy's bytes before its tail
    in_head = in_middle - omitted  # the copy's bytes in the head (< 0: it began in the cut)
    if in_head < 0:
        return f"{head}\n[... {-in_head} bytes of output omitted ...]\n"
    head_bytes = head.encode()
    begun = head_bytes[len(head_bytes) - in_head :].decode(errors="replace")
    if in_head > len(head_bytes) or not written.startswith(begun.rstrip("\ufffd")):
        return None
    return head_bytes[: len(head_bytes) - in_head].decode(errors="replace")


# --- for a terminal -------------------------------------------------------------------------


class Line(NamedTuple):
    """One line for a terminal; ``kind`` tells a printer how to style it."""

    kind: Literal["error", "frame", "library", "link", "note"]
    text: str


def render_text(parsed: ParsedTraceback, *, solution_code: str | None = None) -> list[Line]:
    """The traceback as a person debugging wants it first: the error, then the solution's
    frames (outermost first) with their code line, then one line for the library frames
    folded (how many, in which packages), then each earlier exception of the chain, nearest
    first, the same way. A frame with no context takes its line from ``solution_code``.
    """
    source = solution_code.splitlines() if solution_code else []
    lines = _rendered(parsed, source)
    for cause in reversed(parsed.causes):
        heading = "caused by:" if cause.link == CAUSE else "raised while handling:"
        lines.append(Line("link", heading))
        lines += _rendered(cause, source, indent="  ")
    if parsed.dropped_causes:
        lines.append(Line("note", f"[… {parsed.dropped_causes} earlier chained exceptions]"))
    return lines


def _rendered(parsed: ParsedTraceback, source: list[str], indent: str = "") -> list[Line]:
    lines = [Line("error", indent + text) for text in (parsed.error or "?").splitlines()]
    shown = [_frame_text(frame, source) for frame in parsed.frames if frame.in_solution]
    for text, repeats in _runs(shown):  # a recursion: one line, and how often
        lines.append(
            Line("frame", f"{indent}  {text}" + (f"  [× {repeats}]" if repeats > 1 else ""))
        )
    library = [frame for frame in parsed.frames if not frame.in_solution]
    if library:
        packages = ", ".join(dict.fromkeys(frame.package for frame in library))
        many = "s" if len(library) != 1 else ""
        text = f"  … {len(library)} library frame{many} ({packages})"
        lines.append(Line("library", indent + text))
    if parsed.dropped:
        lines.append(Line("note", f"{indent}  [… {parsed.dropped} more frames left out]"))
    return lines


def _runs(texts: list[str]) -> list[tuple[str, int]]:
    runs: list[tuple[str, int]] = []
    for text in texts:
        if runs and runs[-1][0] == text:
            runs[-1] = (text, runs[-1][1] + 1)
        else:
            runs.append((text, 1))
    return runs


def _frame_text(frame: Frame, source: list[str]) -> str:
    where = frame.file + (f", line {frame.line}" if frame.line is not None else "")
    where += f", in {frame.function}" if frame.function else ""
    code = frame.code_line
    in_source = frame.line is not None and 1 <= frame.line <= len(source)
    if code is None and frame.file == SOLUTION_FILE and in_source:
        code = source[(frame.line or 1) - 1].strip()[:MAX_LINE_CHARS] or None
    return f"{where}: {code}" if code else where
