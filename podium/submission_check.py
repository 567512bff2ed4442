"""Answer-free structural submission check: could this CSV be graded? Never a score.

The same file serves two sides. On the host it is the fallback of a task's format check, used
where the competition's own grader cannot be run against public stand-ins for the answers
(:mod:`podium.benchmarks.grader_check`). Inside the sandbox, a copy of this file sits in the
solution's working directory as ``validate_submission.py``, so the agent's code can check its
own submission before it finishes (``python validate_submission.py`` or ``from
validate_submission import validate``) — the format validator MLE-bench gives its agents. It
compares the submission with the public data only, so it cannot leak anything about the
private answers: it says ``valid_submission: true`` or ``false`` with one line of reason, never
how good the predictions are.

The rules are the ones every MLE-bench grader shares, read the way MLE-bench reads a submission
(pandas' ``read_csv``), so that a file the grader accepts is never refused here:

* the file exists, is not empty and not huge (a size cap checked before reading), its header
  line is not absurdly long or wide next to the sample's (:func:`bound_problem`, checked on the
  file's first bytes before anything parses the rest), it is UTF-8 text and parses as a CSV
  whose rows have at most as many fields as its header (pandas fills short rows with blanks and
  refuses long ones);
* it has every column of the sample submission (more are allowed: graders select by name);
* it has as many rows as the sample submission;
* its **keys** hold the sample's values, each as often. A key is a column of the sample whose
  values are distinct and either equal, as a set, to the same-named column of another table in
  the public data (the test set's ids), or text that looks like ids (no spaces, not numbers).
  Keys come from the data, never from a column's position;
* a column the sample fills with numbers holds numbers or blanks.

The sample (and a public table the keys are looked up in) may come compressed, as Kaggle ships
some (``en_sample_submission_2.csv.zip``): a zip of one CSV, or ``.gz``, ``.bz2``, ``.xz``. It
is read decompressed, and its bounds are the decompressed file's; a submission is plain CSV.

Blank cells are never an error here: several competitions' graders accept them on purpose (an
empty mask, an unanswered question), and where one does not, its own grader says so.

It uses the standard library only (no pandas): it must run under whatever interpreter the
solutions use, and it must never crash on hostile input. On the host the submission is passed as
a file the caller opened through ``podium.untrusted`` (this file cannot import it), or as bytes;
a path is read here only inside the sandbox, where the file is the solution's own.

On the host the check is bounded by construction: the bounds (:class:`Bounds`: size, header
line, width, rows) refuse an absurd file in milliseconds, on its first bytes; everything after
them is linear in the file and stops reading past the sample's rows; and a file larger than
``IN_PROCESS_BYTES`` is checked in a child process (this file, run as a script with
``--host-check``) that reads the file itself, under a memory limit and a deadline, so that the
host never holds the file, no single long parse holds the host's interpreter lock (a 100 MB
line is seconds of C code) and no file can cost the host its memory. A check that cannot
finish in time is no refusal: it passes, with a warning logged (the grade after the run is the
judge; a valid submission must never be refused).

A host-held holdout's split (:func:`split_by_id`) runs in the same kind of child, streamed,
for the same reasons: the host only opens the file and names the parts' files.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import fnmatch
import functools
import io
import json
import logging
import math
import os
import re
import subprocess
import sys
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

MIN_SIZE_CAP = 100 * 1024 * 1024  # bytes; a submission may always be this big
SIZE_CAP_FACTOR = 20  # ... or this many times the sample submission, if that is more
MIN_COLUMN_CAP = 10_000  # a submission's header may always have this many columns
COLUMN_CAP_FACTOR = 10  # ... or this many times the sample's, if that is more
MIN_HEADER_CAP = 1024 * 1024  # bytes: a submission's header line may always be this long
HEADER_CAP_FACTOR = 10  # ... or this many times the sample's, if that is more
MIN_ROW_CAP = 100_000  # a submission may always have this many rows
ROW_CAP_FACTOR = 10  # ... or this many times the sample's, if that is more
IN_PROCESS_BYTES = 1024 * 1024  # the host checks larger submissions in a child process
CHECK_TIMEOUT_S = 30.0  # the child's deadline, by default
SPLIT_TIMEOUT_S = 60.0  # the splitting child's deadline (it writes the file out again)
CHILD_MEMORY_BYTES = 512 * 1024 * 1024  # the child's address space, plus 8 times the files
HOST_FLAG = "--host-check"
REFERENCE_HEAD_BYTES = 4 * 1024 * 1024  # of a sample or answers file, for its header line
MISSING = {"", "nan", "NaN", "NAN", "NA", "N/A", "null", "NULL", "None", "<NA>", "n/a",
           "#N/A", "-nan", "-NaN", "1.#IND", "1.#QNAN", "#NA", "-1.#IND", "-1.#QNAN",
           "#N/A N/A"}  # fmt: skip
# Names of sample submissions, best first, matched case-insensitively (MLE-bench's competitions
# spell them sample_submission.csv, sampleSubmission.csv, SampleSubmission.csv, ...).
SAMPLE_PATTERNS = (
    ("*sample*submission*.csv",),
    ("*random*prediction*.csv", "*sample*.csv"),
)
COMPRESSIONS = (".zip", ".gz", ".bz2", ".xz")  # a sample or public table may come compressed
KEY_TABLE_CAP = 512 * 1024 * 1024  # bytes: public tables larger than this are not read for keys
EXAMPLES = 3
SHOWN_CHARS = 40  # of a value quoted in a reason
MAX_REASON_CHARS = 300  # a reason reaches the model's debug prompt: it stays one short line
SCRIPT_NAME = "validate_submission.py"  # this file's name in the solution's working directory
_CHUNK = 1024 * 1024
INTEGER_ID = re.compile(r"[+-]?[0-9]+(?:\.0*)?")  # an ASCII integer, as ids compare (id_key)

try:
    from lzma import LZMAError
except ImportError:  # a Python built without lzma reads no .xz file
    LZMAError = OSError  # type: ignore[misc,assignment]
DECOMPRESS_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, LZMAError)

csv.field_size_limit(2**31 - 1)  # encoded masks and long texts are single huge fields


log = logging.getLogger("podium.submission_check")


class Invalid(Exception):
    """The submission cannot be graded; the message is the one-line reason."""


class Unchecked(Exception):
    """The check could not finish (its deadline, its memory): the message says why."""


def check(
    submission: Path | bytes | BinaryIO,
    sample: Path,
    max_bytes: int | None = None,
    *,
    keys: Sequence[str] | None = None,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> str | None:
    """``None`` when ``submission`` passes the structural check against ``sample`` (whose
    folder is the public data the keys are looked up in), else the first problem found.

    ``submission`` is a path (the sandbox's case: the solution's own file), or on the host its
    bytes or a binary file open on it (opened by the caller through ``podium.untrusted``; a
    file is streamed from its start, never held whole). ``max_bytes`` caps its size (default:
    ``size_cap(sample)``); a larger file is refused before a byte of it is read. ``keys`` are
    the sample's key columns when the caller knows them (default: :func:`key_columns`). On the
    host a submission is checked against the bounds first, then, past ``IN_PROCESS_BYTES``, in
    a child process given ``timeout_s``: one that cannot finish passes, with a warning logged.
    """
    sample = Path(sample)
    if isinstance(submission, Path):
        return _verdict(submission, sample, max_bytes, keys)
    source = submission
    small = _whole_if_small(source)
    if small is not None:
        return _verdict(small, sample, max_bytes, keys)
    try:
        limits = bounds(sample, max_bytes=max_bytes)
    except Invalid as exc:
        return _reason(exc)
    problem = bound_problem(_head(source, limits.max_header_bytes + 1), _size_of(source), limits)
    if problem is not None:
        return problem
    try:
        found = check_in_child(source, sample, limits.max_bytes, keys, timeout_s)
    except Unchecked as exc:
        log.warning("the submission was not checked: %s", exc)
        return None
    return found


def _verdict(
    submission: Path | bytes | BinaryIO,
    sample: Path,
    max_bytes: int | None,
    keys: Sequence[str] | None,
) -> str | None:
    try:
        _check(submission, sample, max_bytes, keys)
    except Invalid as exc:
        return _reason(exc)
    except MemoryError:
        return "the submission cannot be checked: it needs more memory than this process has"
    return None


def _reason(exc: Exception) -> str:
    return _cut(" ".join(str(exc).split()), MAX_REASON_CHARS)


def _check(
    submission: Path | bytes | BinaryIO,
    sample: Path,
    max_bytes: int | None,
    keys: Sequence[str] | None,
) -> None:
    limits = bounds(sample, max_bytes=max_bytes)
    cap = limits.max_bytes
    source = (
        _read(submission, "the submission", cap) if isinstance(submission, Path) else submission
    )
    size = _size_of(source)
    problem = bound_problem(_head(source, limits.max_header_bytes + 1), size, limits)
    if problem is not None:
        raise Invalid(problem)
    expected = _parse_csv(_read_reference(sample, "the sample submission"), "the sample submission")
    table = _parse_csv(source, "the submission", expected.header, len(expected.rows))
    if len(table.rows) != len(expected.rows):
        raise Invalid(
            f"the submission has {len(table.rows):,} rows; expected {len(expected.rows):,} "
            "(one per row of the sample submission)"
        )
    for name in key_columns(sample) if keys is None else keys:
        _check_key(table.column(name), expected.column(name), name)
    for name in expected.header:
        if all(_is_number(value) for value in expected.column(name)):
            _check_numbers(table.column(name), name)


def _size_of(source: bytes | BinaryIO) -> int:
    """The bytes a submission holds (a stream: to its end, its position left at the start)."""
    if isinstance(source, bytes):
        return len(source)
    size = source.seek(0, io.SEEK_END)
    source.seek(0)
    return size


def _head(source: bytes | BinaryIO, count: int) -> bytes:
    """A submission's first ``count`` bytes (a stream is left at its start)."""
    if isinstance(source, bytes):
        return source[:count]
    source.seek(0)
    head = source.read(count)
    source.seek(0)
    return head


