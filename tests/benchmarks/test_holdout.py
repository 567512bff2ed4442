"""The host-held holdout's split, on the toy task's prepared data (no kernels here; the runs
that use it, and what a sandboxed solution can see of it, are in tests/api/test_holdout_runs.py).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from podium.benchmarks import FolderTask, make_holdout
from podium.benchmarks.holdout import HostHoldout
from podium.errors import TaskError
from tests.support import files_under

SHARE = 0.25  # of the toy's 400 training rows: 100 held out; its test set has 100 rows


@pytest.fixture
def holdout(toy_task: FolderTask, tmp_path: Path) -> HostHoldout:
    return make_holdout(toy_task, tmp_path / "holdout", SHARE, seed=3)


def table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


def test_the_agent_gets_fewer_labels_and_predicts_the_held_out_rows_too(
    toy_task: FolderTask, holdout: HostHoldout
) -> None:
    train, test = table(toy_task.public_dir / "train.csv"), table(toy_task.public_dir / "test.csv")
    public = holdout.task.public_dir
    seen_train, seen_test = table(public / "train.csv"), table(public / "test.csv")
    sample = table(public / "sample_submission.csv")
    answers = table(holdout.answers)

    assert (len(seen_train), len(seen_test), len(answers)) == (300, 200, 100)
    held = set(answers["id"])
    assert held.isdisjoint(seen_train["id"])  # no label of a held-out row reaches the agent
    assert set(seen_test["id"]) == held | set(test["id"])
    assert list(seen_test.columns) == list(test.columns)  # features only, as in test.csv
    assert list(sample["id"]) == list(seen_test["id"])  # a row for each, in test.csv's order
    truth = train.set_index("id").loc[sorted(held), "y"]
    assert list(answers.sort_values("id")["y"]) == list(truth)  # the answers are the labels
    assert not holdout.answers.is_relative_to(public)  # kept where no sandbox binds it
    assert holdout.task.train_rows() == 300


def test_the_split_is_a_function_of_the_data_the_share_and_the_seed(
    toy_task: FolderTask, tmp_path: Path
) -> None:
    one = make_holdout(toy_task, tmp_path / "a", SHARE, seed=3)
    same = make_holdout(toy_task, tmp_path / "b", SHARE, seed=3)
    other = make_holdout(toy_task, tmp_path / "c", SHARE, seed=4)
    assert files_under(tmp_path / "a") == files_under(tmp_path / "b")  # byte for byte
    assert one.describe() == same.describe()
    assert one.describe()["ids_sha256"] != other.describe()["ids_sha256"]


def test_a_run_reuses_its_split_and_refuses_one_that_no_longer_fits(
    toy_task: FolderTask, holdout: HostHoldout, tmp_path: Path
) -> None:
    root = tmp_path / "holdout"
    before = files_under(root)
    assert make_holdout(toy_task, root, SHARE, seed=3).describe() == holdout.describe()
    assert files_under(root) == before
    with pytest.raises(TaskError, match="other data or settings"):
        make_holdout(toy_task, root, 0.3, seed=3)
    record = json.loads((root / "split.json").read_text())
    record["ids"][0] = "999999"  # a split edited by hand no longer matches its digest
    (root / "split.json").write_text(json.dumps(record))
    with pytest.raises(TaskError, match="other data or settings"):
        make_holdout(toy_task, root, SHARE, seed=3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"task_type": "time-series-forecasting"}, "time series"),
        ({"public_dir": Path("/nonexistent")}, "no train.csv"),
    ],
)
def test_tasks_it_cannot_split_are_one_line(
    toy_task: FolderTask, tmp_path: Path, change: dict[str, object], message: str
) -> None:
    with pytest.raises(TaskError, match=message) as caught:
        make_holdout(dataclasses.replace(toy_task, **change), tmp_path / "h", SHARE, 0)  # type: ignore[arg-type]
    assert "\n" not in caught.value.message and caught.value.hint
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("share", [0.0, 0.6])
def test_the_share_is_checked(toy_task: FolderTask, tmp_path: Path, share: float) -> None:
    with pytest.raises(TaskError, match=r"search.holdout must be in \(0, 0.5\]"):
        make_holdout(toy_task, tmp_path / "h", share, 0)


def test_answers_in_another_format_than_the_sample_are_refused(
    toy_task: FolderTask, tmp_path: Path
) -> None:
    private = tmp_path / "private"
    shutil.copytree(toy_task.private_dir, private)
    answers = private / toy_task.answers.name
    table(answers).assign(extra=1).to_csv(answers, index=False)
    with pytest.raises(TaskError, match="the answers' columns are not the sample's"):
        make_holdout(dataclasses.replace(toy_task, private_dir=private), tmp_path / "h", SHARE, 0)


def test_a_submission_is_split_into_its_own_rows_and_the_held_out_ones(
    toy_task: FolderTask, holdout: HostHoldout, tmp_path: Path
) -> None:
    seen = table(holdout.task.public_dir / "test.csv")
    submission = tmp_path / "submission.csv"
    # predicted as the toy's rule has it, ids written as floats (pandas does, after a merge)
    predicted = seen.assign(y=(seen["x1"] + 0.8 * seen["x2"] > 0.9).astype(int))
    predicted[["id", "y"]].astype({"id": float}).to_csv(submission, index=False)
    assert holdout.task.check_submission(submission) is None

    predictions = tmp_path / "held.csv"
    assert holdout.separate(submission, predictions) is None
    own, held = table(submission), table(predictions)
    assert sorted(own["id"]) == sorted(table(toy_task.sample_submission)["id"])
    assert sorted(held["id"]) == sorted(table(holdout.answers)["id"])
    assert toy_task.check_submission(submission) is None  # what stays is the task's own format
    score = holdout.score(predictions)
    assert score.problem is None and score.score is not None and score.score > 0.85


def test_a_submission_without_the_held_out_rows_is_invalid_and_left_as_it_is(
    toy_task: FolderTask, holdout: HostHoldout, tmp_path: Path
) -> None:
    submission = tmp_path / "submission.csv"
    shutil.copy(toy_task.sample_submission, submission)  # the task's test rows only
    before = submission.read_bytes()
    problem = holdout.task.check_submission(submission)
    assert problem == (
        "the submission has no row for 100 of the test.csv ids: it must predict every row of "
        "test.csv"
    )
    assert holdout.separate(submission, tmp_path / "held.csv") == problem
    assert submission.read_bytes() == before and not (tmp_path / "held.csv").exists()


def test_held_out_predictions_the_grader_rejects_have_no_score(
    holdout: HostHoldout, tmp_path: Path
) -> None:
    predictions = tmp_path / "held.csv"
    table(holdout.answers).iloc[1:].to_csv(predictions, index=False)  # a held-out id missing
    score = holdout.score(predictions)
    assert score.score is None and score.problem


# --- hostile submissions: the split is held to the task's bounds and its own format check ----


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "submission.csv"
    path.write_text(text)
    return path


def predicted(holdout: HostHoldout) -> pd.DataFrame:
    """A valid submission: a row for every row of the agent's test.csv."""
    return table(holdout.task.public_dir / "sample_submission.csv")


