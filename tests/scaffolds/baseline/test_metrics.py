"""The metric and prediction functions every generated solution carries, checked against
hand-computed values and scikit-learn: the validation line must be in the task metric's own
units and direction, and the submission must hold what that metric scores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from podium.scaffolds.baseline.metrics import (
    METRIC_IMPORTS,
    metric_source,
    predict_source,
    resolve,
)


def functions(key: str, prediction: str, transform: str = "none", n_classes: int = 2,
              **constants: Any) -> dict[str, Any]:  # fmt: skip
    space: dict[str, Any] = {"np": np, "pd": pd, **constants}
    exec(METRIC_IMPORTS, space)
    exec(metric_source(key, prediction, n_classes), space)
    exec(predict_source(key, prediction, transform), space)
    return space


@pytest.mark.parametrize(
    ("name", "problem", "columns", "expected"),
    [
        ("accuracy", "classification", False, ("accuracy", "label", "none")),
        ("AUC", "classification", False, ("roc_auc", "proba", "none")),
        ("rmse_log", "regression", False, ("rmse_log", "value", "log")),
        ("rmsle", "regression", False, ("rmsle", "value", "log1p")),
        ("smape", "regression", False, ("smape", "value", "none")),
        ("multiclass_log_loss", "classification", True, ("multiclass_log_loss", "classes", "none")),
        ("something new", "regression", False, ("rmse", "value", "none")),  # today's fallbacks
        ("something new", "classification", False, ("accuracy", "label", "none")),
        ("rmse", "classification", True, ("multiclass_log_loss", "classes", "none")),
    ],
)
def test_metric_names_resolve(
    name: str, problem: str, columns: bool, expected: tuple[str, str, str]
) -> None:
    assert resolve(name, problem, columns) == expected


def test_smape_is_in_percent_and_zero_where_both_are_zero() -> None:
    smape = functions("smape", "value")["metric"]
    assert smape([100.0, 0.0], [110.0, 0.0]) == pytest.approx(100 * (20 / 210) / 2)
    assert smape([5, 5], [5, 5]) == 0.0


def test_log_scale_errors() -> None:
    y, pred = np.array([100.0, 1000.0]), np.array([110.0, 800.0])
    rmse_log = functions("rmse_log", "value", "log")["metric"]
    rmsle = functions("rmsle", "value", "log1p")["metric"]
    assert rmse_log(y, pred) == pytest.approx(np.sqrt(np.mean((np.log(y) - np.log(pred)) ** 2)))
    assert rmsle(y, pred) == pytest.approx(np.sqrt(np.mean((np.log1p(y) - np.log1p(pred)) ** 2)))


def test_the_class_columns_keep_the_sample_order_and_the_log_loss_matches_sklearn() -> None:
    class Model:
        classes_ = np.array(["fog", "rain", "sun"])  # sorted, as sklearn keeps them; no "snow"

        def predict_proba(self, X: object) -> np.ndarray:
            return np.array([[0.2, 0.5, 0.3], [0.0, 0.1, 0.9]])

    columns = ["sun", "snow", "rain", "fog"]  # the sample's order, not sorted
    space = functions("multiclass_log_loss", "classes", COLUMNS=columns)
    proba = space["predict"](Model(), None)
    assert list(proba.columns) == columns
    assert np.allclose(proba.sum(axis=1), 1) and (proba.to_numpy() > 0).all()  # clipped zeros
    y = np.array(["rain", "sun"])
    expected = log_loss(y, proba[sorted(columns)].to_numpy(), labels=sorted(columns))
    assert space["metric"](y, proba) == pytest.approx(expected)
    assert space["scorer"](Model(), None, y) == pytest.approx(expected)


def test_roc_auc_scores_the_last_sorted_class_as_positive() -> None:
    space = functions("roc_auc", "proba", POSITIVE=">50K")
    y = np.array(["<=50K", ">50K", ">50K", "<=50K"])
    pred = np.array([0.1, 0.8, 0.4, 0.3])
    assert space["metric"](y, pred) == pytest.approx(roc_auc_score(y == ">50K", pred))
