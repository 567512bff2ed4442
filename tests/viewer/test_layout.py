"""Where the graph's nodes sit (``podium.viewer.layout``): below every parent, never on top of
each other, each under its deepest parent, the same every time."""

from __future__ import annotations

import itertools
import random
import time
from collections import defaultdict

import pytest

from podium.viewer import layout as layout_module
from podium.viewer.layout import layout
from tests.support import scaled


def _search_shaped(n: int, seed: int, crossovers: float) -> list[tuple[int, list[int]]]:
    rng = random.Random(seed)
    nodes: list[tuple[int, list[int]]] = []
    for i in range(1, n + 1):
        if i <= 5:
            nodes.append((i, []))
            continue
        parents = [rng.randint(max(1, i - 60), i - 1)]
        if rng.random() < crossovers:
            other = rng.randint(1, i - 1)
            if other != parents[0]:
                parents.append(other)
        nodes.append((i, parents))
    return nodes


def test_every_edge_points_down_and_no_two_nodes_overlap() -> None:
    nodes = _search_shaped(2000, seed=3, crossovers=0.3)
    places = layout(nodes)
    assert set(places.x) == set(places.y) == {i for i, _ in nodes}
    by_layer: dict[int, list[float]] = defaultdict(list)
    for node_id, parents in nodes:
        assert all(places.y[node_id] > places.y[p] for p in parents)
        by_layer[places.y[node_id]].append(places.x[node_id])
        if parents:  # under the deepest parent, one layer down
            assert places.tree_parent[node_id] in parents
            assert places.y[node_id] == places.y[places.tree_parent[node_id]] + 1
    for xs in by_layer.values():
        xs.sort()
        assert all(b - a >= 1 - 2e-3 for a, b in itertools.pairwise(xs))  # x: 3 decimals
    assert min(places.x.values()) == 0


def test_a_tree_draws_its_parent_over_its_children() -> None:
    places = layout([(1, []), (2, [1]), (3, [1]), (4, [1])])
    assert places.x[1] == places.x[3] and places.x[2] < places.x[3] < places.x[4]
    assert places.depth == 1 and places.width == 2


def test_damaged_links_are_ignored() -> None:
    """A parent the journal lacks, a self-link or a later id cannot make a cycle or a crash."""
    places = layout([(1, []), (2, [1, 9]), (3, [3, 4]), (4, [2])])
    assert places.tree_parent == {2: 1, 4: 2}
    assert places.y == {1: 0, 2: 1, 3: 0, 4: 2}


def test_the_same_nodes_give_the_same_layout_quickly() -> None:
    nodes = _search_shaped(2000, seed=4, crossovers=0.1)
    start = time.perf_counter()
    first = layout(nodes)
    assert time.perf_counter() - start < scaled(2.0)
    assert layout(list(reversed(nodes))) == first
    assert layout([]).x == {}


def test_a_run_too_big_for_the_tree_layout_still_gets_every_node_placed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past MAX_TREE_NODES the layers are filled in id order: no overlap, edges still down."""
    monkeypatch.setattr(layout_module, "MAX_TREE_NODES", 100)
    nodes = _search_shaped(500, seed=5, crossovers=0.2)
    places = layout(nodes)
    seen: set[tuple[int, float]] = set()
    for node_id, parents in nodes:
        assert all(places.y[node_id] > places.y[p] for p in parents)
        spot = (places.y[node_id], places.x[node_id])
        assert spot not in seen
        seen.add(spot)
