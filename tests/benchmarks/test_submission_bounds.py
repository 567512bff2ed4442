"""What the host does with a handed-over submission is bounded, whatever the file.

Checking it, splitting it (``search.holdout``), scoring and grading it: the Podium process
only opens the file and reads its first bytes; whatever reads on (the structural check's child,
the split's child, the grader's worker) reads the file itself, under a memory cap and a
deadline, and stops past the task's rows bound. A grader run at final grading gets the format
check's worker, its memory cap and a deadline.

Judged on the host: each test runs the Podium side in a process of its own and reads that
process's peak resident memory (``VmHWM``, reset by ``/proc/self/clear_refs`` once the test's
own files are written). Hostile files are written from repeated bytes (a fraction of a second).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podium import untrusted
from podium.benchmarks import FolderTask, folder, make_holdout
from podium.benchmarks.holdout import HostHoldout
from podium.formats import RunDir
from podium.testing.scripted import node_answers, write_script
from tests.support import REPO, TOY_TASK, run_config

MiB = 1024 * 1024
GREW_AT_MOST_MIB = 48  # the host's peak over its resident memory before the work (measured: ~6)
ROWS_REFUSED = "the submission has over 100,000 rows, the most accepted for this task"

# Peak memory of the process below: its VmHWM since the last reset, less its VmRSS then.
PEAK = """
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024

def reset():
    import gc
    gc.collect()
    try:
        open("/proc/self/clear_refs", "w").write("5")  # VmHWM starts again from VmRSS
    except OSError:
        pass
    return status("VmRSS")
"""

# The host's side of one node, on three hostile files: the format check, the split and the
# held-out score (under a holdout), the grade. argv: toy folder, data dir, scratch, mode.
HOST_SIDE = (
    PEAK
    + """
import json, sys, time
from pathlib import Path
from podium.benchmarks import load_folder_task, make_holdout

toy, data, tmp, mode = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
task = load_folder_task(toy, data)
holdout = make_holdout(task, tmp / "holdout", 0.25, seed=3) if mode == "holdout" else None
checked = holdout.task if holdout else task
checked.warm_up()
MiB = 1024 * 1024
HOSTILE = {  # (first bytes, a piece repeated, MiB of it)
    "one column, millions of rows": (b"id\\n", b"1234567\\n", 64),
    "millions of rows": (b"id,y\\n", b"401,0\\n", 48),
    "one huge line": (b"id,y\\n401,", b"7", 96),
}
found = {}
for kind, (head, piece, mib) in HOSTILE.items():
    node = tmp / str(len(found))
    node.mkdir()
    submission = node / "submission.csv"
    with submission.open("wb") as out:
        out.write(head)
        block = piece * (MiB // len(piece))
        for _ in range(mib):
            out.write(block)
        out.write(b"\\n")
    before = reset()
    start = time.monotonic()
    reasons = [checked.check_submission(submission)]
    if holdout is not None:
        reasons.append(holdout.separate(submission, node / "holdout_predictions.csv"))
    reasons.append(checked.grade(submission).error)
    found[kind] = {"s": time.monotonic() - start, "grew": status("VmHWM") - before,
                   "reasons": reasons}
print(json.dumps(found))
"""
)


def python(script: str, *args: str, timeout: float = 300) -> Any:
    """Run ``script`` in a fresh interpreter (this checkout importable), its last line as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout,
        cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["holdout", "plain"])
def test_a_hostile_submission_costs_the_host_what_a_valid_one_does(
    mode: str, data_dir: Path, tmp_path: Path
) -> None:
    """A 64 MiB one-column file (8 million rows), 48 MiB of valid-looking rows and a 96 MiB
    line, each checked, split (under ``search.holdout``), scored and graded: the host's peak
    grows by a few MiB (it grew by 1.1 to 1.7 GiB under a holdout, 140 to 470 MiB without),
    and a file with more rows than the bound is refused within a second, unread past them
    (it took 30 to 40 s under a holdout: the split read it twice)."""
    found = python(HOST_SIDE, str(TOY_TASK), str(data_dir), str(tmp_path), mode)
    for kind, seen in found.items():
        assert seen["grew"] < GREW_AT_MOST_MIB, (kind, seen)
        if kind != "one huge line":
            assert set(seen["reasons"]) == {ROWS_REFUSED}, (kind, seen)
            assert seen["s"] < 10, (kind, seen)  # measured: 0.3 s (holdout), 1 s (plain)
        else:
            assert all(seen["reasons"]) and seen["s"] < 60, (kind, seen)  # measured: 2 to 4 s


# --- the split: once per file, never after a refusal ----------------------------------------


