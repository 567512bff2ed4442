"""``search.holdout`` in real runs: the toy task, a scripted model, bubblewrap.

Two drafts disagree on purpose: node 1 prints a high validation metric but predicts 0 for
every row; node 2 prints a low one but predicts the toy's rule. By validation metric the run
would submit node 1; on the host's held-out labels it submits node 2. Both nodes first look,
from inside the sandbox, for any trace of the held-out labels and print what they found.

The run is made in two parts (1 step, then resumed to 2) and replayed from its record: the
split must be the same all three times.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import podium
from podium.benchmarks import FolderTask, load_folder_task, make_holdout
from podium.errors import RunDirError, TaskError
from podium.formats import Journal, RunDir
from podium.testing.scripted import node_answers, write_script
from tests.support import TOY_TASK, files_under, run_config

SHARE, SEED = 0.25, 0

INSPECT = """
import json, os
LABELLED = set({held_lines!r})
IDS = set({held_ids!r})
found = {{"labelled_lines": 0, "ids_in_train": 0, "files": 0}}
for top in ("input", "."):
    for base, _, names in os.walk(top):
        for name in names:
            found["files"] += 1
            try:
                with open(os.path.join(base, name), encoding="utf-8", errors="replace") as fh:
                    found["labelled_lines"] += sum(line.strip() in LABELLED for line in fh)
            except OSError:
                pass
with open("input/train.csv") as fh:
    found["ids_in_train"] = sum(line.split(",")[0] in IDS for line in fh)
found["answers_visible"] = os.path.exists({answers!r})
found["run_dir_visible"] = os.path.exists({run_dir!r})
with open("input/test.csv") as fh:
    rows = [line.strip().split(",") for line in fh][1:]
found["test_rows"] = len(rows)
print("INSPECT " + json.dumps(found))
with open("submission/submission.csv", "w") as out:
    out.write("id,y\\n")
    for id_, x1, x2 in rows:
        out.write(f"{{id_}},{{{predict}}}\\n")
