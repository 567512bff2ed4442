"""What a solution prints as it runs, up to where its bug stops it (:func:`printed_by`): the
data's shapes, ``X.describe()``, each fold's training log as its scikit-learn model prints it
(a line per boosting round, joblib's progress), the fold scores and classification reports,
the ``VALIDATION_METRIC`` line, the submission's head and summary; ~16 KB for a good node.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tests.viewer.synthetic.programs import BASE_FEATURES, FAMILIES, Code, Program
from tests.viewer.synthetic.task import EXEC_TIMEOUT_S, TEST_ROWS, TRAIN_ROWS, TaskText


@dataclass(frozen=True)
class Printed:
    """What a program printed, up to where it stopped; ``fold`` is the fold it stopped in
    (0: before training), ``seconds`` how long it ran."""

    text: str
    fold: int
    seconds: float


STOPS_AT = {"key_error": "features", "memory": "features", "strings": "fit", "nan": "fit",
            "timeout": "timeout"}  # fmt: skip


def printed_by(
    program: Program, code: Code, value: float, rng: random.Random, task: TaskText
) -> Printed:
    family = FAMILIES[program.family]
    stop = STOPS_AT.get(program.bug.kind if program.bug else "", "end")
    lines = [f"train: ({TRAIN_ROWS}, 12)  test: ({TEST_ROWS}, 11)"]
    if stop == "features":
        return Printed("\n".join(lines) + "\n", 0, rng.uniform(3.0, 12.0))
    features = [*BASE_FEATURES, *program.extras]
    lines += [f"features: {len(features)} columns", *_describe(features)]
    if stop == "fit":
        return Printed("\n".join(lines) + "\n", 1, rng.uniform(4.0, 15.0))
    fold_s = family.fold_s * rng.lognormvariate(0, 0.25)
    last = 1 if stop == "timeout" else program.folds  # the slow model never ends a fold
    for fold in range(1, last + 1):
        if stop == "timeout" and fold == last:
            lines += FOLD_LOGS[program.family](program, rng, True)
            return Printed("\n".join(lines) + "\n", fold, EXEC_TIMEOUT_S)
        lines += FOLD_LOGS[program.family](program, rng, False)
        score = value + rng.gauss(0, 0.006)
        lines.append(
            f"fold {fold}/{program.folds} {task.metric_name}: {score:.5f}  "
            f"({5 + fold * fold_s:.0f}s)"
        )
        if not task.lower_is_better:
            lines += _report(score, rng)
    lines += [f"CV {task.metric_name}: {value:.5f}", f"VALIDATION_METRIC: {value:.6f}"]
    seconds = 8 + program.folds * fold_s
    if program.bug and program.bug.kind in ("name", "length"):
        return Printed("\n".join(lines) + "\n", program.folds, seconds)
    lines += _submission_lines(rng, task, seconds)
    written = not (program.bug and program.bug.kind == "no_submission")
    lines.append(VALID if written else MISSING)
    return Printed("\n".join(lines) + "\n", program.folds, seconds)


VALID = "(True, '')"
MISSING = "(False, 'the submission ./submission/submission.csv does not exist')"
FEATURE_STATS = {  # count is always the training rows; mean, std, min, 25%, 50%, 75%, max
    "Pclass": (2.106, 0.837, 1.0, 1.0, 2.0, 3.0, 3.0), "Sex": (0.563, 0.496, 0, 0, 1, 1, 1),
    "Age": (38.355, 18.313, 0.08, 25.0, 39.0, 53.0, 87.0), "SibSp": (0.397, 0.862, 0, 0, 0, 1, 8),
    "Parch": (0.455, 0.951, 0, 0, 0, 1, 9), "Fare": (43.929, 69.589, 0.68, 10.04, 24.46, 33.5,
    744.66), "Embarked": (1.488, 0.806, 0, 1, 2, 2, 2), "Title": (2.311, 0.914, 0, 2, 2, 3, 4),
    "FamilySize": (1.852, 1.438, 1, 1, 1, 2, 17), "IsAlone": (0.553, 0.497, 0, 0, 1, 1, 1),
    "Deck": (6.211, 1.905, 0, 7, 7, 7, 7), "TicketPrefix": (11.38, 6.12, 0, 7, 14, 14, 38),
    "TicketFreq": (1.177, 0.573, 1, 1, 1, 1, 6), "FarePerPerson": (39.87, 63.1, 0.68, 9.81, 22.15,
    31.33, 744.66), "Age_bin": (2.327, 1.088, 0, 2, 3, 3, 4), "AgeBinClass": (9.087, 3.437, 1, 7,
    10, 12, 15), "LogFare": (3.268, 0.943, 0.519, 2.4, 3.237, 3.541, 6.614), "CabinKnown": (0.304,
    0.46, 0, 0, 0, 1, 1), "NameLength": (18.55, 3.142, 9, 16, 18, 21, 39), "SexClass": (2.659,
    1.588, 0, 1, 2, 4, 5), "FareBand": (4.492, 2.869, 0, 2, 4, 7, 9), "CabinNumber": (40.39,
    74.21, 0, 0, 0, 42, 472), "NeighbourDist": (1.17, 0.22, 0.4, 1.0, 1.16, 1.31, 2.9),
}  # fmt: skip


def _describe(features: list[str]) -> list[str]:
    """``print(X.describe().T.round(3))`` for these features."""
    width = max(len(f) for f in features)
    head = " " * width + "    count     mean     std    min     25%     50%     75%      max"
    rows = [head]
    for name in features:
        mean, std, low, q1, q2, q3, high = FEATURE_STATS[name]
        rows.append(
            f"{name:<{width}}  {TRAIN_ROWS:>7.1f}  {mean:>7.3f}  {std:>6.3f}  {low:>5.2f}"
            f"  {q1:>6.3f}  {q2:>6.3f}  {q3:>6.3f}  {high:>7.3f}"
        )
    return rows


def _report(accuracy: float, rng: random.Random) -> list[str]:
    """``classification_report(..., digits=4)`` of one validation fold."""
    support0 = round(TRAIN_ROWS / 5 * rng.uniform(0.56, 0.58))
    support1 = TRAIN_ROWS // 5 - support0
    rows = []
    scores = []
    for label, support, shift in (("0", support0, 0.02), ("1", support1, -0.03)):
        precision = accuracy + shift + rng.gauss(0, 0.006)
        recall = accuracy + shift * 1.5 + rng.gauss(0, 0.008)
        f1 = 2 * precision * recall / (precision + recall)
        scores.append((precision, recall, f1, support))
        rows.append(f"{label:>12}     {precision:.4f}    {recall:.4f}    {f1:.4f}    {support:>6}")
    total = support0 + support1
    macro = [sum(s[i] for s in scores) / 2 for i in range(3)]
    weighted = [sum(s[i] * s[3] for s in scores) / total for i in range(3)]
    return [
        "              precision    recall  f1-score   support",
        "",
        *rows,
        "",
        f"    accuracy                         {accuracy:.4f}    {total:>6}",
        f"   macro avg     {macro[0]:.4f}    {macro[1]:.4f}    {macro[2]:.4f}    {total:>6}",
        f"weighted avg     {weighted[0]:.4f}    {weighted[1]:.4f}    {weighted[2]:.4f}    "
        f"{total:>6}",
        "",
    ]


def _submission_lines(rng: random.Random, task: TaskText, seconds: float) -> list[str]:
    """What ``print(sub.head())`` and the summary of the predictions print."""
    if task.lower_is_better:
        head = [f"{i}        {10000 + i}  {rng.uniform(0.03, 0.97):.6f}" for i in range(5)]
        mean = rng.uniform(0.40, 0.46)
        summary = [
            f"count    {TEST_ROWS}.000000",
            f"mean        {mean:.6f}",
            f"std         {rng.uniform(0.25, 0.3):.6f}",
            f"min         {rng.uniform(0.01, 0.05):.6f}",
            f"25%         {mean - 0.22:.6f}",
            f"50%         {mean + 0.01:.6f}",
            f"75%         {mean + 0.27:.6f}",
            f"max         {rng.uniform(0.95, 0.99):.6f}",
            "Name: Survived, dtype: float64",
        ]
    else:
        head = [f"{i}        {10000 + i}         {rng.randint(0, 1)}" for i in range(5)]
        share = rng.uniform(0.55, 0.6)
        summary = [
            "Survived",
            f"0    {share:.4f}",
            f"1    {1 - share:.4f}",
            "Name: proportion, dtype: float64",
        ]
    return ["   PassengerId  Survived", *head, *summary, f"done in {seconds:.0f}s"]


def _hgb_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    """A fold of ``HistGradientBoostingClassifier(verbose=2)``: a line per boosting round
    until early stopping (or, cut by the time limit, until the interrupt)."""
    rate, leaves = float(p.param("learning_rate")), int(p.param("max_leaf_nodes"))
    best = max(3, round(rng.uniform(8, 20) * 0.05 / rate))
    rounds = rng.randint(60, 150) if cut else min(int(p.param("max_iter")), best + 10)
    lines = [
        f"Binning 0.001 GB of training data: {rng.uniform(0.01, 0.03):.3f} s",
        f"Binning 0.000 GB of validation data: {rng.uniform(0.001, 0.004):.3f} s",
        "Fitting gradient boosted rounds:",
    ]
    head = f"/{p.param('max_iter')}] 1 tree, {leaves} leaves, max depth = "
    curve = _loss_curve(rate, rounds)
    total = 0.0
    for i in range(1, rounds + 1):
        draw = int(rng.random() * 1000)  # one draw per round: depth, time and noise from it
        total += ROUND_SECONDS[draw]
        train, valid = curve[i - 1]
        valid += max(0, i - best) * 0.0003 + draw * 6e-7
        lines.append(
            f"[{i}{head}{7 + draw % 6}, train loss: {train}, val loss: {valid:.5f}, "
            f"in {ROUND_TIMES[draw]}s"
        )
    if cut:
        return [*lines, f"[{rounds + 1}/{p.param('max_iter')}] "]
    return [
        *lines,
        f"Fit {rounds} trees in {total + 0.4:.3f} s, ({rounds * leaves} total leaves)",
        f"Time spent computing histograms: {total * 0.41:.3f}s",
        f"Time spent finding best splits:  {total * 0.22:.3f}s",
        f"Time spent applying splits:      {total * 0.33:.3f}s",
        f"Time spent predicting:           {total * 0.01:.3f}s",
    ]


ROUND_SECONDS = [0.002 + 0.02 * (k * 7919 % 1000) / 1000 for k in range(1000)]
ROUND_TIMES = [f"{t:.3f}" for t in ROUND_SECONDS]


@functools.cache
def _loss_curve(rate: float, rounds: int) -> list[tuple[str, float]]:
    """Per boosting round, the training loss as printed and the validation loss's trend."""
    return [
        (f"{0.43 + 0.26 * math.exp(-i * rate * 1.1):.5f}", 0.47 + 0.22 * math.exp(-i * rate * 1.2))
        for i in range(1, rounds + 1)
    ]


