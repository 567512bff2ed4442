"""Plan and code extraction from a model's free-form answer (``podium.scaffolds.parsing``)."""

from __future__ import annotations

import pytest

from podium.scaffolds.parsing import extract

PROGRAM = """\
import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("input/train.csv")
model = LogisticRegression().fit(train[["x1", "x2"]], train["y"])
print("VALIDATION_METRIC: 0.9")
"""


def fenced(code: str, lang: str = "python", fence: str = "```") -> str:
    return f"{fence}{lang}\n{code.rstrip()}\n{fence}"


def test_fenced_block_with_prose_around_it() -> None:
    answer = f"I will fit a logistic regression.\n\n{fenced(PROGRAM)}\n\nThis should work well."
    parsed = extract(answer)
    assert parsed.code == PROGRAM
    assert parsed.plan == "I will fit a logistic regression."
    assert parsed.problem is None


@pytest.mark.parametrize("lang", ["python", "Python", "py", "python3", ""])
def test_python_language_tags_and_untagged_blocks_are_code(lang: str) -> None:
    parsed = extract(f"Plan.\n{fenced(PROGRAM, lang)}\n")
    assert parsed.code == PROGRAM


def test_longest_compiling_block_wins_over_a_snippet() -> None:
    snippet = "df.head()\n"
    answer = (
        f"First look at the data:\n{fenced(snippet)}\n"
        f"Then the full program:\n{fenced(PROGRAM)}\n"
        f"And a reminder:\n{fenced('print(1)')}\n"
    )
    parsed = extract(answer)
    assert parsed.code == PROGRAM
    # the plan is prose only: the snippet block before the program is not part of it
    assert "First look at the data:" in parsed.plan
    assert "Then the full program:" in parsed.plan
    assert "df.head()" not in parsed.plan
    assert "```" not in parsed.plan


def test_compiling_block_beats_a_longer_broken_one() -> None:
    broken = PROGRAM + "for i in range(3)\n    print(i)\n"  # missing colon
    good = "import sys\nprint(sys.version)\n"
    parsed = extract(f"Plan.\n{fenced(broken)}\nFixed version:\n{fenced(good)}\n")
    assert parsed.code == good


def test_bash_block_is_ignored() -> None:
    install = "pip install lightgbm xgboost catboost torch torchvision && " * 5
    answer = f"Install first:\n{fenced(install, 'bash')}\nThen run:\n{fenced(PROGRAM)}\n"
    parsed = extract(answer)
    assert parsed.code == PROGRAM
    assert "pip install" not in parsed.code


def test_only_a_shell_block_is_no_code() -> None:
    parsed = extract(f"Run this:\n{fenced('ls -la input/', 'bash')}\n")
    assert parsed.code == ""
    assert parsed.problem


def test_tilde_fences() -> None:
    parsed = extract(f"Plan with tildes.\n{fenced(PROGRAM, fence='~~~')}\nDone.")
    assert parsed.code == PROGRAM
    assert parsed.plan == "Plan with tildes."


def test_longer_fence_may_contain_a_shorter_one() -> None:
    code = 'DOC = """\n```\nnot a fence end\n```\n"""\nprint(DOC)\n'
    parsed = extract(f"Plan.\n{fenced(code, fence='````')}\n")
    assert parsed.code == code


def test_unclosed_final_fence_runs_to_the_end() -> None:
    answer = f"Plan: gradient boosting.\n```python\n{PROGRAM}"  # the answer was cut off
    parsed = extract(answer)
    assert parsed.code == PROGRAM
    assert parsed.plan == "Plan: gradient boosting."


def test_truncated_program_is_still_returned_when_nothing_compiles() -> None:
    cut = PROGRAM + "def predict(x"
    parsed = extract(f"Plan.\n```python\n{cut}")
    assert parsed.code == cut + "\n"


def test_whole_answer_is_a_program() -> None:
    parsed = extract(PROGRAM)
    assert parsed.code == PROGRAM
    assert parsed.plan == ""
    assert parsed.problem is None


def test_prose_then_unfenced_code() -> None:
    prose = "I will train a logistic regression on both features.\nIt is a simple baseline."
    parsed = extract(f"{prose}\n\n{PROGRAM}")
    assert parsed.code == PROGRAM
    assert parsed.plan == prose


def test_prose_only_sets_problem_and_no_code() -> None:
    prose = "I would use gradient boosting with early stopping on a 20% hold-out."
    parsed = extract(prose)
    assert parsed.code == ""
    assert parsed.problem
    assert parsed.plan == prose


def test_empty_answer_is_a_problem() -> None:
    parsed = extract("")
    assert parsed.code == ""
    assert parsed.problem


@pytest.mark.parametrize("tag", ["think", "thinking", "THINK"])
def test_think_sections_are_ignored(tag: str) -> None:
    draft = PROGRAM + "# a much longer draft\n" * 20
    thought = f"<{tag}>Maybe this?\n{fenced(draft)}\nNo, simpler.</{tag}>"
    answer = f"{thought}\nA compact plan.\n{fenced('print(42)')}\n"
    parsed = extract(answer)
    assert parsed.code == "print(42)\n"
    assert parsed.plan == "A compact plan."
    assert "Maybe" not in parsed.plan


def test_think_section_with_prose_only_leaves_the_answer_program() -> None:
    parsed = extract(f"<think>Let me think about the features.</think>\n{PROGRAM}")
    assert parsed.code == PROGRAM
    assert parsed.plan == ""


def test_non_compiling_block_is_returned_when_nothing_compiles() -> None:
    short = "for i in range(3)\n    print(i)\n"
    long = "def f(:\n    return 1\n" + "x = (\n" * 3
    parsed = extract(f"Plan.\n{fenced(short)}\n{fenced(long)}\n")
    assert parsed.code == long.rstrip() + "\n"  # the longest one


def test_plan_comes_from_after_the_block_when_nothing_precedes_it() -> None:
    parsed = extract(f"{fenced(PROGRAM)}\nThis fits a logistic regression.")
    assert parsed.code == PROGRAM
    assert parsed.plan == "This fits a logistic regression."


def test_plan_prefers_the_prose_before_the_block() -> None:
    parsed = extract(f"Before.\n{fenced(PROGRAM)}\nAfter.")
    assert parsed.plan == "Before."
