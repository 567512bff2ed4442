"""The parts of a recipe an ablation takes out one at a time, and how refine strengthens each.

Each kind's recipe module lists the parts of a recipe (``parts(recipe, spec)``): a real block of
the solution (the model, a feature group, a preprocessing step), the recipe without it (the
block dropped, or the model replaced by a trivial stand-in), and the change refine makes to that
block alone when an ablation shows it matters most. The model comes first, when the recipe has
one to replace; refine changes it when no ablation says otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

R = TypeVar("R")  # the recipe

NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789 -")
"""A part's name is printed on its ``ABLATION <part>: <score>`` line inside an f-string: plain
words only (no colon, brace or quote)."""


@dataclass(frozen=True)
class Part(Generic[R]):
    """One ablatable part of a recipe.

    ``name``: what the variant lacks, in a few words a user understands ("no derived
    features", "constant model"); the ablation line's part. ``without``: the recipe with the
    part dropped or replaced. ``instead``: what the variant does in its place, for the plan.
    ``refine``: a stronger or different setting of this part only, and why (None when the part
    has none to offer). ``model``: the part is the model (refined when no ablation says which
    part matters)."""

    name: str
    without: R
    instead: str
    refine: Callable[[random.Random], tuple[R, str] | None]
    model: bool = False

    def __post_init__(self) -> None:
        if not self.name or not set(self.name) <= NAME_CHARACTERS:
            raise ValueError(f"an ablation part's name must be plain words: {self.name!r}")


def nothing(rng: random.Random) -> None:
    """The refine of a part that has no stronger setting (scaling is on, or it is not)."""
