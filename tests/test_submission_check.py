"""The format-only submission check: broken submissions get ``valid_submission: false`` and one
line of reason, never a crash and never a score; it runs on its own, as the agent runs it."""

from __future__ import annotations

import asyncio
import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from podium import submission_check
from podium.benchmarks.folder import FolderTask
from podium.submission_check import check, validate

SAMPLE = "id,label,prob\n1,cat,0.5\n2,cat,0.5\n3,cat,0.5\n4,cat,0.5\n"
GOOD = "id,label,prob\n1,dog,0.9\n2,cat,0.1\n3,dog,0.75\n4,cat,1e-3\n"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample_submission.csv"
    path.write_text(SAMPLE)
    return path


def submit(tmp_path: Path, content: str | bytes) -> Path:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "submission.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.fixture
def public(tmp_path: Path, sample: Path) -> Path:
    """The public data next to the sample: its test table names the ids, so ``id`` is a key."""
    (tmp_path / "test.csv").write_text("id,feature\n1,a\n2,b\n3,c\n4,d\n")
    return tmp_path


@pytest.mark.parametrize(
    "content",
    [
        GOOD,
        "prob,id,label\n0.9,1,dog\n0.1,2,cat\n0.75,3,dog\n0.001,4,cat\n",  # columns in any order
        "id,label,prob\n4,cat,0\n3,dog,1\n2,cat,0\n1,dog,1\n",  # rows in any order
        "id,label,prob\n1.0,dog,1\n2.0,cat,0\n 3 ,dog,0\n4,cat,0\n",  # ids as pandas may write them
        '\ufeffid,label,prob\n1,"a, b",1\n2,"two\nlines",0\n3,x,0\n4,y,0\n',  # BOM, quoting
        "id,label,prob\r\n1,dog,1\r\n2,cat,0\r\n3,dog,0\r\n4,cat,0\r\n",  # Windows line ends
        "id,label,prob,x\n1,a,1,0\n2,a,1,0\n3,a,1,0\n4,a,1,0\n",  # graders select by name
        "id,label,prob\n1,a,1\n2,a,NaN\n3,a,\n4,,1\n",  # blanks: the grader decides
        "id,label,prob\n1,a,1\n2,a\n3,a,1\n4,a,1\n",  # a short row is padded with a blank
        "id,label,prob\n1,a,1\n2,a,inf\n3,a,1\n4,a,1\n",  # pandas reads inf as a number
        "id,label,prob\n0,1,a,1\n1,2,a,1\n2,3,a,1\n3,4,a,1\n",  # an unnamed index column
        'id,label,prob,note\n1,a,1,"x"y\n2,a,1,\x00\n3,a,1,\n4,a,1,\n',  # pandas' lenient text
    ],
    ids=["good", "column order", "row order", "id spelling", "quoted text", "crlf",
         "extra column", "blanks", "short row", "infinity", "index column", "odd text"],
)  # fmt: skip
def test_submissions_a_grader_can_read_pass(public: Path, sample: Path, content: str) -> None:
    assert check(submit(public / "out", content), sample) is None


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("id,label\n1,dog\n2,cat\n3,dog\n4,cat\n", ["lacks the columns ['prob']"]),
        ("id,label,Prob\n1,a,1\n2,a,1\n3,a,1\n4,a,1\n", ["lacks the columns ['prob']"]),
        ("id,label,prob\n1,a,1\n2,a,1\n3,a,1\n", ["3 rows", "expected 4"]),
        ("id,label,prob\n1,a,1\n2,a,1\n3,a,1\n4,a,1\n5,a,1\n", ["more than 4 rows"]),
        ("id,label,prob\n1,a,1\n2,a,1\n3,a,1\n3,a,1\n", ["id '3' appears more often"]),
        ("id,label,prob\n1,a,1\n2,a,1\n3,a,1\n9,a,1\n", ["1 id values are not", "'9'", "'4'"]),
        ("id,label,prob\n1,a,1\n2,a,1\n3,a,1\n,a,1\n", ["1 rows", "no id"]),
        ("id,label,prob\n1,a,1\n2,a,high\n3,a,1\n4,a,1\n", ["numbers", "line 3", "'high'"]),
        ("id,label,prob\n1,a,1\n2,a,1,0\n3,a,1\n4,a,1\n", ["line 3", "4 fields", "header has 3"]),
        ("", ["empty file"]),
        ("\n\n", ["no header"]),
        (b"PK\x03\x04\x14\x00\x08\x00\xff\x9a", ["not UTF-8"]),
        (b"id,label,prob\n1,\xe9t\xe9,1\n", ["not UTF-8"]),
        ('id,label,prob\n1,"unclosed,1\n', ["not a valid CSV", "never closed"]),
    ],
    ids=[
        "missing column", "renamed column", "too few rows", "too many rows", "duplicate id",
        "unknown id", "blank id", "string for number", "long row", "empty", "blank lines",
        "binary", "latin-1", "unclosed quote",
    ],
)  # fmt: skip
def test_broken_submissions_get_one_line_reasons(
    public: Path, sample: Path, content: str | bytes, words: list[str]
) -> None:
    reason = check(submit(public / "out", content), sample)
    assert reason is not None
    assert "\n" not in reason
    for word in words:
        assert word in reason


