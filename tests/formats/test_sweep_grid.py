from __future__ import annotations

import pytest

from podium.errors import UserError
from podium.formats import Grid, check_unique_ids, describe_grid, parse_list, parse_seeds, run_id


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("3", (0, 1, 2)), ("1", (0,)), ("0,5,7", (0, 5, 7)), ("2-4", (2, 3, 4)), (" 4,2 ", (4, 2))],
)
def test_seeds_are_a_count_a_list_or_a_range(text: str, seeds: tuple[int, ...]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["0", "", "x", "1,1", "-1,2", "4-2", "1.5"])
def test_bad_seeds_are_one_clear_error(text: str) -> None:
    with pytest.raises(UserError, match="--seeds"):
        parse_seeds(text)


def test_lists_refuse_blanks_and_repeats() -> None:
    assert parse_list("--strategies", "greedy, mcts") == ("greedy", "mcts")
    for bad in ("", "greedy,,mcts", "greedy,greedy"):
        with pytest.raises(UserError, match="--strategies"):
            parse_list("--strategies", bad)


def test_run_ids_are_readable_and_file_safe() -> None:
    assert (
        run_id("mini/titanic", "greedy", "openai/gpt-4.1", 2) == "titanic.greedy.openai-gpt-4.1.s2"
    )
    assert run_id("/data/comp x/", "my.mod:Strat", "scripted:/a b.jsonl", 0) == (
        "comp-x.my.mod-Strat.scripted-a-b.jsonl.s0"
    )


def test_the_grid_is_the_full_product_task_major() -> None:
    grid = Grid(tasks=("a/x", "a/y"), strategies=("g", "m"), models=("baseline",), seeds=(0, 1))
    cells = grid.cells()
    assert grid.size() == len(cells) == 8
    assert cells[:4] == [("a/x", "g", "baseline", 0), ("a/x", "g", "baseline", 1),
                         ("a/x", "m", "baseline", 0), ("a/x", "m", "baseline", 1)]  # fmt: skip


def test_cells_that_would_share_a_run_dir_are_refused() -> None:
    grid = Grid(tasks=("/one/comp", "/two/comp"), strategies=("g",), models=("b",), seeds=(0,))
    with pytest.raises(UserError, match=r"share the run id comp\.g\.b\.s0"):
        check_unique_ids(grid)


def test_the_grid_is_described_with_counts_in_the_right_number() -> None:
    one = Grid(tasks=("a/x",), strategies=("g",), models=("baseline",), seeds=(0,))
    assert describe_grid(one) == "1 run = 1 task × 1 strategy × 1 model × 1 seed"
    two = Grid(tasks=("a/x", "a/y"), strategies=("g", "m"), models=("b", "c"), seeds=(0, 1, 2))
    assert describe_grid(two) == "24 runs = 2 tasks × 2 strategies × 2 models × 3 seeds"
