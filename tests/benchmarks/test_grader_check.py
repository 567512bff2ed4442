"""The grader-on-stand-ins check: it follows the competition's own grader, never the answers,
and a grader that misbehaves costs the check nothing but falls back to the structure."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from podium.benchmarks import grader_worker
from podium.benchmarks.grader_check import StandInCheck, Verdict, stand_ins
from podium.benchmarks.grader_worker import MAX_START_FAILURES, GraderSource, GraderWorker
from tests.support import wait_until


def frame(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def csv(text: str) -> bytes:
    return text.encode()


def auc_aligned_on_text(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    """Like detecting-insults: the prediction comes first, rows are aligned on a text column."""
    if len(submission) != len(answers) or "Comment" not in submission:
        raise ValueError("wrong shape")
    if not submission["Insult"].between(0, 1).all():
        raise ValueError("Insult must be a probability")
    merged = answers.merge(submission, on="Comment", suffixes=("_true", ""))
    if len(merged) != len(answers):
        raise ValueError("Comments differ")
    return float(roc_auc_score(merged["Insult_true"], merged["Insult"]))


INSULT_SAMPLE = 'Insult,Date,Comment\n0,,"a"\n0,2012,"b"\n0,,"c"\n0,,"d"\n'


def test_a_constant_sample_is_trusted_through_the_alternating_stand_in() -> None:
    check = StandInCheck(auc_aligned_on_text, frame(INSULT_SAMPLE), keys=["Comment"])
    assert len(stand_ins(check.sample, ["Comment"])) == 2
    assert len(check.trusted) == 1  # the sample's own answers are of one class: AUC gives NaN
    assert check.verdict(csv(INSULT_SAMPLE)).outcome == "valid"
    shuffled = 'Insult,Date,Comment\n0.3,,"d"\n0.9,,"a"\n0.1,,"c"\n0.5,,"b"\n'  # blank Dates
    assert check.verdict(csv(shuffled)).outcome == "valid"
    above_one = check.verdict(csv(shuffled.replace("0.9", "1.5")))
    assert above_one.outcome == "invalid" and "Insult must be a probability" in above_one.reason
    nan = check.verdict(csv(shuffled.replace("0.9", "")))
    assert nan.outcome == "invalid"
    other_text = check.verdict(csv(shuffled.replace('"a"', '"z"')))
    assert other_text.outcome == "invalid" and "Comments differ" in other_text.reason


def known_labels_only(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    """A grader that refuses labels the answers never use: against the sample's one label,
    every other label looks wrong, though the real answers have them all."""
    if sorted(submission["id"]) != sorted(answers["id"]):
        raise ValueError("ids differ")
    if not set(submission["label"]) <= set(answers["label"]):
        raise ValueError("unknown label")
    merged = answers.merge(submission, on="id")
    return float((merged["label_x"] == merged["label_y"]).mean())


def test_a_rejection_that_only_the_stand_ins_values_explain_does_not_count() -> None:
    check = StandInCheck(known_labels_only, frame("id,label\n1,cat\n2,cat\n3,cat\n"), ["id"])
    assert check.verdict(csv("id,label\n3,dog\n1,cat\n2,bird\n")).outcome == "valid"
    wrong_ids = check.verdict(csv("id,label\n3,dog\n1,cat\n9,bird\n"))
    assert wrong_ids.outcome == "invalid" and "ids differ" in wrong_ids.reason


def ids_never_checked(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    """Like nomad2018: rows by position, ids ignored; a log metric refuses negatives."""
    if len(submission) != len(answers):
        raise ValueError("row count")
    if (submission["y"] < 0).any():
        raise ValueError("negative prediction")
    return float(((submission["y"] - answers["y"]) ** 2).mean())


def test_what_the_grader_ignores_is_not_checked() -> None:
    check = StandInCheck(ids_never_checked, frame("id,y\n1,0.5\n2,0.5\n3,0.5\n"), ["id"])
    assert check.verdict(csv("id,y\n7,0.1\n8,0.2\n9,0.3\n")).outcome == "valid"
    assert check.verdict(csv("id,y\n1,-0.1\n2,0.2\n3,0.3\n")).outcome == "invalid"
    assert check.verdict(csv("id,y\n1,0.1\n2,0.2\n")).outcome == "invalid"


def nan_on_constant(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    return float(submission["y"].corr(answers["y"]))


def test_a_nan_score_is_a_valid_submission_as_in_mlebench() -> None:
    check = StandInCheck(nan_on_constant, frame("id,y\n1,0\n2,0\n3,0\n"), [])
    assert check.trusted and check.verdict(csv("id,y\n1,0\n2,0\n3,0\n")).outcome == "valid"


def jsonl_answers(submission: pd.DataFrame, answers: list[dict[str, str]]) -> float:
    """Answers of another shape (MLE-bench hands .jsonl answers over as a list of dicts)."""
    return float(len(answers[0]))


def test_answers_of_another_shape_leave_the_verdict_unknown() -> None:
    check = StandInCheck(jsonl_answers, frame("id,y\n1,\n2,\n"), ["id"])
    assert check.trusted == []
    assert check.verdict(csv("id,y\n1,\n2,\n")).outcome == "unknown"


@pytest.mark.parametrize(
    "data", [b"", b"\xff\xfe\x00garbage", b'id,y\n1,"unclosed\n', b"id,y\n1,2\n1,2,3,4\n"]
)
def test_unreadable_files_are_invalid_before_any_grader_runs(data: bytes) -> None:
    check = StandInCheck(ids_never_checked, frame("id,y\n1,0.5\n"), [])
    verdict = check.verdict(data)
    assert verdict.outcome == "invalid" and verdict.reason


# --- the worker process ---------------------------------------------------------------------

GRADER = """
import os, time
import pandas as pd

