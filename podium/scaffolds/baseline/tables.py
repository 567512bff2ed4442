"""How a public table is read: one owner for the analysis (which reads heads and samples) and
for the generated scripts (which read the expression :func:`read_source` writes).

A file is a table when pandas can read it: CSV with any of ``,`` ``;`` tab ``|`` as separator
(sniffed from the header line), ``.tsv``, JSON (an array of records, or one record per line),
``.jsonl``/``.ndjson``, Parquet (with pyarrow: ``pip install 'podium[parquet]'``), any of those
compressed (``.gz``, ``.bz2``, ``.xz``) and a ``.zip`` archive holding one such file (skipped when
that file also lies unzipped beside it). A comma CSV is read with ``pd.read_csv(path)`` and
nothing else, so the scripts of plain CSV tasks stay what they always were.

A script that fits on a sample of the training rows (:class:`RowSample`) never holds the whole
file: it reads it in chunks of about ``CHUNK_CELLS`` values and keeps a share of each, so a table
far beyond the kernel's memory (the taxi-fare competition's 21.5 M rows) is read in tens of MB.
A JSON document cannot be read in parts; one above ``JSON_DOCUMENT_BYTES`` is refused, with the
JSON-lines form that can be, rather than read whole on the host or in the kernel.
"""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import json
import lzma
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

import pandas as pd

from podium.scaffolds.baseline.specs import TableFormat, Unsupported

SEPARATORS = (",", ";", "\t", "|")
CSV_SUFFIXES = (".csv", ".tsv")
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet", ".pq")
COMPRESSIONS = (".gz", ".bz2", ".xz")
SNIFF_BYTES = 65_536  # the header line is found in this much of a file's start
PARQUET_ENGINE = "pyarrow"  # the ``parquet`` extra; it also reads a file's head and row count
PARQUET_HINT = "install podium's parquet extra (pip install 'podium[parquet]')"
JSON_DOCUMENT_BYTES = 256 * 1024**2
"""A JSON document (an array of records) is parsed whole, on the host and in the kernel, at about
ten times its size in memory: larger ones are refused."""
CHUNK_CELLS = 1_000_000
"""Values a sampled read parses at once. Measured (perf/README.md): a 2 M-row, 8-column CSV read
in 125,000-row chunks took 2.1 s and 150 MB at peak, against 1.9 s and 800 MB read whole."""


CSV = TableFormat()


def _inner_name(path: Path) -> str | None:
    """The one file a ``.zip`` holds (None: not exactly one file, or unreadable)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
    except (zipfile.BadZipFile, OSError):
        return None
    names = [n for n in names if not n.startswith("__MACOSX/")]
    return names[0] if len(names) == 1 else None


def _plain_suffix(name: str) -> str:
    """The suffix that says the format, under any compression suffix (``a.csv.gz``: .csv)."""
    lower = name.lower()
    for suffix in COMPRESSIONS:
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
    return Path(lower).suffix


def is_table(path: Path) -> bool:
    """Whether the file is a table this module reads (by name; a zip: by the file it holds)."""
    if not path.is_file():
        return False
    if path.suffix.lower() == ".zip":
        inner = _inner_name(path)
        return (
            inner is not None
            and not (path.parent / Path(inner).name).exists()
            and (_plain_suffix(inner) in (*CSV_SUFFIXES, *JSON_SUFFIXES))
        )
    return _plain_suffix(path.name) in (*CSV_SUFFIXES, *JSON_SUFFIXES, *PARQUET_SUFFIXES)


def _open(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed."""
    if path.suffix.lower() == ".zip":
        archive = zipfile.ZipFile(path)
        inner = _inner_name(path)
        assert inner is not None
        return archive.open(inner)
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    if suffix == ".bz2":
        return cast(IO[bytes], bz2.open(path, "rb"))
    if suffix == ".xz":
        return cast(IO[bytes], lzma.open(path, "rb"))
    return path.open("rb")


def _start(path: Path) -> str:
    with _open(path) as handle:
        return handle.read(SNIFF_BYTES).decode("utf-8-sig", errors="replace")


