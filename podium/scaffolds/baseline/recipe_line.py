"""The first line of every baseline solution: its recipe, as JSON, with the kind of task.

Later operators (improve, debug, crossover) read their parents' choices back from this line
alone, so a solution carries everything needed to change it. A line without ``kind`` was
written before other kinds existed: it is a tabular recipe.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

RECIPE_MARK = "# podium-baseline recipe: "


def recipe_line(kind: str, fields: dict[str, Any]) -> str:
    return RECIPE_MARK + json.dumps({"kind": kind, **fields}, sort_keys=True)


def unsized_fields(recipe: Any, sizing: dict[str, Any]) -> dict[str, Any]:
    """A recipe dataclass's fields for its line, those of ``sizing`` (name: default, what a
    large task gives up to fit a budget) only where set: a recipe that gives nothing up is
    written as before sizing existed."""
    return {k: v for k, v in asdict(recipe).items() if k not in sizing or v != sizing[k]}


def read_line(code: str) -> tuple[str, dict[str, Any]] | None:
    """(kind, recipe fields) from a solution's first line; None when it carries no recipe."""
    first = code.split("\n", 1)[0]
    if not first.startswith(RECIPE_MARK):
        return None
    try:
        data = json.loads(first[len(RECIPE_MARK) :])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return str(data.pop("kind", "tabular")), data
