"""How the baseline reads a table: the format sniffed from the file, read the same way by the
analysis (heads only) and by the generated script (the expression ``read_source`` writes), and
a comma CSV read exactly as it always was."""

from __future__ import annotations

import contextlib
import gzip
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podium.scaffolds.baseline import analysis, tables
from podium.scaffolds.baseline.specs import TableFormat, TabularSpec, Unsupported
from tests.scaffolds.baseline import synthetic

FRAME = pd.DataFrame(
    {
        "id": range(6),
        "city": ["Oslo", "Lyon", "Oslo", "Rome", "Lyon", "Rome"],
        "note": ["a, b", "c; d", "e", "f | g", "h", "i"],  # separators inside quoted cells
        "price": [1.5, 2.0, np.nan, 4.25, 5.0, 6.5],
    }
)


Writer = Callable[[Path, pd.DataFrame], None]


def _csv(sep: str) -> Writer:
    return lambda path, frame: frame.to_csv(path, sep=sep, index=False)


def _gzip(path: Path, frame: pd.DataFrame) -> None:
    with gzip.open(path, "wt") as handle:
        frame.to_csv(handle, sep=";", index=False)


def _zip(path: Path, frame: pd.DataFrame) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("inside/train.csv", frame.to_csv(index=False))


def _json(lines: bool) -> Writer:
    return lambda path, frame: frame.to_json(path, orient="records", lines=lines)


WRITERS: dict[str, tuple[Writer, TableFormat]] = {
    "t.csv": (_csv(","), TableFormat("csv", ",")),
    "semicolon.csv": (_csv(";"), TableFormat("csv", ";")),
    "tab.csv": (_csv("\t"), TableFormat("csv", "\t")),
    "pipe.csv": (_csv("|"), TableFormat("csv", "|")),
    "t.tsv": (_csv("\t"), TableFormat("csv", "\t")),
    "records.json": (_json(lines=False), TableFormat("json")),
    "lines.json": (_json(lines=True), TableFormat("jsonl")),
    "t.jsonl": (_json(lines=True), TableFormat("jsonl")),
    "t.csv.gz": (_gzip, TableFormat("csv", ";")),
    "t.zip": (_zip, TableFormat("csv", ",")),
    "t.parquet": (lambda path, frame: frame.to_parquet(path, index=False), TableFormat("parquet")),
}


@pytest.mark.parametrize("name", WRITERS)
def test_each_format_is_sniffed_and_read_alike_here_and_in_the_script(
    name: str, tmp_path: Path
) -> None:
    write, expected = WRITERS[name]
    (tmp_path / "input").mkdir()
    path = tmp_path / "input" / name
    write(path, FRAME)
    assert tables.is_table(path)
    fmt = tables.sniff(path)
    assert fmt == expected
    pd.testing.assert_frame_equal(tables.read(path, fmt), FRAME, check_dtype=False)
    pd.testing.assert_frame_equal(tables.read(path, fmt, rows=2), FRAME.head(2), check_dtype=False)
    with contextlib.chdir(tmp_path):  # the script's view: ./input/<name>
        scripted = eval(tables.read_source(name, fmt), {"pd": pd})
    pd.testing.assert_frame_equal(scripted, FRAME, check_dtype=False)
    assert tables.count_rows(path, fmt) == len(FRAME)
    assert tables.distinct(path, fmt, ["city"])["city"].tolist() == ["Lyon", "Oslo", "Rome"]


def test_rows_are_counted_with_or_without_a_last_line_break(tmp_path: Path) -> None:
    for text in ("a,b\n1,2\n3,4\n", "a,b\n1,2\n3,4"):
        (tmp_path / "t.csv").write_text(text)
        assert tables.count_rows(tmp_path / "t.csv", tables.CSV) == 2


def test_a_comma_csv_is_read_as_it_always_was() -> None:
    assert tables.read_source("train.csv", tables.CSV) == 'pd.read_csv("./input/train.csv")'
    assert tables.read_source("t.csv", TableFormat("csv", ";")) == (
        "pd.read_csv(\"./input/t.csv\", sep=';')"
    )


def test_files_that_are_not_tables_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / "description.md").write_text("# task\n")
    with zipfile.ZipFile(tmp_path / "images.zip", "w") as archive:
        archive.writestr("train/a.png", b"")
        archive.writestr("train/b.png", b"")
    FRAME.to_csv(tmp_path / "train.csv", index=False)
    with zipfile.ZipFile(tmp_path / "train.zip", "w") as archive:  # a copy of train.csv
        archive.write(tmp_path / "train.csv", "train.csv")
    found = sorted(p.name for p in tmp_path.iterdir() if tables.is_table(p))
    assert found == ["train.csv"]


