"""A node's code against its parent's: the same hunks ``diff -u`` gives on real edits, a
side-by-side pairing, the page's shape, and bounded time and size on anything a model writes."""

from __future__ import annotations

import difflib
import json
import random
import time

import pytest

from podium import code_diff as cd
from podium.code_diff import CodeDiff, Row, as_json, code_diff, counts, side_by_side, unified_text
from tests.support import scaled

PARENT = """\
import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("input/train.csv")
X = train.drop(columns=["target"])
y = train["target"]

model = LogisticRegression()
model.fit(X, y)
print("VALIDATION_METRIC:", model.score(X, y))

test = pd.read_csv("input/test.csv")
pd.DataFrame({"id": test.id, "target": model.predict(test)}).to_csv(
    "submission/submission.csv", index=False
)
"""
EDITS = {
    "one line changed": (
        PARENT,
        PARENT.replace("LogisticRegression()", "LogisticRegression(C=.5)"),
    ),
    "a block added": (
        PARENT,
        PARENT.replace(
            'y = train["target"]\n', 'y = train["target"]\nX = X.fillna(0)\nX["n"] = 1\n'
        ),
    ),
    "lines removed": (
        PARENT,
        PARENT.replace('print("VALIDATION_METRIC:", model.score(X, y))\n', ""),
    ),
    "rewritten": (
        PARENT,
        PARENT.replace("LogisticRegression", "RandomForestClassifier")
        .replace("model.fit(X, y)", "model.fit(X.fillna(0), y)")
        .replace("index=False", "index=False, float_format='%.5f'"),
    ),
    "from nothing": ("", PARENT),
    "to nothing": (PARENT, ""),
    "unchanged": (PARENT, PARENT),
}


@pytest.mark.parametrize("name", EDITS)
def test_real_edits_read_as_diff_u_reads_them(name: str) -> None:
    old, new = EDITS[name]
    expected = difflib.unified_diff(old.splitlines(), new.splitlines(), "#4", "#7", lineterm="")
    assert unified_text(old, new, "#4", "#7") == "".join(line + "\n" for line in expected)


def apply(old: str, diff: CodeDiff) -> list[str]:
    """``old`` with the hunks applied: what a reader of the diff takes the new code to be."""
    source, out, at = old.splitlines(), [], 0
    for hunk in diff:
        begin = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        out += source[at:begin]
        at = begin
        for line in hunk.lines:
            if line.tag != "+":
                assert source[at] == line.text
                at += 1
            if line.tag != "-":
                out.append(line.text)
    return out + source[at:]


def test_random_edits_are_true_diffs_with_true_numbers() -> None:
    rng = random.Random(3)
    words = ["x = 1", "y = 2", "", "print(x)", "def f():", "    return 1", "pass"]
    for _ in range(400):
        old = [rng.choice(words) for _ in range(rng.randrange(0, 30))]
        new = list(old)
        for _ in range(rng.randrange(0, 6)):
            at = rng.randrange(len(new) + 1)
            if rng.random() < 0.5 and at < len(new):
                del new[at]
            else:
                new.insert(at, rng.choice(words))
        old_text, new_text = ("".join(line + "\n" for line in x) for x in (old, new))
        diff = code_diff(old_text, new_text, context=rng.randrange(0, 4))
        assert apply(old_text, diff) == new
        assert diff.cut is None
        added, removed = counts(diff)
        assert added - removed == len(new) - len(old)
        for hunk in diff:
            kept = [line for line in hunk.lines if line.tag == " "]
            assert all(line.old and line.new for line in kept)
            assert all(old[line.old - 1] == line.text for line in hunk.lines if line.old)
            assert all(new[line.new - 1] == line.text for line in hunk.lines if line.new)


def test_counts_say_how_many_lines_came_and_went() -> None:
    assert counts(code_diff(*EDITS["a block added"])) == (2, 0)
    assert counts(code_diff(*EDITS["lines removed"])) == (0, 1)
    assert counts(code_diff(*EDITS["one line changed"])) == (1, 1)
    assert counts(code_diff(PARENT, PARENT)) == (0, 0) and not code_diff(PARENT, PARENT).hunks


