"""The metric a competition's description names, and whether lower is better.

Podium fixes the metric's direction once per task, before the search starts (a direction
guessed per node inverts the search). A task without a leaderboard (a data folder) gets it from
what its description states: an explicit "lower/higher is better" in its evaluation section if
there is one, else the first metric named there that :data:`KNOWN_METRICS` knows.
``PODIUM_METRIC_DIRECTION=lower|higher`` overrides both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from podium.errors import TaskError

DIRECTION_ENV = "PODIUM_METRIC_DIRECTION"  # reserved in podium.api.config (not a config key)


@dataclass(frozen=True)
class KnownMetric:
    name: str  # what the prompts show; the baseline model's names where it knows the metric
    lower_is_better: bool
    pattern: str  # a case-insensitive regular expression for how descriptions name it


_SEP = r"[\s_-]+"  # words of a metric's name: spaces, hyphens, underscores
_OPT = r"[\s_-]*"
KNOWN_METRICS: tuple[KnownMetric, ...] = (
    KnownMetric("rmsle", True, rf"root{_SEP}mean{_SEP}squared?{_SEP}log(arithmic)?{_SEP}error"
                r"|\brmsle\b"),
    KnownMetric("rmse", True, rf"root{_SEP}mean{_SEP}squared?{_SEP}error|\b(mc)?rmse\b"),
    KnownMetric("mse", True, rf"mean{_SEP}squared?{_SEP}error|\bmse\b"),
    KnownMetric("smape", True, rf"symmetric{_SEP}mean{_SEP}absolute{_SEP}percentage{_SEP}error"
                r"|\bsmape\b"),
    KnownMetric("mape", True, rf"mean{_SEP}absolute{_SEP}percentage{_SEP}error|\bmape\b"),
    KnownMetric("mae", True, rf"mean{_SEP}absolute{_SEP}error|\bmae\b"),
    KnownMetric("multiclass_log_loss", True, rf"multi{_OPT}class{_SEP}log(arithmic)?{_OPT}loss"),
    KnownMetric("log_loss", True, rf"\blog(arithmic)?{_OPT}loss\b|cross{_OPT}entropy"),
    KnownMetric("log_likelihood", False, rf"log{_SEP}likelihood"),
    KnownMetric("kl_divergence", True, rf"\bkullback|\bkl{_SEP}divergence"),
    KnownMetric("levenshtein_distance", True, rf"levenshtein|levenhstein|edit{_SEP}distance"),
    KnownMetric("distance_error", True, rf"distance{_SEP}errors?|haversine"),
    KnownMetric("angular_error", True, rf"angular{_SEP}(error|distance)"),
    KnownMetric("error_rate", True, rf"classification{_SEP}error|\berror{_SEP}rate"
                rf"|word{_SEP}error|character{_SEP}error"),
    KnownMetric("roc_auc", False, rf"area{_SEP}under{_SEP}(the{_SEP})?(receiver{_SEP}operating"
                rf"({_SEP}characteristic)?{_SEP})?(roc{_SEP})?curve|\bauc\b|\bauroc\b|\broc\b"),
    KnownMetric("accuracy", False, r"\baccuracy\b"),
    KnownMetric("f1", False, rf"\bf{_OPT}(1|0\.5|2|beta)\b|\bf{_OPT}(score|measure)\b"),
    KnownMetric("quadratic_weighted_kappa", False, r"\bkappa\b"),
    KnownMetric("mean_average_precision", False, rf"average{_SEP}precision|\bm?ap{_OPT}@"),
    KnownMetric("dice", False, r"\bdice\b"),
    KnownMetric("jaccard", False, rf"jaccard|intersection{_SEP}over{_SEP}union|\biou\b"),
    KnownMetric("spearman", False, r"spearman"),
    KnownMetric("pearson", False, r"pearson"),
    KnownMetric("kendall_tau", False, r"kendall"),
    KnownMetric("mcc", False, r"matthews"),
    KnownMetric("r2", False, rf"coefficient{_SEP}of{_SEP}determination|\br{_OPT}(2|²|squared)\b"),
    KnownMetric("gini", False, r"\bgini\b"),
    KnownMetric("bleu", False, r"\bbleu\b"),
    KnownMetric("precision", False, r"\bprecision\b"),
    KnownMetric("recall", False, r"\brecall\b"),
)  # fmt: skip
_STATED = re.compile(
    r"\b(?P<word>lower|smaller|less|higher|larger|greater|bigger)\b[\w\s,()-]{0,40}?"
    r"\b(is|are)\s+better\b|\bthe\s+(?P<word2>lower|smaller|higher|larger|greater)\s+the\s+better",
    re.IGNORECASE,
)
_LOWER_WORDS = {"lower", "smaller", "less"}
HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*#*\s*$", re.MULTILINE)
_EVALUATION_HEADING = re.compile(r"evaluat|metric|scor", re.IGNORECASE)


@dataclass(frozen=True)
class MetricReading:
    """What the description says of its metric. ``source`` says how it was found."""

    name: str
    lower_is_better: bool
    source: str


def evaluation_section(description: str) -> str:
    """The description's evaluation part: from the first heading that names evaluation, a
    metric or scoring, to the next heading of the same or a higher level (subsections kept).
    The whole text when there is no such heading."""
    headings = list(HEADING.finditer(description))
    for i, heading in enumerate(headings):
        if not _EVALUATION_HEADING.search(heading.group(2)):
            continue
        level = len(heading.group(1))
        end = next(
            (h.start() for h in headings[i + 1 :] if len(h.group(1)) <= level), len(description)
        )
        section = description[heading.end() : end]
        if section.strip():
            return section
    return description


def read_metric(description: str) -> MetricReading | None:
    """The metric the description names and its direction, or None when it names none known.

    The evaluation section is read first, then the whole text. An explicit "lower is better"
    (or "higher ...") there decides the direction; the first known metric named there gives the
    name (and the direction, when nothing is stated)."""
    for text, where in ((evaluation_section(description), "evaluation section"),
                        (description, "description")):  # fmt: skip
        metric = _first_metric(text)
        stated = _stated_direction(text)
        if metric is None and stated is None:
            continue
        if stated is not None:
            name = metric.name if metric else "the competition metric"
            how = "lower" if stated else "higher"
            return MetricReading(name, stated, f"the {where} says {how} is better")
        assert metric is not None
        return MetricReading(metric.name, metric.lower_is_better, f"the metric the {where} names")
    return None


def _first_metric(text: str) -> KnownMetric | None:
    """The known metric named earliest in ``text`` (the longest name on a tie)."""
    best: tuple[int, int, KnownMetric] | None = None
    for metric in KNOWN_METRICS:
        found = re.search(metric.pattern, text, re.IGNORECASE)
        if found and (best is None or (found.start(), -len(found.group())) < best[:2]):
            best = (found.start(), -len(found.group()), metric)
    return best[2] if best else None


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
    name = reading.name if reading else "the competition metric"
    return MetricReading(name, raw == "lower", f"{DIRECTION_ENV}={raw}")


# --- the validation endpoint ------------------------------------------------------------------