def _whole_if_small(source: bytes | BinaryIO) -> bytes | None:
    """A submission's bytes when it holds at most ``IN_PROCESS_BYTES`` (checked here), else
    None (checked in a child). A stream is read no further than that."""
    if isinstance(source, bytes):
        return source if len(source) <= IN_PROCESS_BYTES else None
    head = _head(source, IN_PROCESS_BYTES + 1)
    return head if len(head) <= IN_PROCESS_BYTES else None


def size_cap(sample: Path) -> int:
    """The largest submission read for a task: 100 MiB, or 20 times its sample if more."""
    return max(MIN_SIZE_CAP, SIZE_CAP_FACTOR * _plain_size(sample))


# --- the bounds: an absurd file refused on its first bytes ---------------------------------


class Bounds(NamedTuple):
    """The most a submission may be, compared with the files it answers (the sample; for
    grading, the private answers too): bytes, header-line bytes, header columns, rows. Each is
    a floor no valid submission comes near or a multiple of the widest reference, whichever is
    more, so a valid MLE-bench submission is never refused (a sample with 1,000 columns allows
    10,000; graders select columns by name, so extra ones are allowed up to there; a format
    with several rows per id, one per object found, has the answers' rows times ten). A named
    tuple, not a dataclass: this file must load however an agent's code loads it.

    The rows bound is what makes reading a submission stop early: whatever reads one (the
    check, the split, a grader's pandas) stops after ``max_rows + 1`` rows, so a file of
    millions of short rows costs what a valid one does."""

    max_bytes: int
    max_header_bytes: int
    max_columns: int
    reference_columns: int  # the widest reference's, for the reasons
    reference_header_bytes: int
    max_rows: int = MIN_ROW_CAP
    reference: str = "the sample submission"  # names the references in the reasons

    def rows_problem(self, rows: int) -> str | None:
        """Why a submission with (at least) ``rows`` rows is out of bounds, or None."""
        return too_many_rows(self.max_rows) if rows > self.max_rows else None