def test_keys_come_from_the_data_not_from_a_position(tmp_path: Path) -> None:
    """The prediction column comes first and the rows are aligned on a text column, as in
    detecting-insults: the text is the key (the test table has it), the prediction is not."""
    sample = tmp_path / "sample_submission_null.csv"
    sample.write_text('Insult,Date,Comment\n0,,"you"\n0,20120101,"me"\n0,,"them"\n')
    (tmp_path / "test.csv").write_text('Date,Comment\n,"you"\n20120101,"me"\n,"them"\n')
    out = tmp_path / "out"
    assert submission_check.key_columns(sample) == ("Comment",)
    assert check(submit(out, 'Insult,Date,Comment\n0.9,,"me"\n0.1,,"you"\n1,,"them"\n'),
                 sample) is None  # fmt: skip
    wrong = check(submit(out, 'Insult,Date,Comment\n0.9,,"me"\n0.1,,"us"\n1,,"them"\n'), sample)
    assert "1 Comment values are not in the sample submission" in (wrong or "")
    assert check(sample, sample) is None


def test_without_a_public_table_naming_them_no_column_is_a_key(tmp_path: Path) -> None:
    sample = tmp_path / "sample_submission.csv"
    sample.write_text(SAMPLE)
    assert submission_check.key_columns(sample) == ()
    assert check(submit(tmp_path / "out", "id,label,prob\n7,a,1\n8,a,1\n9,a,1\n9,a,1\n"),
                 sample) is None  # fmt: skip


@pytest.mark.parametrize(
    "name", ["sample_submission.csv", "sampleSubmission.csv", "SampleSubmission.csv",
             "randomPredictions.csv", "sample_submission_null.csv"],
)  # fmt: skip
def test_the_sample_is_found_whatever_its_case(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(SAMPLE)
    (tmp_path / "train.csv").write_text("id,x\n1,2\n")
    assert submission_check.find_sample(tmp_path) == tmp_path / name


def compress(plain: Path, how: str) -> Path:
    """``plain`` compressed as Kaggle ships some samples (``how``: zip | gz | bz2 | xz), the
    plain file removed."""
    packed = plain.with_name(f"{plain.name}.{how}")
    if how == "zip":
        with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(plain, plain.name)
    else:
        module: ModuleType = {"gz": gzip, "bz2": bz2, "xz": lzma}[how]
        with module.open(packed, "wb") as fh:
            fh.write(plain.read_bytes())
    plain.unlink()
    return packed


@pytest.mark.parametrize("how", ["zip", "gz", "bz2", "xz"])
def test_a_compressed_sample_is_found_and_checked_as_the_plain_one(
    tmp_path: Path, how: str
) -> None:
    """text-normalization-challenge's public folder holds ``en_sample_submission_2.csv.zip``
    (and its test table zipped too): the sample is found, read decompressed, its keys looked up
    in the compressed test table, and every verdict and bound is the plain sample's."""
    ids = "".join(f"0_{i}\n" for i in range(30))
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "en_sample_submission_2.csv").write_text("id,after\n" + ids.replace("\n", ",a\n"))
    (plain / "en_test_2.csv").write_text("id,before\n" + ids.replace("\n", ",b\n"))
    packed = tmp_path / "packed"
    packed.mkdir()
    for name in ("en_sample_submission_2.csv", "en_test_2.csv"):
        (packed / name).write_bytes((plain / name).read_bytes())
        compress(packed / name, how)
    expected = plain / "en_sample_submission_2.csv"
    sample = submission_check.find_sample(packed)
    assert sample == packed / f"en_sample_submission_2.csv.{how}"
    assert submission_check.key_columns(sample) == submission_check.key_columns(expected) == ("id",)
    assert submission_check.bounds(sample) == submission_check.bounds(expected)
    assert submission_check.size_cap(sample) == submission_check.size_cap(expected)
    good = "id,after\n" + ids.replace("\n", ",x\n")
    for content in (good, good.replace("0_3,", "9_9,"), good.replace("0_3,x\n", ""), "x\n1\n"):
        verdict = check(submit(tmp_path / "out", content), sample)
        assert verdict == check(submit(tmp_path / "out", content), expected), content[:30]
    assert check(submit(tmp_path / "out", good), sample) is None
    assert check(good.encode() + b"\n" * (2 * submission_check.IN_PROCESS_BYTES), sample) is None


