from __future__ import annotations

from rich.console import Console

from podium.benchmarks.sweeps import Manifest, RunState, event_line, grid_table, totals_line


def rendered(manifest: Manifest) -> list[str]:
    console = Console(width=100, record=True, file=None, force_terminal=False)
    with console.capture() as captured:
        console.print(grid_table(manifest))
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