def too_many_rows(max_rows: int) -> str:
    """The reason a submission with more than ``max_rows`` rows is refused."""
    return f"the submission has over {max_rows:,} rows, the most accepted for this task"


def bounds(*references: Path, max_bytes: int | None = None, shown: str = "") -> Bounds:
    """The bounds of a submission answering ``references`` (CSV files the host trusts: their
    size and header line, read once per version of each; the widest counts), named ``shown`` in
    the reasons; ``max_bytes`` overrides the size cap. Raises Invalid when the first reference
    (the sample) does not exist."""
    size, header_bytes, columns, rows = 0, 0, 0, 0
    for index, reference in enumerate(references):
        try:
            info = reference.stat()
        except OSError:
            if index == 0:
                raise Invalid(f"the sample submission {reference} does not exist") from None
            continue
        stamp = (info.st_mtime_ns, info.st_size)
        found_bytes, found_columns = _header_of(str(reference), stamp)
        found_rows, found_size = _extent_of(str(reference), stamp)
        size = max(size, found_size)
        header_bytes, columns = max(header_bytes, found_bytes), max(columns, found_columns)
        rows = max(rows, found_rows)
    return Bounds(
        max_bytes=max_bytes if max_bytes is not None else max(MIN_SIZE_CAP, SIZE_CAP_FACTOR * size),
        max_header_bytes=max(MIN_HEADER_CAP, HEADER_CAP_FACTOR * header_bytes),
        max_columns=max(MIN_COLUMN_CAP, COLUMN_CAP_FACTOR * columns),
        reference_columns=columns,
        reference_header_bytes=header_bytes,
        max_rows=max(MIN_ROW_CAP, ROW_CAP_FACTOR * rows),
        reference=shown or "the sample submission",
    )


@functools.lru_cache(maxsize=16)
def _header_of(path: str, stamp: tuple[int, int]) -> tuple[int, int]:
    """A trusted CSV's header line: (its length, its columns), read from its first
    ``REFERENCE_HEAD_BYTES`` (a longer header counts as that long), decompressed; (0, 0) if it
    cannot be read."""
    try:
        with _open_plain(Path(path)) as fh:
            head = fh.read(REFERENCE_HEAD_BYTES)
    except (Invalid, *DECOMPRESS_ERRORS):
        return 0, 0
    length, header = _first_record(head, len(head) + 1)
    return length, len(header)