print("VALIDATION_METRIC: {metric}")
"""


def inspecting(held: dict[str, Any], predict: str, metric: float) -> str:
    return INSPECT.format(predict=predict, metric=metric, **held)


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Any]:
    """The split the run will make (a function of the data, the share and the seed), made
    beforehand so the solutions can look for its labels."""
    tmp = tmp_path_factory.mktemp("hr")
    task = load_folder_task(TOY_TASK, data_dir)
    assert isinstance(task, FolderTask)
    split = make_holdout(task, tmp / "expected", SHARE, SEED)
    answers = pd.read_csv(split.answers)
    train_lines = (task.public_dir / "train.csv").read_text().splitlines()
    ids = {str(i) for i in answers["id"]}
    return {
        "held_lines": sorted(line for line in train_lines[1:] if line.split(",")[0] in ids),
        "held_ids": sorted(ids),
        "answers": str(tmp / "run" / "holdout" / "answers" / task.answers.name),
        "run_dir": str(tmp / "run"),
        "tmp": tmp,
        "expected": split.describe(),
    }


@pytest.fixture(scope="module")
def run(held: dict[str, Any], data_dir: Path) -> dict[str, Any]:
    tmp: Path = held["tmp"]
    script = write_script(
        tmp / "script.jsonl",
        [
            node_answers(inspecting(held, "0", 0.99)),
            node_answers(inspecting(held, "int(float(x1) + 0.8 * float(x2) > 0.9)", 0.5)),
        ],
    )
    config = run_config(
        script, tmp / "run", data_dir, steps=1,
        search={"num_drafts": 2, "holdout": SHARE}, sandbox={"name": "bwrap"},
    )  # fmt: skip
    first = podium.run(config)
    split_then = files_under(first.run_dir / "holdout")
    result = podium.resume(first.run_dir, {"budget.steps": 2})
    replayed = podium.run({**config, "out": str(tmp / "replay"), "budget": {"steps": 2},
                           "model": {**config["model"], "replay": str(first.run_dir)}})  # fmt: skip
    return {"result": result, "split_then": split_then, "replayed": replayed, "config": config}


def inspected(run_dir: Path, node_id: int) -> dict[str, Any]:
    output = (RunDir(run_dir).node_dir(node_id) / "output.txt").read_text()
    match = re.search(r"^INSPECT (.*)$", output, re.MULTILINE)
    assert match, output
    return dict(json.loads(match.group(1)))


def test_no_trace_of_the_held_out_labels_inside_the_sandbox(
    run: dict[str, Any], held: dict[str, Any]
) -> None:
    for node_id in (1, 2):
        found = inspected(run["result"].run_dir, node_id)
        assert found["files"] >= 3  # it did look: train, test, sample at least
        assert found["labelled_lines"] == 0 and found["ids_in_train"] == 0
        assert found["answers_visible"] is False and found["run_dir_visible"] is False
        assert found["test_rows"] == 100 + len(held["held_ids"])  # it predicts them blind


def test_the_final_node_is_chosen_on_the_held_out_labels(run: dict[str, Any]) -> None:
    summary = run["result"].summary
    rd = RunDir(run["result"].run_dir)
    scores = {i: rd.held_out_score(i) for i in (1, 2)}
    assert scores[1] is not None and scores[2] is not None and scores[2] > scores[1]
    assert summary["best_node"] == 2 and summary["best_metric"] == 0.5
    assert summary["best_held_out"] == scores[2]
    submitted = pd.read_csv(rd.best / "submission.csv")
    assert len(submitted) == 100  # the task's own rows only: what grading and MLE-bench get
    assert summary["grade"]["valid_submission"] is True
    selection = json.loads(rd.selection.read_text())
    assert selection["chosen_by"] == "held-out" and selection["chosen"]["node_id"] == 2


def test_nothing_of_the_held_out_score_reaches_a_model(run: dict[str, Any]) -> None:
    rd = RunDir(run["result"].run_dir)
    journal = Journal.open(rd.journal)
    try:
        prompts = [m.content for c in journal.calls() for m in c.request.messages]
        nodes = journal.nodes()
    finally:
        journal.close()
    text = "\n".join(str(p) for p in prompts)
    for node in nodes:  # the solutions' own code names the answers' path: not the host's words
        text = text.replace(node.code, "").replace(node.code.strip(), "")
    assert not re.search(r"held.?out|holdout", text, re.IGNORECASE)
    for node in nodes:
        assert "held" not in node.model_dump_json().lower()  # not in the node's record either


def test_resume_and_replay_keep_the_same_split(run: dict[str, Any], held: dict[str, Any]) -> None:
    result, replayed = run["result"], run["replayed"]
    assert files_under(result.run_dir / "holdout") == run["split_then"]
    assert files_under(replayed.run_dir / "holdout") == run["split_then"]
    assert result.summary["holdout"] == replayed.summary["holdout"] == held["expected"]
    assert replayed.summary["best_node"] == 2


def test_without_the_holdout_the_validation_metric_decides(
    run: dict[str, Any], held: dict[str, Any], data_dir: Path
) -> None:
    config = run["config"]
    plain = podium.run({**config, "out": str(held["tmp"] / "plain"), "budget": {"steps": 2},
                        "search": {"num_drafts": 2}})  # fmt: skip
    assert plain.summary["best_node"] == 1 and "holdout" not in plain.summary
    selection = json.loads(RunDir(plain.run_dir).selection.read_text())
    assert selection["chosen_by"] == "validation" and selection["best"]["node_id"] == 2
    assert selection["regret"]["medals_lost"] >= 0 and selection["regret"]["score"] > 0.3


@pytest.mark.parametrize(("share", "error"), [(0.0, RunDirError), (0.3, TaskError)])
def test_a_resumed_run_keeps_its_holdout_as_it_was(
    run: dict[str, Any], share: float, error: type[Exception]
) -> None:
    rd = RunDir(run["result"].run_dir)
    before = files_under(rd.root)
    with pytest.raises(error) as caught:
        podium.resume(rd.root, {"search.holdout": share, "budget.steps": 3})
    assert "\n" not in str(caught.value)
    assert files_under(rd.root) == before  # config.toml too: the run resumes as it was


def test_a_split_it_refuses_leaves_no_run_dir(held: dict[str, Any]) -> None:
    config = run_config(held["tmp"] / "script.jsonl", held["tmp"] / "refused", held["tmp"] / "d")
    with pytest.raises(TaskError, match=r"cannot spare a share of 0\.001"):
        podium.run({**config, "search": {"holdout": 0.001}})
    assert not (held["tmp"] / "refused").exists()
