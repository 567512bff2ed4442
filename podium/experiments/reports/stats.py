"""The estimators and tests a report uses, each as the literature defines it.

* :func:`mean_sem`: MLE-bench's "mean ± standard error over seeds" (sample std, ddof=1, / √n).
* :func:`pass_at_k`: the unbiased pass@k of Chen et al. (2021), exact in integers.
* :func:`bootstrap_ci`: a percentile bootstrap that resamples clusters (tasks) with
  replacement, keeping each cluster's values (its seeds) together, because seeds of one task are
  not independent draws. The RNG is seeded so the same runs give the same report. Over few
  clusters (a handful of tasks) its interval is too narrow: it only ever sees those clusters.
* :func:`sign_test` and :func:`permutation_test`: exact tests of paired differences, for the
  small comparisons where the bootstrap cannot be trusted (both treat the pairs as exchangeable;
  seeds of one task share it, so with strong task effects they too are somewhat optimistic).
* :func:`pairs_needed` and :func:`achieved_power`: the normal-approximation power of a paired
  two-sided test, to say how far a comparison is from being able to see a difference.

Only the standard library and numpy: binomials with ``math.comb``, normal quantiles with
``statistics.NormalDist``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

RESAMPLES = 10_000
CONFIDENCE = 0.95
RNG_SEED = 0


def mean_sem(values: Sequence[float]) -> tuple[float, float | None]:
    """The mean and its standard error (sample standard deviation with ddof=1, over √n); the
    SEM is None for a single value (it is undefined, not zero). Raises ValueError when empty."""
    if not values:
        raise ValueError("no values")
    mean = statistics.fmean(values)
    if len(values) == 1:
        return mean, None
    return mean, statistics.stdev(values) / math.sqrt(len(values))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The probability that at least one of ``k`` attempts drawn without replacement from ``n``
    (of which ``c`` succeeded) succeeds: 1 − C(n−c, k)/C(n, k), computed exactly with integer
    binomials (``math.comb`` is 0 when n−c < k). Raises ValueError unless 0 ≤ c ≤ n, 1 ≤ k ≤ n."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def bootstrap_ci(
    clusters: Sequence[Sequence[float]],
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = RNG_SEED,
) -> tuple[float, float]:
    """A percentile-bootstrap confidence interval for the mean of all values.

    Each resample draws ``len(clusters)`` clusters with replacement and takes the mean of all
    values in the drawn clusters (a cluster's values stay together). With one cluster every
    resample is the same and the interval is a point. Raises ValueError for no values.
    """
    sizes = np.array([len(c) for c in clusters], dtype=float)
    if not clusters or sizes.sum() == 0:
        raise ValueError("no values to resample")
    sums = np.array([math.fsum(c) for c in clusters], dtype=float)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(clusters), size=(resamples, len(clusters)))
    drawn_sizes = sizes[drawn].sum(axis=1)
    means = sums[drawn].sum(axis=1) / np.where(drawn_sizes > 0, drawn_sizes, 1.0)
    means = means[drawn_sizes > 0]  # a resample of empty clusters only has no mean
    alpha = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(means, [alpha, 100 - alpha])
    return float(low), float(high)


# --- exact tests of paired differences ------------------------------------------------------

EXACT_FLIPS = 20  # the sign-flip test enumerates all 2^n assignments up to this many values
MONTE_CARLO_FLIPS = 100_000
_TOLERANCE = 1e-9  # relative: sums that differ only by rounding count as equal


def sign_test(diffs: Sequence[float]) -> float:
    """The exact two-sided sign test of "the median difference is 0".

    Definition: drop the ties (differences exactly 0); of the n left, k are positive. Under the
    null each is positive with probability ½, so k ~ Binomial(n, ½) and
    p = min(1, 2 · P(X ≥ max(k, n − k))) = min(1, 2 · Σ_{i ≥ max(k, n−k)} C(n, i) / 2ⁿ),
    computed exactly in integers. With no difference left (n = 0) there is no evidence either
    way: p = 1.
    """
    signs = [d > 0 for d in diffs if d != 0]
    n, k = len(signs), sum(signs)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(max(k, n - k), n + 1))
    return min(1.0, 2 * tail / math.pow(2, n))


@dataclass(frozen=True)
class PermutationTest:
    """A sign-flip test's p-value, and how it was computed: ``exact`` (all 2ⁿ assignments) or
    a Monte Carlo estimate over ``flips`` random assignments drawn with RNG ``seed``."""

    p: float
    exact: bool
    flips: int
    seed: int | None

    @property
    def method(self) -> str:
        if self.exact:
            return f"exact (all {self.flips} sign assignments)"
        return f"Monte Carlo ({self.flips} random sign flips, RNG seed {self.seed})"


def permutation_test(
    diffs: Sequence[float],
    exact_up_to: int = EXACT_FLIPS,
    flips: int = MONTE_CARLO_FLIPS,
    seed: int = RNG_SEED,
) -> PermutationTest:
    """The paired permutation (sign-flip) test of "the differences are symmetric about 0".

    Definition: under the null each difference d_i is as likely to be −d_i, so every one of the
    2ⁿ assignments of signs s ∈ {±1}ⁿ is equally likely; the statistic is |Σ s_i d_i| and
    p = #{s : |Σ s_i d_i| ≥ |Σ d_i|} / 2ⁿ (two-sided; the observed assignment counts, so
    p ≥ 2⁻ⁿ). Zero differences change no sum, so they are left out of n (the ratio is the same).
    Up to ``exact_up_to`` non-zero differences every assignment is enumerated; beyond, ``flips``
    assignments are drawn at random (RNG ``seed``: the same values give the same p) and
    p = (1 + #{as extreme}) / (1 + flips), which never reports an impossible 0.
    No difference left: p = 1.
    """
    values = np.array([d for d in diffs if d != 0], dtype=float)
    observed = abs(float(values.sum()))
    limit = observed - _TOLERANCE * max(1.0, float(np.abs(values).sum()))
    if len(values) == 0:
        return PermutationTest(1.0, True, 1, None)
    if len(values) <= exact_up_to:
        sums = np.zeros(1)
        for d in values:  # every signed subset sum: 2^n values, built one difference at a time
            sums = np.concatenate([sums + d, sums - d])
        return PermutationTest(float(np.mean(np.abs(sums) >= limit)), True, len(sums), None)
    rng = np.random.default_rng(seed)
    extreme, left = 0, flips
    while left:  # in chunks, so memory stays bounded for many differences
        size = min(left, max(1, 2_000_000 // len(values)))
        signs = rng.choice(np.array([-1.0, 1.0]), size=(size, len(values)))
        extreme += int(np.sum(np.abs(signs @ values) >= limit))
        left -= size
    return PermutationTest((1 + extreme) / (1 + flips), False, flips, seed)


# --- power of a paired comparison -----------------------------------------------------------

ALPHA = 0.05
POWER = 0.8
MIN_PAIRS = 2  # a paired test needs two pairs to estimate the SD of the differences


def _z(q: float) -> float:
    return NormalDist().inv_cdf(q)


def pairs_needed(sd: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Pairs needed for a two-sided paired test at level ``alpha`` to detect a mean difference
    of ``delta`` with probability ``power``, when the differences have standard deviation
    ``sd``.

    The normal approximation (a z-test with σ known): n = ⌈((z₁₋α/₂ + z_power) · σ / δ)²⌉,
    at least :data:`MIN_PAIRS`. It ignores that σ is estimated (a t-test needs a pair or two
    more at small n) and that differences of percentiles are bounded, so read it as an order of
    magnitude. None when ``delta`` is 0: no number of pairs detects no difference.
    """
    if delta == 0:
        return None
    n = ((_z(1 - alpha / 2) + _z(power)) * sd / abs(delta)) ** 2
    return max(MIN_PAIRS, math.ceil(n - 1e-9))  # 1e-9: an exact integer is not rounded up


def achieved_power(sd: float, delta: float, n: int, alpha: float = ALPHA) -> float:
    """The power of the same two-sided z-test (see :func:`pairs_needed`) with ``n`` pairs:
    P(reject) = Φ(|δ|√n/σ − z₁₋α/₂) + Φ(−|δ|√n/σ − z₁₋α/₂). With σ = 0 any non-zero δ is
    certain to be seen (1) and δ = 0 is rejected at the test's level (``alpha``)."""
    if delta == 0:
        return alpha
    if sd == 0:
        return 1.0
    shift = abs(delta) * math.sqrt(n) / sd
    z = _z(1 - alpha / 2)
    normal = NormalDist()
    return normal.cdf(shift - z) + normal.cdf(-shift - z)
