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

from podium.code_diff import source_lines
from podium.exec_output import KERNEL_NOTE, OMITTED

SOLUTION_FILE = "solution.py"  # what every frame of the solution's cell is called

MAX_INPUT_CHARS = 1_000_000  # a chain's left-out part longer: its frames counted by their headers
INPUT_HEAD_CHARS = 200_000  # per exception: its frames read in full over this many characters,
INPUT_TAIL_CHARS = 800_000  # its innermost frames over at most this many; between, only counted
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
# A chain's separator: its sentence alone on a line, a blank line before and after it, then a
# traceback's header. The match begins at the blank line before: the exception above ends there.
_LINK = re.compile(
    r"^[^\S\n]*\n"
    r"(The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:)\n"
    r"[^\S\n]*\n"
    r"(?=(?:\S+ +Traceback \(most recent call last\)|Traceback \(most recent call last\):)"
    r"(?:\n|\Z))",
    re.M,
)
_LINE_END = re.compile(r"\r\n?")  # Python's line ends: \n, \r\n and \r (not \f, U+2028...)
_BLANK_LINES = re.compile(r"(?:[^\S\n]*\n)+")
_CONTEXT_LINES = re.compile(r"(?:   [^\S\n]*\S[^\n]*(?:\n|\Z))+")  # in a frame: nothing to do
_NONBLANK = re.compile(r"\S")


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

    The chain is split at its separators first, and each exception is read alone
    (:func:`_read_one`): the final error is always what follows the text's last separator,
    however long the text, and no separator or header is ever read into an error.
    """
    text = _LINE_END.sub("\n", text) if "\r" in text else text  # lines as Python's: \n, \r\n, \r
    links: deque[re.Match[str]] = deque(maxlen=MAX_CAUSES + 1)
    total = 0
    for link in _LINK.finditer(text):
        links.append(link)
        total += 1
    first = dropped_frames = 0  # where the oldest kept cause begins; the frames before it
    if total > MAX_CAUSES:
        first = links[0].end()
        dropped_frames = _frames_in(text, links[0].start())
    causes = []
    for link in list(links)[-MAX_CAUSES:]:  # the separator after each kept cause
        causes.append(_read_one(text[first : link.start()], _LINKS[link.group(1)]))
        first = link.end()
    final = _read_one(text[first:])
    return ParsedTraceback(
        error=final.error,
        frames=final.frames,
        causes=tuple(causes),
        dropped=final.dropped + dropped_frames,
        dropped_causes=max(0, total - MAX_CAUSES),
    )


def _frames_in(text: str, end: int) -> int:
    """The frames of the exceptions of a chain that ``text[:end]`` holds (the oldest, left
    out), each counted as :func:`_read_one` reads it; past ``MAX_INPUT_CHARS``, every line
    that begins as a frame's header is counted instead."""
    if end > MAX_INPUT_CHARS:
        return len(_HEADER_START.findall(text, 0, end))
    frames = start = 0
    for link in _LINK.finditer(text, 0, end):
        frames += _scan_frames(text[start : link.start()], 0, False)[1]
        start = link.end()
    return frames + _scan_frames(text[start:end], 0, False)[1]


def _read_one(text: str, link: str | None = None) -> ParsedTraceback:
    """One exception's traceback (``text`` holds no chain separator): frames, then its error.

    Bounded whatever its size: frames are read in full over the first ``INPUT_HEAD_CHARS``;
    past them the lines are only looked at for where the frames end and the error begins
    (a frame's context lines are skipped unread), the innermost frames are read over at most
    ``INPUT_TAIL_CHARS``, and the error's lines until it is full; the rest is counted."""
    reader = _Reader()
    pos = reader.read_frames(text, 0, INPUT_HEAD_CHARS)
    if not reader.in_error and pos < len(text):
        error_at, headers, last = _scan_frames(text, pos, reader.frame is not None)
        reader.close_frame()
        end = len(text) if error_at is None else error_at
        tail = next((at for at in last if end - at <= INPUT_TAIL_CHARS), end)
        reader.left_out += headers - sum(1 for at in last if at >= tail)
        pos = reader.read_frames(text, tail, INPUT_TAIL_CHARS)
        if not reader.in_error and error_at is not None:  # a last frame too long to read whole
            reader.close_frame()
            pos = reader.read_frames(text, error_at, len(text))
    if reader.in_error:
        reader.read_error(text, pos)
    return reader.done(link)


