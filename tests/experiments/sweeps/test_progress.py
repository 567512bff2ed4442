"""The live grid: marks, totals, elapsed time and ETA, each running run's steps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console

from podium.experiments.sweeps import event_line, grid_table, totals_line
from podium.experiments.sweeps.progress import duration, run_steps, time_line
from podium.formats import Grid, Manifest, RunState, new_runs
from tests.formats.conftest import write_summary


def rendered(manifest: Manifest, now: datetime | None = None) -> list[str]:
    console = Console(width=100, record=True, file=None, force_terminal=False)
    with console.capture() as captured:
        console.print(grid_table(manifest, now))
    return [line.rstrip() for line in captured.get().splitlines()]


def test_the_grid_shows_one_mark_per_seed_and_the_totals(manifest: Manifest) -> None:
    a0, a1, b0, b1 = manifest.runs
    a0.state, a0.medal = RunState.FINISHED, "gold"
    a1.state = RunState.FINISHED  # no medal
    b0.state = RunState.RUNNING
    b1.state, b1.error = RunState.FAILED, "boom"
    lines = rendered(manifest)
    assert lines[:3] == ["task  greedy", "a     G+", "b     >x"]
    assert lines[3] == totals_line(manifest)
    assert totals_line(manifest) == (
        "2/4 done, 1 running, 1 failed; medals 1 (gold 1, silver 0, bronze 0)"
    )


def test_event_lines_say_what_happened_to_each_run(manifest: Manifest) -> None:
    a0, a1, b0, _ = manifest.runs
    a0.state, a0.medal, a0.score, a0.elapsed_s = RunState.FINISHED, "silver", 0.8123, 12.4
    assert event_line("ended", a0, manifest) == (
        "[1/4] a.greedy.baseline.s0: finished in 12s, silver medal, score 0.8123"
    )
    a1.state, a1.attempts = RunState.RUNNING, 2
    assert event_line("started", a1, manifest) == "[1/4] a.greedy.baseline.s1: started (attempt 2)"
    b0.state, b0.error = RunState.FAILED, "no API key"
    assert event_line("ended", b0, manifest) == "[1/4] b.greedy.baseline.s0: failed: no API key"


T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_the_grid_shows_elapsed_time_eta_and_each_running_runs_steps(
    tmp_path: Path, manifest: Manifest
) -> None:
    a0, a1, b0, _ = manifest.runs
    manifest.session.sweep_dir, manifest.session.started, manifest.session.parallel = (
        tmp_path,
        T0,
        2,
    )
    a0.state, a0.started_at, a0.finished_at = RunState.FINISHED, T0, T0 + timedelta(minutes=10)
    for entry in (a1, b0):
        entry.state, entry.started_at = RunState.RUNNING, T0 + timedelta(minutes=10)
    write_summary(tmp_path / a1.path, "running", steps=3, budget={"steps": 20})
    lines = rendered(manifest, now=T0 + timedelta(minutes=12, seconds=5))
    assert lines[4:] == [
        "elapsed 12m05s; ETA 15m00s (3 runs left, a run takes 10m00s, 2 at a time)",
        "> a.greedy.baseline.s1: step 3/20, 2m05s",
        "> b.greedy.baseline.s0: no steps yet, 2m05s",  # no summary.json yet
    ]


def test_before_any_run_finished_the_eta_is_unknown(manifest: Manifest) -> None:
    manifest.session.started = T0
    assert time_line(manifest, T0 + timedelta(seconds=42)) == (
        "elapsed 42s; ETA unknown (no run finished yet, 4 runs left)"
    )
    manifest.session.started = None  # not being driven by this process
    assert time_line(manifest, T0).startswith("elapsed -; ")


def test_steps_are_read_again_only_when_the_summary_changed(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text('{"status": "running", "steps": 2')  # half-written
    assert run_steps(tmp_path) == (None, None)
    write_summary(tmp_path, "running", steps=2)
    assert run_steps(tmp_path) == (2, None)
    write_summary(tmp_path, "running", steps=12, budget={"steps": 20})
    assert run_steps(tmp_path) == (12, 20)
    summary.unlink()
    assert run_steps(tmp_path) == (None, None)


def test_every_line_is_ascii_and_fits_100_columns(tmp_path: Path) -> None:
    grid = Grid(tasks=("mini/" + "t" * 120,), strategies=("greedy",), models=("baseline",),
                seeds=tuple(range(12)))  # fmt: skip
    manifest = Manifest(podium_version="test", tasks_spec="x", grid=grid, runs=new_runs(grid))
    manifest.session.sweep_dir = tmp_path
    for entry in manifest.runs:
        entry.state, entry.started_at = RunState.RUNNING, T0
    lines = rendered(manifest, now=T0 + timedelta(hours=30))
    assert lines[-1] == "  and 4 more running"
    assert all(line.isascii() and len(line) <= 100 for line in lines)
    assert lines[1] == f"{'t' * 14}...{'t' * 15}  {'>' * 12}"
    assert lines[4].startswith("> ttt") and "t...t" in lines[4]
    assert lines[4].endswith("t.greedy.baseline.s0: no steps yet, 30h00m")


def test_durations_are_short() -> None:
    assert [duration(s) for s in (0.4, 42, 185, 3720, 90000)] == [
        "0s", "42s", "3m05s", "1h02m", "25h00m"
    ]  # fmt: skip