def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    print("graders print things")  # must not confuse the protocol
    if "hang" in set(submission["y"].astype(str)):
        time.sleep(3600)
    if "huge" in set(submission["y"].astype(str)):
        bytearray(64 * 1024**3)
    if "die" in set(submission["y"].astype(str)):
        os._exit(3)
    if "spawn" in set(submission["y"].astype(str)):
        import subprocess
        subprocess.Popen(["sh", "-c", "exec -a podium-test-grader-child sleep 1000"])
        time.sleep(3600)
    if len(submission) != len(answers):
        raise ValueError("expected %d rows" % len(answers))
    return 1.0
"""


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[GraderWorker]:
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "grade.py").write_text(textwrap.dedent(GRADER))
    sample = folder / "sample_submission.csv"
    sample.write_text("id,y\n1,a\n2,a\n")
    started = GraderWorker(GraderSource("x.grade:grade", str(folder)), sample, ("id",))
    yield started
    started.close()


def test_the_worker_answers_for_the_grader(worker: GraderWorker) -> None:
    assert worker.verdict(b"id,y\n1,b\n2,c\n").outcome == "valid"
    rejected = worker.verdict(b"id,y\n1,b\n")
    assert rejected.outcome == "invalid" and "expected 2 rows" in rejected.reason
    assert worker.verdict(b"\xff\xfe").outcome == "invalid"


def test_a_grader_that_hangs_dies_or_eats_memory_gives_unknown(
    worker: GraderWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert worker.verdict(b"id,y\n1,b\n2,c\n").outcome == "valid"  # started, under no deadline
    monkeypatch.setattr(grader_worker, "VERDICT_TIMEOUT_S", 2.0)  # the grader never answers
    for _ in range(MAX_START_FAILURES + 1):  # a hostile file costs its node, never the check
        hung = worker.verdict(b"id,y\n1,hang\n2,c\n")  # (the restart may take the deadline)
        assert hung.outcome == "unknown" and ("too long" in hung.reason or "busy" in hung.reason)
    monkeypatch.setattr(grader_worker, "VERDICT_TIMEOUT_S", 300.0)
    assert worker.verdict(b"id,y\n1,huge\n2,c\n").outcome == "unknown"  # 64 GiB over the cap
    died = worker.verdict(b"id,y\n1,die\n2,c\n")
    assert died == Verdict("unknown", "the grader could not be run: it exited")
    assert worker.verdict(b"id,y\n1,b\n").outcome == "invalid"  # a fresh worker answers


def test_a_killed_grader_takes_its_children_along(
    worker: GraderWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grader_worker, "VERDICT_TIMEOUT_S", 3.0)
    assert worker.verdict(b"id,y\n1,spawn\n2,c\n").outcome == "unknown"
    assert not _processes_with("podium-test-grader-child")


def test_the_worker_dies_with_its_host_and_its_scratch_is_swept(tmp_path: Path) -> None:
    """A host gone without cleaning up (os._exit, SIGKILL) while its grader is busy leaves no
    grader running, and the next host removes its scratch directory."""
    (tmp_path / "grade.py").write_text(textwrap.dedent(GRADER))
    sample = tmp_path / "sample_submission.csv"
    sample.write_text("id,y\n1,a\n2,a\n")
    host = textwrap.dedent(f"""
        import os, threading, time
        from pathlib import Path
        from podium.benchmarks.grader_worker import GraderSource, GraderWorker
        source = GraderSource("x.grade:grade", {str(tmp_path)!r})
        w = GraderWorker(source, Path({str(sample)!r}), ())
        assert w.verdict(b"id,y\\n1,b\\n2,c\\n").outcome == "valid"
        print(w._proc.pid, w._scratch, flush=True)
        threading.Thread(target=w.verdict, args=(b"id,y\\n1,hang\\n2,c\\n",)).start()
        time.sleep(1)  # the worker is busy grading, not waiting on its stdin
        os._exit(0)
    """)
    out = subprocess.run([sys.executable, "-c", host], capture_output=True, text=True, check=True)
    pid, scratch = out.stdout.split()
    wait_until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid))
    assert Path(scratch).exists()
    worker = GraderWorker(GraderSource("x.grade:grade", str(tmp_path)), sample, ())
    try:
        assert worker.verdict(b"id,y\n1,b\n2,c\n").outcome == "valid"
        assert not Path(scratch).exists()
    finally:
        worker.close()


def _zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def _processes_with(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if marker in (proc / "cmdline").read_bytes().decode(errors="replace"):
                found.append(proc.name)
        except OSError:
            continue
    return found


def test_a_grader_that_cannot_be_loaded_gives_unknown(tmp_path: Path) -> None:
    sample = tmp_path / "sample_submission.csv"
    sample.write_text("id,y\n1,a\n")
    worker = GraderWorker(GraderSource("x.missing:grade", str(tmp_path)), sample, ())
    try:
        verdict = worker.verdict(b"id,y\n1,a\n")
        assert verdict.outcome == "unknown" and "module not found" in verdict.reason
    finally:
        worker.close()


def test_a_question_waits_no_longer_than_its_deadline(worker: GraderWorker) -> None:
    """While the worker is busy on a hostile file, another node's question gives up at its own
    deadline; the overrunning worker is replaced in the background, and the replacement (started
    by a thread that lives on: the worker dies with the thread that started it) answers."""
    assert worker.verdict(b"id,y\n1,b\n2,c\n").outcome == "valid"
    busy = threading.Thread(target=worker.verdict, args=(b"id,y\n1,hang\n2,c\n", 2.0))
    busy.start()
    wait_until(lambda: worker._lock.locked())
    start = time.monotonic()
    waited = worker.verdict(b"id,y\n1,b\n2,c\n", timeout_s=0.5)
    assert waited == Verdict("unknown", "the grader is busy (starting, or on another submission)")
    assert time.monotonic() - start < 10
    busy.join()
    wait_until(lambda: worker._proc is not None and not worker._lock.locked())  # restarted
    restarted = worker._proc
    time.sleep(0.5)  # had its starter thread ended, PR_SET_PDEATHSIG would have killed it
    assert restarted is not None and restarted.poll() is None
    assert worker.verdict(b"id,y\n1,b\n2,c\n").outcome == "valid"
    assert worker._proc is restarted
