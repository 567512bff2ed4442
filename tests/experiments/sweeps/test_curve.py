from __future__ import annotations

from datetime import timedelta

from podium.experiments.sweeps import best_so_far_curve
from podium.experiments.sweeps.curve import busy_seconds
from podium.records import GradeReport, Metric, Node, NodeState, utcnow

START = utcnow()


def node(node_id: int, step: int, metric: float | None, lower: bool = False) -> Node:
    return Node(
        id=node_id, step=step, operator="draft", state=NodeState.DONE,
        metric=Metric(value=metric, lower_is_better=lower) if metric is not None else None,
        is_buggy=metric is None, created_at=START + timedelta(seconds=10 * node_id),
        finished_at=START + timedelta(seconds=10 * node_id + 5),
    )  # fmt: skip


def report(score: float, percentile: float, gold: bool = False) -> GradeReport:
    return GradeReport(
        competition_id="t", score=score, gold_threshold=0.9, silver_threshold=0.8,
        bronze_threshold=0.7, median_threshold=0.5, any_medal=gold, gold_medal=gold,
        silver_medal=False, bronze_medal=False, above_median=True, submission_exists=True,
        valid_submission=True, is_lower_better=False, created_at=START, submission_path="x",
        leaderboard_percentile=percentile,
    )  # fmt: skip


def test_each_step_scores_the_best_node_by_validation_metric_so_far() -> None:
    # Validation says node 2 (0.6) beats node 3 (0.5); the test score is not consulted to pick.
    scores = {2: report(0.71, 40.0), 3: report(0.99, 99.0, gold=True), 4: report(0.95, 90.0)}
    graded: list[int] = []

    def grade(n: Node) -> GradeReport:
        graded.append(n.id)
        return scores[n.id]

    nodes = [node(4, 4, 0.8), node(1, 1, None), node(3, 3, 0.5), node(2, 2, 0.6)]
    curve = best_so_far_curve(nodes, lower_is_better=False, grade=grade, leaderboard_entries=7)
    points = curve["points"]
    assert [p["step"] for p in points] == [1, 2, 3, 4]
    assert [p["best_node_id"] for p in points] == [None, 2, 2, 4]
    assert [p["percentile"] for p in points] == [0.0, 40.0, 40.0, 90.0]
    assert [p["score"] for p in points] == [None, 0.71, 0.71, 0.95]
    assert [p["elapsed_s"] for p in points] == [5.0, 10.0, 15.0, 20.0]  # idle gaps left out
    assert graded == [2, 4]  # each best node is graded once; node 3 never
    assert curve["leaderboard_entries"] == 7 and curve["lower_is_better"] is False


def test_lower_is_better_metrics_pick_the_smallest() -> None:
    nodes = [node(1, 1, 0.3, lower=True), node(2, 2, 0.2, lower=True), node(3, 3, 0.4, lower=True)]
    curve = best_so_far_curve(nodes, True, lambda n: report(n.id, float(n.id)), None)
    assert [p["best_node_id"] for p in curve["points"]] == [1, 2, 2]


def test_an_ungradable_task_gives_a_curve_without_scores() -> None:
    curve = best_so_far_curve([node(1, 1, 0.3)], False, lambda n: None, None)
    assert curve["points"][0] | {"elapsed_s": 0} == {
        "step": 1, "node_id": 1, "elapsed_s": 0, "best_node_id": 1, "score": None,
        "percentile": 0.0, "medal": None,
    }  # fmt: skip


def test_elapsed_time_counts_only_time_with_a_node_in_flight() -> None:
    """Two workers overlap; then the run sat killed for an hour before it was resumed."""

    def span(node_id: int, start: float, end: float) -> Node:
        return node(node_id, node_id, 0.5).model_copy(update={
            "created_at": START + timedelta(seconds=start),
            "finished_at": START + timedelta(seconds=end)})  # fmt: skip

    nodes = [span(1, 0, 10), span(2, 4, 12), span(3, 3600, 3605)]
    at = [busy_seconds(nodes, n.finished_at or START) for n in nodes]
    assert at == [10.0, 12.0, 17.0]
