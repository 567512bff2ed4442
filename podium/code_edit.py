"""An edit of a parent's code, as SEARCH/REPLACE blocks a model writes and Podium applies.

An operator may ask the model for the whole program, or for an *edit* of the parent's: blocks

    <<<<<<< SEARCH
    lines of the parent's code, as they are
    =======
    the lines that take their place
    >>>>>>> REPLACE

(the "diff" edit format of coding agents such as aider, which code models know), any number
of them, inside fences or not, with prose between them. :func:`parse_edits` reads the blocks
of an answer, :func:`apply_edits` applies them, :func:`render_edits` writes blocks (a scripted
model's answer, a prompt's example) and :data:`INSTRUCTIONS` tells a model the format: the
markers are spelled here only.

The rules, and why:

* Blocks apply in order, each to the code as the earlier blocks left it (block 2 may edit
  what block 1 wrote), as a model writing them one after another expects.
* A SEARCH matches whole lines, at exactly one place: first as written; else ignoring trailing
  whitespace and a difference of indentation that is the same on every line (a method quoted
  without its class's indent), and then the REPLACE is re-indented by that difference. No
  match, or two, is a failure, never a guess: an edit applied at the wrong place makes a
  plausible program that is wrong, the costliest bug to find later.
* An empty (or blank) SEARCH appends its REPLACE at the end of the code (aider's convention
  for adding code); a block with both empty is a failure.
* All or nothing: the result applies every block, or none, with a one-line ``reason`` for the
  node's ``bug_reason`` (it starts with :data:`REASON_PREFIX`) that names the block and shows
  what the code has instead (its nearest lines, numbered), so that the next try can do better.
* Line endings: the answer's and the code's ``\\r\\n`` and ``\\r`` read as ``\\n`` (lines as
  :func:`podium.code_diff.source_lines` numbers them); the new code's lines end in ``\\n``.
* A marker is a line of 5 to 9 ``<``, ``=`` or ``>`` (models miscount; 7 is the norm) and its
  word, with spaces or tabs around. Inside a REPLACE, a ``=======`` line is text
  (a docstring's heading); outside a block it is prose (a Markdown heading's underline).

The answer is model text and may be anything: its size, its number of blocks and the work of
matching are capped (the constants below), each cap a failure with its reason. Parsing finds
the marker lines with possessive patterns (no backtracking), a few searches per block, each
on from the last; matching uses ``str.find`` on whole lines. A reason quotes at most a few
lines of code or answer, each cut short and escaped (``repr``), so it is one printable line of
bounded length. The caller drops an answer's ``<think>`` sections first, as it does before
reading whole code.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from podium.code_diff import source_lines

MAX_ANSWER_CHARS = 1_000_000  # an answer longer than this is refused unread
MAX_CODE_CHARS = 1_000_000  # the parent's code, and the code an edit makes: 50 blocks, 0.2 s
MAX_BLOCKS = 50  # blocks in one answer: a real edit has a few
MAX_NEAR_WORK = 100_000  # lines compared, per block, checking matches that ignore whitespace
MAX_NEAREST_LINES = 10_000  # code lines difflib compares, per block, to find the nearest ones
SHOWN_LINES = 3  # code lines a reason shows
QUOTE_CHARS = 60  # characters of one quoted line
MAX_REASON_CHARS = 600

REASON_PREFIX = "edit did not apply: "
HEAD = "<<<<<<< SEARCH"
DIVIDER = "======="
TAIL = ">>>>>>> REPLACE"
# A marker line: 5 to 9 signs (models miscount), then the word; spaces and tabs around. The
# quantifiers are possessive: no backtracking, linear in any text. A match's ``lastgroup``
# names its marker.
_SIGNS = {
    "head": r"<{5,9}+[ \t]*+SEARCH",
    "divider": r"={5,9}+",
    "tail": r">{5,9}+[ \t]*+REPLACE",
}
_NAMES = {"head": HEAD, "divider": DIVIDER, "tail": TAIL}


def _marker_line(*names: str) -> re.Pattern[str]:
    signs = "|".join(f"(?P<{name}>{_SIGNS[name]})" for name in names)
    return re.compile(rf"^[ \t]*+(?:{signs})[ \t]*+$", re.M)


_MARKER = _marker_line("head", "divider", "tail")
_HEAD_OR_TAIL = _marker_line("head", "tail")

INSTRUCTIONS = f"""\
Answer with one or more SEARCH/REPLACE blocks that edit the current code:

