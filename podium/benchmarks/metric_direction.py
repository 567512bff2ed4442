"""The metric a competition's description names, and whether lower is better.

Podium fixes the metric's direction once per task, before the search starts (a direction
guessed per node inverts the search). A task without a leaderboard (a data folder) gets it from
what its description states: an explicit "lower/higher is better" in its evaluation section if
there is one, else the first metric named there that
:data:`~podium.benchmarks.metric_reading.KNOWN_METRICS` knows (the name itself is read by
:mod:`podium.benchmarks.metric_reading`, the one reader of metric names).
``PODIUM_METRIC_DIRECTION=lower|higher`` overrides both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from podium.benchmarks.metric_reading import (
    UNNAMED,
    described_metric,
    evaluation_section,
    first_metric,
    metric_key,
)
from podium.errors import TaskError

DIRECTION_ENV = "PODIUM_METRIC_DIRECTION"  # reserved in podium.api.config (not a config key)


_STATED = re.compile(
    r"\b(?P<word>lower|smaller|less|higher|larger|greater|bigger)\b[\w\s,()-]{0,40}?"
    r"\b(is|are)\s+better\b|\bthe\s+(?P<word2>lower|smaller|higher|larger|greater)\s+the\s+better",
    re.IGNORECASE,
)
_LOWER_WORDS = {"lower", "smaller", "less"}


@dataclass(frozen=True)
class MetricReading:
    """What the description says of its metric. ``source`` says how it was found."""

    name: str  # canonical (``KNOWN_METRICS``), or "the competition metric"
    lower_is_better: bool
    source: str
    qualifier: str = ""  # what the wording adds to the name ("log", "macro")

    @property
    def key(self) -> str:
        """The task's ``metric_name`` (:func:`~podium.benchmarks.metric_reading.metric_key`)."""
        return metric_key(self.name, (self.qualifier,) if self.qualifier else ())


def read_metric(description: str) -> MetricReading | None:
    """The metric the description names and its direction, or None when it names none known
    and states no direction.

    The name is :func:`~podium.benchmarks.metric_reading.described_metric`'s (the same a
    registry folder with this description and no grader name gets). The direction: the
    evaluation section is read first, then the whole text; the first of them that states
    "lower is better" (or "higher ...") or names a known metric decides, a statement over the
    metric's own direction."""
    metric = described_metric(description)
    for text, where in ((evaluation_section(description), "evaluation section"),
                        (description, "description")):  # fmt: skip
        stated = _stated_direction(text)
        if stated is not None:
            name, qualifier = (metric.name, metric.qualifier) if metric else (UNNAMED, "")
            how = "lower" if stated else "higher"
            return MetricReading(name, stated, f"the {where} says {how} is better", qualifier)
        if metric is not None and first_metric(text) is not None:
            source = f"the metric the {where} names"
            return MetricReading(metric.name, metric.lower_is_better, source, metric.qualifier)
    return None


def _stated_direction(text: str) -> bool | None:
    """True/False when the text says lower/higher is better, None when it says neither (or
    both)."""
    said = {
        (m.group("word") or m.group("word2")).lower() in _LOWER_WORDS
        for m in _STATED.finditer(text)
    }
    return next(iter(said)) if len(said) == 1 else None


def metric_from_env(reading: MetricReading | None) -> MetricReading | None:
    """``PODIUM_METRIC_DIRECTION`` (lower|higher), when set, over what the description says."""
    raw = os.environ.get(DIRECTION_ENV, "").strip().lower()
    if not raw:
        return reading
    if raw not in ("lower", "higher"):
        raise TaskError(
            f"{DIRECTION_ENV}={raw!r}: expected lower or higher",
            hint=f"{DIRECTION_ENV}=lower when a smaller score is better, else higher",
        )
    if reading is None:
        return MetricReading(UNNAMED, raw == "lower", f"{DIRECTION_ENV}={raw}")
    return MetricReading(reading.name, raw == "lower", f"{DIRECTION_ENV}={raw}", reading.qualifier)
