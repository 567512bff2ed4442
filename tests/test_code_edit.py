"""An edit of a parent's code in SEARCH/REPLACE blocks: applied at the one place each block
matches (as written, or re-indented), in order, all or none; a failure is one bounded line that
names the block and shows the code's nearest lines; and any answer costs milliseconds."""

from __future__ import annotations

import random
import time

import pytest

from podium import code_edit as ce
from podium.code_edit import (
    INSTRUCTIONS,
    Change,
    Edit,
    apply_edits,
    has_edits,
    parse_edits,
    render_edits,
)
from tests.support import scaled

PARENT = """\
import pandas as pd
from sklearn.linear_model import LogisticRegression


class Model:
    def __init__(self):
        self.model = LogisticRegression()

    def fit(self, X, y):
        self.model.fit(X, y)
        return self


train = pd.read_csv("input/train.csv")
X, y = train.drop(columns=["target"]), train["target"]
model = Model().fit(X, y)
print("VALIDATION_METRIC:", model.model.score(X, y))
"""


def block(search: str, replace: str) -> str:
    """One block as models write it, spelled out here (not by ``render_edits``), so the
    parser is checked against the format itself."""
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def applied(answer: str, code: str = PARENT) -> str:
    result = apply_edits(code, answer)
    assert result.ok, result.reason
    assert result.code is not None and result.reason is None
    return result.code


def failure(answer: str, code: str = PARENT) -> str:
    result = apply_edits(code, answer)
    assert result.code is None and not result.changes, "it applied"
    assert result.reason is not None and result.reason.startswith(ce.REASON_PREFIX)
    assert "\n" not in result.reason and len(result.reason) <= ce.MAX_REASON_CHARS
    return result.reason


def test_a_block_replaces_the_one_place_its_search_matches() -> None:
    answer = (
        "Use a stronger regulariser.\n\n```python\n"
        + block(
            "        self.model = LogisticRegression()\n",
            "        self.model = LogisticRegression(C=0.1, max_iter=1000)\n",
        )
        + "```\nThat is all.\n"
    )
    result = apply_edits(PARENT, answer)
    assert result.code == PARENT.replace(
        "LogisticRegression()", "LogisticRegression(C=0.1, max_iter=1000)"
    )
    assert result.changes == (Change(block=1, line=7, removed=1, added=1, how="exact"),)


def test_a_search_quoted_without_its_indentation_is_matched_and_the_replace_reindented() -> None:
    dedented = block(
        "def fit(self, X, y):\n    self.model.fit(X, y)\n    return self\n",
        "def fit(self, X, y):\n    self.model.fit(X.fillna(0), y)\n\n    return self\n",
    )
    expected = PARENT.replace(
        "        self.model.fit(X, y)\n        return self\n",
        "        self.model.fit(X.fillna(0), y)\n\n        return self\n",
    )
    assert applied(dedented) == expected
    # Over-indented by two levels, with trailing spaces in the SEARCH: the same edit.
    deeper = block(
        "            def fit(self, X, y):  \n                self.model.fit(X, y)\t\n"
        "                return self\n",
        "            def fit(self, X, y):\n                self.model.fit(X.fillna(0), y)\n\n"
        "                return self\n",
    )
    assert applied(deeper) == expected
    result = apply_edits(PARENT, dedented)
    assert result.changes == (Change(1, 9, 3, 4, "tolerant"),)


def test_blocks_apply_in_order_each_to_the_code_the_earlier_ones_left() -> None:
    answer = (
        "First rename the class, then use the new name.\n"
        + block("class Model:\n", "class Classifier:\n")
        + "\n"
        + block(  # matches only once block 1 has applied
            "class Classifier:\n    def __init__(self):\n",
            "class Classifier:\n    def __init__(self, C=1.0):\n",
        )
        + block("model = Model().fit(X, y)\n", "model = Classifier().fit(X, y)\n")
    )
    code = applied(answer)
    assert "class Classifier:\n    def __init__(self, C=1.0):\n" in code
    assert "model = Classifier().fit(X, y)" in code and "Model" not in code
    assert [c.line for c in apply_edits(PARENT, answer).changes] == [5, 5, 16]
    assert [edit.line for edit in parse_edits(answer).edits] == [2, 8, 15]


