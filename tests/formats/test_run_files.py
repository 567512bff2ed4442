"""The run dir's files read back: ``summary.json`` as the typed RunSummary (what a run writes
comes back unchanged, unknown keys included) and the one JSON / TOML reader's outcomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.formats import RunDir, RunFileError, RunSummary, run_files
from tests.support import node_answers, run_config, solution, write_script


@pytest.mark.slow
def test_a_runs_summary_round_trips_through_the_record(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl", [node_answers(solution(0.8)), node_answers(solution(0.9))]
    )
    config = run_config(
        script, tmp_path / "run", data_dir, steps=2, search={"num_drafts": 2, "final_top_k": 2}
    )
    result = podium.run(config)
    rd = RunDir(result.run_dir)
    text = rd.summary.read_text(encoding="utf-8")

    record = RunSummary.parse(json.loads(text))
    assert record.to_dict() == result.summary
    assert json.dumps(record.to_dict(), indent=2, default=str) + "\n" == text  # byte for byte
    assert rd.read_summary() == record
    assert (record.status, record.steps, record.best_node, record.best_metric) == (
        "finished", 2, 2, 0.9
    )  # fmt: skip
    assert record.usage is not None and record.usage.calls == result.summary["usage"]["calls"]
    assert record.final_reruns and {r.node_id for r in record.final_reruns} == {1, 2}
    assert record.versions is not None and record.versions.podium == podium.__version__
    assert record.grade is not None and record.grade.valid_submission is True

    rd.write_summary(record)  # what a reader writes back is the file as it was
    assert rd.summary.read_text(encoding="utf-8") == text


SUMMARY: dict[str, Any] = {
    "task": "mini/a",
    "model": "baseline",
    "status": "finished",
    "steps": 3,
    "usage": {"input_tokens": 1, "output_tokens": 2, "cost_usd": 0.5, "calls": 1, "new": 7},
    "from_a_plugin": {"kept": True},
}


def test_unknown_keys_are_kept_and_written_back() -> None:
    record = RunSummary.parse(SUMMARY)
    assert record.model_extra == {"from_a_plugin": {"kept": True}}
    assert record.to_dict() == SUMMARY  # only the keys given: nothing added, nothing lost
    assert list(record.to_dict()) == list(SUMMARY)


def test_a_field_of_the_wrong_type_is_an_error_or_missing_as_the_reader_chooses() -> None:
    broken = {**SUMMARY, "steps": "many"}
    with pytest.raises(ValueError, match=r"^steps: Input should be a valid integer") as caught:
        RunSummary.parse(broken)
    assert "\n" not in str(caught.value)
    lenient = RunSummary.lenient(broken)
    assert lenient.steps is None and lenient.status == "finished"  # the rest still reads
    assert RunSummary.lenient({**SUMMARY, "usage": [1, 2]}).usage is None


def test_the_readers_tell_missing_from_damaged(tmp_path: Path) -> None:
    path = tmp_path / run_files.SUMMARY
    with pytest.raises(RunFileError) as caught:
        run_files.read_json(path)
    assert caught.value.problem == "missing" and str(path) in caught.value.message
    assert run_files.read_json(path, missing_ok=True) is None

    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(RunFileError, match="holds list, not a JSON object"):
        run_files.read_json(path, missing_ok=True)
    assert run_files.read_json(path, damaged_ok=True) is None

    path.write_text('{"status": ', encoding="utf-8")
    with pytest.raises(RunFileError, match="is not valid JSON"):
        run_files.read_json(path)

    config = tmp_path / run_files.CONFIG
    config.write_bytes(b"[budget]\nsteps = \xff\n")
    with pytest.raises(RunFileError, match="is not valid TOML") as caught:
        run_files.read_toml(config)
    assert caught.value.problem == "invalid"
    assert run_files.read_toml(config, damaged_ok=True) is None
    config.write_text("[budget]\nsteps = 4\n", encoding="utf-8")
    assert run_files.read_toml(config) == {"budget": {"steps": 4}}
