"""``one_move``: improve's shared loop draws moves by weight and drops those that do nothing."""

from __future__ import annotations

import random

from podium.scaffolds.baseline.moves import RecipeMove, one_move

Changed = tuple[str, str] | None


def _never(recipe: str, spec: None, rng: random.Random) -> Changed:
    return None


def _append(recipe: str, spec: None, rng: random.Random) -> Changed:
    return recipe + "+", "append"


def _fallback(recipe: str, spec: None, rng: random.Random) -> tuple[str, str]:
    return recipe + "!", "fallback"


def test_a_move_with_nothing_to_change_is_dropped_and_another_drawn() -> None:
    moves: list[tuple[RecipeMove[str, None], float]] = [(_never, 0.9), (_append, 0.1)]
    for seed in range(20):
        assert one_move(moves, "r", None, random.Random(seed), _fallback) == ("r+", "append")
    assert moves == [(_never, 0.9), (_append, 0.1)]  # the caller's list is left as it was


def test_the_fallback_when_no_move_applies() -> None:
    moves: list[tuple[RecipeMove[str, None], float]] = [(_never, 1.0)]
    assert one_move(moves, "r", None, random.Random(0), _fallback) == ("r!", "fallback")
    assert one_move([], "r", None, random.Random(0), _fallback) == ("r!", "fallback")


def test_the_draws_are_the_weighted_choices_of_the_rng() -> None:
    """The same draws, in the same order, as ``rng.choices`` over the moves left: a seed
    gives the same improves."""
    seen: list[str] = []

    def named(name: str, result: bool) -> RecipeMove[str, None]:
        def move(recipe: str, spec: None, rng: random.Random) -> Changed:
            seen.append(name)
            return (name, name) if result else None

        return move

    a, b, c = named("a", False), named("b", False), named("c", True)
    moves = [(a, 0.5), (b, 0.3), (c, 0.2)]
    for seed in range(30):
        seen.clear()
        one_move(moves, "r", None, random.Random(seed), _fallback)
        expected: list[str] = []
        rng, left = random.Random(seed), list(moves)
        while True:
            move = rng.choices([m for m, _ in left], weights=[w for _, w in left])[0]
            expected.append({a: "a", b: "b", c: "c"}[move])
            if move is c:
                break
            left = [(m, w) for m, w in left if m is not move]
        assert seen == expected
