from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.errors import UserError
from podium.formats import Manifest, RunState, load_manifest, reconcile
from podium.formats.sweep_dir import (
    ATTEMPT_ERRORS_KEPT,
    ERROR_CHARS,
    lenient_entry,
    save_manifest,
    state_of,
)
from tests.formats.conftest import write_summary


def test_a_run_dir_tells_its_state(tmp_path: Path) -> None:
    assert state_of(tmp_path / "never") is RunState.PENDING
    (tmp_path / "started").mkdir()
    (tmp_path / "started" / "journal.sqlite").touch()  # killed before its first summary
    assert state_of(tmp_path / "started") is RunState.INTERRUPTED
    for status, state in [("finished", RunState.FINISHED), ("failed", RunState.FAILED),
                          ("interrupted", RunState.INTERRUPTED),
                          ("running", RunState.INTERRUPTED)]:  # fmt: skip
        write_summary(tmp_path / status, status)
        assert state_of(tmp_path / status) is state


def test_reconcile_trusts_the_run_dirs_over_a_killed_drivers_notes(
    tmp_path: Path, manifest: Manifest
) -> None:
    a0, a1, b0, b1 = manifest.runs
    for entry in (a0, a1, b0):
        entry.state, entry.attempts = RunState.RUNNING, 1
    write_summary(tmp_path / a0.path, "finished", "silver")
    write_summary(tmp_path / a1.path, "running")  # SIGKILLed mid-run
    (tmp_path / b0.path).mkdir(parents=True)  # started, then killed before writing anything
    reconcile(tmp_path, manifest)
    assert (a0.state, a0.medal, a0.score, a0.elapsed_s) == (RunState.FINISHED, "silver", 0.9, 1.5)
    assert a1.state is RunState.INTERRUPTED
    assert b0.state is RunState.INTERRUPTED
    assert b1.state is RunState.PENDING


def test_the_manifest_round_trips_and_damage_is_one_line(
    tmp_path: Path, manifest: Manifest
) -> None:
    save_manifest(tmp_path, manifest)
    assert load_manifest(tmp_path) == manifest
    assert not list(tmp_path.glob("*.tmp"))
    (tmp_path / "sweep.json").write_text('{"format": "podium-sweep/1", "runs": 3')
    with pytest.raises(UserError, match=r"sweep\.json is damaged"):
        load_manifest(tmp_path)
    with pytest.raises(UserError, match="not a sweep directory") as info:
        load_manifest(tmp_path / "elsewhere")
    assert "podium bench" in (info.value.hint or "")


def test_an_older_manifest_without_attempt_errors_still_loads(
    tmp_path: Path, manifest: Manifest
) -> None:
    save_manifest(tmp_path, manifest)
    data = json.loads((tmp_path / "sweep.json").read_text())
    for entry in data["runs"]:
        del entry["attempt_errors"]
    (tmp_path / "sweep.json").write_text(json.dumps(data))
    assert [e.attempt_errors for e in load_manifest(tmp_path).runs] == [[]] * 4


def test_attempt_errors_are_bounded_and_clipped(manifest: Manifest) -> None:
    entry = manifest.runs[0]
    for attempt in range(1, ATTEMPT_ERRORS_KEPT + 3):
        entry.note_attempt_error(f"attempt {attempt}:\n" + "x" * 1000)
    assert len(entry.attempt_errors) == ATTEMPT_ERRORS_KEPT
    assert entry.attempt_errors[0].startswith("attempt 3: xxx")  # the last five, on one line
    assert {len(e) for e in entry.attempt_errors} == {ERROR_CHARS}
    assert entry.last_error == entry.attempt_errors[-1]
    entry.error = "this attempt's"
    assert entry.last_error == "this attempt's"


def test_reconcile_notes_the_attempt_a_killed_driver_left_running(
    tmp_path: Path, manifest: Manifest
) -> None:
    a0, a1, *_ = manifest.runs
    for entry in (a0, a1):
        entry.state, entry.attempts = RunState.RUNNING, 1
    write_summary(tmp_path / a0.path, "finished")
    write_summary(tmp_path / a1.path, "running")
    reconcile(tmp_path, manifest)
    assert a0.attempt_errors == []
    assert a1.attempt_errors == ["the sweep's driver stopped during this attempt (interrupted)"]


def test_entries_of_any_manifest_are_read_leniently() -> None:
    named = {"id": "a.g.b.s0", "task": "a", "strategy": "g", "model": "b", "seed": 0,
             "path": "runs/a.g.b.s0"}  # fmt: skip
    entry = lenient_entry({**named, "attempts": 2, "attempt_errors": "?", "newer_key": 1})
    assert entry is not None and (entry.attempts, entry.attempt_errors) == (2, [])
    assert lenient_entry({**named, "seed": "zero"}) is None  # what names the run does not fit
    assert lenient_entry("not an entry") is None
