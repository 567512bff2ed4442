"""A sweep's grid: tasks × strategies × models × seeds, and the run id of each cell.

Run ids are readable and stable (``titanic.greedy.openai-gpt-4.1.s0``) so a run dir can be found
by eye, and unique within a sweep (two cells never share one).
"""

from __future__ import annotations

import itertools
import re

from pydantic import BaseModel, ConfigDict, Field

from podium.errors import UserError


class Grid(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: tuple[str, ...] = Field(min_length=1)  # task references: mini/titanic, a folder...
    strategies: tuple[str, ...] = Field(min_length=1)
    models: tuple[str, ...] = Field(min_length=1)
    seeds: tuple[int, ...] = Field(min_length=1)

    def cells(self) -> list[tuple[str, str, str, int]]:
        """Every (task, strategy, model, seed), task-major: one task's runs start together."""
        return list(itertools.product(self.tasks, self.strategies, self.models, self.seeds))

    def size(self) -> int:
        return len(self.tasks) * len(self.strategies) * len(self.models) * len(self.seeds)


def slug(text: str) -> str:
    """A file-name-safe form of a name: ``openai/gpt-4.1`` → ``openai-gpt-4.1``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "x"


def task_slug(task: str) -> str:
    """``mini/titanic`` → ``titanic``; a folder ``/data/comp-x/`` → ``comp-x``."""
    return slug(task.rstrip("/").rsplit("/", 1)[-1])


def run_id(task: str, strategy: str, model: str, seed: int) -> str:
    return f"{task_slug(task)}.{slug(strategy)}.{slug(model)}.s{seed}"


def check_unique_ids(grid: Grid) -> None:
    """Two cells with one id would share a run dir: refuse (e.g. two folders named alike)."""
    seen: dict[str, tuple[str, str, str, int]] = {}
    for cell in grid.cells():
        rid = run_id(*cell)
        if rid in seen:
            raise UserError(
                f"two runs of the sweep would share the run id {rid}: {seen[rid]} and {cell}",
                hint="give tasks, strategies and models names that differ after slugging",
            )
        seen[rid] = cell


def parse_seeds(text: str) -> tuple[int, ...]:
    """``3`` → seeds 0, 1, 2; ``0,5,7`` → exactly those; ``2-4`` → 2, 3, 4."""
    text = text.strip()
    try:
        if "," in text:
            seeds = tuple(int(s) for s in text.split(",") if s.strip())
        elif re.fullmatch(r"\d+-\d+", text):
            lo, hi = (int(s) for s in text.split("-"))
            seeds = tuple(range(lo, hi + 1))
        else:
            seeds = tuple(range(int(text)))
    except ValueError:
        seeds = ()
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise UserError(
            f"--seeds {text!r}: expected a count (3), a list (0,5,7) or a range (2-4)",
            hint="seeds are distinct non-negative integers",
        )
    return seeds


def parse_list(option: str, text: str) -> tuple[str, ...]:
    """A comma list with no blanks or repeats, for --strategies and --models."""
    items = tuple(item.strip() for item in text.split(","))
    if not text.strip() or any(not item for item in items):
        raise UserError(f"{option} {text!r}: expected a comma-separated list, e.g. greedy,mcts")
    if len(set(items)) != len(items):
        raise UserError(f"{option} {text!r}: repeats an item")
    return items


def describe_grid(g: Grid) -> str:
    """``4 runs = 2 tasks × 1 strategy × 1 model × 2 seeds``."""
    counts = [(len(g.tasks), "task"), (len(g.strategies), "strategy"),
              (len(g.models), "model"), (len(g.seeds), "seed")]  # fmt: skip
    return f"{count(g.size(), 'run')} = " + " × ".join(count(n, noun) for n, noun in counts)


def count(n: int, noun: str) -> str:
    """``1 model``, ``2 models``, ``3 strategies``: ``n`` and the noun, plural unless 1."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"
