"""One reader of a competition's metric, for both ways of running it: every grader name in
MLE-bench's registry reads as a canonical metric that the baseline model either validates on,
in the prediction form that metric scores, or says is beyond it; a description's qualifiers
(RMSE of the logarithms, macro F1) refine it; and one competition loaded as a registry folder
and as a data folder gets the same metric."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from podium.benchmarks import load_folder_task
from podium.benchmarks.data_folder import load_data_folder
from podium.benchmarks.metric_direction import read_metric
from podium.benchmarks.metric_reading import METRIC_KEYS, task_metric
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.metrics import (
    BEYOND,
    METRICS,
    STAND_INS,
    beyond_baseline,
    resolve,
    validation_note,
)
from tests.support import TOY_TASK


def config(competition: str, grader: str) -> dict[str, object]:
    """A competition's config.yaml as MLE-bench's registry writes it (the parts read here)."""
    return {
        "id": competition,
        "grader": {"name": grader, "grade_fn": f"mlebench.competitions.{competition}.grade:grade"},
    }


# Every distinct grader name in MLE-bench's 82 competitions (one competition each), the
# canonical metric it reads as, and what the baseline does with it: the prediction it submits
# (label | proba | value | classes: one probability column per class, where the competition's
# sample has them), "stand-in <metric>" or "beyond".
REGISTRY = [
    (config("spaceship-titanic", "accuracy"), "accuracy", "label"),
    (config("tabular-playground-series-dec-2021", "multi-class-classification-accuracy"),
     "accuracy", "label"),
    (config("inaturalist-2019-fgvc6", "top-1-classification-error"), "error_rate", "label"),
    (config("tabular-playground-series-may-2022", "auc-roc"), "roc_auc", "proba"),
    (config("playground-series-s3e18", "auroc-multi-label"), "roc_auc", "classes"),
    (config("jigsaw-toxic-comment-classification-challenge", "column-wise ROC AUC"), "roc_auc",
     "classes"),
    (config("plant-pathology-2020-fgvc7", "mean-column-wise-roc-auc"), "roc_auc", "classes"),
    (config("alaska2-image-steganalysis", "weighted-auroc"), "roc_auc_weighted",
     "stand-in roc_auc"),
    (config("jigsaw-unintended-bias-in-toxicity-classification",
            "jigsaw-unintended-bias-in-toxicity-classification-score"), "roc_auc_bias",
     "stand-in roc_auc"),
    (config("dogs-vs-cats-redux-kernels-edition", "log-loss"), "log_loss", "proba"),
    (config("spooky-author-identification", "multi-class-log-loss"), "multiclass_log_loss",
     "classes"),
    (config("rsna-2022-cervical-spine-fracture-detection", "weighted-multi-label-log-loss"),
     "log_loss_weighted", "stand-in log_loss"),
    (config("hms-harmful-brain-activity-classification", "KL-divergence"), "kl_divergence",
     "classes"),
    (config("freesound-audio-tagging-2019", "label-ranking-average-precision"),
     "label_ranking_average_precision", "classes"),
    (config("kuzushiji-recognition", "f1-score"), "f1", "label"),
    (config("plant-seedlings-classification", "micro-f1-score"), "f1_micro", "label"),
    (config("herbarium-2020-fgvc7", "macro-f1-score"), "f1_macro", "label"),
    (config("vesuvius-challenge-ink-detection", "f0.5-score"), "f0_5", "label"),
    (config("rsna-breast-cancer-detection", "probabilistic-f1-score"), "f1_probabilistic",
     "proba"),
    (config("nfl-player-contact-detection", "matthews-correlation-coefficient"), "mcc", "label"),
    (config("aptos2019-blindness-detection", "quadratic-weighted-kappa"),
     "quadratic_weighted_kappa", "label"),
    (config("new-york-city-taxi-fare-prediction", "root-mean-squared-error"), "rmse", "value"),
    (config("denoising-dirty-documents", "root_mean_squared_error"), "rmse", "value"),
    (config("predict-volcanic-eruptions-ingv-oe", "mean-absolute-error"), "mae", "value"),
    (config("champs-scalar-coupling", "log-mean-absolute-error"), "mae_log_by_group",
     "stand-in mae"),
    (config("nomad2018-predict-transparent-conductors", "mean-column-wise-rmsle"), "rmsle",
     "value"),
    (config("us-patent-phrase-to-phrase-matching", "pearson-correlation-coefficient"), "pearson",
     "value"),
    (config("google-quest-challenge", "column-wise-spearman"), "spearman", "value"),
    (config("AI4Code", "kendall-tau"), "kendall_tau", "value"),
    (config("billion-word-imputation", "levenshtein-distance"), "levenshtein_distance", "beyond"),
    (config("multi-modal-gesture-recognition", "levenhstein-distance"), "levenshtein_distance",
     "beyond"),
    (config("hubmap-kidney-segmentation", "dice-coefficient"), "dice", "beyond"),
    (config("google-research-identify-contrails-reduce-global-warming", "global-dice"), "dice",
     "beyond"),
    (config("uw-madison-gi-tract-image-segmentation", "dice-hausdorff-combo"), "dice_hausdorff",
     "beyond"),
    (config("tweet-sentiment-extraction", "jaccard-similarity"), "jaccard", "beyond"),
    (config("chaii-hindi-and-tamil-question-answering", "word-level-jaccard-score"), "jaccard",
     "beyond"),
    (config("siim-covid19-detection", "mean-average-precision"), "mean_average_precision",
     "beyond"),
    (config("vinbigdata-chest-xray-abnormalities-detection", "mAP-at-IoU>0.4"),
     "mean_average_precision_iou", "beyond"),
    (config("tgs-salt-identification-challenge",
            "mean-precision-intersection-over-union-at-different-thresholds"),
     "mean_average_precision_iou", "beyond"),
    (config("whale-categorization-playground", "MAP@5"), "mean_average_precision_at_k", "beyond"),
    (config("h-and-m-personalized-fashion-recommendations", "MAP@12"),
     "mean_average_precision_at_k", "beyond"),
    (config("hotel-id-2021-fgvc8", "map-at-5"), "mean_average_precision_at_k", "beyond"),
    (config("smartphone-decimeter-2022", "average-haversine-distance"), "distance_error",
     "beyond"),
    (config("icecube-neutrinos-in-deep-ice", "mean-angular-error"), "angular_error", "beyond"),
    (config("osic-pulmonary-fibrosis-progression", "modified-laplace-log-likelihood"),
     "log_likelihood", "beyond"),
]  # fmt: skip
PROBLEM = {"label": "classification", "proba": "classification", "classes": "classification",
           "value": "regression"}  # fmt: skip


def grader_name(entry: dict[str, object]) -> str:
    grader = entry["grader"]
    assert isinstance(grader, dict)
    return str(grader["name"])


def test_the_table_holds_every_grader_name_of_the_registry() -> None:
    names = {grader_name(entry) for entry, _, _ in REGISTRY}
    assert len(names) == len(REGISTRY) == 45


@pytest.mark.parametrize(("entry", "key", "baseline"), REGISTRY,
                         ids=[grader_name(e) for e, _, _ in REGISTRY])  # fmt: skip
def test_every_registry_grader_name_reads_as_a_metric_the_baseline_scores_or_refuses(
    entry: dict[str, object], key: str, baseline: str
) -> None:
    name = grader_name(entry)
    assert task_metric(name, "") == key
    assert task_metric(name.upper(), "") == key  # any spelling
    if baseline == "beyond":
        note = beyond_baseline(key)
        assert note is not None and note.startswith(f"beyond the baseline: metric {key} (")
        assert "validates on accuracy instead" in str(validation_note(key, "classification"))
        return
    assert beyond_baseline(key) is None
    if baseline.startswith("stand-in "):
        validated = baseline.removeprefix("stand-in ")
        assert (
            validation_note(key, "classification") == f"validates on {validated} in place of {key}"
        )
        problem = PROBLEM[METRICS[validated].prediction]
        assert resolve(key, problem)[0] == validated
        return
    assert validation_note(key, PROBLEM[baseline]) is None
    scoring, prediction, _ = resolve(key, PROBLEM[baseline], baseline == "classes")
    assert (scoring, prediction) == (key, baseline)


def test_every_metric_the_reader_names_is_known_to_the_baseline() -> None:
    """The reader (benchmarks) and the baseline (scaffolds, a layer below) share the canonical
    names: a name added to one and not the other would silently validate on accuracy."""
    placed = set(METRICS) | set(STAND_INS) | set(BEYOND)
    assert sorted(METRIC_KEYS - placed) == []


def test_an_unknown_grader_name_is_kept_and_its_fallback_is_said() -> None:
    assert task_metric("competition-specific-score", "") == "competition-specific-score"
    assert validation_note("competition-specific-score", "regression") == (
        "unknown metric 'competition-specific-score': the baseline validates on rmse instead"
    )
    assert resolve("competition-specific-score", "regression") == ("rmse", "value", "none")
    assert task_metric(None, "# A task\n\nPredict y.\n") == "the competition metric"


# Shaped like AIDE's example task (its metric's name a Markdown link, the logs said after it).
HOUSE_PRICES = (
    "# House Prices\n\n## Evaluation\n\nScores are the [Root-Mean-Squared-Error (RMSE)]"
    "(https://en.wikipedia.org/wiki/Root-mean-square_deviation) between the logarithm of the "
    "predicted price and the logarithm of the observed price, so that cheap and expensive houses "
    "weigh alike.\n\n## Submission File Format\n\nA header, then rows of Id,SalePrice\n"
)


@pytest.mark.parametrize(
    ("evaluation", "key", "lower"),
    [
        ("Submissions are evaluated on the RMSE of the log of the price.", "rmse_log", True),
        ("scored on the root mean squared error of the counts", "rmse", True),
        ("evaluated on the Root Mean Squared Logarithmic Error (RMSLE)", "rmsle", True),
        ("Submissions are evaluated using the macro F1 score.", "f1_macro", False),
        ("Submissions are scored on the F1 score (micro-averaged).", "f1_micro", False),
        ("evaluated on the mean F1-Score.", "f1", False),
        ("Submissions are evaluated on the weighted F1 score.", "f1_weighted", False),
        ("the Log of the Mean Absolute Error, averaged across types", "mae_log_by_group", True),
        ("Mean Average Precision @ 5 (MAP@5)", "mean_average_precision_at_k", False),
        ("evaluated on the log loss of the predicted probabilities", "log_loss", True),
    ],
)
def test_the_description_adds_its_qualifiers(evaluation: str, key: str, lower: bool) -> None:
    text = f"# A task\n\n## Evaluation\n\n{evaluation}\n"
    reading = read_metric(text)
    assert reading is not None and (reading.key, reading.lower_is_better) == (key, lower)
    assert task_metric(None, text) == key


def test_house_prices_validates_on_the_rmse_of_log_prices_either_way() -> None:
    reading = read_metric(HOUSE_PRICES)
    assert reading is not None
    assert (reading.name, reading.qualifier, reading.key) == ("rmse", "log", "rmse_log")
    # A registry grader that says only "rmse" gets the description's qualifier ...
    assert task_metric("root-mean-squared-error", HOUSE_PRICES) == "rmse_log"
    # ... which the baseline fits and validates on the log scale.
    assert resolve("rmse_log", "regression") == ("rmse_log", "value", "log")
    # A grader naming another metric than the description's keeps its own.
    assert task_metric("mean-absolute-error", HOUSE_PRICES) == "mae"


PLAYGROUND = """# Tabular Playground Series - May 2022

