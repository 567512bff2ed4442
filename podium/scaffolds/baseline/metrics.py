"""Task metrics as the generated solutions compute them, and the predictions each one needs.

A task names its metric (``grader.name``); the solution must validate with that metric, in its
own units and direction (a log loss as a positive number, sMAPE in percent), and write what the
grader scores: labels, the probability of the positive class, one probability column per class
(when the sample submission has them) or values. Regression metrics on a log scale also say
which target the model should be fitted on (``log`` or ``log1p``), so the error it minimises is
the one the task measures.

Every canonical metric name Podium's metric reader gives a task is one of three: computed here
(``METRICS``), validated through a close metric in its place (``STAND_INS``: a weighted AUC on
plain AUC), or beyond the baseline (``BEYOND``: edit distances, masks, ranked lists), which
:func:`beyond_baseline` says in one line. :func:`validation_note` says whenever the code does not
validate on the task's own metric, the fallback for an unknown name included.

The functions here write the source of three small functions every generated script shares:
``metric(y, pred)``, ``predict(model, X)`` and ``scorer(model, X, y)`` (what
``cross_val_score`` calls), and the lines that build the submission frame. With several
targets (one prediction column each) ``metric`` is the mean of each column's metric, as
MLE-bench's column-wise graders score (``column-wise ROC AUC``, ``mean-column-wise-rmsle``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    prediction: str  # label | proba | value ("classes" comes from the sample's layout)
    transform: str = "none"  # regression target the model is fitted on: none | log | log1p


# The keys are the canonical metric names Podium's metric reader gives a task
# (podium.benchmarks.metric_reading.METRIC_KEYS, a layer above: a test checks that every one of
# them is here, in STAND_INS or in BEYOND).
METRICS: dict[str, MetricInfo] = {
    "accuracy": MetricInfo("label"),
    "error_rate": MetricInfo("label"),  # top-1 classification error: 1 - accuracy
    "f1": MetricInfo("label"),
    "f1_micro": MetricInfo("label"),
    "f1_macro": MetricInfo("label"),
    "f1_weighted": MetricInfo("label"),
    "f0_5": MetricInfo("label"),
    "f2": MetricInfo("label"),
    "precision": MetricInfo("label"),
    "recall": MetricInfo("label"),
    "mcc": MetricInfo("label"),
    "quadratic_weighted_kappa": MetricInfo("label"),
    "roc_auc": MetricInfo("proba"),
    "gini": MetricInfo("proba"),  # normalised Gini: 2 * AUC - 1
    "f1_probabilistic": MetricInfo("proba"),
    "label_ranking_average_precision": MetricInfo("proba"),
    "log_loss": MetricInfo("proba"),
    "multiclass_log_loss": MetricInfo("proba"),
    "kl_divergence": MetricInfo("proba"),  # against one-hot truth: the log loss
    "rmse": MetricInfo("value"),
    "mse": MetricInfo("value"),
    "mae": MetricInfo("value"),
    "r2": MetricInfo("value"),
    "rmse_log": MetricInfo("value", "log"),
    "rmsle": MetricInfo("value", "log1p"),
    "smape": MetricInfo("value"),
    "mape": MetricInfo("value"),
    "pearson": MetricInfo("value"),
    "spearman": MetricInfo("value"),
    "kendall_tau": MetricInfo("value"),
}
# Metrics the baseline validates on a close metric in their place: the same predictions, scored
# without what it cannot know (the sample weights, the subgroups, the groups).
STAND_INS = {
    "roc_auc_weighted": "roc_auc",
    "roc_auc_bias": "roc_auc",
    "log_loss_weighted": "log_loss",
    "mae_log_by_group": "mae",
}
# Metrics the baseline cannot optimise, with what they would need (one line each).
BEYOND = {
    "levenshtein_distance": "generated text or sequences scored by edit distance",
    "error_rate_text": "generated text scored by its word or character error rate",
    "bleu": "generated text scored by n-gram overlap",
    "jaccard": "text spans or masks scored by their overlap",
    "dice": "segmentation masks",
    "dice_hausdorff": "segmentation masks scored by overlap and boundary distance",
    "mean_average_precision": "ranked detections or retrievals",
    "mean_average_precision_iou": "object detection or segmentation scored at IoU thresholds",
    "mean_average_precision_at_k": "a ranked list of k predictions per row",
    "distance_error": "predicted positions scored by their distance",
    "angular_error": "predicted directions scored by their angle",
    "log_likelihood": "a predicted value with its own confidence per row",
}
ALIASES = {
    "auc": "roc_auc",
    "logloss": "log_loss",
    "multi_class_log_loss": "multiclass_log_loss",
    "root_mean_squared_error": "rmse",
    "mean_squared_error": "mse",
    "mean_absolute_error": "mae",
    "root_mean_squared_log_error": "rmsle",
}
LOG_LOSSES = ("log_loss", "multiclass_log_loss", "kl_divergence")
# What a sample with one probability column per class can be scored by (else: the log loss).
CLASS_COLUMN_METRICS = (*LOG_LOSSES, "roc_auc", "accuracy", "error_rate",
                        "label_ranking_average_precision")  # fmt: skip
BINARY_LABEL_METRICS = ("f1", "f0_5", "f2", "precision", "recall")  # score POSITIVE when binary
TRANSFORMS = {"log": ("np.log", "np.exp"), "log1p": ("np.log1p", "np.expm1")}  # (func, inverse)
PROBA_FLOOR = 1e-3  # log-loss predictions are clipped here: one confident miss costs ≤ 6.9


def _spelled(metric_name: str) -> str:
    """The metric's canonical spelling: lower case, words joined by underscores, aliases read."""
    key = metric_name.lower().strip().replace(" ", "_").replace("-", "_")
    return ALIASES.get(key, key)