def test_a_compressed_copy_beside_the_plain_sample_is_the_same_sample(tmp_path: Path) -> None:
    (tmp_path / "sample_submission.csv").write_text(SAMPLE)
    compress(tmp_path / "sample_submission.csv", "zip")
    (tmp_path / "sample_submission.csv").write_text(SAMPLE)
    assert submission_check.find_sample(tmp_path) == tmp_path / "sample_submission.csv"
    (tmp_path / "sample_code.zip").write_bytes(b"")  # a sample of code, not of a submission
    assert submission_check.find_sample(tmp_path) == tmp_path / "sample_submission.csv"


def test_a_submission_is_never_decompressed_whatever_its_name(tmp_path: Path) -> None:
    """Only the task's own files (the sample, public tables) are read decompressed. A solution's
    gzip bomb (256 MiB of valid rows in a quarter of a MB) is judged as the bytes it wrote, under
    the sample's name or a compressed one, and refused at once, never expanded on the host."""
    sample = tmp_path / "sample_submission.csv.gz"
    compressed = io.BytesIO()
    with gzip.GzipFile(fileobj=compressed, mode="wb", compresslevel=9) as handle:
        handle.write(SAMPLE.encode())
        handle.write(b"4,0\n" * (64 * 1024**2))
    sample.write_bytes(gzip.compress(SAMPLE.encode()))
    for name in ("submission.csv", "submission.csv.gz"):
        bomb = tmp_path / "out" / name
        bomb.parent.mkdir(exist_ok=True)
        bomb.write_bytes(compressed.getvalue())
        verdict = check(bomb, sample) or ""
        assert "header line" in verdict or "UTF-8" in verdict, verdict
        assert "rows" not in verdict, verdict  # its rows were never counted


def test_a_zip_that_is_no_one_csv_is_reported_not_raised(tmp_path: Path) -> None:
    sample = tmp_path / "sample_submission.csv.zip"
    with zipfile.ZipFile(sample, "w") as archive:
        archive.writestr("a.csv", SAMPLE)
        archive.writestr("b.csv", SAMPLE)
    assert "holds 2 files, not one CSV" in (check(submit(tmp_path / "out", GOOD), sample) or "")
    sample.write_bytes(b"PK not a zip")
    assert "cannot read the sample submission" in (check(submit(tmp_path, GOOD), sample) or "")


def test_a_missing_file_a_directory_or_a_link(tmp_path: Path, sample: Path) -> None:
    assert "does not exist" in (check(tmp_path / "absent.csv", sample) or "")
    assert "not a file" in (check(tmp_path, sample) or "")
    (tmp_path / "link.csv").symlink_to(sample)
    assert "symbolic link" in (check(tmp_path / "link.csv", sample) or "")