## Evaluation

Submissions are evaluated on area under the ROC curve between the predicted probability and the
observed target.
"""


@pytest.mark.parametrize(
    ("grader", "description", "key"),
    [("auc-roc", PLAYGROUND, "roc_auc"), ("root-mean-squared-error", HOUSE_PRICES, "rmse_log")],
)
def test_one_competition_loaded_both_ways_gets_one_metric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grader: str, description: str, key: str
) -> None:
    """The same files as a registry folder (config.yaml's grader name and the description) and
    as MLE-bench's data folder (the description only) give the task the same metric."""
    monkeypatch.setenv("MLEBENCH_VALIDATION_URL", "")  # no validation server asked
    folder = tmp_path / "registry" / "competition"
    shutil.copytree(TOY_TASK, folder)
    settings = yaml.safe_load((folder / "config.yaml").read_text())
    settings["grader"]["name"] = grader
    (folder / "config.yaml").write_text(yaml.safe_dump(settings))
    (folder / "description.md").write_text(description)
    registry_task = load_folder_task(folder, tmp_path / "prepared")
    data = tmp_path / "home" / "data"
    shutil.copytree(registry_task.public_dir, data)
    (data / "description.md").write_text(description)
    data_task = load_data_folder(data)
    assert registry_task.metric_name == data_task.metric_name == key


def test_tabular_playground_may_2022_submits_probabilities(tmp_path: Path) -> None:
    """Its grader's ``auc-roc`` on a 0/1 target: the baseline's spec predicts the probability
    of the positive class and validates on ROC AUC (hard labels scored 0.746 where the same
    model's probabilities score 0.837)."""
    public = tmp_path / "public"
    public.mkdir()
    rows = range(60)
    train = "id,f_00,f_01,target\n" + "".join(f"{i},{i % 7},{i % 5},{i % 2}\n" for i in rows)
    (public / "train.csv").write_text(train)
    (public / "test.csv").write_text(
        "id,f_00,f_01\n" + "".join(f"{i},1,2\n" for i in range(60, 70))
    )
    (public / "sample_submission.csv").write_text(
        "id,target\n" + "".join(f"{i},0.5\n" for i in range(60, 70))
    )
    spec = analyse(public, task_metric("auc-roc", PLAYGROUND))
    assert (spec.scoring, spec.prediction) == ("roc_auc", "proba")