def test_an_empty_search_appends_its_replace_at_the_end() -> None:
    answer = block("", 'pd.DataFrame({"id": [1]}).to_csv("submission/submission.csv")\n')
    assert (
        applied(answer)
        == PARENT + 'pd.DataFrame({"id": [1]}).to_csv("submission/submission.csv")\n'
    )
    no_newline = applied(answer, PARENT.rstrip("\n"))
    assert no_newline == applied(answer)  # a last line without its newline gets one
    assert apply_edits(PARENT, answer).changes == (Change(1, 18, 0, 1, "appended"),)
    assert "both empty" in failure(block("", "") + block("\n", "  \n"))


def test_line_endings_do_not_matter() -> None:
    answer = block("class Model:\n", "class Classifier:\n")
    expected = PARENT.replace("class Model:", "class Classifier:")
    assert applied(answer.replace("\n", "\r\n")) == expected
    assert applied(answer, PARENT.replace("\n", "\r\n")) == expected  # the new code ends in \n
    assert applied(answer.replace("\n", "\r")) == expected


def test_markers_as_models_write_them() -> None:
    """Miscounted, indented, with trailing spaces; a ``=======`` in a REPLACE is its text (a
    docstring's heading), and outside any block it is prose (a Markdown heading)."""
    answer = (
        "Plan\n=======\n\n"
        "  <<<<<< SEARCH  \nclass Model:\n  ========\n"
        'class Model:\n    """Model\n    =======\n    """\n'
        " >>>>>>>> REPLACE\n"
    )
    assert applied(answer) == PARENT.replace(
        "class Model:\n", 'class Model:\n    """Model\n    =======\n    """\n'
    )


def test_a_search_that_is_not_there_names_the_block_and_shows_the_nearest_lines() -> None:
    answer = (
        block("class Model:\n", "class Classifier:\n")
        + block(
            "    def fit(self, X, y):\n        self.model.fit(X, y, sample_weight=w)\n",
            "    def fit(self, X, y):\n        pass\n",
        )
        + block("model = Model().fit(X, y)\n", "model = None\n")
    )
    reason = failure(answer)
    assert reason == (
        "edit did not apply: block 2 of 3: its SEARCH text (2 lines, from "
        "'    def fit(self, X, y):') is not in the code as block 1 left it; nearest, lines "
        "9-10: 9 '    def fit(self, X, y):' | 10 '        self.model.fit(X, y)'; first "
        "difference: SEARCH line 2 is '        self.model.fit(X, y, sample_weight=w)'"
    )
    # One line, nothing like it in the code: difflib finds the most alike.
    reason = failure(block('print("VALIDATION_METRIC:", model.score(X, y))\n', "pass\n"))
    assert reason.endswith(
        "is not in the parent's code; nearest, line 17 "
        "'print(\"VALIDATION_METRIC:\", model.model.score(X, y))'"
    )
    reason = failure(block("import torch\n", "import torch.nn\n"))
    assert reason.endswith("is not in the parent's code; no line of the code resembles it")


def test_a_difference_past_the_lines_shown_quotes_the_code_line_too() -> None:
    code = "".join(f"step_{i} = {i}\n" for i in range(10))
    search = "".join(f"step_{i} = {i}\n" for i in range(2, 7)).replace("step_6 = 6", "step_6 = 60")
    reason = failure(block(search, "pass\n"), code)
    assert reason.endswith(
        "nearest, lines 3-5: 3 'step_2 = 2' | 4 'step_3 = 3' | 5 'step_4 = 4'; first "
        "difference: SEARCH line 5 is 'step_6 = 60', where line 7 is 'step_6 = 6'"
    )


def test_a_block_applied_already_is_said() -> None:
    code = applied(block("class Model:\n", "class Classifier:\n"))
    reason = failure(block("class Model:\n", "class Classifier:\n"), code)
    assert reason.endswith("its REPLACE text is already there, at line 5")


