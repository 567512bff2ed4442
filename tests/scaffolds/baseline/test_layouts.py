"""The baseline reads a task the way an ML engineer would: MLE-bench's prepared public folders
(random-acts-of-pizza's JSON records, aerial-cactus' zipped images, detecting-insults' sample
with the prediction first and no id column), ``;``-separated tables, a target named otherwise
in the sample than in the training table, and the tasks it cannot do, refused in one line
saying what it would need. Tiny synthetic folders (``synthetic``); generated drafts run in this
process, and one through a real kernel (``podium run``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podium.cli.app import run_cli
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.specs import (
    ImageSpec,
    Layout,
    SeriesSpec,
    TableFormat,
    TabularSpec,
    TextSpec,
    Unsupported,
)
from podium.submission_check import find_sample
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

LAYOUTS = tuple(synthetic.LAYOUT_MAKERS)
RUN = ("pizza", "insults", "semicolons", "renamed", "two_targets")  # cactus: in a kernel, below
PREDICTED = {"pizza": ["requester_received_pizza"], "insults": ["Insult"],
             "semicolons": ["income"], "renamed": ["label"],
             "two_targets": ["SalePrice", "Rooms"]}  # fmt: skip


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SyntheticTask]:
    return {name: synthetic.LAYOUT_MAKERS[name](tmp_path_factory.mktemp(name)) for name in LAYOUTS}


def test_each_layout_is_read_from_its_files(tasks: dict[str, SyntheticTask]) -> None:
    pizza = synthetic.spec_of(tasks["pizza"], TabularSpec)
    assert (pizza.train_format, pizza.test_format) == (TableFormat("json"), TableFormat("json"))
    assert (pizza.id_col, pizza.target, pizza.prediction) == (
        "request_id", "requester_received_pizza", "proba",
    )  # fmt: skip
    assert pizza.layout == Layout(
        ("request_id",), ("requester_received_pizza",), ("request_id", "requester_received_pizza"),
        boolean=True,
    )  # fmt: skip
    features = set(pizza.features)
    assert "requester_subreddits_at_request" not in features  # lists: no feature
    assert "number_of_upvotes_of_request_at_retrieval" not in features  # not in test: a leak
    assert "request_text_edit_aware" in features

    cactus = synthetic.spec_of(tasks["cactus"], ImageSpec)
    assert cactus.zipped and (cactus.train_dir, cactus.test_dir) == ("train.zip", "test.zip")
    assert (cactus.suffix, cactus.mode, cactus.size) == ("", "RGB", (16, 16))

    insults = synthetic.spec_of(tasks["insults"], TextSpec)
    assert (insults.id_col, insults.target, insults.text) == ("", "Insult", ("Comment",))
    assert insults.layout == Layout(("Date", "Comment"), ("Insult",), ("Insult", "Date", "Comment"))

    semicolons = synthetic.spec_of(tasks["semicolons"], TabularSpec)
    assert semicolons.train_format == TableFormat("csv", ";") and semicolons.layout is None

    several = synthetic.spec_of(tasks["two_targets"], TabularSpec)
    assert (several.targets, several.problem, several.transform) == (
        ("SalePrice", "Rooms"), "regression", "log",
    )  # fmt: skip
    assert "Rooms" not in several.features

    renamed = synthetic.spec_of(tasks["renamed"], TabularSpec)
    assert (renamed.target, renamed.scoring, renamed.transform) == ("target", "rmse_log", "log")
    assert renamed.layout == Layout(("Id",), ("label",), ("label", "Id"))


def _test_rows(task: SyntheticTask) -> pd.DataFrame:
    """The rows to predict as the task's own files give them (the sample's, in its order)."""
    return pd.read_csv(find_sample(task.public_dir))


@pytest.mark.parametrize("name", RUN)
def test_the_first_draft_runs_and_submits_in_the_samples_form(
    name: str, tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    task = tasks[name]
    metric, submission, sample = synthetic.first_draft(task, tmp_path)
    keys = [c for c in sample.columns if c not in PREDICTED[name]]
    pd.testing.assert_frame_equal(submission[keys], sample[keys])  # same rows, same order
    for column in PREDICTED[name]:
        values = submission[column]
        assert values.notna().all() and values.nunique() > 1
        if task.metric_name == "roc_auc":  # probabilities
            assert values.between(0, 1).all()
    if task.metric_name == "roc_auc":  # validated well above chance
        assert metric > 0.65, metric
    else:  # RMSE of logs, well below predicting each target's mean log
        train = pd.read_csv(task.public_dir / "train.csv")
        trained = train.rename(columns={"target": "label"})[PREDICTED[name]]
        assert metric < 0.6 * float(np.log(trained).std().min()), metric


def test_improve_and_debug_of_a_several_target_draft_run(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    task = tasks["two_targets"]
    (draft,) = synthetic.drafts(task, 1)
    for i in range(3):
        child = synthetic.improve_child(task, draft.code, seed=i)
        synthetic.run(child.code, task, tmp_path / f"improve{i}")
    synthetic.run(synthetic.debug_child(task).code, task, tmp_path / "debug")
    submission = pd.read_csv(tmp_path / "debug" / "submission" / "submission.csv")
    assert list(submission.columns) == ["Id", "SalePrice", "Rooms"]


def test_a_semicolon_table_validates_as_its_comma_twin(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    """The same data with commas (adult): the same metric, so the reading changed nothing."""
    comma = synthetic.adult(tmp_path / "adult")
    (ours,), (theirs,) = synthetic.drafts(tasks["semicolons"], 1), synthetic.drafts(comma, 1)
    assert ours.code.replace(", sep=';'", "") == theirs.code
    assert synthetic.run(ours.code, tasks["semicolons"], tmp_path / "a") == synthetic.run(
        theirs.code, comma, tmp_path / "b"
    )


def test_a_lone_dated_table_is_forecast_over_the_horizon_its_description_states(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    """AIDE's bitcoin-price shape (no test set, no sample): the description says "the next 2
    weeks" of Close; the submission is the 14 days after the last, one row each."""
    task = tasks["bitcoin_forecast"]
    spec = synthetic.spec_of(task, SeriesSpec)
    assert (spec.date, spec.target, spec.horizon, spec.period) == ("Date", "Close", 14, 7)
    (draft,) = synthetic.drafts(task, 1)
    metric = synthetic.run(draft.code, task, tmp_path)
    submission = pd.read_csv(tmp_path / "submission" / "submission.csv")
    train = pd.read_csv(task.public_dir / "BTC-USD.csv")
    assert list(submission.columns) == ["Date", "Close"]
    expected = pd.date_range(pd.Timestamp(train["Date"].iloc[-1]), periods=15, freq="D")[1:]
    assert submission["Date"].tolist() == expected.strftime("%Y-%m-%d").tolist()
    assert submission["Close"].notna().all()
    assert metric < 0.5 * train["Close"].std(), metric  # well below the spread of the prices