def test_a_file_pandas_cannot_read_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "train.csv.gz").write_bytes(b"not gzip at all")
    with pytest.raises(Unsupported, match=r"^train\.csv\.gz cannot be opened \(BadGzipFile\)"):
        tables.sniff(tmp_path / "train.csv.gz")
    (tmp_path / "test.json").write_text('[{"id": 1}, {"id": ')
    with pytest.raises(Unsupported, match=r"^test\.json cannot be read as a json table \(") as e:
        tables.read(tmp_path / "test.json", tables.sniff(tmp_path / "test.json"))
    assert "\n" not in str(e.value)


def test_an_unreadable_file_beside_the_data_is_left_out(tmp_path: Path) -> None:
    task = synthetic.adult(tmp_path)
    (task.public_dir / "metadata.json").write_text('{"version": 2, "source": "census"')
    assert analysis.analyse(task.public_dir, task.metric_name).kind == "tabular"
    (task.public_dir / "test.csv").write_bytes(b"\xff\xfe\x00bad")  # the test table itself
    with pytest.raises(Unsupported, match=r"^test\.csv cannot be read as a csv table"):
        analysis.analyse.__wrapped__(task.public_dir, task.metric_name)


def test_parquet_without_pyarrow_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "train.parquet"
    FRAME.to_parquet(path, index=False)
    monkeypatch.setattr(tables, "PARQUET_ENGINE", "pyarrow_is_not_installed_here")
    with pytest.raises(Unsupported, match=r"^train\.parquet .*needs pyarrow.*podium\[parquet\]"):
        tables.sniff(path)


@pytest.mark.parametrize("name", WRITERS)
def test_a_sampled_read_keeps_a_share_of_every_chunk(name: str, tmp_path: Path) -> None:
    """A script fitting on a sample reads the file in chunks (here 1,000 rows each) and keeps
    about the same share of each: rows from the whole file, never the whole file at once (a
    JSON document, which cannot be read in parts: the same share of the whole)."""
    write, fmt = WRITERS[name]
    big = pd.concat([FRAME] * 1000, ignore_index=True).assign(id=range(6000))
    (tmp_path / "input").mkdir()
    write(tmp_path / "input" / name, big)
    sample = tables.RowSample(keep=600, rows=6000, width=10_000)
    assert sample.chunk == 1000
    with contextlib.chdir(tmp_path):
        kept = eval(tables.read_source(name, fmt, sample), {"pd": pd})
    assert 600 <= len(kept) <= 620  # a share of 1.02 * 600 / 6000 of each chunk, then capped
    assert list(kept.columns) == list(FRAME.columns)
    assert kept["id"].is_unique and kept["id"].between(0, 5999).all()
    chunks = set(kept["id"] // 1000)
    assert chunks == set(range(6))  # every chunk gave rows


def test_a_json_document_too_big_to_parse_whole_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "train.json"
    FRAME.to_json(path, orient="records")
    monkeypatch.setattr(tables, "JSON_DOCUMENT_BYTES", path.stat().st_size - 1)
    with pytest.raises(Unsupported, match=r"^train\.json is a JSON document .* JSON lines"):
        tables.sniff(path)
    FRAME.to_json(path, orient="records", lines=True)  # the same rows as JSON lines are read
    assert tables.sniff(path) == TableFormat("jsonl")


def test_the_analysis_reads_only_the_head_of_a_big_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows past the head are never parsed here (a malformed one at the end would fail a whole
    read), and the row count still covers the whole file."""
    task = synthetic.adult(tmp_path)
    train = task.public_dir / "train.csv"
    rows = len(pd.read_csv(train))
    with train.open("a") as handle:
        handle.write("999,1,2,3,4,5,6,7,8,9\n")  # too many fields: a whole read raises
    with pytest.raises(pd.errors.ParserError):
        pd.read_csv(train)
    monkeypatch.setattr(analysis, "ANALYSIS_ROWS", 50)
    spec = analysis.analyse.__wrapped__(task.public_dir, task.metric_name)
    assert isinstance(spec, TabularSpec)
    assert spec.rows == rows + 1 and spec.target == "income"