def _separator(header: str, default: str) -> str:
    """The separator the header line uses most (the default on a tie or when none is used)."""
    counts = {sep: header.count(sep) for sep in SEPARATORS}
    best = max(counts.values())
    if best == 0 or counts[default] == best:
        return default
    return max(SEPARATORS, key=lambda sep: counts[sep])


def _json_lines(start: str) -> bool:
    """One JSON record per line (rather than one JSON document)."""
    first = start.lstrip().split("\n", 1)[0].strip()
    if not first.startswith("{"):
        return False
    try:
        return isinstance(json.loads(first), dict)
    except ValueError:
        return False


def sniff(path: Path) -> TableFormat:
    """How the table at ``path`` is read. Raises Unsupported for Parquet without pyarrow and for
    a JSON document too big to parse whole."""
    name = (_inner_name(path) or path.name) if path.suffix.lower() == ".zip" else path.name
    suffix = _plain_suffix(name)
    if suffix in PARQUET_SUFFIXES:
        if importlib.util.find_spec(PARQUET_ENGINE) is None:
            raise Unsupported(
                f"{path.name} is a Parquet table, and reading it needs pyarrow, which is not "
                f"installed: {PARQUET_HINT}, or provide the table as CSV"
            )
        return TableFormat("parquet")
    try:
        start = _start(path)
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as exc:
        raise Unsupported(
            f"{path.name} cannot be opened ({type(exc).__name__}): the baseline needs tables "
            "pandas can read"
        ) from exc
    if suffix in JSON_SUFFIXES:
        fmt = TableFormat("jsonl" if suffix != ".json" or _json_lines(start) else "json")
        if fmt.reader == "json" and path.stat().st_size > JSON_DOCUMENT_BYTES:
            raise Unsupported(
                f"{path.name} is a JSON document of {path.stat().st_size // 1024**2} MB, which "
                "can only be parsed whole: the baseline reads JSON documents up to "
                f"{JSON_DOCUMENT_BYTES // 1024**2} MB, and larger tables as JSON lines (one "
                "record per line) or CSV"
            )
        return fmt
    header = start.split("\n", 1)[0]
    return TableFormat("csv", _separator(header, "\t" if suffix == ".tsv" else ","))


def read(path: Path, fmt: TableFormat, rows: int | None = None) -> pd.DataFrame:
    """The table (its first ``rows`` rows when given), read as the generated scripts read it.
    Raises Unsupported, in one line, for a file pandas cannot parse."""
    try:
        return _read(path, fmt, rows)
    except ValueError as exc:  # parser errors, bad encodings, empty files, malformed JSON
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Unsupported(
            f"{path.name} cannot be read as a {fmt.reader} table ({reason[:120]}): the baseline "
            "needs tables pandas can read"
        ) from exc


def _read(path: Path, fmt: TableFormat, rows: int | None) -> pd.DataFrame:
    if fmt.reader == "csv":
        return pd.read_csv(path, sep=fmt.sep, nrows=rows)
    if fmt.reader == "jsonl":
        return pd.read_json(path, lines=True, nrows=rows)
    if fmt.reader == "parquet":
        return _parquet_head(path, rows)
    whole = pd.read_json(path)
    return whole if rows is None else whole.head(rows)


def _parquet_head(path: Path, rows: int | None) -> pd.DataFrame:
    """The first ``rows`` rows (all of them: None) of a Parquet file, reading no further."""
    import pyarrow.parquet as pq  # the parquet extra; sniff checked that it is installed

    table = pq.ParquetFile(path)
    if rows is None:
        return cast(pd.DataFrame, table.read().to_pandas())
    batch = next(table.iter_batches(batch_size=max(rows, 1)), None)
    head = table.schema_arrow.empty_table() if batch is None else batch
    return cast(pd.DataFrame, head.to_pandas())