{HEAD}
lines copied exactly from the current code
{DIVIDER}
the lines that take their place
{TAIL}

Each SEARCH must match exactly one place of the code: copy its lines whole, with their
indentation, and include a line or two more if they could match elsewhere. Blocks apply in
order, each to the code as the earlier blocks left it. A block with an empty SEARCH appends its
REPLACE at the end of the code."""

# How a block matched: as written; ignoring trailing whitespace and a uniform difference of
# indentation (its REPLACE re-indented); or appended (an empty SEARCH).
How = Literal["exact", "tolerant", "appended"]


@dataclass(frozen=True)
class Edit:
    """One block: the ``search`` lines to find and the ``replace`` lines that take their place
    (each a text whose lines end in ``\\n``, or empty); ``line``: where its SEARCH marker is in
    the answer, 1-based (0: an edit not read from an answer)."""

    search: str
    replace: str
    line: int = 0


@dataclass(frozen=True)
class Parsed:
    """An answer's blocks, or why they cannot be read (``problem``, a reason as
    :attr:`EditResult.reason` gives it; then ``edits`` is empty)."""

    edits: tuple[Edit, ...]
    problem: str | None = None


@dataclass(frozen=True)
class Change:
    """What one block did: in the code as the earlier blocks left it, ``removed`` lines from
    ``line`` (1-based; one past the end for an append) gave way to ``added`` lines; ``how`` it
    matched."""

    block: int
    line: int
    removed: int
    added: int
    how: How


@dataclass(frozen=True)
class EditResult:
    """The edited code and what each block changed, or (``code`` None, no changes) the one-line
    ``reason`` it did not apply, for ``Node.bug_reason``."""

    code: str | None
    reason: str | None = None
    changes: tuple[Change, ...] = ()

    @property
    def ok(self) -> bool:
        return self.code is not None


def has_edits(answer: str) -> bool:
    """Whether ``answer`` has a SEARCH marker: it means to be an edit, whatever else it holds
    (an operator offered both formats tells them apart with this)."""
    if len(answer) > MAX_ANSWER_CHARS:
        return False
    text = answer.replace("\r", "\n")
    return any(match.lastgroup == "head" for match in _HEAD_OR_TAIL.finditer(text))


def prose_before(answer: str, limit: int = 4000) -> str:
    """The answer's text before its first SEARCH marker, without fence lines: the plan an edit
    comes with (at most ``limit`` characters)."""
    text = answer[:MAX_ANSWER_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    head = _HEAD_OR_TAIL.search(text)
    before = text[: head.start()] if head is not None else text
    kept = [line for line in before.split("\n") if not line.lstrip().startswith("```")]
    return "\n".join(kept).strip()[:limit]


def parse_edits(answer: str) -> Parsed:
    """The SEARCH/REPLACE blocks of ``answer`` in order; ``problem`` when there is none, one is
    cut off or malformed, or the answer is past the caps. A few searches per block, each from
    where the last stopped: linear in the answer."""
    if len(answer) > MAX_ANSWER_CHARS:
        return _unread(
            f"the answer is {len(answer):,} characters, past the {MAX_ANSWER_CHARS:,} an edit "
            "may have"
        )
    text = answer.replace("\r\n", "\n").replace("\r", "\n")
    lines = _LineCounter(text)
    edits: list[Edit] = []
    position = 0
    while (head := _HEAD_OR_TAIL.search(text, position)) is not None:
        if head.lastgroup == "tail":
            return _unread(f"answer line {lines.at(head)}: a {TAIL} with no {HEAD} before it")
        if len(edits) == MAX_BLOCKS:
            return _unread(f"the answer has more than {MAX_BLOCKS} blocks")
        block = f"block {len(edits) + 1} (answer line {lines.at(head)})"
        divider = _MARKER.search(text, head.end())
        if divider is not None and divider.lastgroup != "divider":
            name = _NAMES[divider.lastgroup or ""]
            return _unread(
                f"{block}: a {name} at answer line {lines.at(divider)}, before its {DIVIDER}"
            )
        tail = None if divider is None else _HEAD_OR_TAIL.search(text, divider.end())
        if tail is not None and tail.lastgroup == "head":
            return _unread(
                f"{block}: a new {HEAD} at answer line {lines.at(tail)}, before its {TAIL}"
            )
        if divider is None or tail is None:
            return _unread(f"{block} is cut off: the answer ends before its {TAIL}")
        search, replace = _between(text, head, divider), _between(text, divider, tail)
        edits.append(Edit(search, replace, lines.at(head)))
        position = tail.end()
    if not edits:
        return _unread(f"the answer has no {HEAD} / {DIVIDER} / {TAIL} block")
    return Parsed(tuple(edits))


class _LineCounter:
    """1-based line numbers of places in ``text``, asked for in increasing order: counted on
    from the last place, so all of them cost one pass."""

    def __init__(self, text: str) -> None:
        self.text, self.place, self.line = text, 0, 1

    def at(self, match: re.Match[str]) -> int:
        self.line += self.text.count("\n", self.place, match.start())
        self.place = match.start()
        return self.line


def _between(text: str, before: re.Match[str], after: re.Match[str]) -> str:
    """The lines between two marker lines (each ending in a newline)."""
    return text[before.end() + 1 : after.start()]


def apply_edits(original: str, edits: str | Sequence[Edit]) -> EditResult:
    """``original`` with ``edits`` applied in order: an answer (parsed by :func:`parse_edits`)
    or its blocks. Every block applies, or none does and ``reason`` says which block failed and
    why (see the module for the rules)."""
    if isinstance(edits, str):
        parsed = parse_edits(edits)
        if parsed.problem is not None:
            return EditResult(None, parsed.problem)
        edits = parsed.edits
    if not edits:
        return _failed("there is no block to apply")
    if len(edits) > MAX_BLOCKS:
        return _failed(f"{len(edits)} blocks, past the {MAX_BLOCKS} an edit may have")
    if len(original) > MAX_CODE_CHARS:
        return _failed(
            f"the parent's code is {len(original):,} characters, past the {MAX_CODE_CHARS:,} "
            "an edit applies to"
        )
    lines = source_lines(original)
    size = _size(lines)
    changes: list[Change] = []
    for number, edit in enumerate(edits, 1):
        outcome = _apply_one(lines, edit, number, size)
        if isinstance(outcome, str):
            return _failed(f"block {number} of {len(edits)}: {outcome}")
        change, size = outcome
        changes.append(change)
    return EditResult("".join(line + "\n" for line in lines), None, tuple(changes))


def render_edits(edits: Iterable[Edit | tuple[str, str]]) -> str:
    """Blocks as a model writes them, each ``(search, replace)``, one after another: the text
    :func:`parse_edits` reads back as these edits. A line of a SEARCH or REPLACE that reads as
    a marker could not be read back: it is a ``ValueError``."""
    out: list[str] = []
    for edit in edits:
        search, replace = (edit.search, edit.replace) if isinstance(edit, Edit) else edit
        search_lines, replace_lines = source_lines(search), source_lines(replace)
        if any(_marker(line) for line in search_lines) or any(
            _marker(line) in (HEAD, TAIL) for line in replace_lines
        ):
            raise ValueError("a SEARCH or REPLACE line reads as a block marker")
        out += [HEAD, *search_lines, DIVIDER, *replace_lines, TAIL, ""]
    return "\n".join(out)


def _marker(line: str) -> str | None:
    """The marker ``line`` is (:data:`HEAD`, :data:`DIVIDER`, :data:`TAIL`), or None."""
    match = _MARKER.match(line)
    return None if match is None else _NAMES[match.lastgroup or ""]


def _apply_one(lines: list[str], edit: Edit, number: int, size: int) -> tuple[Change, int] | str:
    """Applies block ``number`` to ``lines`` in place: the change and the code's new size
    (characters), or why not."""
    search, replace = source_lines(edit.search), source_lines(edit.replace)
    if not edit.search.strip():
        if not edit.replace.strip():
            return "its SEARCH and REPLACE are both empty"
        at, removed, new = len(lines), 0, replace
        how: How = "appended"
    else:
        where = "the parent's code" if number == 1 else _left_by(number)
        match = _match(lines, search, replace, where)
        if isinstance(match, str):
            return match
        at, add, cut = match
        removed = len(search)
        how = "exact" if add is None else "tolerant"
        # built within the cap: an indentation added to many lines could make gigabytes
        budget = MAX_CODE_CHARS - size + _size(lines[at : at + removed])
        new = replace if add is None else _reindented(replace, add, cut, budget)
    size += _size(new) - _size(lines[at : at + removed])
    if size > MAX_CODE_CHARS:
        return f"the code it makes is past the {MAX_CODE_CHARS:,} characters allowed"
    lines[at : at + removed] = new
    return Change(number, at + 1, removed, len(new), how), size


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _match(
    lines: list[str], search: list[str], replace: list[str], where: str
) -> tuple[int, str | None, str] | str:
    """The one place (0-based) of ``search`` in ``lines`` with the indentation to add and to
    cut from the REPLACE (None: it matched as written), or why there is none."""
    found = _exact(lines, search)
    if len(found) > 1:
        return _ambiguous(found, "", where)
    if found:
        return found[0], None, ""
    near = _tolerant(lines, search)
    if isinstance(near, str):
        return near
    if not near:
        return _not_found(lines, search, replace, where)
    if len(near) > 1:
        return _ambiguous([at for at, _, _ in near], " (ignoring indentation)", where)
    return near[0]


def _exact(lines: list[str], search: list[str]) -> list[int]:
    """Where (0-based) ``search`` is, line for line, in ``lines``: the first two places."""
    return _places("\n" + "\n".join(lines) + "\n", "\n" + "\n".join(search) + "\n", 2)


def _places(haystack: str, needle: str, most: int) -> list[int]:
    """The lines (0-based) where ``needle`` (whole lines, between newlines) starts in
    ``haystack`` (newline-joined lines, with one before and after), up to ``most``."""
    found: list[int] = []
    line, counted = 0, 0
    position = haystack.find(needle)
    while position >= 0 and len(found) < most:
        line += haystack.count("\n", counted, position)
        counted = position
        found.append(line)
        position = haystack.find(needle, position + 1)
    return found


Near = tuple[int, str, str]  # (line, indentation added, indentation cut)


def _tolerant(lines: list[str], search: list[str]) -> list[Near] | str:
    """Where ``search`` is in ``lines`` ignoring trailing whitespace and a uniform difference
    of indentation: up to two places, with the difference; or why it cannot be told."""
    keys = [line.strip() for line in lines]
    haystack = "\n" + "\n".join(keys) + "\n"
    needle = "\n" + "\n".join(line.strip() for line in search) + "\n"
    found: list[Near] = []
    line, counted, work = 0, 0, 0
    position = haystack.find(needle)
    while position >= 0 and len(found) < 2:
        if work and work + len(search) > MAX_NEAR_WORK:
            return (
                "its SEARCH text, ignoring indentation, is at too many places to check; include "
                "more lines around it"
            )
        work += len(search)
        line += haystack.count("\n", counted, position)
        counted = position
        offset = _offset(lines[line : line + len(search)], search)
        if offset is not None:
            found.append((line, *offset))
        position = haystack.find(needle, position + 1)
    return found


def _offset(code: list[str], search: list[str]) -> tuple[str, str] | None:
    """The indentation to add to each ``search`` line, and to cut from it, to make ``code``'s
    (the lines are the same but for leading and trailing whitespace): the same on every line
    that is not blank, or None."""
    offset: tuple[str, str] | None = None
    for have, want in zip(code, search, strict=True):
        if not want.strip():
            continue
        indent, wanted = _indent(have), _indent(want)
        if offset is None:
            if indent.endswith(wanted):
                offset = indent[: len(indent) - len(wanted)], ""
            elif wanted.endswith(indent):
                offset = "", wanted[: len(wanted) - len(indent)]
            else:
                return None
        add, cut = offset
        if not (wanted.startswith(cut) and indent == add + wanted[len(cut) :]):
            return None
    return offset or ("", "")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindented(replace: list[str], add: str, cut: str, budget: int) -> list[str]:
    """``replace``'s lines moved by the SEARCH's difference of indentation: ``cut`` taken from
    each line's indentation (all of it where it is shorter), ``add`` put before; blank lines
    left as they are. Built until past ``budget`` characters (then the caller refuses it)."""
    out = []
    for line in replace:
        if not line.strip():
            out.append(line)
        else:
            indent = _indent(line)
            kept = indent[len(cut) :] if indent.startswith(cut) else ""
            out.append(add + kept + line[len(indent) :])
        budget -= len(out[-1]) + 1
        if budget < 0:
            break
    return out


def _ambiguous(found: list[int], how: str, where: str) -> str:
    first, second = found[0] + 1, found[1] + 1
    return (
        f"ambiguous: its SEARCH text is found{how} at lines {first} and {second} of {where}; "
        "include more lines around it so that it matches one place"
    )


def _not_found(lines: list[str], search: list[str], replace: list[str], where: str) -> str:
    """Why ``search`` is not in ``lines``: the nearest lines of the code, numbered, and the
    first line where they differ; or that the REPLACE is already there."""
    head = next(j for j, line in enumerate(search) if line.strip())
    reason = (
        f"its SEARCH text ({len(search):,} line{'s' * (len(search) != 1)}, from "
        f"{_quote(search[head])}) is not in {where}"
    )
    already = _exact(lines, replace) if any(line.strip() for line in replace) else []
    if already:
        return reason + f"; its REPLACE text is already there, at line {already[0] + 1}"
    start = _nearest(lines, search)
    if start is None:
        return reason + "; no line of the code resembles it"
    shown = lines[start : start + min(len(search), SHOWN_LINES)]
    numbered = " | ".join(f"{start + i + 1} {_quote(line)}" for i, line in enumerate(shown))
    span = f"lines {start + 1}-{start + len(shown)}:" if len(shown) > 1 else "line"
    reason += f"; nearest, {span} {numbered}"
    return reason + _difference(lines[start : start + len(search)], search, start, head)


def _difference(code: list[str], search: list[str], start: int, head: int) -> str:
    """The first line where ``search`` and the ``code`` at line ``start`` (0-based) differ,
    whitespace aside, said briefly (the first line is quoted already; the first lines of the
    code are shown already)."""
    for j, want in enumerate(search):
        have = code[j] if j < len(code) else None
        if have is not None and have.strip() == want.strip():
            continue
        said = f"; first difference: SEARCH line {j + 1}" + (
            "" if j == head else f" is {_quote(want)}"
        )
        if j < SHOWN_LINES and have is not None:
            return said if j != head else ""
        there = f"line {start + j + 1} is {_quote(have)}" if have is not None else "the code ends"
        return f"{said}, where {there}"
    return "; those lines are there, indented differently from line to line (or tabs for spaces)"


def _nearest(lines: list[str], search: list[str]) -> int | None:
    """Where (0-based) the code lines most like ``search`` start: the alignment that most of
    ``search``'s lines (leading and trailing whitespace aside) agree on; else, where the line
    most like its longest line is (difflib, over the first lines of the code). Linear, or
    bounded."""
    first_at: dict[str, int] = {}
    for j, line in enumerate(search):
        if line.strip():
            first_at.setdefault(line.strip(), j)
    votes: dict[int, int] = {}
    for i, line in enumerate(lines):
        k = first_at.get(line.strip())
        if k is not None:
            votes[i - k] = votes.get(i - k, 0) + 1
    if votes:
        return max(0, max(votes, key=lambda start: (votes[start], -start)))
    candidates = ((j, line.strip()[:200]) for j, line in enumerate(search) if line.strip())
    j, target = max(itertools.islice(candidates, 20), key=lambda item: len(item[1]))
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    alike, at = 0.5, -1  # less alike than this is no help
    for i, line in enumerate(lines[:MAX_NEAREST_LINES]):
        matcher.set_seq1(line.strip()[:200])
        if matcher.real_quick_ratio() > alike and matcher.quick_ratio() > alike:
            ratio = matcher.ratio()
            if ratio > alike:
                alike, at = ratio, i
    return None if at < 0 else max(0, at - j)


def _quote(text: str) -> str:
    """``text`` cut to :data:`QUOTE_CHARS` and escaped: safe in a one-line reason."""
    return repr(text[:QUOTE_CHARS]) + ("…" if len(text) > QUOTE_CHARS else "")


def _left_by(number: int) -> str:
    earlier = "block 1" if number == 2 else f"blocks 1-{number - 1}"
    return f"the code as {earlier} left it"


def _reason(text: str) -> str:
    line = (REASON_PREFIX + text).replace("\n", " ").replace("\r", " ")  # quotes are repr()s
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 1] + "…"


def _failed(text: str) -> EditResult:
    return EditResult(None, _reason(text))


def _unread(text: str) -> Parsed:
    return Parsed((), _reason(text))