def _gb_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    """A fold of ``GradientBoostingClassifier(verbose=1)``: rounds 1-10, then every 10th up
    to 100, every 100th up to 1000, ... (scikit-learn's reporter)."""
    n = int(p.param("n_estimators"))
    oob = float(p.param("subsample")) < 1.0
    fields = ["Iter", "Train Loss", *(["OOB Improve"] if oob else []), "Remaining Time"]
    lines = [("%10s " + "%16s " * (len(fields) - 1)) % tuple(fields)]
    per_round = FAMILIES[p.family].fold_s / 300 * rng.uniform(0.8, 1.2)
    shown = [i for i in _reported_rounds(n) if not cut or i <= rng.randint(300, 3000)]
    for i in shown:
        loss = 0.8 + 0.56 * math.exp(-i / 120) + rng.gauss(0, 0.002)
        left = (n - i) * per_round
        remaining = f"{left / 60:.2f}m" if left > 60 else f"{left:.2f}s"
        row = [f"{i:>10d}", f"{loss:>16.4f}"]
        if oob:
            row.append(f"{rng.gauss(0.004, 0.02) * math.exp(-i / 400):>16.4f}")
        lines.append(" ".join([*row, f"{remaining:>16s}"]))
    return lines


def _reported_rounds(n: int) -> Iterator[int]:
    step = 1
    for i in range(1, n + 1):
        if i % step == 0:
            yield i
        if i == 10 * step:
            step *= 10


