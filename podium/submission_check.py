"""Format-only submission check: is this CSV shaped like the sample submission? Never a score.

The same file serves two sides. On the host, the loop checks every node's submission with
:func:`check`. Inside the sandbox, a copy of this file sits in the solution's working directory
as ``validate_submission.py``, so the agent's code can check its own submission before it
finishes (``python validate_submission.py`` or ``from validate_submission import validate``)
— the format validator MLE-bench gives its agents. It compares the submission with the public
sample submission only, so it cannot leak anything about the private answers: it says
``valid_submission: true`` or ``false`` with one line of reason, never how good the predictions
are.

It therefore uses the standard library only (no pandas): it must run under whatever interpreter
the solutions use, and it must never crash on hostile input. On the host the submission is
passed as bytes, read by the caller through ``podium.untrusted`` (this file cannot import it);
a path is read here only inside the sandbox, where the file is the solution's own. Checks, in
order: the file exists, is not empty and not huge (a size cap checked before reading), is UTF-8
text and parses as CSV; its header has the sample's columns (in any order), no more; every row
has every field; one row per sample id (none missing, repeated or unknown); no missing values;
numbers where the sample has numbers.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

MIN_SIZE_CAP = 100 * 1024 * 1024  # bytes; a submission may always be this big
SIZE_CAP_FACTOR = 20  # ... or this many times the sample submission, if that is more
MISSING = {"", "nan", "NaN", "NAN", "NA", "N/A", "null", "NULL", "None", "<NA>"}  # pandas' NaNs
SAMPLE_PATTERNS = ("*sample*submission*.csv", "*Sample*Submission*.csv", "*SAMPLE*.csv")
EXAMPLES = 3
SCRIPT_NAME = "validate_submission.py"  # this file's name in the solution's working directory


class Invalid(Exception):
    """The submission's format is wrong; the message is the one-line reason."""


def check(submission: Path | bytes, sample: Path, max_bytes: int | None = None) -> str | None:
    """``None`` when ``submission`` (a path, or its bytes) has the format of ``sample``, else
    the first problem found.

    ``max_bytes`` caps the submission's size (default: ``size_cap(sample)``); a larger file is
    refused before a byte of it is read.
    """
    try:
        _check(submission, Path(sample), max_bytes)
    except Invalid as exc:
        return str(exc)
    return None


def _check(submission: Path | bytes, sample: Path, max_bytes: int | None) -> None:
    expected_header, expected_rows = _parse_csv(_read(sample, "the sample submission", None),
                                                "the sample submission")  # fmt: skip
    cap = max_bytes if max_bytes is not None else size_cap(sample)
    data = submission if isinstance(submission, bytes) else _read(submission, "the submission", cap)
    if len(data) > cap:
        raise Invalid(
            f"the submission is {len(data):,} bytes, over the {cap:,}-byte limit for this task"
        )
    header, rows = _parse_csv(data, "the submission")
    _check_columns(header, expected_header)
    order = [header.index(name) for name in expected_header]
    rows = [[row[i] for i in order] for row in rows]
    _check_ids(rows, expected_rows, expected_header[0])
    for column in range(1, len(expected_header)):
        _check_values(rows, expected_rows, column, expected_header[column])


def size_cap(sample: Path) -> int:
    """The largest submission read for a task: 100 MiB, or 20 times its sample if more."""
    return max(MIN_SIZE_CAP, SIZE_CAP_FACTOR * sample.stat().st_size)


def _read(path: Path, what: str, cap: int | None) -> bytes:
    """A file's bytes; raises Invalid with the reason it cannot be read."""
    try:
        size = path.stat().st_size
    except OSError:
        raise Invalid(f"{what} {path} does not exist") from None
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


