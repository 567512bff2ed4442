"""Task metrics as the generated solutions compute them, and the predictions each one needs.

A task names its metric (``grader.name``); the solution must validate with that metric, in its
own units and direction (a log loss as a positive number, sMAPE in percent), and write what the
grader scores: labels, the probability of the positive class, one probability column per class
(when the sample submission has them) or values. Regression metrics on a log scale also say
which target the model should be fitted on (``log`` or ``log1p``), so the error it minimises is
the one the task measures.

The functions here write the source of three small functions every generated script shares:
``metric(y, pred)``, ``predict(model, X)`` and ``scorer(model, X, y)`` (what
``cross_val_score`` calls), and the lines that build the submission frame.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    prediction: str  # label | proba | value ("classes" comes from the sample's layout)
    transform: str = "none"  # regression target the model is fitted on: none | log | log1p


METRICS: dict[str, MetricInfo] = {
    "accuracy": MetricInfo("label"),
    "f1": MetricInfo("label"),
    "roc_auc": MetricInfo("proba"),
    "log_loss": MetricInfo("proba"),
    "multiclass_log_loss": MetricInfo("proba"),
    "rmse": MetricInfo("value"),
    "mse": MetricInfo("value"),
    "mae": MetricInfo("value"),
    "r2": MetricInfo("value"),
    "rmse_log": MetricInfo("value", "log"),
    "rmsle": MetricInfo("value", "log1p"),
    "smape": MetricInfo("value"),
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
LOG_LOSSES = ("log_loss", "multiclass_log_loss")
TRANSFORMS = {"log": ("np.log", "np.exp"), "log1p": ("np.log1p", "np.expm1")}  # (func, inverse)
PROBA_FLOOR = 1e-3  # log-loss predictions are clipped here: one confident miss costs ≤ 6.9


def _key(metric_name: str) -> str:
    key = metric_name.lower().strip().replace(" ", "_").replace("-", "_")
    return ALIASES.get(key, key)


def known_prediction(metric_name: str) -> str | None:
    """What a known metric scores (label | proba | value); None for an unknown metric."""
    info = METRICS.get(_key(metric_name))
    return info.prediction if info else None


def resolve(metric_name: str, problem: str, class_columns: bool = False) -> tuple[str, str, str]:
    """(metric key, prediction kind, target transform) for a task.

    Unknown names fall back to accuracy (classification) or RMSE (regression); a sample with
    one probability column per class asks for ``classes`` predictions, scored by the named
    metric when it can score probabilities and by the multiclass log loss otherwise.
    """
    key = _key(metric_name)
    if key not in METRICS:
        key = "accuracy" if problem == "classification" else "rmse"
    if class_columns:
        usable = key in (*LOG_LOSSES, "roc_auc", "accuracy")
        return (key if usable else "multiclass_log_loss"), "classes", "none"
    info = METRICS[key]
    if problem == "classification" and info.prediction == "value":
        key, info = "accuracy", METRICS["accuracy"]
    if problem == "regression" and info.prediction != "value":
        key, info = "rmse", METRICS["rmse"]
    return key, info.prediction, info.transform


def _metric_expression(key: str, prediction: str, n_classes: int) -> str:
    if prediction == "classes":
        ordered = "pred[sorted(COLUMNS)].to_numpy(), labels=sorted(COLUMNS)"
        if key == "roc_auc":
            return f'roc_auc_score(y.astype(str), {ordered}, multi_class="ovr")'
        if key == "accuracy":
            return "accuracy_score(y.astype(str), pred.idxmax(axis=1))"
        return f"log_loss(y.astype(str), {ordered})"
    if prediction == "proba":
        if key in LOG_LOSSES:
            return "log_loss(y == POSITIVE, pred, labels=[False, True])"
        return "roc_auc_score(y == POSITIVE, pred)"
    if prediction == "label":
        if key == "f1":
            if n_classes > 2:
                return 'f1_score(y, pred, average="macro")'
            return "f1_score(y == POSITIVE, pred == POSITIVE)"
        return "accuracy_score(y, pred)"
    return {
        "mse": "mean_squared_error(y, pred)",
        "mae": "mean_absolute_error(y, pred)",
        "r2": "r2_score(y, pred)",
        "rmse_log": "np.sqrt(np.mean((np.log(y) - np.log(pred)) ** 2))",
        "rmsle": "np.sqrt(np.mean((np.log1p(y) - np.log1p(pred)) ** 2))",
        "smape": "smape(y, pred)",
    }.get(key, "np.sqrt(mean_squared_error(y, pred))")


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


def metric_source(key: str, prediction: str, n_classes: int = 2) -> str:
    """``def metric(y, pred)``: the task's metric in its own units (y: the true targets).
    The script imports ``METRIC_IMPORTS`` for it."""
    helper = SMAPE if key == "smape" else ""
    return f'''{helper}def metric(y, pred):
    """The task's metric ({key}), in its own units."""
    y = np.asarray(y)
    return float({_metric_expression(key, prediction, n_classes)})'''


def predict_source(key: str, prediction: str, transform: str, nonnegative: bool = False) -> str:
    """``def predict(model, X)``: what the submission holds, from a fitted model, and
    ``def scorer(model, X, y)``: the metric of those predictions (cross-validation calls it)."""
    if prediction == "classes":
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
    if prediction == "proba" or (key == "f1" and n_classes <= 2):
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