def test_a_wide_or_long_file_costs_the_samples_memory_and_a_short_reason(
    public: Path, sample: Path
) -> None:
    """Only the sample's columns are kept and reading stops past its row count: a 100 MB file
    of short rows is refused without holding it in memory; a header wider than the bounds
    allow is refused on its first megabyte."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wide = ",".join(["id", "label", "prob"] + [f"x{i}" for i in range(10**6)])
    assert check(submit(public / "w", wide + "\n1\n" * 4 + "\n1\n" * 10**6), sample) == (
        "the submission's header line is over 1,048,576 bytes long "
        "(the sample submission: 14 bytes, 3 columns)"
    )
    wide_enough = ",".join(["id", "label", "prob"] + [f"x{i}" for i in range(9_000)])
    rows = "".join(f"{i},a,1\n" for i in range(1, 5))
    assert check(submit(public / "w", wide_enough + "\n" + rows + "\n1\n" * 10**6), sample) == (
        "the submission has more than 4 rows; expected 4"
    )
    long = "id,label,prob\n" + "1,a,1\n" * (15 * 10**6)
    assert "more than 4 rows" in (check(submit(public / "l", long), sample) or "")
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 800  # the file's text, never a list per row (~6 GB before)
    huge_id = "id,label,prob\n" + "".join(f"{'9' * 10**6}{i},a,1\n" for i in range(4))
    reason = check(submit(public / "h", huge_id), sample) or ""
    assert "not in the sample submission" in reason and len(reason) <= 300


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path, sample: Path) -> None:
    huge = tmp_path / "submission.csv"
    with huge.open("wb") as fh:  # sparse: 50 GB on paper, nothing on disk
        fh.truncate(50 * 1024**3)
    reason = check(huge, sample) or ""
    assert "53,687,091,200 bytes" in reason and "104,857,600-byte limit" in reason
    small_cap = check(submit(tmp_path, GOOD), sample, max_bytes=20)
    assert "over the 20-byte limit" in (small_cap or "")


def test_text_columns_accept_any_text_and_numbers_in_them(tmp_path: Path, sample: Path) -> None:
    labels = "id,label,prob\n1,7,1\n2,3.5,0\n3,dog,0\n4,-,0\n"
    assert check(submit(tmp_path, labels), sample) is None


def test_several_rows_per_id_are_checked_by_count(tmp_path: Path) -> None:
    sample = tmp_path / "sample_submission.csv"
    sample.write_text("image,pixels\na,1 2\na,3 4\nb,5 6\n")
    assert check(submit(tmp_path, "image,pixels\nb,1\na,2\na,3\n"), sample) is None
    assert "2 rows" in (check(submit(tmp_path, "image,pixels\na,1\nb,2\n"), sample) or "")


def test_a_broken_sample_is_reported_not_raised(tmp_path: Path) -> None:
    sample = tmp_path / "sample_submission.csv"
    sample.write_bytes(b"\xff\xfe\x00\x01")
    assert "sample submission" in (check(submit(tmp_path, GOOD), sample) or "")


# --- as the agent runs it ------------------------------------------------------------------


def agent_workspace(tmp_path: Path, submission: str) -> Path:
    """A directory laid out as a node's: the script, ./input with the sample, ./submission."""
    (tmp_path / "input").mkdir(parents=True)
    (tmp_path / "input" / "sample_submission.csv").write_text(SAMPLE)
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "submission.csv").write_text(submission)
    script = Path(submission_check.__file__).read_bytes()
    (tmp_path / "validate_submission.py").write_bytes(script)
    return tmp_path