@functools.lru_cache(maxsize=16)
def _extent_of(path: str, stamp: tuple[int, int]) -> tuple[int, int]:
    """A trusted CSV's rows below its header, as its line breaks (a quoted one counts too: the
    bound is then looser, never tighter), and its bytes, decompressed; (0, 0) if it cannot be
    read."""
    breaks, last, size = 0, b"\n", 0
    try:
        with _open_plain(Path(path)) as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                breaks, last, size = breaks + chunk.count(b"\n"), chunk[-1:], size + len(chunk)
    except (Invalid, *DECOMPRESS_ERRORS):
        return 0, 0
    return max(breaks + (last != b"\n") - 1, 0), size


def _plain_size(path: Path) -> int:
    """A trusted file's bytes, decompressed (0 if it cannot be read)."""
    try:
        info = path.stat()
    except OSError:
        return 0
    return _extent_of(str(path), (info.st_mtime_ns, info.st_size))[1]


def plain_name(name: str) -> str:
    """A file's name without its compression suffix (``a.csv.zip``: ``a.csv``)."""
    for suffix in COMPRESSIONS:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _open_plain(path: Path) -> BinaryIO:
    """A trusted file's bytes, decompressed as its suffix says (a zip: the one file it holds).
    Raises Invalid for a zip holding other than one file, OSError when it cannot be opened."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        with zipfile.ZipFile(path) as archive:  # the member keeps the file open
            names = [n for n in archive.namelist()
                     if not n.endswith("/") and not n.startswith("__MACOSX/")]  # fmt: skip
            if len(names) != 1:
                raise Invalid(f"{path.name} holds {len(names)} files, not one CSV")
            return cast(BinaryIO, archive.open(names[0]))
    if suffix == ".gz":
        import gzip

        return cast(BinaryIO, gzip.open(path, "rb"))
    if suffix == ".bz2":
        import bz2

        return cast(BinaryIO, bz2.open(path, "rb"))
    if suffix == ".xz":
        import lzma

        return cast(BinaryIO, lzma.open(path, "rb"))
    return path.open("rb")


def _read_reference(path: Path, what: str) -> bytes:
    """A trusted CSV's bytes (the sample's), decompressed; raises Invalid with the reason it
    cannot be read."""
    data = _read(path, what, None)  # it exists, is a file and not empty
    if plain_name(path.name) == path.name:
        return data
    try:
        with _open_plain(path) as fh:
            return fh.read()
    except DECOMPRESS_ERRORS as exc:
        raise Invalid(f"cannot read {what} {path.name}: {exc}") from None


def bound_problem(head: bytes, size: int, limits: Bounds) -> str | None:
    """Why a submission of ``size`` bytes whose first bytes are ``head`` (at least
    ``limits.max_header_bytes + 1`` of them, or the whole file) is out of ``limits``, or None.

    Only the header line is parsed, and no more than ``max_header_bytes`` of it: milliseconds,
    whatever the file. A file refused here never reaches pandas or a grader.
    """
    if size > limits.max_bytes:
        cap = limits.max_bytes
        return f"the submission is {size:,} bytes, over the {cap:,}-byte limit for this task"
    cap = limits.max_header_bytes
    length, header = _first_record(head, cap)
    if length > cap and size > cap:
        return (
            f"the submission's header line is over {cap:,} bytes long ({limits.reference}: "
            f"{limits.reference_header_bytes:,} bytes, {limits.reference_columns:,} columns)"
        )
    if len(header) > limits.max_columns:
        return (
            f"the submission's header has {len(header):,} columns, over the "
            f"{limits.max_columns:,} accepted ({limits.reference}: {limits.reference_columns:,})"
        )
    return None


def _first_record(head: bytes, cap: int) -> tuple[int, list[str]]:
    """The first non-blank CSV record within ``head[:cap + 1]``: how many characters it took
    (more than ``cap`` when it does not end there) and its fields."""
    window = head[: cap + 1]
    if b"\n" not in window and b"\r" not in window and len(window) > cap:
        return cap + 1, []  # one unbroken line: nothing to parse
    text = window.decode("utf-8-sig", errors="replace")
    taken = 0

    def lines() -> Iterator[str]:
        nonlocal taken
        for line in io.StringIO(text, newline=""):
            taken += len(line)
            yield line

    try:
        for record in csv.reader(lines()):
            if record:
                ended = taken < len(text) or text.endswith(("\n", "\r"))
                return (taken if ended else cap + 1), record
    except csv.Error:
        pass
    return (cap + 1 if len(window) > cap else taken), []


class Table:
    """A parsed CSV: its header and its rows, each a list of the kept columns' values (a short
    row's missing fields are blank, as pandas fills them)."""

    def __init__(self, header: list[str], rows: list[list[str]]) -> None:
        self.header, self.rows = header, rows
        self._where = _first_indices(header)

    def column(self, name: str) -> list[str]:
        """The values of the first column called ``name`` (pandas renames later repeats)."""
        index = self._where[name]
        return [row[index] for row in self.rows]


