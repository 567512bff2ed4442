"""The estimators and tests against hand-computed values, and the power formula against a
simulation."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

from podium.experiments.reports.stats import (
    achieved_power,
    bootstrap_ci,
    mean_sem,
    pairs_needed,
    pass_at_k,
    permutation_test,
    sign_test,
)


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


# --- exact tests ------------------------------------------------------------------------------


def test_the_sign_test_drops_ties_and_doubles_the_binomial_tail() -> None:
    # n = 4 non-ties, k = 3 positive: p = 2 (C(4,3) + C(4,4)) / 2^4 = 2 * 5 / 16
    assert sign_test([1.0, 1.0, 1.0, -1.0, 0.0]) == pytest.approx(0.625, abs=1e-15)
    assert sign_test([2.0, 3.0, 0.5, 7.0, 1.0]) == pytest.approx(2 / 32)  # 5 of 5: 2 * 1/32
    assert sign_test([-2.0, -3.0, -1.0, -7.0, -1.0]) == pytest.approx(2 / 32)  # symmetric


def test_the_sign_test_is_capped_at_one_and_is_one_without_differences() -> None:
    assert sign_test([1.0, -1.0]) == 1.0  # 2 (C(2,1) + C(2,2)) / 4 = 1.5, capped
    assert sign_test([0.0, 0.0]) == 1.0
    assert sign_test([]) == 1.0


def test_the_sign_flip_test_counts_assignments_as_extreme_as_observed() -> None:
    # [1, 2, 3]: the 8 sums ±1 ±2 ±3 are 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 twice: 2/8
    result = permutation_test([1.0, 2.0, 3.0])
    assert (result.p, result.exact, result.flips) == (0.25, True, 8)
    # [3, -1, 2], observed 4: sums 6, 2, 4, 0, 0, -4, -2, -6; |sum| >= 4 four times: 4/8
    assert permutation_test([3.0, -1.0, 2.0]).p == 0.5


def test_the_sign_flip_test_leaves_zeros_out_and_forgives_rounding() -> None:
    assert permutation_test([1.0, 0.0, 2.0, 3.0, 0.0]).p == 0.25  # zeros change no sum
    # 0.1 + 0.2 - 0.3 is 5.6e-17 in floats, not 0: every assignment is at least as extreme
    assert permutation_test([0.1, 0.2, -0.3]).p == 1.0
    assert permutation_test([]).p == 1.0


def test_the_sign_flip_test_matches_brute_force() -> None:
    diffs = [6.0, 30.0, 20.0, -20.0, 0.0, 0.0]  # the scenario's mcts − greedy percentiles
    nonzero = [d for d in diffs if d]
    sums = [sum(s * d for s, d in zip(signs, nonzero, strict=True))
            for signs in itertools.product((1, -1), repeat=len(nonzero))]  # fmt: skip
    expected = sum(abs(x) >= abs(sum(nonzero)) for x in sums) / len(sums)
    assert permutation_test(diffs).p == expected == 0.5


def test_beyond_twenty_values_the_sign_flip_test_is_a_seeded_monte_carlo() -> None:
    diffs = list(np.random.default_rng(3).normal(2.0, 10.0, size=21))
    estimate = permutation_test(diffs)
    exact = permutation_test(diffs, exact_up_to=21)  # 2^21 sums: still quick
    assert (estimate.exact, estimate.flips, exact.exact) == (False, 100_000, True)
    assert estimate.p == pytest.approx(exact.p, abs=0.01)
    assert permutation_test(diffs) == estimate  # seeded: the same values give the same p
    assert "Monte Carlo (100000 random sign flips" in estimate.method


# --- power --------------------------------------------------------------------------------------

Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)  # 1.95996 + 0.84162


def test_pairs_needed_is_the_normal_approximation_rounded_up() -> None:
    assert pairs_needed(10.0, 5.0) == math.ceil((Z * 10 / 5) ** 2) == 32  # 31.4 → 32
    assert pairs_needed(10.0, -5.0) == 32  # two-sided: the sign does not matter
    assert pairs_needed(20.0, 10.0) == 32  # only σ/δ matters
    assert pairs_needed(1.0, 100.0) == 2  # at least two pairs, to estimate σ at all
    assert pairs_needed(10.0, 0.0) is None  # no difference is never detected


def test_achieved_power_reaches_the_target_at_the_pairs_needed() -> None:
    n = pairs_needed(10.0, 5.0)
    assert n is not None
    assert achieved_power(10.0, 5.0, n) >= 0.8 > achieved_power(10.0, 5.0, n - 1)
    assert achieved_power(10.0, 0.0, 10) == 0.05  # no effect: rejected at the level
    assert achieved_power(0.0, 1.0, 3) == 1.0


def test_the_power_formula_matches_a_simulation() -> None:
    """Draw paired differences N(δ, σ²) at the n the formula gives, test each sample, count
    rejections: the empirical power is the formula's (known-σ z-test) and about 0.8 with σ
    estimated (the test a reader would run)."""
    sigma, delta, trials = 10.0, 5.0, 4000
    n = pairs_needed(sigma, delta)
    assert n == 32
    samples = np.random.default_rng(7).normal(delta, sigma, size=(trials, n))
    means = samples.mean(axis=1)
    z = NormalDist().inv_cdf(0.975)
    known = np.mean(np.abs(means) / (sigma / math.sqrt(n)) > z)
    estimated = np.mean(np.abs(means) / (samples.std(axis=1, ddof=1) / math.sqrt(n)) > z)
    # 4000 trials: the standard error of an empirical power near 0.8 is 0.0063
    assert known == pytest.approx(achieved_power(sigma, delta, n), abs=0.025)
    assert known == pytest.approx(0.8, abs=0.03)
    assert estimated == pytest.approx(0.8, abs=0.04)
