"""The retrospective memory across runs: written by run 1 into memory.dir, recalled into run 2's
prompts, never holding a private score, and recalled the same by a replay after the directory
changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.formats import Journal, RunDir, memory_file
from podium.records import MemoryRecord, NodeState
from podium.scaffolds.experience import Experience, section
from tests.scaffolds.strategies.trees import node, tree_of
from tests.support import node_answers, run_config, solution, write_script

pytestmark = pytest.mark.slow

HEADING = "# What similar earlier attempts taught (memory)"


def prompts(run_dir: Path) -> dict[int, str]:
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        return {c.node_id: c.request.messages[-1].content for c in journal.calls()
                if c.role == "code"}  # fmt: skip
    finally:
        journal.close()


def test_recall_ranks_by_similarity_and_a_prompt_without_memory_is_unchanged() -> None:
    tree = tree_of(
        node(1, metric=0.5).model_copy(update={"plan": "gradient boosting on target encoding"}),
        node(2, buggy=True).model_copy(update={"plan": "a neural network on raw pixels"}),
    )
    memory = Experience([], tree, k=1, task="t", task_type=None, run="r")
    assert [r.node_id for r in memory.recall("boosting with target encoding")] == [1]
    assert [r.node_id for r in memory.recall("pixels network")] == [2]
    assert memory.recall("boosting", exclude=(1,)) == []  # no word in common: nothing recalled
    assert section([], "t") == ""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("memory")
    shared = tmp / "shared-memory"
    first = write_script(tmp / "one.jsonl", [
        node_answers(solution(0.6123), plan="Gradient boosting with target encoding."),
        node_answers(solution(error="KeyError('Cabin')"), plan="A forest on the Cabin column."),
    ])  # fmt: skip
    one = podium.run(run_config(
        first, tmp / "one", data_dir, steps=2, search={"num_drafts": 2, "holdout": 0.25},
        memory={"dir": str(shared), "retrieve": 2},
    ))  # fmt: skip
    second = write_script(tmp / "two.jsonl", [node_answers(solution(0.7), plan="Boosting again.")])
    config = run_config(second, tmp / "two", data_dir, steps=1,
                        memory={"dir": str(shared), "retrieve": 2})  # fmt: skip
    two = podium.run(config)
    return {"one": one, "two": two, "shared": shared, "config": config, "tmp": tmp}


def test_run_one_remembers_only_what_the_agent_saw(runs: dict[str, Any]) -> None:
    lines = (runs["shared"] / memory_file.RECORDS).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["node_id"], r["outcome"], r["metric"]) for r in records[:2]] == [
        (1, "draft", 0.6123),
        (2, "failed", None),
    ]
    assert all(set(r) <= set(MemoryRecord.model_fields) for r in records)
    rd = RunDir(runs["one"].run_dir)
    private = {rd.held_out_score(1), runs["one"].summary["grade"]["score"]} - {None}
    assert private and not private & {r["metric"] for r in records}
    assert "KeyError: 'Cabin'" in records[1]["error"]


def test_run_two_recalls_run_ones_attempts_in_its_prompt(runs: dict[str, Any]) -> None:
    prompt = prompts(runs["two"].run_dir)[1]
    assert HEADING in prompt
    assert "- [this task, draft, validation 0.6123; a first solution]" in prompt
    assert "[this task, draft; failed: KeyError: 'Cabin']" in prompt
    copy = RunDir(runs["two"].run_dir).memory_copy
    assert [r.node_id for r in memory_file.read(copy)] == [1, 2]  # what it read, kept


def test_a_replay_recalls_what_the_run_recalled_after_the_directory_changed(
    runs: dict[str, Any], data_dir: Path
) -> None:
    (runs["shared"] / memory_file.RECORDS).write_text("")  # the directory forgot everything
    source = str(runs["two"].run_dir)
    replay = podium.run({**runs["config"], "out": str(runs["tmp"] / "replay"),
                         "model": {"name": "baseline", "replay": source}})  # fmt: skip
    assert prompts(replay.run_dir) == prompts(runs["two"].run_dir)
    journal = Journal.open(replay.run_dir / "journal.sqlite")
    assert all(c.response and c.response.replayed for c in journal.calls())
    assert [n.metric.value for n in journal.nodes(NodeState.DONE) if n.metric] == [0.7]
    journal.close()
    assert (runs["shared"] / memory_file.RECORDS).read_text() == ""  # a replay teaches nothing


def test_a_torn_hostile_or_huge_line_of_the_shared_file_is_skipped(tmp_path: Path) -> None:
    good = MemoryRecord(task="t", run="r", node_id=1, operator="draft", outcome="draft",
                        error="\x1b]8;;http://x\x07boom")  # fmt: skip
    memory_file.append(tmp_path, good)
    with (tmp_path / memory_file.RECORDS).open("a") as f:
        f.write('{"task": "t", "run"\n')  # a torn last line after a crash
        f.write('{"task": "' + "x" * (memory_file.MAX_LINE_BYTES + 1) + '"}\n')
        f.write("not json at all\n")
    memory_file.append(tmp_path, good.model_copy(update={"node_id": 2}))
    records = memory_file.read(tmp_path / memory_file.RECORDS)
    assert [r.node_id for r in records] == [1, 2]
    assert "\x1b" not in (records[0].error or "")  # an escape sequence is made inert