class _Reader:
    """Reads one exception's traceback line by line: frames until the error's first line,
    then the error, to the end."""

    def __init__(self) -> None:
        self.chunk, self.in_error = _Chunk(), False
        self.frame: _Open | None = None
        self.left_out = 0  # frames passed over unread

    def read_frames(self, text: str, pos: int, budget: int) -> int:
        """Reads lines from ``pos`` until the error's first line is read or ``budget``
        characters are; returns where it stopped (a line's start)."""
        stop = pos + budget
        while pos < len(text) and pos < stop and not self.in_error:
            line, pos = _line_at(text, pos)
            self.frames_line(line)
        return pos

    def frames_line(self, line: str) -> None:
        kind, header = _classify(line, self.frame is not None)
        if kind in ("header", "blank"):  # a frame begins, or one ends
            self.close_frame()
            self.frame = header
        elif kind == "context" and self.frame is not None:
            self.frame.add(line)
        elif kind == "error":  # the error's first line: from here on, everything is the error's
            self.close_frame()
            self.in_error = True
            self.chunk.add_error(line)

    def read_error(self, text: str, pos: int) -> None:
        """The error's lines from ``pos`` until it holds all it may; the rest counted."""
        while pos < len(text) and not self.chunk.error_more:
            line, pos = _line_at(text, pos)
            self.chunk.add_error(line)
        if pos < len(text):
            self.chunk.error_more += text.count("\n", pos) + int(not text.endswith("\n"))

    def done(self, link: str | None) -> ParsedTraceback:
        self.close_frame()
        return self.chunk.done(extra_dropped=self.left_out, link=link)

    def close_frame(self) -> None:
        if self.frame is not None:
            self.chunk.add(self.frame.frame())
        self.frame = None


def _line_at(text: str, pos: int) -> tuple[str, int]:
    """The line that starts at ``pos`` (cut to ``MAX_LINE_CHARS``) and where the next starts.
    A line cut is blank only if all of it is (as the scanner's regexes see it)."""
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    if end - pos <= MAX_LINE_CHARS:
        return text[pos:end], end + 1
    if _NONBLANK.search(text, pos, end) is None:
        return "", end + 1
    return text[pos : pos + MAX_LINE_CHARS - 1] + "…", end + 1


LineKind = Literal["blank", "header", "decoration", "context", "error"]


def _classify(line: str, in_frame: bool) -> tuple[LineKind, _Open | None]:
    """What a line among the frames is: one rule, for the reader and the scanner alike."""
    if not line.strip():
        return "blank", None
    header = _header(line)
    if header is not None:
        return "header", header
    if _is_decoration(line):
        return "decoration", None
    if in_frame and line[:1] in (" ", "-"):
        return "context", None
    return "error", None


def _scan_frames(text: str, pos: int, in_frame: bool) -> tuple[int | None, int, deque[int]]:
    """Where the error's first line begins at or after ``pos`` (None: it has none), how many
    frame headers come before it, and where the last ``MAX_FRAMES - HEAD_FRAMES`` of them begin.

    Follows :func:`_classify` without reading a frame's context lines: inside a frame, a line
    indented three spaces or more and not blank changes nothing, so a regex skips them."""
    headers = 0
    last: deque[int] = deque(maxlen=MAX_FRAMES - HEAD_FRAMES)
    while pos < len(text):
        skip = (_CONTEXT_LINES if in_frame else _BLANK_LINES).match(text, pos)
        if skip is not None and skip.end() > pos:
            pos = skip.end()
            continue
        line, after = _line_at(text, pos)
        kind, _ = _classify(line, in_frame)
        if kind == "error":
            return pos, headers, last
        if kind == "header":
            headers += 1
            last.append(pos)
        in_frame = kind == "header" or (in_frame and kind != "blank")
        pos = after
    return None, headers, last


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
    source = source_lines(solution_code) if solution_code else []
    lines = _rendered(parsed, source)
    for cause in reversed(parsed.causes):
        heading = "caused by:" if cause.link == CAUSE else "raised while handling:"
        lines.append(Line("link", heading))
        lines += _rendered(cause, source, indent="  ")
    if parsed.dropped_causes:
        lines.append(Line("note", f"[… {parsed.dropped_causes} earlier chained exceptions]"))
    return lines


def _rendered(parsed: ParsedTraceback, source: list[str], indent: str = "") -> list[Line]:
    lines = [Line("error", indent + text) for text in (parsed.error or "?").split("\n")]
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
