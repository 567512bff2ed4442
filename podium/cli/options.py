"""The options several commands share, and the CLI's context settings: one spelling of each
flag, its help and its hint, for every command that takes it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# Full sentences in command lists and option help: click's 80-column cap cuts a command's
# description at ~45 characters, mid-sentence.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
ConfigFile = Annotated[Path | None, typer.Option("--config", "-c", help="TOML config file.")]
Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", "-o", help="Override a config key: -o search.num_drafts=3 (repeatable)."),
]
Plugins = Annotated[
    list[str] | None,
    typer.Option("--plugin", "-p", help="Load a plugin module or .py file (repeatable)."),
]
Steps = Annotated[int | None, typer.Option(help="Stop after this many finished nodes.")]
TimeBudget = Annotated[str | None, typer.Option("--time", help="Wall-clock budget: 90m, 2h...")]
Cost = Annotated[float | None, typer.Option(help="Stop before spending this many USD.")]
DataDir = Annotated[
    Path | None,
    typer.Option(help="Where task data is (prepared). Default: the benchmark's own cache."),
]
PRESET_HELP = "Config preset. Choices: {{presets}}.  [default: none]"  # filled by ChoicesCommand
SCRIPTED_HINT = "one JSON answer per line, e.g. from: podium calls export RUN_DIR > FILE"
DATA_DIR_HINT = "--data-dir is a directory (made on first use); leave it out for the default"
