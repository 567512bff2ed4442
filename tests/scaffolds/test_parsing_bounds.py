"""The host's parsers of model answers are linear or bounded: a hostile or broken answer (a
replayed record, a model looping on a tag) costs milliseconds and never raises (issue 20)."""

from __future__ import annotations

import time

from podium.scaffolds.parsing import drop_thinking, extract
from podium.scaffolds.review import review_from_text

PROGRAM = "import os\n\nprint(os.getcwd())\n"


def timed(fn: object, *args: str) -> tuple[object, float]:
    start = time.monotonic()
    result = fn(*args)  # type: ignore[operator]
    return result, time.monotonic() - start


def test_unclosed_think_tags_cost_one_pass() -> None:
    """40,000 unclosed tags took the regex 116 s (every tag scanned to the end of the text)."""
    parsed, seconds = timed(extract, "<think>" * 40_000 + "\n```python\n" + PROGRAM + "```\n")
    assert parsed.code == PROGRAM  # type: ignore[attr-defined]
    assert seconds < 5


def test_think_sections_are_dropped_as_before() -> None:
    assert drop_thinking("a<think>b</think>c<THINKING>d</thinking>e") == "ace"
    assert drop_thinking("a<think>b<think>c</think>d") == "ad"  # to the first closing tag
    assert drop_thinking("a</think>b<think>c") == "a</think>b<think>c"  # unmatched tags stay


def test_prose_after_unfenced_code_is_dropped_within_a_bound() -> None:
    """Each dropped paragraph is a compile of the rest: 40,000 of them took 41 s."""
    answer = PROGRAM + "\n" + "Some prose (unbalanced\n\n" * 40_000
    parsed, seconds = timed(extract, answer)
    assert seconds < 5 and parsed.problem  # type: ignore[attr-defined]
    few = extract(PROGRAM + "\nThis prints the directory (as asked.\n\nDone (really.\n")
    assert few.code.strip() == PROGRAM.strip()


def test_many_fenced_blocks_are_stripped_in_one_pass() -> None:
    answer = "Plan.\n" + "```bash\nls\n```\n" * 20_000 + "```python\n" + PROGRAM + "```\nEnd."
    parsed, seconds = timed(extract, answer)
    assert parsed.code == PROGRAM and parsed.plan == "Plan."  # type: ignore[attr-defined]
    assert seconds < 10


def test_a_review_in_text_survives_deep_nesting_and_many_braces() -> None:
    """JSON nested past the recursion limit raised RecursionError out of the review."""
    review = '{"is_bug": false, "summary": "fine", "metric": {"value": 0.5}}'
    text = '{"a":' * 40_000 + " then " + review + " and " + '{"x": 1, ' * 10_000
    found, seconds = timed(review_from_text, text)
    assert found == {"is_bug": False, "summary": "fine", "metric": {"value": 0.5}}
    assert seconds < 5
    for hostile in ('{"is_bug":' * 40_000, '{"is_bug": [' * 40_000, '{"is_bug": "' * 40_000):
        found, seconds = timed(review_from_text, hostile)  # each try reads to the end
        assert found is None and seconds < 5