@pytest.fixture
def host_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The handed-over files the host opens (every read of one goes through
    ``podium.untrusted.open_untrusted``), one entry per opening, but the parts the split made
    of them: a submission is read once per split."""
    opened: list[Path] = []
    real = untrusted.open_untrusted

    def counting(path: Path, **kwargs: Any) -> Any:
        if not path.name.startswith("."):
            opened.append(path)
        return real(path, **kwargs)

    for module in (untrusted, folder):
        monkeypatch.setattr(module, "open_untrusted", counting, raising=False)
    return opened


@pytest.fixture
def holdout(toy_task: FolderTask, tmp_path: Path) -> HostHoldout:
    return make_holdout(toy_task, tmp_path / "holdout", 0.25, seed=3)


def submission_of(holdout: HostHoldout, path: Path, change: str = "") -> Path:
    """A valid submission under ``holdout`` (its sample), less one row: a held-out one
    (``drop-held``: the split refuses it) or a test one (``drop-own``: the check of the
    task's own rows does)."""
    lines = holdout.sample.read_text().splitlines()
    held = {line.split(",")[0] for line in holdout.held_sample.read_text().splitlines()[1:]}
    if change:
        dropped = next(i for i, line in enumerate(lines[1:], 1)
                       if (line.split(",")[0] in held) == (change == "drop-held"))  # fmt: skip
        del lines[dropped]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("change", ["", "drop-held", "drop-own"])
def test_a_node_s_submission_is_split_once_and_never_after_the_check_refused_it(
    holdout: HostHoldout, tmp_path: Path, host_reads: list[Path], change: str
) -> None:
    """The loop checks a node's submission, then separates its held-out rows: one split for
    both, the check's parts kept (a valid file) or its refusal repeated unread (a refused
    one); the parts never outlive the node's separation. (The file was read and split for
    the check, and again for the separation, refused or not.)"""
    submission = submission_of(holdout, tmp_path / "node" / "submission.csv", change)
    problem = holdout.task.check_submission(submission)
    assert (problem is None) == (change == ""), problem
    predictions = submission.with_name("holdout_predictions.csv")
    assert holdout.separate(submission, predictions) == problem
    assert host_reads == [submission]
    if problem is None:
        assert len(predictions.read_text().splitlines()) == 1 + holdout.split.record["rows"]
        assert len(submission.read_text().splitlines()) == 1 + 100  # the test rows, kept
    assert sorted(p.name for p in submission.parent.iterdir()) == sorted(
        ["submission.csv"] + (["holdout_predictions.csv"] if problem is None else [])
    )


def test_a_file_the_check_never_saw_is_split_once_and_a_changed_one_again(
    holdout: HostHoldout, tmp_path: Path, host_reads: list[Path]
) -> None:
    """A top-k re-run's submission is separated without a check: split then; a file replaced
    after its check is split again (what was made of the old one is removed)."""
    rerun = submission_of(holdout, tmp_path / "rerun" / "submission.csv")
    assert holdout.separate(rerun, rerun.with_name("holdout_predictions.csv")) is None
    node = submission_of(holdout, tmp_path / "node" / "submission.csv")
    assert holdout.task.check_submission(node) is None
    submission_of(holdout, tmp_path / "new.csv", "drop-held").replace(node)
    problem = holdout.separate(node, node.with_name("holdout_predictions.csv"))
    assert problem is not None and "no row for 1 of the test.csv ids" in problem
    assert host_reads == [rerun, node, node]
    assert sorted(p.name for p in node.parent.iterdir()) == ["submission.csv"]


# --- a hostile grader at final grading ------------------------------------------------------

# Loops forever (a 7 among the predictions) or allocates without bound (an 8), but only on the
# real answers: the stand-ins the format check grades against (the sample's zeros, or 0 and 1
# alternating) get a plain accuracy, so only grading meets the attack.
HOSTILE_GRADER = """
import pandas as pd


def grade(submission, answers):
    stand_in = answers["y"].nunique() == 1 or list(answers["y"]) == [
        i % 2 for i in range(len(answers))
    ]
    if not stand_in and (submission["y"] == 7).any():
        while True:
            pass
    if not stand_in and (submission["y"] == 8).any():
        keep = []
        while True:
            keep.append(bytearray(64 << 20))
    merged = answers.merge(submission, on="id", suffixes=("_true", "_pred"), how="left")
    if merged["y_pred"].isna().any():
        raise ValueError("submission is missing ids")
    return float((merged["y_true"] == merged["y_pred"]).mean())
"""


def hostile_task(tmp_path: Path) -> Path:
    """The toy task, graded by :data:`HOSTILE_GRADER`."""
    folder = tmp_path / "hostile-toy"
    shutil.copytree(TOY_TASK, folder)
    (folder / "grade.py").write_text(HOSTILE_GRADER)
    return folder


# Grades three submissions (an 8, a 7, then a valid one) in a 1 GiB worker, the 7 with a 3 s
# grading deadline; the host itself may not pass 4 GiB (a safety net: an in-process grader
# that allocates without bound would otherwise take the machine's memory).
HOSTILE_GRADING = (
    PEAK
    + """
import json, resource, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))
from podium.benchmarks import folder, grader_worker, load_folder_task
grader_worker.MEMORY_BYTES = 1 << 30
task = load_folder_task(Path(sys.argv[1]), Path(sys.argv[2]))
task.warm_up()
sample = task.sample_submission.read_text()
found = {}
for name, value, deadline in (("allocates", "8", 60.0), ("loops", "7", 3.0), ("valid", "0", 60.0)):
    folder.GRADE_DEADLINE_S = deadline
    submission = Path(sys.argv[2]) / f"{name}.csv"
    submission.write_text(sample.replace(",0\\n", f",{value}\\n", 1))
    before = reset()
    start = time.monotonic()
    report = task.grade(submission)
    found[name] = {"s": time.monotonic() - start, "grew": status("VmHWM") - before,
                   "error": report.error, "score": report.score}
print(json.dumps(found))
"""
)


def test_final_grading_stops_a_grader_that_loops_or_allocates_without_bound(
    tmp_path: Path,
) -> None:
    """MLE-bench's graders decode masks, parse JSON, ``literal_eval`` cells: a submission can
    send one into a loop or an unbounded allocation. Graded, as the final grade is, it runs in
    the format check's worker: stopped at its memory cap or its deadline, with the reason, the
    host's memory untouched; the next submission gets a fresh worker (it hung Podium forever,
    or took its memory up to the machine's)."""
    found = python(HOSTILE_GRADING, str(hostile_task(tmp_path)), str(tmp_path / "data"))
    allocates, loops, valid = found["allocates"], found["loops"], found["valid"]
    assert allocates["error"] == "the grader ran out of memory (the worker's cap: 1 GiB)"
    assert loops["score"] is None and loops["error"] == (
        "the grader did not finish within 3 s, and was stopped"
    )
    assert valid["score"] is not None and valid["error"] is None, valid
    for seen in found.values():
        assert seen["grew"] < GREW_AT_MOST_MIB and seen["s"] < 60, found


# --- a whole run ----------------------------------------------------------------------------

# ``podium.run`` in a process of its own, its peak measured over the run; the check's and the
# grade's deadlines at 3 s. argv: the config as JSON.
RUN = (
    PEAK
    + """
import json, sys
from podium.benchmarks import folder
folder.GRADER_DEADLINE_S = folder.GRADE_DEADLINE_S = 3.0
import podium, podium.api.runs, podium.sandbox, podium.scaffolds  # imported before measuring
before = reset()
result = podium.run(json.loads(sys.argv[1]))
grade = result.grade
print(json.dumps({"grew": status("VmHWM") - before, "run_dir": str(result.run_dir),
                  "grade_error": grade.error if grade else "no grade"}))
"""
)

# 64 MiB in one column: 8 million rows.
HOSTILE_SOLUTION = """
with open("submission/submission.csv", "wb") as out:
    out.write(b"id\\n")
    block = b"1234567\\n" * 131072
    for _ in range(64):
        out.write(block)
print("VALIDATION_METRIC: 0.99")
"""

# A valid submission predicting 7 for the test rows (the ids above the training ids), 0 for
# the held-out rows: its format check and held-out score are plain, its grade loops forever.
LOOPING_SOLUTION = """
import csv
top = max(int(row["id"]) for row in csv.DictReader(open("input/train.csv")))
with open("submission/submission.csv", "w") as out:
    out.write("id,y\\n")
    for row in csv.DictReader(open("input/test.csv")):
        out.write(f"{row['id']},{7 if int(row['id']) > top else 0}\\n")
print("VALIDATION_METRIC: 0.5")
"""


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "cold"])
def test_a_run_survives_a_hostile_submission_and_a_grader_that_never_ends(
    tmp_path: Path, fork: bool
) -> None:
    """``podium run`` under ``search.holdout``: node 1 writes a 64 MiB one-column file
    (refused by its rows, never read whole by the host, split once), node 2 a valid file whose
    final grade never ends. The run finishes, its grade saying why it has no score, and the
    run's process peaks a few MiB above where it started (it grew by 1.7 GiB, the node took
    40 s: the check and the split each held the file's cells; and the grade hung the run)."""
    script = write_script(
        tmp_path / "script.jsonl",
        [node_answers(HOSTILE_SOLUTION), node_answers(LOOPING_SOLUTION)],
    )
    config = run_config(
        script, tmp_path / "run", tmp_path / "data", steps=2,
        task=str(hostile_task(tmp_path)), search={"num_drafts": 2, "holdout": 0.25},
        sandbox={"name": "bwrap", "fork": fork},
    )  # fmt: skip
    found = python(RUN, json.dumps(config))
    rd = RunDir(Path(found["run_dir"]))
    held = json.loads((rd.node_dir(1) / "holdout.json").read_text())
    assert held == {"score": None, "problem": ROWS_REFUSED}
    assert not (rd.node_dir(1) / "holdout_predictions.csv").exists()
    assert rd.held_out_score(2) is not None
    assert found["grade_error"] == "the grader did not finish within 3 s, and was stopped"
    assert found["grew"] < 3 * GREW_AT_MOST_MIB, found
