"""The command line as users meet it: one-line errors with hints, never a traceback."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from podium import __version__
from tests.support import MLEBENCH_FIXTURE, TOY_SESSION, TOY_TASK, files_under, podium_cli

pytestmark = pytest.mark.slow  # each case starts a Python process
SCRIPTED = f"scripted:{TOY_SESSION}"


def _error_lines(*args: str) -> list[str]:
    result = podium_cli(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stderr.strip().splitlines()


def test_unknown_task_lists_what_a_task_can_be() -> None:
    lines = _error_lines("run", "nosuchbench/task", "--model", SCRIPTED)
    assert lines[0] == "error: unknown task 'nosuchbench/task'"
    assert lines[1].startswith("hint: give <benchmark>/<task id>")
    assert len(lines) == 2


MODELS = (
    "baseline, anthropic/<model>, litellm/<provider>/<model>, openai/<model>, scripted:<file.jsonl>"
)


def test_unknown_model_provider_lists_the_providers() -> None:
    lines = _error_lines("run", str(TOY_TASK), "--model", "opneai/gpt-4o")
    assert lines == [
        "error: unknown model provider 'opneai'",
        f"hint: did you mean openai/gpt-4o? available: {MODELS}",
    ]


def test_an_empty_model_says_how_to_give_one() -> None:
    lines = _error_lines("run", str(TOY_TASK), "-o", 'model.name=""')
    assert lines[0] == "error: no model given"
    assert lines[1] == f"hint: use --model; available: {MODELS}"


def test_unknown_strategy_lists_the_strategies() -> None:
    lines = _error_lines("run", str(TOY_TASK), "--model", SCRIPTED, "--strategy", "mtcs")
    assert lines == [
        "error: unknown strategy 'mtcs'",
        "hint: did you mean mcts? available: "
        "evolutionary, greedy, mcgs, mcts, one-draft, random, refine",
    ]


def test_task_folder_missing_a_file_names_it_and_what_it_holds(tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(TOY_TASK, task)
    (task / "description.md").unlink()
    lines = _error_lines("run", str(task), "--model", SCRIPTED)
    assert lines[0] == f"error: task folder {task} has no description.md"
    assert (
        lines[1] == "hint: description.md holds the competition description the agent reads "
        "(markdown)"
    )


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("budget.steps=many", "error: budget.steps: Input should be a valid integer"),
        ("search.num_draft=3", "error: search.num_draft: unknown key"),
        ("budget.step=3", "error: budget.step: unknown key"),
        ("exec.timeout=soon", "error: exec.timeout: not a duration"),
        ("nonsense", "error: -o 'nonsense': expected KEY=VALUE"),
    ],
)
def test_bad_config_values_name_the_key(override: str, expected: str) -> None:
    lines = _error_lines("run", str(TOY_TASK), "--model", SCRIPTED, "-o", override)
    assert lines[0].startswith(expected)
    assert len(lines) <= 2
    if "unknown key" in expected:
        assert lines[1] in ("hint: did you mean num_drafts?", "hint: did you mean steps?")


def test_resume_of_something_that_is_not_a_run(tmp_path: Path) -> None:
    lines = _error_lines("resume", str(tmp_path))
    assert lines == [f"error: {tmp_path} is not a Podium run directory "
                     "(no config.toml or journal.sqlite)",
                     "hint: a run directory holds config.toml and journal.sqlite"]  # fmt: skip


def test_the_process_prints_one_error_line_a_hint_and_its_version(tmp_path: Path) -> None:
    binary = tmp_path / "podium.toml"
    binary.write_bytes(b"\xff\xfe\x00[budget]")
    lines = _error_lines("run", str(TOY_TASK), "-c", str(binary))
    assert lines == [
        f"error: {binary} is not a text file (not UTF-8)",
        "hint: a config file is TOML text, e.g. [budget] steps = 10 (a run dir keeps one: "
        "config.toml)",
    ]
    version = podium_cli("--version")
    assert (version.returncode, version.stdout) == (0, f"podium {__version__}\n")


def test_plugins_lists_every_kind_with_its_origin() -> None:
    result = podium_cli("plugins")
    assert result.returncode == 0
    rows = [line.split()[:3] for line in result.stdout.splitlines()[1:]]
    assert ["strategy", "greedy", "builtin"] in rows
    assert ["sandbox", "local", "builtin"] in rows
    assert ["backend", "scripted:<file.jsonl>", "builtin"] in rows
    assert ["operators", "llm", "builtin"] in rows


def test_the_quickstart_run_prints_a_row_per_node_and_the_best(
    tmp_path: Path, data_dir: Path
) -> None:
    result = podium_cli("run", str(TOY_TASK), "--model", f"scripted:{TOY_SESSION}",
                        "--steps", "6", "--out", str(tmp_path / "run"),
                        "--data-dir", str(data_dir))  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line[:4].strip().isdigit()]
    assert [row[0] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    assert rows[1][4:6] == ["buggy:", "KeyError:"]
    assert "best: node 1, validation metric 0.94 (higher is better)" in result.stdout
    assert "sandbox  bwrap: memory" in result.stdout
    assert f"watch    podium view {tmp_path / 'run'}" in result.stdout  # how to see the graph
    assert "warning" not in result.stderr


def test_grade_an_mlebench_competition_folder_nan_and_unreadable(tmp_path: Path) -> None:
    # A competition folder of an MLE-bench checkout, its data prepared by `mlebench prepare`.
    iris = "tiny-iris-species"
    folder = MLEBENCH_FIXTURE / "mlebench" / "competitions" / iris
    data = MLEBENCH_FIXTURE / "data"
    before = files_under(MLEBENCH_FIXTURE)
    lines = (data / iris / "prepared" / "public" / "sample_submission.csv").read_text().splitlines()
    lines[1] = lines[1].split(",")[0] + ",,0.5,0.5"  # a blank probability: NaN log loss
    blank = tmp_path / "blank.csv"
    blank.write_text("\n".join(lines) + "\n")

    graded = podium_cli("grade", str(folder), str(blank), "--data-dir", str(data))
    assert graded.returncode == 0, graded.stderr
    assert graded.stdout.splitlines()[0] == (
        "score: nan on the private answers (the grader returned NaN; MLE-bench counts the "
        "submission as valid): no medal"
    )
    assert "thresholds: gold <= " in graded.stdout
    as_json = podium_cli("grade", str(folder), str(blank), "--data-dir", str(data), "--json")
    report = json.loads(as_json.stdout)  # NaN, as grade.json and MLE-bench's reports write it
    assert math.isnan(report["score"]) and report["valid_submission"] is True
    assert report["competition_id"] == iris

    unreadable = tmp_path / "unreadable.csv"
    unreadable.write_bytes(b"\xff\xfeid\n")
    bad = podium_cli("grade", str(folder), str(unreadable), "--data-dir", str(data))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr  # graded: invalid
    assert bad.stdout.startswith(
        "score: none, invalid submission: cannot read the submission: 'utf-8' codec can't decode"
    )
    assert files_under(MLEBENCH_FIXTURE) == before  # no lock, no marker written there

    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    looped = podium_cli("grade", str(folder), str(loop), "--data-dir", str(data))
    assert looped.returncode != 0 and "Traceback" not in looped.stderr
    assert looped.stderr.startswith("error: cannot follow the path") and "hint:" in looped.stderr
    too_long = podium_cli("grade", str(folder), str(tmp_path / ("a" * 300 + ".csv")),
                          "--data-dir", str(data))  # fmt: skip
    assert too_long.returncode == 2 and "File name too long" in too_long.stderr