def test_side_by_side_pairs_each_removal_with_its_replacement() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB1\nB2\nB3\nd\ne\n"
    rows = side_by_side(code_diff(old, new))
    assert rows == [
        Row("hunk", None, "@@ -1,4 +1,6 @@", None, ""),
        Row("same", 1, "a", 1, "a"),
        Row("changed", 2, "b", 2, "B1"),
        Row("changed", 3, "c", 3, "B2"),
        Row("added", None, "", 4, "B3"),
        Row("same", 4, "d", 5, "d"),
        Row("added", None, "", 6, "e"),
    ]
    rows = side_by_side(code_diff("a\nb\nc\n", "a\nc\n"))
    assert [row.kind for row in rows] == ["hunk", "same", "removed", "same"]


def test_the_pages_shape() -> None:
    data = as_json(code_diff(*EDITS["one line changed"]))
    assert set(data) == {"hunks", "added", "removed", "cut"}
    (hunk,) = data["hunks"]
    assert {k: hunk[k] for k in hunk if k != "lines"} == {
        "old_start": 5,
        "old_len": 7,
        "new_start": 5,
        "new_len": 7,
        "header": "@@ -5,7 +5,7 @@",
    }
    changed = [line for line in hunk["lines"] if line["tag"] != " "]
    assert changed == [
        {"tag": "-", "text": "model = LogisticRegression()", "old": 8, "new": None},
        {"tag": "+", "text": "model = LogisticRegression(C=.5)", "old": None, "new": 8},
    ]
    assert data["added"] == 1 and data["removed"] == 1 and data["cut"] is None
    assert json.loads(json.dumps(data)) == data


def lines(n: int, make: str) -> str:
    return "\n".join(make.format(i=i, m=i % 97, k=(i * 7) % 97) for i in range(n))


HUGE = {
    "periodic (difflib's worst)": (lines(10_000, "l{m}"), lines(10_000, "l{k}")),
    "periodic, just small enough to align": (lines(3_000, "l{m}"), lines(3_000, "l{k}")),
    "one enormous line": ("x" * 3_000_000, "y" * 3_000_000),
    "binary-ish": (bytes(range(256)).decode("latin-1") * 4_000, "\x00\xff" * 500_000),
    "many lines, all changed": (lines(60_000, "v{i}"), lines(60_000, "w{i}")),
}


@pytest.mark.parametrize("name", HUGE)
def test_anything_a_model_writes_is_diffed_in_bounded_time_and_size(name: str) -> None:
    old, new = HUGE[name]
    started = time.perf_counter()
    diff = code_diff(old, new)
    shown = unified_text(old, new)
    rows = side_by_side(diff)
    elapsed = time.perf_counter() - started
    assert elapsed < scaled(10.0), name  # about a second on a quiet machine; difflib alone: minutes
    assert sum(len(h.lines) for h in diff) <= cd.MAX_DIFF_LINES
    assert all(len(line.text) <= cd.MAX_LINE_CHARS for h in diff for line in h.lines)
    assert len(rows) <= 2 * cd.MAX_DIFF_LINES
    assert len(json.dumps(as_json(diff))) < 10_000_000
    assert diff.cut and shown.endswith(f"[diff cut: {diff.cut}]\n")


def test_what_was_cut_is_said() -> None:
    big = code_diff(lines(5_000, "a{i}"), lines(5_000, "b{i}"))
    assert big.cut == (
        "5,000 changed lines against 5,000: too many to align line by line, shown as replaced"
        f"; the diff is longer than {cd.MAX_DIFF_LINES:,} lines: the rest left out"
    )
    assert counts(big) == (5_000, 5_000)  # the counts cover all that was compared
    long_line = code_diff("a\n", "b" * 5_000 + "\n")
    assert long_line.hunks[0].lines[-1].text == "b" * (cd.MAX_LINE_CHARS - 1) + "…"
