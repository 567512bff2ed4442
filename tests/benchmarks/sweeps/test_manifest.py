from __future__ import annotations

from pathlib import Path

import pytest

from podium.benchmarks.sweeps import Manifest, RunState, load_manifest, reconcile
from podium.benchmarks.sweeps.manifest import save, state_of
from podium.errors import UserError
from tests.benchmarks.sweeps.conftest import write_summary


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
    save(tmp_path, manifest)
    assert load_manifest(tmp_path) == manifest
    assert not list(tmp_path.glob("*.tmp"))
    (tmp_path / "sweep.json").write_text('{"format": "podium-sweep/1", "runs": 3')
    with pytest.raises(UserError, match=r"sweep\.json is damaged"):
        load_manifest(tmp_path)
    with pytest.raises(UserError, match="not a sweep directory") as info:
        load_manifest(tmp_path / "elsewhere")
    assert "podium bench" in (info.value.hint or "")
