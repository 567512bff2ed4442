"""The first line of every baseline solution: its recipe, as JSON, with the kind of task.

Later operators (improve, debug, crossover) read their parents' choices back from this line
alone, so a solution carries everything needed to change it. A line without ``kind`` was
written before other kinds existed: it is a tabular recipe.
"""

from __future__ import annotations

import json
from typing import Any

RECIPE_MARK = "# podium-baseline recipe: "


def recipe_line(kind: str, fields: dict[str, Any]) -> str:
    return RECIPE_MARK + json.dumps({"kind": kind, **fields}, sort_keys=True)


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
