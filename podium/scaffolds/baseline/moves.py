"""Improve's one loop, shared by every kind: change one choice of a recipe, drawn by weight.

Each kind's ``improve`` lists its moves (add a feature, tune a hyperparameter, switch the
model, ...) with a weight each, and :func:`one_move` applies one of them. A move that finds
nothing to change returns None; it is dropped and another is drawn from those left, so the
weights say how often each kind of change is tried *when it applies*. The draws come from the
operator's RNG in a fixed order, so a run is the same for the same seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

R = TypeVar("R")  # the recipe
S = TypeVar("S")  # the task's spec

RecipeMove = Callable[[R, S, random.Random], tuple[R, str] | None]
"""One change to a recipe: the changed recipe and why, or None when it has nothing to change."""


def one_move(
    moves: Sequence[tuple[RecipeMove[R, S], float]],
    parent: R,
    spec: S,
    rng: random.Random,
    fallback: Callable[[R, S, random.Random], tuple[R, str]],
) -> tuple[R, str]:
    """Apply one of ``moves`` to ``parent``: drawn by weight (``rng.choices``), redrawn among
    the others while the drawn one returns None; ``fallback`` when none of them applies."""
    left = list(moves)
    while left:
        move = rng.choices([m for m, _ in left], weights=[w for _, w in left])[0]
        changed = move(parent, spec, rng)
        if changed is not None:
            return changed
        left = [(m, w) for m, w in left if m is not move]
    return fallback(parent, spec, rng)