def _first_indices(header: Sequence[str]) -> dict[str, int]:
    """Each name's first position: one pass, where ``header.index`` per name is quadratic."""
    where: dict[str, int] = {}
    for index, name in enumerate(header):
        where.setdefault(name, index)
    return where


def _read(path: Path, what: str, cap: int | None) -> bytes:
    """A file's bytes; raises Invalid with the reason it cannot be read."""
    try:
        size = path.stat().st_size
    except OSError:
        raise Invalid(f"{what} {path} does not exist") from None
    if path.is_symlink():  # as on the host, where a solution's links are never followed
        raise Invalid(f"{what} {path} is a symbolic link, not a file")
    if not path.is_file():
        raise Invalid(f"{what} {path} is not a file")
    if size == 0:
        raise Invalid(f"{what} is an empty file")
    if cap is not None and size > cap:
        raise Invalid(f"{what} is {size:,} bytes, over the {cap:,}-byte limit for this task")
    try:
        with path.open("rb") as fh:
            return fh.read()
    except OSError as exc:
        raise Invalid(f"cannot read {what}: {exc.strerror}") from None


def _parse_csv(
    source: bytes | BinaryIO,
    what: str,
    keep: Sequence[str] | None = None,
    max_rows: int | None = None,
) -> Table:
    """The CSV's table, read as pandas reads it; raises Invalid with the reason it cannot be.

    Only the columns named in ``keep`` (all, without it) are kept, in that order, and reading
    stops after ``max_rows + 1`` rows: memory stays near the sample's size, whatever the file
    (a stream is decoded as it is read, from its start, never held whole). A first row one
    field longer than the header makes its first field an index, as in pandas.
    """
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    if not _size_of(stream):
        raise Invalid(f"{what} is an empty file")
    try:
        try:
            return _read_table(stream, what, keep, max_rows, strict=True)
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):  # a quote never closed: pandas refuses it
                raise Invalid(
                    f"{what} is not a valid CSV: a quoted field is never closed"
                ) from None
        return _read_table(stream, what, keep, max_rows, strict=False)  # pandas' lenient quoting
    except UnicodeDecodeError:
        at = _undecodable_byte(stream)
        raise Invalid(f"{what} is not UTF-8 text (byte {at} cannot be decoded)") from None


