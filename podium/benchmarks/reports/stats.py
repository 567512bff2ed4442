"""The three estimators a report uses, each as the literature defines it.

* :func:`mean_sem`: MLE-bench's "mean ± standard error over seeds" (sample std, ddof=1, / √n).
* :func:`pass_at_k`: the unbiased pass@k of Chen et al. (2021), exact in integers.
* :func:`bootstrap_ci`: a percentile bootstrap that resamples clusters (tasks) with
  replacement, keeping each cluster's values (its seeds) together, because seeds of one task are
  not independent draws. The RNG is seeded so the same runs give the same report.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

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