def _forest_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    """A fold of a forest with ``n_jobs=-1, verbose=1``: joblib's progress for the fit and
    for the two ``predict_proba`` calls (36 workers, the size of MLE-bench's machine)."""
    n = int(p.param("n_estimators"))
    fit_s = FAMILIES[p.family].fold_s * rng.uniform(0.8, 1.2)
    lines = _joblib(n, "-1", fit_s)
    for share in (0.02, 0.03):
        lines += _joblib(n, "36", fit_s * share)
    return lines


def _joblib(n: int, jobs: str, seconds: float) -> list[str]:
    width = len(str(n))
    done = [k for k in (26, 176, 426, 776, 1226) if k < n]
    lines = [
        f"[Parallel(n_jobs={jobs})]: Using backend ThreadingBackend with 36 concurrent workers."
    ]
    for k in done:
        lines.append(
            f"[Parallel(n_jobs={jobs})]: Done {k:{width}d} tasks      | elapsed: "
            f"{_joblib_time(seconds * k / n)}"
        )
    lines.append(
        f"[Parallel(n_jobs={jobs})]: Done {n} out of {n} | elapsed: "
        f"{_joblib_time(seconds)} finished"
    )
    return lines


def _joblib_time(seconds: float) -> str:
    return f"{seconds / 60:4.1f}min" if seconds > 60 else f" {seconds:5.1f}s"


def _quiet_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    return []  # LogisticRegression prints nothing


FOLD_LOGS: dict[str, Callable[[Program, random.Random, bool], list[str]]] = {
    "HistGradientBoostingClassifier": _hgb_log,
    "GradientBoostingClassifier": _gb_log,
    "RandomForestClassifier": _forest_log,
    "ExtraTreesClassifier": _forest_log,
    "LogisticRegression": _quiet_log,
}