def _undecodable_byte(stream: BinaryIO) -> int:
    """The offset of the first byte that is not UTF-8 (decoded a chunk at a time)."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    stream.seek(0)
    start = 0
    while True:
        chunk = stream.read(_CHUNK)
        try:
            decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            return max(start + exc.start - len(decoder.getstate()[0]), 0)
        if not chunk:
            return start
        start += len(chunk)


def _read_table(
    stream: BinaryIO, what: str, keep: Sequence[str] | None, max_rows: int | None, strict: bool
) -> Table:
    with _text(stream) as text:
        return _table_of(text, what, keep, max_rows, strict)


@contextlib.contextmanager
def _text(stream: BinaryIO, encoding: str = "utf-8-sig") -> Iterator[io.TextIOWrapper]:
    """``stream`` as text from its start, decoded as it is read; the stream is left open."""
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding=encoding, newline="")
    try:
        yield text
    finally:
        text.detach()


def _table_of(
    text: io.TextIOWrapper,
    what: str,
    keep: Sequence[str] | None,
    max_rows: int | None,
    strict: bool,
) -> Table:
    lines = (row for row in csv.reader(text, strict=strict) if row)
    header = next(lines, None)
    if header is None:
        raise Invalid(f"{what} has no header line")
    width = len(header)
    if keep is not None:
        _check_columns(header, keep)
    names = list(dict.fromkeys(keep if keep is not None else header))
    first = _first_indices(header)
    where = [first[name] for name in names]
    rows: list[list[str]] = []
    offset = 0
    for line, row in enumerate(lines, start=2):
        if line == 2 and len(row) == width + 1:
            offset = 1
        if len(row) > width + offset:
            raise Invalid(f"line {line} of {what} has {len(row)} fields; the header has {width}")
        rows.append([row[i + offset] if i + offset < len(row) else "" for i in where])
        if max_rows is not None and len(rows) > max_rows:
            raise Invalid(f"{what} has more than {max_rows:,} rows; expected {max_rows:,}")
    return Table(names, rows)


def _check_columns(header: list[str], expected: Sequence[str]) -> None:
    present = set(header)
    missing = [name for name in expected if name not in present]
    if missing:
        shown = _cut(f"{missing} (expected {list(expected)})")
        raise Invalid(f"the submission lacks the columns {shown}")


def _canonical(value: str) -> str:
    """A key as a comparable string: ``"7"``, ``" 7"`` and ``"7.0"`` are the same key."""
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number == int(number) and abs(number) < 2**53:
        return str(int(number))
    return text


@functools.lru_cache(maxsize=8)
def _keys_of(sample: str, stamp: tuple[int, int]) -> tuple[str, ...]:
    table = _parse_csv(_read_reference(Path(sample), "the sample submission"), "the sample")
    candidates: dict[str, set[str]] = {}
    for name in dict.fromkeys(table.header):
        values = [_canonical(v) for v in table.column(name)]
        if len(set(values)) == len(values) > 1 and not any(v in MISSING for v in values):
            candidates[name] = set(values)
    found = [name for name, values in candidates.items() if all(_looks_like_id(v) for v in values)]
    for other in sorted(Path(sample).parent.iterdir()):
        if other.name == Path(sample).name or not candidates:
            continue
        if not plain_name(other.name).lower().endswith(".csv"):
            continue
        for name, seen in _columns_of(other, set(candidates) - set(found)).items():
            if seen == candidates[name]:
                found.append(name)
    return tuple(name for name in table.header if name in found)


def _looks_like_id(value: str) -> bool:
    """Text without spaces that is not a number (``0a1b2c``, ``-71_long``): a prediction is
    rarely that, and a sample never fills a prediction column with a distinct one per row."""
    return not _is_number(value) and not any(c.isspace() for c in value)


def key_columns(sample: Path) -> tuple[str, ...]:
    """The sample's key columns, found from the public data next to it (see the module's
    docstring); empty when no other public table names the same values."""
    try:
        info = sample.stat()
        return _keys_of(str(sample), (info.st_mtime_ns, info.st_size))
    except (OSError, Invalid):
        return ()


def _columns_of(table: Path, names: set[str]) -> dict[str, set[str]]:
    """The canonical values of ``names`` in a public CSV (streamed); {} if it cannot be read."""
    try:
        if table.stat().st_size > KEY_TABLE_CAP:
            return {}
        with _open_plain(table) as raw, _text(raw) as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            where = {name: header.index(name) for name in names if name in header}
            if not where:
                return {}
            values: dict[str, set[str]] = {name: set() for name in where}
            for row in reader:
                for name, index in where.items():
                    if index < len(row):
                        values[name].add(_canonical(row[index]))
            return values
    except (Invalid, UnicodeDecodeError, csv.Error, *DECOMPRESS_ERRORS):
        return {}


def _check_key(values: list[str], expected: list[str], name: str) -> None:
    got = Counter(_canonical(v) for v in values)
    want = Counter(_canonical(v) for v in expected)
    if got == want:
        return
    blank = sum(n for value, n in got.items() if value in MISSING)
    if blank:
        raise Invalid(f"{blank} rows of the submission have no {name}")
    twice = [value for value, n in got.items() if n > want.get(value, 0) and value in want]
    if twice:
        raise Invalid(
            f"{name} {_examples(twice[:1])} appears more often than in the sample submission"
        )
    unknown = [value for value in got if value not in want]
    absent = [value for value in want if value not in got]
    raise Invalid(
        f"{len(unknown)} {name} values are not in the sample submission "
        f"(e.g. {_examples(unknown)}) and {len(absent)} of its {name} values are missing "
        f"(e.g. {_examples(absent)})"
    )


def _check_numbers(values: list[str], name: str) -> None:
    for line, value in enumerate(values, start=2):
        if value.strip() not in MISSING and not _is_number(value):
            raise Invalid(
                f"column {name!r} must hold numbers; line {line} has {value.strip()[:40]!r}"
            )


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _examples(values: Sequence[str]) -> str:
    return ", ".join(_cut(repr(v), SHOWN_CHARS) for v in values[:EXAMPLES])


def _cut(text: str, limit: int = MAX_REASON_CHARS // 2) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the agent's command line ------------------------------------------------------------


def install_script(directory: Path) -> Path:
    """Put this file into ``directory`` as the agent's ``validate_submission.py``."""
    target = directory / SCRIPT_NAME
    target.write_bytes(Path(__file__).read_bytes())
    return target


def find_sample(input_dir: Path) -> Path:
    """The one sample submission in ``input_dir`` or a folder below it, by name (see
    ``SAMPLE_PATTERNS``; case does not matter), plain or compressed (``COMPRESSIONS``: a
    compressed copy of a file lying beside it is that file). Raises Invalid when none or several
    match."""
    files = [p for p in [*input_dir.glob("*"), *input_dir.glob("*/*")] if p.is_file()]
    files = [p for p in files if p.name == plain_name(p.name) or
             not (p.parent / plain_name(p.name)).exists()]  # fmt: skip
    for patterns in SAMPLE_PATTERNS:
        found = sorted(
            p
            for p in files
            if any(fnmatch.fnmatch(plain_name(p.name).lower(), pat) for pat in patterns)
        )
        if len(found) == 1:
            return found[0]
        if found:
            named = ", ".join(str(p) for p in found)
            raise Invalid(f"cannot tell the sample submission in {input_dir} (found: {named})")
    raise Invalid(f"cannot tell the sample submission in {input_dir} (found: none)")


