"""The estimators against hand-computed values."""

from __future__ import annotations

import math

import pytest

from podium.benchmarks.reports.stats import bootstrap_ci, mean_sem, pass_at_k


def test_mean_sem_uses_the_sample_standard_deviation() -> None:
    mean, sem = mean_sem([1.0, 2.0, 6.0])
    assert mean == 3.0
    assert sem == pytest.approx(math.sqrt(7) / math.sqrt(3))  # stdev(ddof=1) = √7


def test_sem_is_undefined_with_one_value() -> None:
    assert mean_sem([42.0]) == (42.0, None)


def test_mean_sem_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        mean_sem([])


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (3, 1, 1, 1 / 3),
        (3, 1, 2, 2 / 3),
        (3, 1, 3, 1.0),
        (3, 0, 3, 0.0),
        (3, 3, 1, 1.0),
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (4, 2, 3, 1.0),  # n - c < k: every draw of 3 holds a success
    ],
)
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4), (2, -1, 1)])
def test_pass_at_k_rejects_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_bootstrap_is_reproducible_and_brackets_the_mean() -> None:
    clusters = [[1.0, 3.0], [-2.0, 0.0], [5.0, 4.0], [0.0, 0.0], [2.0, 1.0]]
    mean = sum(map(sum, clusters)) / 10
    low, high = bootstrap_ci(clusters)
    assert low < mean < high
    assert bootstrap_ci(clusters) == (low, high)
    assert bootstrap_ci(clusters, seed=1) != (low, high)
    narrower = bootstrap_ci(clusters, confidence=0.5)
    assert low < narrower[0] < narrower[1] < high


def test_bootstrap_keeps_a_clusters_values_together() -> None:
    # Two tasks: one all +10 (4 seeds), one all -10. Resampling tasks can only give -10, 0, +10
    # as means; resampling the 8 values independently would give many more.
    clusters = [[10.0] * 4, [-10.0] * 4]
    low, high = bootstrap_ci(clusters, confidence=0.99)
    assert (low, high) == (-10.0, 10.0)


def test_bootstrap_of_one_cluster_is_a_point() -> None:
    assert bootstrap_ci([[1.0, 2.0, 3.0]]) == (2.0, 2.0)