def test_a_search_found_at_two_places_is_ambiguous() -> None:
    reason = failure(block("        return self\n", "        return None\n"), PARENT * 2)
    assert reason == (
        "edit did not apply: block 1 of 1: ambiguous: its SEARCH text is found at lines 11 "
        "and 28 of the parent's code; include more lines around it so that it matches one place"
    )
    code = "def f():\n    x = 1\n\nclass A:\n    def g(self):\n        x = 1\n"
    reason = failure(block("x = 1\n", "x = 2\n"), code)
    assert "found (ignoring indentation) at lines 2 and 6" in reason
    # Indented unevenly relative to the code, or with tabs for spaces: not a match.
    unevenly = "those lines are there, indented differently from line to line (or tabs for spaces)"
    assert failure(block("def f():\nx = 1\n", "pass\n"), code).endswith(unevenly)
    assert failure(block("def f():\n\tx = 1\n", "pass\n"), code).endswith(unevenly)


def test_an_answer_cut_off_or_without_blocks_is_refused() -> None:
    cases = {
        "block 2 (answer line 6) is cut off: the answer ends before its >>>>>>> REPLACE": (
            block("class Model:\n", "class A:\n") + "<<<<<<< SEARCH\nimport pandas as pd\n=======\n"
        ),
        "the answer has no <<<<<<< SEARCH / ======= / >>>>>>> REPLACE block": PARENT,
        "answer line 3: a >>>>>>> REPLACE with no <<<<<<< SEARCH before it": (
            "class Model:\n=======\n>>>>>>> REPLACE\n"
        ),
        "block 1 (answer line 1): a >>>>>>> REPLACE at answer line 3, before its =======": (
            "<<<<<<< SEARCH\nclass Model:\n>>>>>>> REPLACE\n"
        ),
        "block 1 (answer line 1): a new <<<<<<< SEARCH at answer line 4, before its "
        ">>>>>>> REPLACE": "<<<<<<< SEARCH\nclass Model:\n=======\n" + block("a\n", "b\n"),
        "there is no block to apply": "",
    }
    for reason, answer in cases.items():
        got = failure(answer) if answer else apply_edits(PARENT, []).reason
        assert got == ce.REASON_PREFIX + reason
    assert not has_edits(PARENT) and has_edits(cases[next(iter(cases))])


def test_no_block_applies_when_one_fails() -> None:
    answer = block("class Model:\n", "class A:\n") + block("no such line\n", "x\n")
    assert apply_edits(PARENT, answer) == ce.EditResult(None, failure(answer))


def test_what_render_writes_parses_back_and_applies() -> None:
    """Random edits of random code: rendered, parsed and applied, they make what splicing the
    lines makes."""
    rng = random.Random(40)
    for _ in range(200):
        code_lines = [f"{'    ' * rng.randrange(3)}v{i} = {rng.randrange(9)}" for i in range(30)]
        start = rng.randrange(30)
        span = rng.randrange(1, 4)
        search = code_lines[start : start + span]
        replace = [f"w{j} = {rng.randrange(99)}" for j in range(rng.randrange(4))]
        edits = [Edit("".join(s + "\n" for s in search), "".join(r + "\n" for r in replace))]
        answer = render_edits(edits)
        assert [(e.search, e.replace) for e in parse_edits(answer).edits] == [
            (e.search, e.replace) for e in edits
        ]
        expected = code_lines[:start] + replace + code_lines[start + span :]
        result = apply_edits("\n".join(code_lines) + "\n", answer)
        assert result.code == "".join(line + "\n" for line in expected)
    with pytest.raises(ValueError, match="marker"):
        render_edits([("x = 1\n=======\n", "y\n")])


def test_the_instructions_example_is_a_block() -> None:
    parsed = parse_edits(INSTRUCTIONS)
    assert parsed.problem is None and len(parsed.edits) == 1
    assert parsed.edits[0].search == "lines copied exactly from the current code\n"