def run_script(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # -I: isolated mode, so the script runs without Podium on the path, as in any interpreter.
    return subprocess.run(
        [sys.executable, "-I", "validate_submission.py", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_script_runs_standalone_and_says_only_valid_or_why(tmp_path: Path) -> None:
    good = run_script(agent_workspace(tmp_path / "a", GOOD))
    assert (good.returncode, good.stdout, good.stderr) == (0, "valid_submission: true\n", "")
    bad = run_script(agent_workspace(tmp_path / "b", "id,label,prob\n1,a,1\n"))
    assert bad.returncode == 1
    assert bad.stdout == (
        "valid_submission: false (the submission has 1 rows; expected 4 "
        "(one per row of the sample submission))\n"
    )
    usage = run_script(tmp_path / "a", "--help")
    assert usage.returncode == 2 and "usage:" in usage.stdout


def test_validate_finds_the_sample_or_asks_for_it(tmp_path: Path) -> None:
    workspace = agent_workspace(tmp_path, GOOD)
    cwd = Path.cwd()
    os.chdir(workspace)
    try:
        assert validate() == (True, "")
        (workspace / "input" / "nested").mkdir()
        (workspace / "input" / "nested" / "sample_submission_v2.csv").write_text(SAMPLE)
        ok, reason = validate()
        assert not ok and "cannot tell the sample submission" in reason
        assert validate(sample="input/sample_submission.csv") == (True, "")
    finally:
        os.chdir(cwd)


def test_it_says_nothing_about_how_good_a_submission_is(
    titanic: FolderTask, tmp_path: Path
) -> None:
    """The perfect answers and the worst possible predictions get the same verdict."""
    answers = pd.read_csv(titanic.answers)
    perfect = tmp_path / "perfect.csv"
    answers.to_csv(perfect, index=False)
    worst = tmp_path / "worst.csv"
    answers.assign(Survived=1 - answers["Survived"]).to_csv(worst, index=False)
    verdicts = {check(path, titanic.sample_submission) for path in (perfect, worst)}
    assert verdicts == {None}
    assert titanic.grade(perfect).score == 1.0 and titanic.grade(worst).score == 0.0


# --- bounded on the host: an absurd file costs milliseconds, a large one a bounded child ----


BOUNDED_CHECK = """
import importlib.util, json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (512 * 1024**2, 512 * 1024**2))
spec = importlib.util.spec_from_file_location("sc", sys.argv[1])
sc = importlib.util.module_from_spec(spec)  # not in sys.modules: the file loads anyway
spec.loader.exec_module(sc)
rows = "".join(f"{i},a,1\\n" for i in range(1, 5)).encode()
found = {}
for name, columns in (("wide", 10**6), ("wider than the sample allows", 10**5)):
    header = ",".join(["id", "label", "prob"] + [f"x{i}" for i in range(columns)]).encode()
    start = time.perf_counter()
    found[name] = [sc.check(header + b"\\n" + rows * 100_000, sys.argv[2]),
                   time.perf_counter() - start]
print(json.dumps(found))
"""


def test_an_absurd_header_is_refused_fast_in_bounded_memory(sample: Path) -> None:
    """A million-column header (7 MB, then 400,000 rows) and a 100,000-column one are refused
    on their first megabyte, in a process that may not use more than 512 MiB."""
    script = [sys.executable, "-c", BOUNDED_CHECK, submission_check.__file__, str(sample)]
    done = subprocess.run(script, capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(done.stdout)
    wide, wide_s = found["wide"]
    assert wide == (
        "the submission's header line is over 1,048,576 bytes long "
        "(the sample submission: 14 bytes, 3 columns)"
    )
    wider, wider_s = found["wider than the sample allows"]
    assert wider == (
        "the submission's header has 100,003 columns, over the 10,000 accepted "
        "(the sample submission: 3)"
    )
    assert wide_s < 10 and wider_s < 10  # milliseconds, measured (perf/README.md)


def test_a_wide_sample_allows_ten_times_its_columns(tmp_path: Path) -> None:
    """Bounds are relative to the sample: 1,000 sample columns allow 10,000, and a valid
    submission with extra columns (graders select by name) is never refused."""
    names = ["id"] + [f"class_{i}" for i in range(999)]
    sample = tmp_path / "sample_submission.csv"
    sample.write_text(",".join(names) + "\n" + "".join(f"{i}" + ",0" * 999 + "\n" for i in (1, 2)))
    limits = submission_check.bounds(sample)
    assert limits.max_columns == 10_000 and limits.max_header_bytes == 1024 * 1024
    extra = names + [f"extra_{i}" for i in range(8_000)]
    wide = ",".join(extra) + "\n" + "".join(f"{i}" + ",0.5" * 8_999 + "\n" for i in (2, 1))
    assert check(submit(tmp_path / "ok", wide), sample) is None
    too_wide = ",".join(extra + [f"more_{i}" for i in range(1_001)]) + "\n1\n2\n"
    assert "10,001 columns, over the 10,000 accepted" in (
        check(submit(tmp_path / "no", too_wide), sample) or ""
    )


def test_a_large_submission_is_checked_in_a_child_with_a_deadline(
    public: Path, sample: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Past a megabyte the host's check runs in a child process: same verdicts, and one that
    cannot finish by its deadline passes (logged): a valid submission is never refused for
    being slow to check."""
    padding = "\n" * (2 * submission_check.IN_PROCESS_BYTES)  # blank lines: pandas skips them
    good = (GOOD + padding).encode()
    assert len(good) > submission_check.IN_PROCESS_BYTES
    assert check(good, sample) is None
    bad = (GOOD.replace("\n4,", "\n9,") + padding).encode()
    assert "1 id values are not in the sample submission" in (check(bad, sample) or "")
    assert check(bad, sample, timeout_s=0.001) is None
    assert "the submission was not checked" in caplog.text


def test_an_open_file_is_checked_as_its_bytes_are_the_child_reading_it_itself(
    public: Path, sample: Path, tmp_path: Path
) -> None:
    """The host hands an open file over (its child reads it from the start, the host holds
    none of it): the same verdicts as for its bytes, small or past ``IN_PROCESS_BYTES``."""
    padding = "\n" * (2 * submission_check.IN_PROCESS_BYTES)
    bad = GOOD.replace("\n4,", "\n9,")
    for content in (GOOD, bad, GOOD + padding, bad + padding, "\xff".join([GOOD, padding])):
        path = submit(tmp_path / "open", content)
        with path.open("rb") as fh:
            fh.read(5)  # wherever the caller left it
            assert check(fh, sample) == check(path.read_bytes(), sample), content[:40]


def test_the_rows_bound_is_ten_times_the_samples_with_a_floor(tmp_path: Path) -> None:
    small = submit(tmp_path / "small", SAMPLE)
    assert submission_check.bounds(small).max_rows == submission_check.MIN_ROW_CAP
    rows = "".join(f"{i},cat,0.5\n" for i in range(20_000))
    large = submit(tmp_path / "large", "id,label,prob\n" + rows)
    assert submission_check.bounds(large).max_rows == 200_000


def split(data: bytes, held: set[str], max_rows: int = 100) -> tuple[str | None, str, str]:
    """:func:`submission_check.split_by_id` in this process: (its refusal, own, held)."""
    own, out = io.BytesIO(), io.BytesIO()
    try:
        submission_check.split_by_id(io.BytesIO(data), "id", held, max_rows, own, out)
    except submission_check.Invalid as exc:
        return str(exc), "", ""
    return None, own.getvalue().decode(), out.getvalue().decode()


def test_a_holdout_split_streams_rows_by_id_and_stops_at_the_rows_bound() -> None:
    """Ids compare as a holdout compares them (``7.0`` is ``7``); cells are written back as
    read; a file with more rows than the bound is refused at the row past it."""
    data = b'id,y\n1,a\n7.0,"b, c"\n3,d\n'
    assert split(data, {"7"}) == (None, "id,y\n1,a\n3,d\n", 'id,y\n7.0,"b, c"\n')
    assert split(data, {"7", "8"})[0] == (
        "the submission has no row for 1 of the test.csv ids: it must predict every row of test.csv"
    )
    assert split(b"id,y\n7,a\n+7,b\n", {"7"})[0] == "the submission repeats 1 of the test.csv ids"
    assert split(b"x,y\n1,2\n", {"1"})[0] == "the submission needs one 'id' column"
    assert (
        split(b"id\n1,2\n", {"1"})[0] == "line 2 of the submission has more fields than its header"
    )
    assert split(b"id\n" + b"1\n" * 1000, {"1"}, max_rows=10)[0] == (
        "the submission has over 10 rows, the most accepted for this task"
    )


def test_a_long_parse_does_not_hold_the_hosts_event_loop(public: Path, sample: Path) -> None:
    """A 60 MB line within the bounds takes the csv module seconds of C code; run as the loop
    runs the check (``asyncio.to_thread``) it must not stall the loop meanwhile."""
    data = b"id,label,prob\n1,a," + b"9" * (60 * 1024**2)

    async def checked_while_ticking() -> tuple[str | None, float]:
        worst, done = 0.0, False

        async def tick() -> None:
            nonlocal worst
            while not done:
                before = time.perf_counter()
                await asyncio.sleep(0.01)
                worst = max(worst, time.perf_counter() - before)

        ticker = asyncio.create_task(tick())
        reason = await asyncio.to_thread(check, data, sample)
        done = True
        await ticker
        return reason, worst

    reason, worst = asyncio.run(checked_while_ticking())
    assert reason == "the submission has 1 rows; expected 4 (one per row of the sample submission)"
    assert worst < 1.0  # ~0.05 s; in-process the parse held the interpreter lock for 1.4 s