@dataclass(frozen=True)
class RowSample:
    """A script keeps about ``keep`` of the ``rows`` rows of a ``width``-column table."""

    keep: int
    rows: int
    width: int

    @property
    def share(self) -> float:
        """The share of each chunk kept: a little over keep / rows, so that the script's cap
        (``keep`` rows exactly) is what decides the count."""
        return min(1.0, round(1.02 * self.keep / max(self.rows, 1) + 1e-6, 6))

    @property
    def chunk(self) -> int:
        return max(1_000, CHUNK_CELLS // max(self.width, 1))


def row_sample(keep: int, rows: int, width: int) -> RowSample | None:
    """A sized script's sample of ``keep`` of a table's ``rows`` rows of about ``width`` values
    each (a long text counts as several); None when it keeps every row (the file read whole)."""
    return RowSample(keep, rows, width) if 0 < keep < rows else None


def read_source(name: str, fmt: TableFormat, sample: RowSample | None = None) -> str:
    """The expression a generated script reads ``./input/<name>`` with: the whole table, or,
    for a ``sample``, a share of each chunk as it is read (a JSON document: of the whole)."""
    path = f'"./input/{name}"'
    if sample is not None and fmt.reader != "json":
        parts = _chunks_source(path, fmt, sample.chunk)
        keep = f"part.sample(frac={sample.share}, random_state=i)"
        return f"pd.concat([{keep} for i, part in enumerate({parts})], ignore_index=True)"
    if fmt.reader == "csv":
        whole = (
            f"pd.read_csv({path})" if fmt.sep == "," else f"pd.read_csv({path}, sep={fmt.sep!r})"
        )
    elif fmt.reader == "jsonl":
        whole = f"pd.read_json({path}, lines=True)"
    else:
        whole = f"pd.read_{fmt.reader}({path})"
    return whole if sample is None else f"{whole}.sample(frac={sample.share}, random_state=0)"


def _chunks_source(path: str, fmt: TableFormat, rows: int) -> str:
    """An expression that yields the table's rows ``rows`` at a time, as frames."""
    if fmt.reader == "csv":
        sep = "" if fmt.sep == "," else f", sep={fmt.sep!r}"
        return f"pd.read_csv({path}{sep}, chunksize={rows})"
    if fmt.reader == "jsonl":
        return f"pd.read_json({path}, lines=True, chunksize={rows})"
    batches = f'__import__("pyarrow.parquet").parquet.ParquetFile({path})'
    return f"(b.to_pandas() for b in {batches}.iter_batches(batch_size={rows}))"


def distinct(path: Path, fmt: TableFormat, columns: list[str]) -> dict[str, pd.Series]:
    """Each of ``columns``' distinct values over the whole table, read ``CHUNK_CELLS`` values
    at a time: what a head cannot tell of a table too big to read whole here (its series)."""
    found: dict[str, set[object]] = {c: set() for c in columns}
    for part in _chunks(path, fmt, columns, max(1_000, CHUNK_CELLS // len(columns))):
        for column in columns:
            found[column].update(part[column].dropna().unique())
    return {c: pd.Series(sorted(found[c], key=str)) for c in columns}


def _chunks(path: Path, fmt: TableFormat, columns: list[str], rows: int) -> Iterator[pd.DataFrame]:
    """The table's ``columns``, ``rows`` rows at a time."""
    if fmt.reader == "csv":
        yield from pd.read_csv(path, sep=fmt.sep, usecols=columns, chunksize=rows)
    elif fmt.reader == "jsonl":
        for part in pd.read_json(path, lines=True, chunksize=rows):
            yield part[columns]
    elif fmt.reader == "parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=rows, columns=columns):
            yield cast(pd.DataFrame, batch.to_pandas())
    else:
        yield read(path, fmt)[columns]


def count_rows(path: Path, fmt: TableFormat) -> int:
    """The number of rows, by counting lines (CSV, JSON lines) without parsing the file: for
    tables too big to read whole here. A CSV whose quoted cells hold line breaks counts more."""
    if fmt.reader == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    if fmt.reader == "json":
        return len(read(path, fmt))
    lines, last = 0, b"\n"
    with _open(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            lines, last = lines + block.count(b"\n"), block[-1:]
    lines += last != b"\n"  # a last line without its line break
    return lines - (1 if fmt.reader == "csv" else 0)
