"""Command-line conventions: ``--version``, help that shows whole sentences, the defaults and
the names a registry knows, and "did you mean" for a mistyped name. In-process, through
:func:`podium.cli.app.run_cli` (what ``podium`` runs); ``tests/cli/test_app.py`` checks the
process."""

from __future__ import annotations

import re

import pytest

from podium import __version__
from podium.api.config import PRESETS
from podium.api.runs import load_registry
from podium.cli.app import run_cli
from tests.support import TOY_TASK

COMMANDS = ["run", "resume", "grade", "tasks", "plugins", "bench", "compare", "view", "show",
            "rerun", "version", "sandbox", "models", "calls", "export"]  # fmt: skip


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = run_cli(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(autouse=True)
def _terminal_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Help as an 80-column terminal gets it: where click used to cut descriptions short."""
    monkeypatch.setenv("COLUMNS", "80")


def test_version_flag_and_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["--version"], capsys) == (0, f"podium {__version__}\n", "")
    assert _run(["version"], capsys) == (0, f"podium {__version__}\n", "")


def _command_list(help_text: str) -> dict[str, str]:
    """``Commands:`` of a help page: name → its description, continuation lines joined."""
    listing = help_text.split("Commands:\n", 1)[1]
    commands: dict[str, str] = {}
    name = ""
    for line in listing.splitlines():
        match = re.match(r"  (\S+)\s+(.*)", line)
        if match and not line.startswith("    "):
            name = match.group(1)
            commands[name] = match.group(2)
        elif line.strip() and name:
            commands[name] += " " + line.strip()
    return commands


@pytest.mark.parametrize("group", [[], ["sandbox"], ["models"], ["calls"], ["export"]])
def test_command_lists_show_whole_sentences(
    group: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _run([*group, "--help"], capsys)
    assert status == 0
    commands = _command_list(out)
    if not group:
        assert list(commands) == COMMANDS
    for name, text in commands.items():
        assert not text.endswith("..."), (name, text)  # never cut mid-sentence
        assert text.endswith("."), (name, text)
        assert len(text) >= 20, (name, text)


def test_every_command_has_a_help_page(capsys: pytest.CaptureFixture[str]) -> None:
    for command in COMMANDS:
        status, out, err = _run([command, "-h"], capsys)
        assert status == 0 and out.startswith(f"Usage: podium {command}"), (command, err)


def _option_help(help_text: str, option: str) -> str:
    """One option's help, its wrapped lines joined (a word wrapped at its hyphen, too)."""
    lines = help_text.split("Options:\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(option + " "))
    text = [lines[start].lstrip()[len(option) :]]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 10):  # the next option
            break
        text.append(line)
    return re.sub(r"(?<=\w)- (?=\w)", "-", " ".join(" ".join(text).split()))


def test_run_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["run", "--help"], capsys)
    defaults = {
        "--model": "baseline", "--strategy": "greedy", "--steps": "20", "--time": "no limit",
        "--cost": "no limit", "--timeout": "1h", "--workers": "1", "--seed": "0",
        "--sandbox": "auto", "--replay-miss": "error", "--review-model": "--model",
        "--out": "runs/<date>-<task>",
    }  # fmt: skip
    for option, default in defaults.items():
        help_text = _option_help(out, option)
        assert help_text.endswith(f"[default: {default}]"), (option, help_text)


def test_run_help_lists_the_registered_names(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["run", "--help"], capsys)
    registry = load_registry()
    strategies = _option_help(out, "--strategy")
    assert f"Choices: {', '.join(registry.strategies)}." in strategies
    assert {"greedy", "mcts", "evolutionary", "random"} <= set(registry.strategies)
    assert f"Choices: {', '.join(registry.sandboxes)}." in _option_help(out, "--sandbox")
    assert f"Choices: {registry.model_choices()}." in _option_help(out, "--model")
    review = _option_help(out, "--review-model")
    assert "openai/<model>" in review and "baseline" not in review  # it cannot review
    assert f"Choices: {', '.join(PRESETS)}." in _option_help(out, "--preset")
    assert "Benchmarks: arena, mini, mlebench." in " ".join(out.split())
    _, bench, _ = _run(["bench", "--help"], capsys)
    assert f"Choices: {', '.join(registry.strategies)}." in _option_help(bench, "--strategies")


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["run", "titanic"], "did you mean mini/titanic?"),
        (["run", "mini/titanc"], "did you mean mini/titanic?"),
        (["run", "mnii/titanic"], "did you mean mini/titanic?"),
        (["grade", "mini/titanc", str(TOY_TASK / "description.md")], "did you mean mini/titanic?"),
        (["run", str(TOY_TASK), "--strategy", "mtcs"], "did you mean mcts? available: "),
        (["run", str(TOY_TASK), "--sandbox", "bwarp"], "did you mean bwrap? available: "),
        (["run", str(TOY_TASK), "--preset", "aide-mlebench-refrence"],
         "did you mean aide-mlebench-reference? presets: "),
        (["run", str(TOY_TASK), "--model", "opneai/gpt-4o"], "did you mean openai/gpt-4o?"),
        (["run", str(TOY_TASK), "-o", "budget.step=3"], "did you mean steps?"),
        (["tasks", "mnii"], "did you mean mini? available: arena, mini, mlebench"),
        (["bench", "--tasks", "mini", "--strategies", "greedy,mtcs", "--out", "x"],
         "did you mean mcts?"),
    ],
)  # fmt: skip
def test_a_typo_is_answered_with_the_closest_name(
    args: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _run(args, capsys)
    lines = err.splitlines()
    assert status == 2 and len(lines) == 2, err
    assert lines[1].startswith(f"hint: {hint}"), err


def test_a_name_far_from_every_choice_lists_them_without_guessing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, err = _run(["run", str(TOY_TASK), "--strategy", "zzz"], capsys)
    choices = "evolutionary, greedy, mcgs, mcts, one-draft, random, refine"
    assert err.splitlines()[1] == f"hint: available: {choices}"
    _, _, err = _run(["run", "spaceship-xyz"], capsys)
    assert "did you mean" not in err


def test_a_mistyped_option_is_one_line_naming_the_command_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(["run", str(TOY_TASK), "--stepz", "3"], capsys)
    assert status == 2 and out == ""
    assert err.splitlines() == [
        "error: no such option: --stepz (Possible options: --set, --steps, --time)",
        "hint: see: podium run --help",
    ]