def _key(metric_name: str) -> str:
    """The metric the generated code computes for the task's: the same, or its stand-in."""
    key = _spelled(metric_name)
    return STAND_INS.get(key, key)


def known_prediction(metric_name: str) -> str | None:
    """What a known metric scores (label | proba | value); None for an unknown metric (and for
    one beyond the baseline)."""
    info = METRICS.get(_key(metric_name))
    return info.prediction if info else None


def validation_note(metric_name: str, problem: str) -> str | None:
    """One line saying what the baseline validates on when it is not the task's own metric,
    for a plan or a description to show; None when it computes the metric itself.

    A stand-in: "validates on roc_auc in place of roc_auc_weighted". A metric beyond it:
    "beyond the baseline: metric levenshtein_distance (...)", with the fallback it validates on.
    A name it does not know: the fallback, said as such."""
    raw = _spelled(metric_name)
    fallback = "accuracy" if problem == "classification" else "rmse"
    if raw in METRICS:
        return None
    if raw in STAND_INS:
        return f"validates on {STAND_INS[raw]} in place of {raw}"
    if raw in BEYOND:
        return f"{beyond_baseline(raw)}; it validates on {fallback} instead"
    return f"unknown metric {metric_name!r}: the baseline validates on {fallback} instead"


def beyond_baseline(metric_name: str) -> str | None:
    """One line, "beyond the baseline: metric X (what it would need)", for a metric the
    baseline cannot optimise; None for any other."""
    raw = _spelled(metric_name)
    if raw not in BEYOND:
        return None
    return f"beyond the baseline: metric {raw} ({BEYOND[raw]})"


def resolve(metric_name: str, problem: str, class_columns: bool = False) -> tuple[str, str, str]:
    """(metric key, prediction kind, target transform) for a task.

    A stand-in metric (``STAND_INS``) is validated on the metric it stands for. Unknown names
    and those beyond the baseline fall back to accuracy (classification) or RMSE (regression),
    which :func:`validation_note` says; a sample with one probability column per class asks
    for ``classes`` predictions, scored by the named metric when it can score probabilities
    and by the multiclass log loss otherwise.
    """
    key = _key(metric_name)
    if key not in METRICS:
        key = "accuracy" if problem == "classification" else "rmse"
    if class_columns:
        usable = key in CLASS_COLUMN_METRICS
        return (key if usable else "multiclass_log_loss"), "classes", "none"
    info = METRICS[key]
    if problem == "classification" and info.prediction == "value":
        key, info = "accuracy", METRICS["accuracy"]
    if problem == "regression" and info.prediction != "value":
        key, info = "rmse", METRICS["rmse"]
    return key, info.prediction, info.transform


