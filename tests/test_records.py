"""``Direction``: the one helper that knows which way a validation metric improves."""

from __future__ import annotations

import math

import pytest

from podium.records import Direction, Metric, Node, NodeState
from podium.tree import SearchTree

NAN = float("nan")


def _node(node_id: int, value: float | None, lower_is_better: bool = False) -> Node:
    metric = None if value is None else Metric(value=value, lower_is_better=lower_is_better)
    return Node(id=node_id, operator="draft", state=NodeState.DONE, metric=metric)


def test_the_direction_of_a_flag_and_back() -> None:
    assert Direction.of(True) is Direction.LOWER
    assert Direction.of(False) is Direction.HIGHER
    assert Direction.LOWER.lower_is_better and not Direction.HIGHER.lower_is_better
    assert str(Direction.LOWER) == "lower is better"  # the phrase the prompts use
    assert str(Direction.HIGHER) == "higher is better"


def test_the_score_is_larger_when_better_in_both_directions() -> None:
    assert Direction.HIGHER.score(0.25) == 0.25
    assert Direction.LOWER.score(0.25) == -0.25
    for direction in Direction:
        best = 0.1 if direction.lower_is_better else 0.9
        assert max((0.1, 0.5, 0.9), key=direction.score) == best
    assert Direction.LOWER.score(3.0) + Direction.LOWER.score(4.0) == Direction.LOWER.score(7.0)
    assert math.isnan(Direction.LOWER.score(NAN)) and math.isnan(Direction.HIGHER.score(NAN))


def test_better_is_strict_and_false_around_nan() -> None:
    assert Direction.LOWER.better(0.1, 0.2) and not Direction.LOWER.better(0.2, 0.1)
    assert Direction.HIGHER.better(0.2, 0.1) and not Direction.HIGHER.better(0.1, 0.2)
    for direction in Direction:
        assert not direction.better(0.3, 0.3)  # a tie is not better
        assert not direction.better(NAN, 0.3) and not direction.better(0.3, NAN)
        assert not direction.better(NAN, NAN)


def test_best_first_ranks_by_direction_then_id_and_skips_unmeasured_nodes() -> None:
    nodes = [_node(4, 0.5), _node(1, 0.9), _node(3, None), _node(2, 0.5), _node(5, 0.1)]
    assert [n.id for n in Direction.HIGHER.best_first(nodes)] == [1, 2, 4, 5]
    assert [n.id for n in Direction.LOWER.best_first(nodes)] == [5, 2, 4, 1]
    assert Direction.LOWER.best_first(iter(nodes)) == Direction.LOWER.best_first(nodes)
    assert Direction.HIGHER.best_first([]) == []


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_best_first_keeps_a_nan_where_the_signed_sort_put_it(lower_is_better: bool) -> None:
    """NaN handling is unchanged from the hand-written ``sign * value`` sort it replaces."""
    nodes = [_node(i, v) for i, v in enumerate([0.4, NAN, 0.2, 0.9, NAN, 0.1], start=1)]
    sign = 1 if lower_is_better else -1
    before = sorted(nodes, key=lambda n: (sign * n.metric.value if n.metric else 0.0, n.id))
    assert Direction.of(lower_is_better).best_first(nodes) == before


def test_a_metric_compares_through_its_direction() -> None:
    low = Metric(value=0.2, lower_is_better=True)
    high = Metric(value=0.2, lower_is_better=False)
    assert low.direction is Direction.LOWER and high.direction is Direction.HIGHER
    assert low.score == -0.2 and high.score == 0.2
    assert low.better_than(Metric(value=0.3, lower_is_better=True))
    assert high.better_than(Metric(value=0.1, lower_is_better=False))
    assert not low.better_than(Metric(value=0.2, lower_is_better=True))  # a tie
    assert low.better_than(None) and high.better_than(None)  # a metric beats none
    nan = Metric(value=NAN, lower_is_better=False)
    assert nan.better_than(None)
    assert not nan.better_than(high) and not high.better_than(nan)
    assert "score" not in high.model_dump() and "direction" not in high.model_dump()


def test_usable_means_present_and_finite() -> None:
    assert Metric.usable(0.0) and Metric.usable(-3.5)
    assert not any(Metric.usable(v) for v in (None, NAN, math.inf, -math.inf))


def test_the_tree_hands_out_the_task_direction() -> None:
    assert SearchTree(lower_is_better=True).direction is Direction.LOWER
    tree = SearchTree(lower_is_better=False)
    assert tree.direction is Direction.HIGHER
    for n in (_node(1, 0.5), _node(2, 0.7), _node(3, 0.7), _node(4, None)):
        tree.add(n)
    best = tree.best_node()
    assert best is not None and best.id == 2  # the earliest of the tied best
