"""The metric and prediction functions every generated solution carries, executed and checked
against hand-computed values, scikit-learn and SciPy: the validation line must be in the task
metric's own units and direction, and the submission must hold what that metric scores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as skm
from scipy import stats
from sklearn.metrics import log_loss, roc_auc_score

from podium.scaffolds.baseline.metrics import (
    METRIC_IMPORTS,
    beyond_baseline,
    metric_source,
    predict_source,
    resolve,
    validation_note,
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


LABELS = np.array(["a", "b", "b", "a", "b", "a"])
PREDICTED = np.array(["a", "b", "a", "a", "b", "b"])
GRADES = np.array([0, 1, 2, 3, 4, 2, 1])
GRADED = np.array([0, 2, 2, 3, 3, 1, 1])
BINARY = LABELS == "b"
SAID = PREDICTED == "b"


@pytest.mark.parametrize(
    ("key", "y", "pred", "expected"),
    [
        ("error_rate", LABELS, PREDICTED, 1 - skm.accuracy_score(LABELS, PREDICTED)),
        ("f1_micro", GRADES, GRADED, skm.f1_score(GRADES, GRADED, average="micro")),
        ("f1_macro", GRADES, GRADED, skm.f1_score(GRADES, GRADED, average="macro")),
        ("f1_weighted", GRADES, GRADED, skm.f1_score(GRADES, GRADED, average="weighted")),
        ("f0_5", LABELS, PREDICTED, skm.fbeta_score(BINARY, SAID, beta=0.5)),
        ("f2", LABELS, PREDICTED, skm.fbeta_score(BINARY, SAID, beta=2)),
        ("precision", LABELS, PREDICTED, skm.precision_score(BINARY, SAID)),
        ("recall", LABELS, PREDICTED, skm.recall_score(BINARY, SAID)),
        ("mcc", GRADES, GRADED, skm.matthews_corrcoef(GRADES, GRADED)),
        ("quadratic_weighted_kappa", GRADES, GRADED,
         skm.cohen_kappa_score(GRADES, GRADED, weights="quadratic")),
    ],
)  # fmt: skip
def test_label_metrics_match_sklearn(key: str, y: np.ndarray, pred: np.ndarray,
                                     expected: float) -> None:  # fmt: skip
    n_classes = len(np.unique(y))
    metric = functions(key, "label", n_classes=n_classes, POSITIVE="b")["metric"]
    assert metric(y, pred) == pytest.approx(expected)


def test_a_multiclass_f_beta_is_macro_averaged() -> None:
    metric = functions("f0_5", "label", n_classes=5)["metric"]
    expected = skm.fbeta_score(GRADES, GRADED, beta=0.5, average="macro")
    assert metric(GRADES, GRADED) == pytest.approx(expected)


PROBA = np.array([0.2, 0.9, 0.4, 0.1, 0.7, 0.6])


def test_probability_metrics_score_the_positive_class() -> None:
    gini = functions("gini", "proba", POSITIVE="b")["metric"]
    assert gini(LABELS, PROBA) == pytest.approx(2 * roc_auc_score(BINARY, PROBA) - 1)
    kl = functions("kl_divergence", "proba", POSITIVE="b")["metric"]
    assert kl(LABELS, PROBA) == pytest.approx(log_loss(BINARY, PROBA))  # against one-hot truth
    lrap = functions("label_ranking_average_precision", "proba", POSITIVE="b")["metric"]
    truth = np.column_stack([~BINARY, BINARY])
    expected = skm.label_ranking_average_precision_score(truth, np.column_stack([1 - PROBA, PROBA]))
    assert lrap(LABELS, PROBA) == pytest.approx(expected)


def test_the_probabilistic_f1_counts_probabilities_as_hits() -> None:
    pf1 = functions("f1_probabilistic", "proba", POSITIVE="b")["metric"]
    tp, fp = 0.9 + 0.4 + 0.7, 0.2 + 0.1 + 0.6  # probabilities on positive and negative rows
    precision, recall = tp / (tp + fp), tp / 3
    assert pf1(LABELS, PROBA) == pytest.approx(2 * precision * recall / (precision + recall))
    assert pf1(LABELS, np.where(BINARY, 1.0, 0.0)) == pytest.approx(1.0)
    assert pf1(LABELS, np.zeros(6)) == 0.0


def test_class_column_metrics_read_the_columns_by_name() -> None:
    columns = ["sun", "rain", "fog"]
    y = np.array(["rain", "sun", "fog", "sun"])
    proba = pd.DataFrame(
        [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3], [0.5, 0.1, 0.4], [0.1, 0.8, 0.1]], columns=columns
    )
    ordered = proba[sorted(columns)].to_numpy()
    error = functions("error_rate", "classes", COLUMNS=columns)["metric"]
    assert error(y, proba) == pytest.approx(0.5)  # fog's row and the last row are missed
    lrap = functions("label_ranking_average_precision", "classes", COLUMNS=columns)["metric"]
    truth = y[:, None] == np.array(sorted(columns))
    expected = skm.label_ranking_average_precision_score(truth, ordered)
    assert lrap(y, proba) == pytest.approx(expected)
    kl = functions("kl_divergence", "classes", COLUMNS=columns)["metric"]
    assert kl(y, proba) == pytest.approx(log_loss(y, ordered, labels=sorted(columns)))


VALUES = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0])
GUESSES = np.array([2.5, 1.2, 3.0, 2.0, 6.0, 7.0])


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("pearson", stats.pearsonr(VALUES, GUESSES)[0]),
        ("spearman", stats.spearmanr(VALUES, GUESSES)[0]),
        ("kendall_tau", stats.kendalltau(VALUES, GUESSES)[0]),
        ("mape", 100 * skm.mean_absolute_percentage_error(VALUES, GUESSES)),
    ],
)
def test_value_metrics_match_scipy_and_sklearn(key: str, expected: float) -> None:
    metric = functions(key, "value")["metric"]
    assert metric(VALUES, GUESSES) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("name", "problem", "columns", "expected"),
    [
        ("quadratic_weighted_kappa", "classification", False,
         ("quadratic_weighted_kappa", "label", "none")),
        ("f1_probabilistic", "classification", False, ("f1_probabilistic", "proba", "none")),
        ("roc_auc_weighted", "classification", False, ("roc_auc", "proba", "none")),  # stand-in
        ("mae_log_by_group", "regression", False, ("mae", "value", "none")),
        ("kl_divergence", "classification", True, ("kl_divergence", "classes", "none")),
        ("error_rate", "classification", True, ("error_rate", "classes", "none")),
        ("f1_macro", "classification", True, ("multiclass_log_loss", "classes", "none")),
        ("levenshtein_distance", "classification", False, ("accuracy", "label", "none")),
    ],
)  # fmt: skip
def test_new_metric_names_resolve(
    name: str, problem: str, columns: bool, expected: tuple[str, str, str]
) -> None:
    assert resolve(name, problem, columns) == expected


def test_the_fallback_and_the_stand_ins_are_said_in_one_line() -> None:
    assert validation_note("roc_auc", "classification") is None
    assert validation_note("roc_auc_bias", "classification") == (
        "validates on roc_auc in place of roc_auc_bias"
    )
    assert validation_note("dice", "classification") == (
        "beyond the baseline: metric dice (segmentation masks); it validates on accuracy instead"
    )
    assert validation_note("auc-roc-ish", "classification") == (
        "unknown metric 'auc-roc-ish': the baseline validates on accuracy instead"
    )
    assert beyond_baseline("levenshtein_distance") == (
        "beyond the baseline: metric levenshtein_distance (generated text or sequences scored by "
        "edit distance)"
    )
    assert beyond_baseline("accuracy") is None


def test_the_scripts_shared_imports_stay_the_same_for_new_metrics() -> None:
    """A rarer metric imports what it needs inside ``metric``: the drafts of tasks with the
    common metrics stay byte for byte what they were."""
    assert "cohen_kappa_score" not in METRIC_IMPORTS
    source = metric_source("quadratic_weighted_kappa", "label", 5)
    assert "    from sklearn.metrics import cohen_kappa_score\n" in source