_AVERAGED_F1 = {"f1_micro": "micro", "f1_macro": "macro", "f1_weighted": "weighted"}
_BETAS = {"f0_5": 0.5, "f2": 2}
_CORRELATIONS = {"spearman": "spearmanr", "kendall_tau": "kendalltau"}  # scipy.stats


def _metric_expression(key: str, prediction: str, n_classes: int) -> str:
    if prediction == "classes":
        return _classes_expression(key)
    if prediction == "proba":
        return _proba_expression(key)
    if prediction == "label":
        return _label_expression(key, n_classes)
    if key in _CORRELATIONS:
        return f"{_CORRELATIONS[key]}(y, pred)[0]"
    return {
        "mse": "mean_squared_error(y, pred)",
        "mae": "mean_absolute_error(y, pred)",
        "r2": "r2_score(y, pred)",
        "rmse_log": "np.sqrt(np.mean((np.log(y) - np.log(pred)) ** 2))",
        "rmsle": "np.sqrt(np.mean((np.log1p(y) - np.log1p(pred)) ** 2))",
        "smape": "smape(y, pred)",
        "mape": "100 * np.mean(np.abs(pred - y) / np.maximum(np.abs(y), 1e-9))",
        "pearson": "np.corrcoef(y.astype(float), np.asarray(pred, dtype=float))[0, 1]",
    }.get(key, "np.sqrt(mean_squared_error(y, pred))")


def _classes_expression(key: str) -> str:
    """The metric of a frame with one probability column per class (``COLUMNS``)."""
    ordered = "pred[sorted(COLUMNS)].to_numpy(), labels=sorted(COLUMNS)"
    if key == "roc_auc":
        return f'roc_auc_score(y.astype(str), {ordered}, multi_class="ovr")'
    if key == "accuracy":
        return "accuracy_score(y.astype(str), pred.idxmax(axis=1))"
    if key == "error_rate":
        return "1 - accuracy_score(y.astype(str), pred.idxmax(axis=1))"
    if key == "label_ranking_average_precision":
        return (
            "label_ranking_average_precision_score("
            "y.astype(str)[:, None] == np.array(sorted(COLUMNS)), pred[sorted(COLUMNS)].to_numpy())"
        )
    return f"log_loss(y.astype(str), {ordered})"


def _proba_expression(key: str) -> str:
    """The metric of the positive class's probability (``POSITIVE``)."""
    if key in LOG_LOSSES:
        return "log_loss(y == POSITIVE, pred, labels=[False, True])"
    if key == "gini":
        return "2 * roc_auc_score(y == POSITIVE, pred) - 1"
    if key == "f1_probabilistic":
        return "probabilistic_f1(y == POSITIVE, pred)"
    if key == "label_ranking_average_precision":
        return (
            "label_ranking_average_precision_score("
            "np.column_stack([y != POSITIVE, y == POSITIVE]), np.column_stack([1 - pred, pred]))"
        )
    return "roc_auc_score(y == POSITIVE, pred)"


def _label_expression(key: str, n_classes: int) -> str:
    """The metric of predicted labels: binary scores count ``POSITIVE`` as 1, more classes are
    macro-averaged."""
    if key in ("f1", "precision", "recall", *_BETAS):
        func = "f1_score" if key == "f1" else f"{key}_score"
        beta = ""
        if key in _BETAS:
            func, beta = "fbeta_score", f", beta={_BETAS[key]}"
        if n_classes > 2:
            return f'{func}(y, pred{beta}, average="macro")'
        return f"{func}(y == POSITIVE, pred == POSITIVE{beta})"
    if key in _AVERAGED_F1:
        return f'f1_score(y, pred, average="{_AVERAGED_F1[key]}")'
    return {
        "error_rate": "1 - accuracy_score(y, pred)",
        "mcc": "matthews_corrcoef(y, pred)",
        "quadratic_weighted_kappa": 'cohen_kappa_score(y, pred, weights="quadratic")',
    }.get(key, "accuracy_score(y, pred)")