def validate(
    submission: str | Path = "./submission/submission.csv", sample: str | Path | None = None
) -> tuple[bool, str]:
    """For the agent's code: ``(True, "")`` or ``(False, reason)``. Format only, never a score."""
    try:
        sample_path = Path(sample) if sample else find_sample(Path("./input"))
    except Invalid as exc:
        return False, f"{exc}; pass the sample's path"
    reason = check(Path(submission), sample_path)
    return reason is None, reason or ""


# --- a holdout's split: a submission's rows parted by their id ----------------------------


def id_key(value: str) -> str:
    """An id as a split compares it: an ASCII integer (``7``, ``+7``, ``7.0``) as its
    integer, anything else as its text without surrounding spaces."""
    text = value.strip()
    if INTEGER_ID.fullmatch(text):
        return str(int(text.split(".")[0]))
    return text


def split_by_id(
    source: BinaryIO,
    column: str,
    held: AbstractSet[str],
    max_rows: int,
    own: BinaryIO,
    held_out: BinaryIO,
) -> None:
    """Write the rows of the submission in ``source`` whose ``column`` holds one of the
    ``held`` keys (:func:`id_key`) to ``held_out``, the others to ``own``, each part under the
    submission's header, its cells as they were read. Raises Invalid, with the reason, when
    the file cannot be split: no single ``column``, a row longer than its header, more than
    ``max_rows`` rows (said as soon as row ``max_rows + 1`` is read), a held key missing or
    repeated. Streamed: memory holds one row and the held keys seen, never the file."""
    with contextlib.ExitStack() as stack:  # one ``with`` per stream: Python 3.8 reads this file
        text = stack.enter_context(_text(source))
        own_text = stack.enter_context(_text(own, "utf-8"))
        held_text = stack.enter_context(_text(held_out, "utf-8"))
        try:
            seen = _split_rows(
                (row for row in csv.reader(text) if row),
                column,
                held,
                max_rows,
                (
                    csv.writer(own_text, lineterminator="\n"),
                    csv.writer(held_text, lineterminator="\n"),
                ),
            )
        except (UnicodeDecodeError, csv.Error) as exc:
            raise Invalid(f"the submission cannot be read as CSV text: {str(exc)[:200]}") from None
    if missing := len(held) - len(seen):
        raise Invalid(f"the submission has no row for {missing} of the test.csv ids: it must "
                      "predict every row of test.csv")  # fmt: skip
    if repeated := sum(n > 1 for n in seen.values()):
        raise Invalid(f"the submission repeats {repeated} of the test.csv ids")


def _split_rows(
    rows: Iterator[list[str]],
    column: str,
    held: AbstractSet[str],
    max_rows: int,
    writers: tuple[Any, Any],
) -> Counter[str]:
    """The held keys seen, each with its rows' count; the rows written as they come."""
    header = next(rows, None)
    if header is None or header.count(column) != 1:
        raise Invalid(f"the submission needs one {column!r} column")
    width, at = len(header), header.index(column)
    own, held_out = writers
    own.writerow(header)
    held_out.writerow(header)
    seen: Counter[str] = Counter()
    for line, row in enumerate(rows, start=2):
        if len(row) > width:
            raise Invalid(f"line {line} of the submission has more fields than its header")
        if line - 1 > max_rows:
            raise Invalid(too_many_rows(max_rows))
        key = id_key(row[at]) if len(row) > at else None
        if key is not None and key in held:
            seen[key] += 1
            held_out.writerow(row)
        else:
            own.writerow(row)
    return seen


# --- the host's child process -------------------------------------------------------------


def check_in_child(
    source: bytes | BinaryIO,
    sample: Path,
    max_bytes: int,
    keys: Sequence[str] | None,
    timeout_s: float,
) -> str | None:
    """The structural check of ``source`` (bytes, or a file open on it: the child reads the
    file itself, so the host holds none of it) in a child process (see :func:`_ask_child`).
    Raises :class:`Unchecked` when it cannot say (the deadline, its memory, a crash): that is
    the child's fault, never the file's verdict."""
    keys = list(key_columns(sample) if keys is None else keys)
    memory = CHILD_MEMORY_BYTES + 8 * (_size_of(source) + _plain_size(sample))  # UCS-4 fields
    request = {"task": "check", "sample": str(sample), "max_bytes": max_bytes, "keys": keys}
    return _ask_child(request, source, memory, timeout_s)