def test_what_a_reason_quotes_is_escaped_and_short() -> None:
    evil = "\x1b]52;c;aGk=\x07\u202e" + "x" * 10_000
    reason = failure(block(f"{evil}\nclass Model:\n", "pass\n"))
    assert "\x1b" not in reason and "\u202e" not in reason and "\x07" not in reason
    assert "\\x1b" in reason and "…" in reason


HOSTILE = {
    "a 10 MB search": lambda: block("x = 1\n" * 1_700_000, "pass\n"),
    "100,000 blocks": lambda: block("a\n", "b\n") * 100_000,
    "blocks past the cap": lambda: block("a\n", "b\n") * (ce.MAX_BLOCKS + 1),
    "a 900 KB search not there": lambda: block("x = 2\n" * 150_000, "pass\n"),
    "one huge line": lambda: block("y" * 900_000 + "\n", "pass\n"),
    "many places to check": lambda: block("x = 1\n" * 999 + "  x = 1\n", "pass\n"),
    "many places, two lines": lambda: block("x = 1\n  x = 1\n", "pass\n"),
    "an indentation made huge": lambda: block("x\n", "y\n" * 300_000),
    "markers and fences": lambda: ("<<<<<<\n" + "```\n" + "=" * 9 + "\n") * 40_000,
    "empty lines": lambda: "\n" * ce.MAX_ANSWER_CHARS,
}
CODES = {
    "many places to check": "x = 1\n" * 160_000,
    "a 900 KB search not there": "x = 1\n" * 160_000,
    "many places, two lines": "x = 1\n" * 160_000,
    "an indentation made huge": " " * 900_000 + "x\n",
    "one huge line": "y" * 990_000 + "z\n",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_any_answer_costs_milliseconds_and_a_bounded_reason(name: str) -> None:
    answer, code = HOSTILE[name](), CODES.get(name, PARENT)
    started = time.perf_counter()
    reason = failure(answer, code)
    elapsed = time.perf_counter() - started
    assert elapsed < scaled(1.0), f"{name}: {elapsed:.2f} s"  # well under on a quiet machine
    expected = {
        "a 10 MB search": "past the 1,000,000 an edit may have",
        "100,000 blocks": "past the 1,000,000 an edit may have",
        "blocks past the cap": f"more than {ce.MAX_BLOCKS} blocks",
        "a 900 KB search not there": "nearest, lines 1-3: 1 'x = 1' | 2",
        "one huge line": "nearest, line 1 'yyyy",
        "many places to check": "at too many places to check",
        "many places, two lines": "at too many places to check",
        "an indentation made huge": f"past the {ce.MAX_CODE_CHARS:,} characters allowed",
        "markers and fences": "has no <<<<<<< SEARCH",
        "empty lines": "has no <<<<<<< SEARCH",
    }[name]
    assert expected in reason, reason


def test_the_parent_code_is_capped_too() -> None:
    reason = failure(block("a\n", "b\n"), "a\n" * (ce.MAX_CODE_CHARS // 2 + 1))
    assert reason.endswith(f"past the {ce.MAX_CODE_CHARS:,} an edit applies to")


def test_the_largest_edit_allowed_applies_quickly() -> None:
    """As many blocks as allowed, each matched only once re-indented, on code as long as
    allowed: each block joins and searches the whole code, twice."""
    code = "".join(
        f"    value_{i} = compute(value_{i - 1}, {i})  # a comment\n" for i in range(17_000)
    )
    assert len(code) <= ce.MAX_CODE_CHARS
    step = 17_000 // ce.MAX_BLOCKS
    edits = [
        (f"value_{i} = compute(value_{i - 1}, {i})  # a comment\n", f"value_{i} = {i}\n")
        for i in range(0, step * ce.MAX_BLOCKS, step)
    ]
    started = time.perf_counter()
    result = apply_edits(code, render_edits(edits))
    elapsed = time.perf_counter() - started
    assert elapsed < scaled(1.0), f"{elapsed:.2f} s"  # 0.2 s on a quiet machine
    assert len(result.changes) == ce.MAX_BLOCKS and {c.how for c in result.changes} == {"tolerant"}
    assert result.code is not None and f"\n    value_{step} = {step}\n" in result.code
