"""The one reader of what a competition says about its metric: the canonical name Podium uses.

A competition names its metric twice over: its grader's name in a registry folder
(``grader.name`` in MLE-bench's ``config.yaml``: ``auc-roc``, ``multi-class-log-loss``,
``MAP@5``, even ``levenhstein-distance``) and its description's evaluation section ("the
Root-Mean-Squared-Error between the logarithm of the predicted value and the logarithm of the
observed sales price"). Both are read here, with the same patterns, into one canonical name, so
that a competition run as a registry folder and as a data folder validates on the same metric.

The contract:

* :data:`KNOWN_METRICS` — the vocabulary: each canonical ``name``, whether lower is better, the
  pattern that finds it in a grader's name or a description, and the ``qualifier`` that entry
  adds to the name (``rmse`` + ``log``: the RMSE of the logarithms; ``f1`` + ``macro``).
* :func:`metric_key` — a canonical name and its qualifiers as the one word a task carries
  (``rmse_log``, ``f1_macro``): what ``Task.metric_name`` holds and the baseline model reads.
* :data:`METRIC_KEYS` — every key a task can get from here.
* :func:`first_metric` — the known metric named earliest in a text (a grader's name or a
  description); :func:`described_metric` — the one a description names, its evaluation
  section (:func:`evaluation_section`) read first.
* :func:`task_metric` — the ``metric_name`` of a task: from its grader's name when it has one
  (refined by the qualifiers its description adds to the same metric), else from its
  description; a name nothing here knows is kept as given.

The direction of a data folder's metric is read in :mod:`podium.benchmarks.metric_direction`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownMetric:
    name: str  # the canonical name: what the prompts show, the baseline model's vocabulary
    lower_is_better: bool
    pattern: str  # a case-insensitive regular expression for how graders and descriptions name it
    qualifier: str = ""  # what this wording adds to the name (see :func:`metric_key`)

    @property
    def key(self) -> str:
        return metric_key(self.name, (self.qualifier,) if self.qualifier else ())


_SEP = r"[\s_-]+"  # words of a metric's name: spaces, hyphens, underscores
_OPT = r"[\s_-]*"
_RMSE = rf"(root{_SEP}mean{_SEP}squared?{_SEP}error|\b(mc)?rmse\b)"
_MAE = rf"(mean{_SEP}absolute{_SEP}error|\bmae\b)"
_F1 = rf"(f{_OPT}1({_SEP}score)?|f{_OPT}(score|measure))"
_AUC = (
    rf"(area{_SEP}under{_SEP}(the{_SEP})?(receiver{_SEP}operating({_SEP}characteristic)?{_SEP})?"
    rf"(roc{_SEP})?curve|\bauc{_OPT}roc\b|\broc{_OPT}auc\b|\bauc\b|\bauroc\b|\broc\b)"
)
_AVERAGED = rf"({_SEP}averaged?)?"
# The longest wording found earliest wins, so a qualified entry (RMSE of logs, macro F1) beats
# its plain metric wherever it matches from the same place or before.
KNOWN_METRICS: tuple[KnownMetric, ...] = (
    KnownMetric("rmsle", True, rf"root{_SEP}mean{_SEP}squared?{_SEP}log(arithmic)?{_SEP}error"
                r"|\brmsle\b"),
    KnownMetric("rmse", True, rf"{_RMSE}[^.\n]{{0,40}}?\b(logarithms?|logs?)\b(?!{_OPT}loss)",
                "log"),
    KnownMetric("rmse", True, _RMSE),
    KnownMetric("mse", True, rf"mean{_SEP}squared?{_SEP}error|\bmse\b"),
    KnownMetric("smape", True, rf"symmetric{_SEP}mean{_SEP}absolute{_SEP}percentage{_SEP}error"
                r"|\bsmape\b"),
    KnownMetric("mape", True, rf"mean{_SEP}absolute{_SEP}percentage{_SEP}error|\bmape\b"),
    KnownMetric("mae", True, rf"\blog({_SEP}of)?({_SEP}the)?{_SEP}{_MAE}", "log_by_group"),
    KnownMetric("mae", True, _MAE),
    KnownMetric("multiclass_log_loss", True, rf"multi{_OPT}class{_SEP}log(arithmic)?{_OPT}loss"),
    KnownMetric("log_loss", True, rf"weighted{_SEP}(multi{_OPT}label{_SEP})?log(arithmic)?{_OPT}"
                r"loss", "weighted"),
    KnownMetric("log_loss", True, rf"\blog(arithmic)?{_OPT}loss\b|cross{_OPT}entropy"),
    KnownMetric("log_likelihood", False, rf"log{_SEP}likelihood"),
    KnownMetric("kl_divergence", True, rf"\bkullback|\bkl{_SEP}divergence"),
    KnownMetric("levenshtein_distance", True, rf"levenshtein|levenhstein|edit{_SEP}distance"),
    KnownMetric("distance_error", True, rf"distance{_SEP}errors?|haversine"),
    KnownMetric("angular_error", True, rf"angular{_SEP}(error|distance)"),
    KnownMetric("error_rate", True, rf"(word|character){_SEP}error", "text"),
    KnownMetric("error_rate", True, rf"classification{_SEP}error|\berror{_SEP}rate"),
    KnownMetric("roc_auc", False, rf"weighted{_SEP}{_AUC}", "weighted"),
    KnownMetric("roc_auc", False, rf"unintended{_SEP}bias|\bbias{_SEP}auc|subgroup{_SEP}auc",
                "bias"),
    KnownMetric("roc_auc", False, _AUC),
    KnownMetric("accuracy", False, r"\baccuracy\b"),
    KnownMetric("f1", False, rf"probabilistic{_SEP}{_F1}", "probabilistic"),
    *(KnownMetric("f1", False, rf"\b{avg}{_AVERAGED}{_SEP}{_F1}|\b{_F1}{_SEP}\(?{avg}\b", avg)
      for avg in ("micro", "macro", "weighted")),
    KnownMetric("f0_5", False, rf"\bf{_OPT}0\.5\b"),
    KnownMetric("f2", False, rf"\bf{_OPT}2\b"),
    KnownMetric("f1", False, rf"\b{_F1}\b|\bf{_OPT}beta\b"),
    KnownMetric("quadratic_weighted_kappa", False, r"\bkappa\b"),
    KnownMetric("label_ranking_average_precision", False,
                rf"label{_SEP}ranking{_SEP}average{_SEP}precision|\blrap\b"),
    KnownMetric("mean_average_precision", False,
                rf"(average{_SEP}precision|\bm?ap\b|mean{_SEP}precision)[^.\n]{{0,40}}?"
                rf"(\biou\b|intersection{_SEP}over{_SEP}union)", "iou"),
    KnownMetric("mean_average_precision", False,
                rf"(average{_SEP}precision|\bm?ap\b){_OPT}(@|{_SEP}at{_SEP}){_OPT}(k\b|\d)",
                "at_k"),
    KnownMetric("mean_average_precision", False, rf"average{_SEP}precision"),
    KnownMetric("dice", False, r"\bdice\b[^.\n]{0,20}?hausdorff", "hausdorff"),
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


def metric_key(name: str, qualifiers: tuple[str, ...] = ()) -> str:
    """The one word a task carries for a canonical metric and its qualifiers:
    ``metric_key("rmse", ("log",)) == "rmse_log"`` (the RMSE of the logarithms)."""
    return "_".join((name, *qualifiers))


UNNAMED = "the competition metric"  # the metric_name of a task that names none known
METRIC_KEYS: frozenset[str] = frozenset(m.key for m in KNOWN_METRICS)  # every name a task gets
_NAMES = frozenset(m.name for m in KNOWN_METRICS)


_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")  # a Markdown link


def first_metric(text: str) -> KnownMetric | None:
    """The known metric named earliest in ``text`` (the longest wording on a tie, so "macro F1"
    is ``f1`` qualified ``macro``, not ``f1``)."""
    text = _LINK.sub(r"\1", text)  # "[RMSE](https://...) of the logs": the words, not the URL
    best: tuple[int, int, KnownMetric] | None = None
    for metric in KNOWN_METRICS:
        found = re.search(metric.pattern, text, re.IGNORECASE)
        if found and (best is None or (found.start(), -len(found.group())) < best[:2]):
            best = (found.start(), -len(found.group()), metric)
    return best[2] if best else None


HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*#*\s*$", re.MULTILINE)
_EVALUATION_HEADING = re.compile(r"evaluat|metric|scor", re.IGNORECASE)


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


def described_metric(description: str) -> KnownMetric | None:
    """The metric the description names: the first known one in its evaluation section, else
    in the whole text."""
    for text in (evaluation_section(description), description):
        found = first_metric(text)
        if found:
            return found
    return None


def task_metric(grader_name: str | None, description: str) -> str:
    """A task's ``metric_name``: the canonical key its grader's name reads as, with the
    qualifiers its description adds to the same metric (a grader's ``rmse`` whose description
    says "RMSE between the logarithm of ..." is ``rmse_log``); without a grader name, the
    description's metric (:func:`described_metric`). A grader name that names no known metric
    is kept as given (the baseline says it falls back); "the competition metric" when neither
    names one."""
    described = described_metric(description)
    if not grader_name or not grader_name.strip():
        return described.key if described else UNNAMED
    spelled = re.sub(r"[\s-]+", "_", grader_name.strip().lower())
    if spelled in METRIC_KEYS and spelled not in _NAMES:
        return spelled  # already qualified ("rmse_log"): the grader's word is the key
    found = None if spelled in _NAMES else first_metric(grader_name.replace("_", " "))
    if found is None and spelled not in _NAMES:
        return grader_name.strip()
    base, qualifier = (spelled, "") if found is None else (found.name, found.qualifier)
    if not qualifier and described is not None and described.name == base:
        qualifier = described.qualifier
    return metric_key(base, (qualifier,) if qualifier else ())