def test_a_header_far_wider_than_the_sample_is_refused_before_any_row_is_read(
    holdout: HostHoldout, tmp_path: Path
) -> None:
    wide = "id,y," + ",".join(f"c{i}" for i in range(300_000)) + "\n1,0\n"
    path = written(tmp_path, wide)
    for problem in (holdout.task.check_submission(path), holdout.separate(path, tmp_path / "h")):
        assert problem is not None and "header" in problem
    assert path.read_text() == wide  # left as it was


def test_a_row_wider_than_the_header_is_refused(holdout: HostHoldout, tmp_path: Path) -> None:
    text = predicted(holdout).to_csv(index=False) + "1,0" + "," * 50_000 + "\n"
    problem = holdout.task.check_submission(written(tmp_path, text))
    assert problem is not None and "more fields than its header" in problem


def test_held_out_rows_are_checked_like_the_task_s_own(
    holdout: HostHoldout, tmp_path: Path
) -> None:
    frame = predicted(holdout)
    held = frame["id"].isin(table(holdout.answers)["id"])
    repeated = pd.concat([frame, frame[held].head(3)])
    assert holdout.task.check_submission(written(tmp_path, repeated.to_csv(index=False))) == (
        "the submission repeats 3 of the test.csv ids"
    )
    empty = frame.astype({"y": object})
    empty.loc[held, "y"] = ""
    assert holdout.task.check_submission(written(tmp_path, empty.to_csv(index=False)))


@pytest.mark.parametrize("spelled", ["{}_0", "\uff11{}", "{}e0"])
def test_ids_count_only_as_the_same_integer(
    holdout: HostHoldout, tmp_path: Path, spelled: str
) -> None:
    frame = predicted(holdout).astype({"id": str})
    held = frame["id"].isin(table(holdout.answers)["id"].astype(str))
    frame.loc[held, "id"] = [spelled.format(i) for i in frame.loc[held, "id"]]
    problem = holdout.task.check_submission(written(tmp_path, frame.to_csv(index=False)))
    assert problem is not None and problem.startswith("the submission has no row for 100")


def test_id_keys_are_exact_for_large_integers() -> None:
    from podium.benchmarks.holdout import _id_key

    assert _id_key("9007199254740993") != _id_key("9007199254740992")
    assert _id_key(" 7.0 ") == _id_key("+7") == "7" and _id_key("1e3") != _id_key("1000")


def test_a_public_folder_with_any_other_file_is_refused(
    toy_task: FolderTask, tmp_path: Path
) -> None:
    public = tmp_path / "public"
    shutil.copytree(toy_task.public_dir, public)
    (public / "extra_train_labels.csv").write_text("id,y\n1,0\n")
    task = dataclasses.replace(toy_task, public_dir=public)
    with pytest.raises(TaskError, match=r"more than the three tables \(extra_train_labels\.csv\)"):
        make_holdout(task, tmp_path / "h", SHARE, 0)


def test_ids_that_reveal_the_split_are_said(holdout: HostHoldout) -> None:
    # The toy's test ids (401-500) lie above its training ids (1-400).
    assert holdout.describe()["ids_reveal_split"] is True