def test_a_monthly_forecast_steps_by_the_calendar(
    tasks: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    task = tasks["monthly_sales"]
    spec = synthetic.spec_of(task, SeriesSpec)
    assert (spec.target, spec.horizon, spec.period) == ("sales", 6, 12)  # the named column
    (draft,) = synthetic.drafts(task, 1)
    synthetic.run(draft.code, task, tmp_path)
    submission = pd.read_csv(tmp_path / "submission" / "submission.csv")
    assert submission["month"].tolist() == [
        "2021-01-31", "2021-02-28", "2021-03-31", "2021-04-30", "2021-05-31", "2021-06-30",
    ]  # fmt: skip


def test_what_the_baseline_cannot_do_is_one_line_saying_what_it_needs(tmp_path: Path) -> None:
    cases = {
        "mixed": r"^the sample submission predicts 2 training columns \(SalePrice, Quality\), "
        r"numbers \(SalePrice\) and classes \(Quality\) mixed: the baseline fits several "
        r"targets only when every one is a number to regress or every one a 0/1 label",
        "bitcoin": r"^no test set and no sample submission \(tables: BTC-USD\.csv\): the "
        r"baseline needs a test table .* a description stating the horizon .*; the description "
        r"states none$",
    }
    for name, said in cases.items():
        task = synthetic.REFUSED_MAKERS[name](tmp_path / name)
        with pytest.raises(Unsupported, match=said) as caught:
            analyse(task.public_dir, task.metric_name)
        assert "\n" not in str(caught.value)


def test_a_target_with_several_candidates_is_refused_naming_them(tmp_path: Path) -> None:
    task = synthetic.renamed(tmp_path)
    train = pd.read_csv(task.public_dir / "train.csv")
    train.assign(Tax=train["target"] / 100).to_csv(task.public_dir / "train.csv", index=False)
    with pytest.raises(Unsupported, match=r"predicts 'label'.* 2 columns it could be \(target, "):
        analyse(task.public_dir, task.metric_name)


def test_a_zipped_image_task_runs_in_a_real_kernel(tmp_path: Path) -> None:
    """``podium run`` on aerial-cactus' layout as a data folder: the draft reads the images
    from the read-only input's zips inside the sandbox and its submission is the best one."""
    task = synthetic.cactus(tmp_path / "cactus")
    (task.public_dir / "description.md").write_text(
        "# Aerial cactus\n\nPredict whether each image holds a cactus. Submissions are "
        "evaluated on area under the ROC curve.\n"
    )
    out = tmp_path / "run"
    assert run_cli(["run", str(task.public_dir), "--model", "baseline", "--steps", "1",
                    "--out", str(out)]) == 0  # fmt: skip
    submission = pd.read_csv(out / "best" / "submission.csv")
    sample = _test_rows(task)
    assert list(submission.columns) == ["id", "has_cactus"]
    assert submission["id"].tolist() == sample["id"].tolist()
    assert submission["has_cactus"].between(0, 1).all()


def test_zipped_tables_and_sample_validate_as_their_plain_twin(tmp_path: Path) -> None:
    """text-normalization ships every table as a zip of one CSV (the sample too): adult's data
    shipped so is read from the zips, and its draft is adult's with the zips' names, validates
    the same and submits in the zipped sample's form (checked against it)."""
    zipped = synthetic.zipped_tables(tmp_path / "zipped")
    plain = synthetic.adult(tmp_path / "plain")
    assert find_sample(zipped.public_dir).name == "sample_submission.csv.zip"
    spec = synthetic.spec_of(zipped, TabularSpec)
    assert (spec.train_file, spec.test_file, spec.layout) == ("train.csv.zip", "test.csv.zip", None)
    (ours,), (theirs,) = synthetic.drafts(zipped, 1), synthetic.drafts(plain, 1)
    assert ours.code.replace(".csv.zip", ".csv") == theirs.code
    assert synthetic.run(ours.code, zipped, tmp_path / "a") == synthetic.run(
        theirs.code, plain, tmp_path / "b"
    )
    submission = pd.read_csv(tmp_path / "a" / "submission" / "submission.csv")
    pd.testing.assert_frame_equal(submission[["id"]], _test_rows(zipped)[["id"]])


def test_ids_a_submission_must_build_are_refused_in_one_line(tmp_path: Path) -> None:
    """text-normalization's sample ids join two test columns (``sentence_id``_``token_id``):
    the baseline says so, not that a target is missing."""
    task = synthetic.text_normalization(tmp_path)
    assert find_sample(task.public_dir).name == "en_sample_submission_2.csv.zip"
    with pytest.raises(Unsupported, match=r"^the sample submission's ids \('id', e\.g\. '15_0'\) "
                       r"are in no table and name no image: the baseline copies the ids it "
                       r"submits from a test table or image files' names; it does not build "
                       r"them from other columns"):  # fmt: skip
        analyse(task.public_dir, task.metric_name)
