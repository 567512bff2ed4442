"""What :func:`~tests.viewer.synthetic.write_synthetic_run` wrote (:class:`SyntheticRun`): the
run's shape and content as the tests check the viewer against them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


@dataclass(frozen=True)
class SyntheticRun:
    """What :func:`write_synthetic_run` wrote, for tests to check the viewer against.

    ``node_count`` counts every node in the journal, the ``running`` ones (still executing,
    the highest ids) included; ``steps`` the finished ones. ``best`` is the final node (the one
    in ``best/``), ``best_path`` it and all its ancestors. ``buggy`` maps each buggy node to
    its bug reason, ``tracebacks`` names those whose execution raised (an IPython traceback in
    ``exec.traceback`` and at the end of the output), ``crossovers`` maps each crossover to its
    two parents. ``metrics`` holds every metric the journal holds (a buggy node that printed
    its score before failing has one), ``good`` the nodes that count as good.
    """

    root: Path
    strategy: str
    seed: int
    workers: int
    lower_is_better: bool
    node_count: int
    steps: int
    best: int | None
    best_metric: float | None
    best_path: frozenset[int]
    operators: dict[int, str]
    parents: dict[int, tuple[int, ...]]
    metrics: dict[int, float]
    good: frozenset[int]
    buggy: dict[int, str]
    tracebacks: frozenset[int]
    crossovers: dict[int, tuple[int, int]]
    running: tuple[int, ...]
    waiting: tuple[int, ...]  # finished, not admitted yet (no step): a live run's
    task_description: str
    data_preview: str
    started_at: datetime
    updated_at: datetime
    elapsed_s: float  # the run's own clock: from its start to its last event
    seconds: float  # how long writing it took