SMAPE = '''def smape(y, pred):
    """Symmetric mean absolute percentage error, in percent (0 where both are 0)."""
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    scale = np.abs(y) + np.abs(pred)
    ratio = np.divide(2 * np.abs(pred - y), scale, out=np.zeros_like(scale), where=scale > 0)
    return 100 * ratio.mean()


'''


METRIC_IMPORTS = """from sklearn.metrics import (
    accuracy_score, f1_score, log_loss, mean_absolute_error, mean_squared_error, r2_score,
    roc_auc_score,
)"""


PROBABILISTIC_F1 = '''def probabilistic_f1(positive, pred):
    """The F1 score of probabilities: true and false positives counted as the probability
    given to positive and negative rows."""
    positive, pred = np.asarray(positive, dtype=bool), np.asarray(pred, dtype=float)
    tp, fp = pred[positive].sum(), pred[~positive].sum()
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / positive.sum() if positive.any() else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


'''
HELPERS = {"smape": SMAPE, "f1_probabilistic": PROBABILISTIC_F1}
# What a metric needs beyond METRIC_IMPORTS, imported inside ``metric`` (the scripts' shared
# imports stay the same for every task).
EXTRA_IMPORTS = {
    "mcc": "from sklearn.metrics import matthews_corrcoef",
    "quadratic_weighted_kappa": "from sklearn.metrics import cohen_kappa_score",
    "precision": "from sklearn.metrics import precision_score",
    "recall": "from sklearn.metrics import recall_score",
    "f0_5": "from sklearn.metrics import fbeta_score",
    "f2": "from sklearn.metrics import fbeta_score",
    "label_ranking_average_precision": (
        "from sklearn.metrics import label_ranking_average_precision_score"
    ),
    **{key: f"from scipy.stats import {func}" for key, func in _CORRELATIONS.items()},
}


def metric_source(key: str, prediction: str, n_classes: int = 2, columnwise: bool = False) -> str:
    """``def metric(y, pred)``: the task's metric in its own units (y: the true targets).
    The script imports ``METRIC_IMPORTS`` for it; what a rarer metric needs more is imported
    in the function. ``columnwise`` (several targets, one prediction column each): the metric
    of each column alone, averaged, as MLE-bench's column-wise graders score (a label column
    with one class in the rows scored has no AUC and is left out); a label ranking's precision
    ranks each row's labels together."""
    imported = f"\n    {EXTRA_IMPORTS[key]}" if key in EXTRA_IMPORTS else ""
    if columnwise and key == "label_ranking_average_precision":  # ranks a row's labels together
        return f'''def metric(y, pred):
    """The task's metric ({key}) of every label column at once."""{imported}
    return float(label_ranking_average_precision_score(np.asarray(y) == POSITIVE, pred))'''
    name = "column_metric" if columnwise else "metric"
    one = f'''{HELPERS.get(key, "")}def {name}(y, pred):
    """The task's metric ({key}), in its own units."""{imported}
    y = np.asarray(y)
    return float({_metric_expression(key, prediction, n_classes)})'''
    if not columnwise:
        return one
    scored = "range(y.shape[1])"
    if prediction != "value":  # a label column with one class in these rows has no score
        scored = "[j for j in range(y.shape[1]) if len(np.unique(y[:, j])) > 1]"
    return f'''{one}


def metric(y, pred):
    """The mean of the metric over the predicted columns, each scored alone."""
    y, pred = np.asarray(y), np.asarray(pred)
    scored = {scored}
    return float(np.mean([column_metric(y[:, j], pred[:, j]) for j in scored]))'''


