"""The search graph's layout, side by side with the layered (Sugiyama) one it was chosen over.

    .venv/bin/python perf/viewer_layout.py [--nodes 300,2000] [--strategies greedy,mcts]

Each tree is a recorded run grown by that strategy (``tests/viewer/synthetic/``: the
real strategy classes choose every node). Both layouts get the same layers (a node one below its
deepest parent), so what differs is where each puts the nodes of a layer. Measured: the width
(node slots), the edge crossings between consecutive layers (an edge spanning several layers is
followed through each: igraph's routing points for Sugiyama, a straight line for the tree), the
mean horizontal length of an edge (slots), and the time.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import igraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from podium.viewer.layout import layout
from tests.viewer.synthetic import write_synthetic_run

Segment = tuple[float, float]  # x on a layer, x on the next
# Per layer, the segments between it and the next; the width; the mean edge length; seconds.
Measured = tuple[dict[int, list[Segment]], float, float, float]


def crossings(segments: dict[int, list[Segment]]) -> int:
    """Pairs of segments between the same two layers whose ends are in opposite orders."""
    total = 0
    for segs in segments.values():
        for (a0, a1), (b0, b1) in itertools.combinations(segs, 2):
            if (a0 - b0) * (a1 - b1) < 0:
                total += 1
    return total


def tree_segments(parents: dict[int, tuple[int, ...]]) -> Measured:
    start = time.perf_counter()
    places = layout(parents.items())
    seconds = time.perf_counter() - start
    segments: dict[int, list[Segment]] = defaultdict(list)
    lengths = []
    for child, ps in parents.items():
        for p in ps:
            x0, x1, y0, y1 = places.x[p], places.x[child], places.y[p], places.y[child]
            lengths.append(abs(x1 - x0))
            for layer in range(y0, y1):
                t0, t1 = (layer - y0) / (y1 - y0), (layer + 1 - y0) / (y1 - y0)
                segments[layer].append((x0 + (x1 - x0) * t0, x0 + (x1 - x0) * t1))
    return segments, places.width, sum(lengths) / max(1, len(lengths)), seconds


def sugiyama_segments(parents: dict[int, tuple[int, ...]]) -> Measured:
    ids = sorted(parents)
    index = {node_id: i for i, node_id in enumerate(ids)}
    depth: dict[int, int] = {}
    for node_id in ids:
        depth[node_id] = 1 + max((depth[p] for p in parents[node_id]), default=-1)
    edges = [(index[p], index[c]) for c in ids for p in parents[c]]
    graph = igraph.Graph(n=len(ids), edges=edges, directed=True)
    start = time.perf_counter()
    placed = graph.layout_sugiyama(layers=[depth[i] for i in ids])
    seconds = time.perf_counter() - start
    xs = [placed.coords[i][0] for i in range(len(ids))]
    segments: dict[int, list[Segment]] = defaultdict(list)
    lengths = []
    for (a, b), route in zip(edges, placed.edge_routing, strict=True):
        points = [(xs[a], depth[ids[a]]), *((x, y) for x, y in route), (xs[b], depth[ids[b]])]
        lengths.append(abs(xs[b] - xs[a]))
        for (x0, y0), (x1, _) in itertools.pairwise(points):
            segments[round(y0)].append((x0, x1))
    return segments, max(xs) - min(xs), sum(lengths) / max(1, len(lengths)), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", default="300,2000")
    parser.add_argument("--strategies", default="greedy,mcts,evolutionary")
    args = parser.parse_args()
    print("| strategy | nodes | layout | width (slots) | crossings | mean edge length | time |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for strategy, n in itertools.product(args.strategies.split(","), args.nodes.split(",")):
            run = write_synthetic_run(Path(tmp) / f"{strategy}-{n}", int(n), strategy=strategy)
            for name, measure in (("tree (ours)", tree_segments), ("Sugiyama", sugiyama_segments)):
                segments, width, length, seconds = measure(run.parents)
                print(f"| {strategy} | {n} | {name} | {width:.0f} | {crossings(segments)} | "
                      f"{length:.2f} | {seconds * 1000:.0f} ms |")  # fmt: skip


if __name__ == "__main__":
    main()
