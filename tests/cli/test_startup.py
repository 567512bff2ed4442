"""``podium --version`` and ``podium --help`` start at once: they import none of the heavy
libraries (data frames, the graph layout, plots, kernels, model SDKs) that the rooms below use.

Each probe is a fresh interpreter running the console script's ``main`` as the ``podium``
command does, then listing which of :data:`HEAVY` it imported: a module imported at the top
of a command module, or a room's ``__init__`` that loads the room, shows up here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pandas",
    "numpy",
    "igraph",
    "matplotlib",
    "jupyter_client",
    "openai",
    "anthropic",
    "litellm",
)
PROBE = """
import json, sys
heavy = set(json.loads(sys.argv[2]))
sys.argv = ["podium", *json.loads(sys.argv[1])]
try:
    {call}
except SystemExit:
    pass
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & heavy)))
"""


def heavy_after(call: str, argv: list[str]) -> list[str]:
    """The heavy modules a fresh interpreter holds after ``call`` with ``argv``."""
    code = PROBE.format(call=call)
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["version"]])
def test_the_command_lines_help_and_version_import_nothing_heavy(argv: list[str]) -> None:
    assert heavy_after("from podium.cli import main; main()", argv) == []


def test_importing_the_command_line_and_each_room_imports_nothing_heavy() -> None:
    rooms = "podium.cli.app, podium.formats, podium.scaffolds, podium.sandbox, podium.plugins, "
    rooms += "podium.benchmarks, podium.experiments, podium.viewer, podium.api, podium.testing"
    assert heavy_after(f"import {rooms}", []) == []


def test_the_probe_sees_a_heavy_import() -> None:
    """Not vacuous: a module that does need a heavy library shows it."""
    seen = heavy_after("import podium.viewer.layout, podium.sandbox.kernel", [])
    assert {"igraph", "jupyter_client"} <= set(seen)


def command_lines() -> list[list[str]]:
    """Every command and subcommand of ``podium``, as the words that name it."""
    import click
    import typer.main

    from podium.cli.app import app

    found: list[list[str]] = []

    def walk(command: click.Command, words: list[str]) -> None:
        found.append(words)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*words, name])

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("words", command_lines(), ids=" ".join)
def test_every_help_is_filled_in(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The defaults and choices a help text gets when printed are there: no mark is left."""
    from podium.cli import run_cli

    assert run_cli([*words, "--help"]) == 0
    shown = capsys.readouterr().out
    assert "Usage" in shown
    assert "{{" not in shown


def test_run_help_shows_the_configs_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import run_cli

    assert run_cli(["run", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "[default: 20]" in shown  # budget.steps, read from RunConfig when printed
    assert "aide-mlebench" in shown  # the presets