def split_in_child(
    source: BinaryIO,
    column: str,
    ids_file: Path,
    max_rows: int,
    parts: tuple[BinaryIO, BinaryIO],
    timeout_s: float = SPLIT_TIMEOUT_S,
) -> str | None:
    """:func:`split_by_id` in a child process: the submission open in ``source``, the held
    ids in ``ids_file`` (a JSON object whose ``ids`` member lists them), the parts (own, held)
    written into the two files open for writing in ``parts``. None when split, else why it
    cannot be; raises :class:`Unchecked` when the child cannot say (its deadline, memory)."""
    own, held = (part.fileno() for part in parts)
    memory = CHILD_MEMORY_BYTES + 8 * _size_of(source) + 32 * _size(ids_file)
    request = {"task": "split", "column": column, "ids_file": str(ids_file),
               "max_rows": max_rows, "own": own, "held": held}  # fmt: skip
    return _ask_child(request, source, memory, timeout_s, pass_fds=(own, held))


def _ask_child(
    request: dict[str, Any],
    source: bytes | BinaryIO,
    memory: int,
    timeout_s: float,
    pass_fds: tuple[int, ...] = (),
) -> str | None:
    """Run ``request`` in this file as a child (``python -I -S``: the standard library only),
    its address space limited to ``memory`` bytes, killed at ``timeout_s``; the submission on
    its stdin: piped bytes, or the open file itself (read from its start). Returns the child's
    reason (None: it passed); raises :class:`Unchecked` when the child gave none."""
    command = [sys.executable, "-I", "-S", str(Path(__file__).resolve()), HOST_FLAG,
               json.dumps({**request, "memory": memory})]  # fmt: skip
    piped, stdin = (source, subprocess.PIPE) if isinstance(source, bytes) else (None, source)
    if not isinstance(stdin, int):
        stdin.seek(0)
    try:
        proc = subprocess.Popen(
            command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            pass_fds=pass_fds,
        )  # fmt: skip
    except OSError as exc:
        raise Unchecked(f"the {request['task']} could not start: {exc.strerror}") from None
    try:
        out, _ = proc.communicate(piped, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Unchecked(f"the {request['task']} did not finish within {timeout_s:g} s") from None
    try:
        reply = json.loads(out.decode("utf-8").strip().splitlines()[-1])
        if not isinstance(reply, dict):
            raise ValueError(reply)
    except (ValueError, IndexError):
        raise Unchecked(
            f"the {request['task']}'s process ended without a verdict (exit {proc.returncode})"
        ) from None
    if reply.get("unchecked"):
        raise Unchecked(str(reply["unchecked"]))
    reason = reply.get("reason")
    return None if reason is None else str(reason)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _host_child(request: str) -> int:
    """The child's side: the request in ``argv``, the submission on stdin, one JSON line out:
    ``{"reason": null | "..."}`` or ``{"unchecked": "..."}``."""
    import resource

    config = json.loads(request)
    memory = int(config["memory"])
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ValueError, OSError):
        pass  # a lower limit is in place already
    try:
        stdin = sys.stdin.buffer
        source = stdin if stdin.seekable() else io.BytesIO(stdin.read())
        if config["task"] == "split":
            _split_request(source, config)
        else:
            _check(source, Path(config["sample"]), int(config["max_bytes"]), config["keys"])
        reply: dict[str, str | None] = {"reason": None}
    except Invalid as exc:
        reply = {"reason": _reason(exc)}
    except MemoryError:
        reply = {"unchecked": f"the {config['task']} ran out of memory"}
    except RecursionError:
        reply = {"unchecked": f"the {config['task']} ran out of stack"}
    print(json.dumps(reply))
    return 0


def _split_request(source: BinaryIO, config: dict[str, Any]) -> None:
    with open(config["ids_file"], encoding="utf-8") as fh:
        held = {id_key(str(i)) for i in json.load(fh)["ids"]}
    with os.fdopen(int(config["own"]), "wb") as own, os.fdopen(int(config["held"]), "wb") as out:
        split_by_id(source, str(config["column"]), held, int(config["max_rows"]), own, out)


def main(argv: Sequence[str]) -> int:
    """``python validate_submission.py [SUBMISSION] [SAMPLE]``: prints one line, exit 0 if valid."""
    if len(argv) == 2 and argv[0] == HOST_FLAG:  # the host's child (``_ask_child``)
        return _host_child(argv[1])
    if len(argv) > 2 or any(arg.startswith("-") for arg in argv):
        print("usage: python validate_submission.py [SUBMISSION [SAMPLE_SUBMISSION]]")
        return 2
    ok, reason = validate(*argv)
    print("valid_submission: true" if ok else f"valid_submission: false ({reason})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