def _parse_csv(data: bytes, what: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV; raises Invalid with the reason it cannot be read."""
    if not data:
        raise Invalid(f"{what} is an empty file")
    if b"\x00" in data:
        raise Invalid(f"{what} is not a text CSV (it holds binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Invalid(f"{what} is not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    try:
        table = [row for row in csv.reader(io.StringIO(text, newline="")) if row]
    except csv.Error as exc:
        raise Invalid(f"{what} is not a valid CSV: {exc}") from None
    if not table:
        raise Invalid(f"{what} has no header line")
    header = [name.strip() for name in table[0]]
    for line, row in enumerate(table[1:], start=2):
        if len(row) != len(header):
            raise Invalid(
                f"line {line} of {what} has {len(row)} fields; the header has {len(header)}"
            )
    return header, table[1:]


def _check_columns(header: list[str], expected: list[str]) -> None:
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise Invalid(f"the submission repeats the columns {repeated}")
    missing = [name for name in expected if name not in header]
    extra = [name for name in header if name not in expected]
    if missing or extra:
        parts = [f"lacks the columns {missing}"] if missing else []
        parts += [f"has unexpected columns {extra}"] if extra else []
        raise Invalid(f"the submission {' and '.join(parts)} (expected {expected})")


def _canonical(value: str) -> str:
    """An id as a comparable string: ``"7"``, ``" 7"`` and ``"7.0"`` are the same id."""
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number == int(number) and abs(number) < 2**53:
        return str(int(number))
    return text


def _check_ids(rows: list[list[str]], expected_rows: list[list[str]], id_column: str) -> None:
    if len(rows) != len(expected_rows):
        raise Invalid(
            f"the submission has {len(rows):,} rows; expected {len(expected_rows):,} "
            "(one per row of the sample submission)"
        )
    expected = [_canonical(row[0]) for row in expected_rows]
    if len(set(expected)) != len(expected):
        return  # several rows per id in this task's format: the row count is all we can check
    known = set(expected)
    seen: dict[str, int] = {}
    for line, row in enumerate(rows, start=2):
        ident = _canonical(row[0])
        if ident in MISSING:
            raise Invalid(f"line {line} of the submission has no {id_column}")
        if ident in seen:
            raise Invalid(
                f"{id_column} {row[0].strip()!r} appears twice (lines {seen[ident]} and {line})"
            )
        seen[ident] = line
    unknown = [ident for ident in seen if ident not in known]
    if unknown:
        absent = [ident for ident in expected if ident not in seen]
        raise Invalid(
            f"{len(unknown)} {id_column} values are not in the sample submission "
            f"(e.g. {_examples(unknown)}) and {len(absent)} of its ids are missing "
            f"(e.g. {_examples(absent)})"
        )


def _check_values(
    rows: list[list[str]], expected_rows: list[list[str]], column: int, name: str
) -> None:
    blank = [line for line, value in _cells(rows, column) if value.strip() in MISSING]
    if blank:
        raise Invalid(f"column {name!r} has {len(blank)} missing values (first on line {blank[0]})")
    if not all(_is_number(row[column]) for row in expected_rows):
        return  # the sample holds text here (labels, encoded masks): any text is a format match
    for line, value in _cells(rows, column):
        if not _is_number(value):
            raise Invalid(
                f"column {name!r} must hold numbers; line {line} has {value.strip()[:40]!r}"
            )
        if not math.isfinite(float(value)):
            raise Invalid(f"column {name!r} must hold finite numbers; line {line} has {value!r}")


def _cells(rows: list[list[str]], column: int) -> Iterator[tuple[int, str]]:
    for line, row in enumerate(rows, start=2):
        yield line, row[column]


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _examples(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values[:EXAMPLES])


# --- the agent's command line ------------------------------------------------------------


def install_script(directory: Path) -> Path:
    """Put this file into ``directory`` as the agent's ``validate_submission.py``."""
    target = directory / SCRIPT_NAME
    target.write_bytes(Path(__file__).read_bytes())
    return target


def find_sample(input_dir: Path) -> Path:
    """The one sample submission under ``input_dir`` (searched two levels deep)."""
    found: set[Path] = set()
    for pattern in SAMPLE_PATTERNS:
        found.update(p for p in input_dir.glob(pattern) if p.is_file())
        found.update(p for p in input_dir.glob(f"*/{pattern}") if p.is_file())
    if len(found) != 1:
        named = ", ".join(sorted(str(p) for p in found)) or "none"
        raise Invalid(f"cannot tell the sample submission in {input_dir} (found: {named})")
    return found.pop()


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


def main(argv: Sequence[str]) -> int:
    """``python validate_submission.py [SUBMISSION] [SAMPLE]``: prints one line, exit 0 if valid."""
    if len(argv) > 2 or any(arg.startswith("-") for arg in argv):
        print("usage: python validate_submission.py [SUBMISSION [SAMPLE_SUBMISSION]]")
        return 2
    ok, reason = validate(*argv)
    print("valid_submission: true" if ok else f"valid_submission: false ({reason})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