def predict_source(key: str, prediction: str, transform: str, nonnegative: bool = False,
                   columnwise: bool = False) -> str:  # fmt: skip
    """``def predict(model, X)``: what the submission holds, from a fitted model, and
    ``def scorer(model, X, y)``: the metric of those predictions (cross-validation calls it).
    ``columnwise`` probabilities: one model per 0/1 label column (``layouts.PER_LABEL``),
    each giving ``POSITIVE``'s probability (0 where its training rows never had it)."""
    if prediction == "proba" and columnwise:
        clip = f".clip({PROBA_FLOOR}, {1 - PROBA_FLOOR})" if key in LOG_LOSSES else ""
        body = f"""found = model.predict_proba(X)  # one (rows, classes) array per label column
    return np.column_stack([
        p[:, list(c).index(POSITIVE)] if POSITIVE in c else np.zeros(len(p))
        for p, c in zip(found, model.classes_)
    ]){clip}"""
    elif prediction == "classes":
        clip = f".clip(lower={PROBA_FLOOR})" if key in LOG_LOSSES else ""
        body = f"""classes = [str(c) for c in model.classes_]
    found = pd.DataFrame(model.predict_proba(X), columns=classes)
    proba = found.reindex(columns=COLUMNS, fill_value=0.0){clip}
    return proba.div(proba.sum(axis=1), axis=0)"""
    elif prediction == "proba":
        clip = f".clip({PROBA_FLOOR}, {1 - PROBA_FLOOR})" if key in LOG_LOSSES else ""
        body = f"return model.predict_proba(X)[:, -1]{clip}  # classes_ are sorted: POSITIVE last"
    elif prediction == "label":
        body = "return model.predict(X)"
    elif transform == "log" or key == "rmse_log":
        body = "return np.clip(model.predict(X), 1e-9, None)  # a log scale needs positives"
    elif transform == "log1p" or key == "rmsle" or nonnegative:
        body = "return np.clip(model.predict(X), 0, None)"
    else:
        body = "return model.predict(X)"
    return f"""def predict(model, X):
    {body}


def scorer(model, X, y):
    return metric(y, predict(model, X))"""


def submission_source(prediction: str, ids: str, column: str, X: str) -> str:
    """The line that builds ``submission`` (the sample's columns) from ``ids`` and ``X``."""
    if prediction == "classes":
        return (
            f"submission = pd.concat([pd.DataFrame({{ID: np.asarray({ids})}}), "
            f"predict(model, {X})], axis=1)"
        )
    return f"submission = pd.DataFrame({{ID: np.asarray({ids}), {column!r}: predict(model, {X})}})"


def class_constants(prediction: str, key: str, n_classes: int, columns: tuple[str, ...],
                    labels: str) -> str:  # fmt: skip
    """``COLUMNS`` (one probability column per class) and ``POSITIVE`` (the class a binary
    metric scores as 1: the last of the sorted ``labels``, as in ``model.classes_``)."""
    lines = []
    if prediction == "classes":
        lines.append(f"COLUMNS = {list(columns)!r}  # one probability column per class")
    if prediction == "proba" or (key in BINARY_LABEL_METRICS and n_classes <= 2):
        lines.append(f"POSITIVE = np.unique({labels})[-1]  # the class scored as 1")
    return "\n".join(lines)


def folds_source(classification: bool, holdout: bool) -> str:
    """The ``folds`` a script validates on (after ``X, y``): 5-fold cross-validation, or its
    first split only (a 20% hold-out) on large data. Classes are stratified; on tiny data with
    fewer than 5 rows in every class, there are fewer folds rather than an error."""
    if classification:
        lines = "splits = int(np.clip(pd.Series(y).value_counts().max(), 2, 5))\n"
        splitter = "StratifiedKFold(n_splits=splits, shuffle=True, random_state=0)"
    else:
        lines, splitter = "", "KFold(n_splits=5, shuffle=True, random_state=0)"
    folds = f"list({splitter}.split(X, y))[:1]" if holdout else splitter
    return f"{lines}folds = {folds}"


def folds_description(holdout: bool) -> str:
    """What :func:`folds_source` validates on, in the words of a plan's sentence (so the plan
    never names another scheme than the code runs)."""
    return "a 20% hold-out split" if holdout else "5-fold cross-validation"


def transform_source(transform: str) -> str:
    """The line that wraps ``model`` to fit the target on the metric's scale (``log`` or
    ``log1p``) and predict on the original one, with the newline before it; "" for ``none``.
    It goes right after the line that builds ``model``; the script imports
    ``TransformedTargetRegressor``."""
    if transform not in TRANSFORMS:
        return ""
    func, inverse = TRANSFORMS[transform]
    return (
        f"\nmodel = TransformedTargetRegressor(regressor=model, func={func}, "
        f"inverse_func={inverse})  # fit the scale the metric measures"
    )
