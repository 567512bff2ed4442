"""``podium bench`` end to end: real sweeps of real runs (baseline model, bwrap sandbox)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import (
    MLEBENCH_FIXTURE,
    cli_env,
    podium_cli,
    podium_popen,
    process_gone,
    processes,
    wait_until,
)

pytestmark = pytest.mark.slow


def manifest(sweep: Path) -> dict[str, Any]:
    return dict(json.loads((sweep / "sweep.json").read_text()))


def states(sweep: Path) -> dict[str, str]:
    return {r["id"]: r["state"] for r in manifest(sweep)["runs"]}


def test_a_sweep_runs_every_cell_into_ordinary_run_dirs(tmp_path: Path, data_dir: Path) -> None:
    sweep = tmp_path / "sweep"
    done = podium_cli(
        "bench", "--tasks", "mini/titanic", "--strategies", "greedy,random", "--seeds", "0,3",
        "--steps", "2", "--out", str(sweep), "--data-dir", str(data_dir),
        "-o", "greedy:search.num_drafts=1", "-o", "exec.timeout=600", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert set(states(sweep).values()) == {"finished"} and len(states(sweep)) == 4
    assert "4 runs = 1 task × 2 strategies × 1 model × 2 seeds" in done.stdout
    assert "4/4 done, 0 running; medals" in done.stdout
    run = sweep / "runs" / "titanic.random.baseline.s3"
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["strategy"], summary["seed"], summary["steps"]) == ("random", 3, 2)
    assert summary["sandboxed"] is True and "leaderboard_percentile" in summary["grade"]
    assert "timeout = 600.0" in (run / "config.toml").read_text()  # -o reached every run
    greedy = (sweep / "runs" / "titanic.greedy.baseline.s0" / "config.toml").read_text()
    assert "num_drafts = 1" in greedy  # greedy:search.num_drafts only reached greedy's runs
    curve = json.loads((run / "curve.json").read_text())
    assert [p["step"] for p in curve["points"]] == [1, 2]
    host = json.loads((run / "host.json").read_text())
    assert host["cpus"] >= 1 and "hostname" not in host
    assert "step  node  operator" in (run / "run.log").read_text()
    report = json.loads((sweep / "report" / "summary.json").read_text())  # written at the end
    assert report["format"] == "podium-report/1"
    assert (sweep / "report" / "percentile_vs_step.png").is_file()


@pytest.mark.timeout(1200)  # its waits are bounded at 600 s each, for a loaded machine
def test_a_killed_sweep_loses_nothing_and_resumes(tmp_path: Path, data_dir: Path) -> None:
    sweep = tmp_path / "sweep"
    driver = podium_popen(
        "bench", "--tasks", "mini/titanic", "--seeds", "2", "--steps", "4", "--out", str(sweep),
        "--data-dir", str(data_dir),
    )  # fmt: skip
    log = sweep / "runs" / "titanic.greedy.baseline.s0" / "run.log"
    wait_until(lambda: "   1     1" in (log.read_text() if log.exists() else ""), 600)
    workers = [pid for pid, (_, argv) in processes().items() if "podium.cli.sweep_worker" in argv]
    assert workers, "no worker was running"
    os.kill(driver.pid, signal.SIGKILL)
    driver.communicate()
    # Told by the kernel to stop (SIGTERM): each marks its nodes interrupted and exits.
    wait_until(lambda: all(process_gone(pid) for pid in workers), 600)
    assert "running" in states(sweep).values()  # the driver had no chance to write more
    resumed = podium_cli("bench", "--resume", str(sweep), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert set(states(sweep).values()) == {"finished"}
    assert "resuming after" in log.read_text()  # continued from its journal, not restarted
    assert manifest(sweep)["runs"][0]["attempts"] == 2


def test_a_ray_sweep_ships_each_run_dir_back(tmp_path: Path, data_dir: Path) -> None:
    """A local Ray instance: each run executes in a directory of the Ray worker's own and its
    run dir comes back into the sweep (no shared filesystem assumed)."""
    sweep = tmp_path / "sweep"
    done = podium_cli(
        "bench", "--executor", "ray", "--tasks", "mini/titanic", "--seeds", "2", "--steps", "2",
        "--out", str(sweep), "--data-dir", str(data_dir), "--no-report", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "executor ray: " in done.stdout
    assert manifest(sweep)["executor"]["name"] == "ray"
    assert set(states(sweep).values()) == {"finished"}
    for seed in (0, 1):
        run = sweep / "runs" / f"titanic.greedy.baseline.s{seed}"
        assert {"summary.json", "journal.sqlite", "curve.json", "host.json", "run.log"} <= {
            p.name for p in run.iterdir()
        }
        ran_in = (run / "config.toml").read_text().split("out = ")[1].splitlines()[0]
        assert str(sweep) not in ran_in  # the run wrote on the worker's side
        assert (run / "best" / "submission.csv").is_file()


def test_a_sweep_of_mlebench_tasks_reports_each_complexity_split(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    tasks = "mlebench/tiny-iris-species,mlebench/tiny-house-values"  # low, medium
    done = podium_cli(
        "bench", "--tasks", tasks, "--strategies", "greedy,random", "--steps", "1",
        "--out", str(sweep), "--data-dir", str(MLEBENCH_FIXTURE / "data"), timeout=300,
        env=cli_env(MLEBENCH_REPO=str(MLEBENCH_FIXTURE)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((sweep / "report" / "summary.json").read_text())
    for group in report["groups"]:
        assert set(group["splits"]) == {"all", "low", "medium"}
        assert group["splits"]["low"]["runs"]["expected"] == 1
        assert group["splits"]["all"]["runs"]["expected"] == 2
    summary_md = (sweep / "report" / "summary.md").read_text()
    assert "low" in summary_md and "medium" in summary_md


def test_unsandboxed_sweeps_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    refused = podium_cli(
        "bench", "--tasks", "mini/titanic", "--sandbox", "local", "--out", str(sweep)
    )
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "error: refusing to sweep unsandboxed: sandbox 'local' isolates nothing",
        "hint: runs without isolation are not clean-track; pass --allow-unsandboxed to run "
        "them anyway (reports will say so)",
    ]
    assert not sweep.exists()


def test_allowed_unsandboxed_runs_are_stamped_and_reported(tmp_path: Path, data_dir: Path) -> None:
    sweep = tmp_path / "sweep"
    done = podium_cli(
        "bench", "--tasks", "mini/titanic", "--steps", "1", "--sandbox", "local",
        "--allow-unsandboxed", "--out", str(sweep), "--data-dir", str(data_dir), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = sweep / "runs" / "titanic.greedy.baseline.s0"
    assert json.loads((run / "summary.json").read_text())["sandboxed"] is False
    assert (
        "NOT clean-track: 1 of 1 runs ran unsandboxed"
        in (sweep / "report" / "summary.md").read_text()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tasks", "mini/nope", "--out", "x"], "error: --tasks: benchmark 'mini' has no task"),
        (["--tasks", "mini", "--gpus-per-run", "64", "--out", "x"], "error: --gpus-per-run 64:"),
        (["--tasks", "mini", "--executor", "slurm", "--out", "x"], "error: unknown executor"),
        (["--tasks", "mini/titanic,,mini/adult", "--out", "x"], "error: --tasks 'mini/titanic,,"),
        (["--tasks", "nosuch", "--out", "x"], "error: unknown benchmark 'nosuch'"),
        (["--tasks", "mini", "--seeds", "0", "--out", "x"], "error: --seeds '0': expected a"),
        (["--tasks", "mini", "--strategies", "greedy,no", "--out", "x"], "error: unknown strategy"),
        (["--tasks", "mini", "--strategies", "greedy,random", "-o", "search.num_drafts=2",
          "--out", "x"], "error: search.num_drafts: unknown key"),
        (["--tasks", "mini", "--models", "nope/x", "--out", "x"], "error: unknown"),
        (["--tasks", "mini"], "error: a new sweep needs --tasks and --out"),
        (["--resume", "x", "--steps", "3"], "error: --resume continues a sweep as it was planned"),
        (["--resume", "nowhere"], "error: nowhere is not a sweep directory"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = podium_cli("bench", *args, cwd=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert lines[0].startswith(message), result.stderr
    assert len(lines) <= 2 and "Traceback" not in result.stderr
    assert not (tmp_path / "x").exists()


def _podium_command() -> list[str]:
    """``podium`` as a user runs it: the venv's script (whose sys.path has no working
    directory in it), else the interpreter with -P."""
    script = Path(sys.executable).with_name("podium")
    return [str(script)] if script.is_file() else [sys.executable, "-P", "-m", "podium"]


def test_a_sweep_started_beside_a_folder_named_podium_runs_podium_and_stops_early_on_one_failure(
    tmp_path: Path, data_dir: Path, titanic: object
) -> None:
    """The workers import the Podium that runs the sweep, not the ``podium`` folder in the
    working directory (a clone's, say); and a sweep whose first runs all fail for one reason
    (here: no usable interpreter for the solutions) stops launching, in one line."""
    home = tmp_path / "home"
    (home / "podium").mkdir(parents=True)
    (home / "podium" / "__init__.py").write_text("raise ImportError('the shadow podium')\n")
    sweep = tmp_path / "sweep"
    done = subprocess.run(
        [*_podium_command(), "bench", "--tasks", "mini/titanic", "--seeds", "7", "--steps", "1",
         "--parallel", "3", "--out", str(sweep), "--data-dir", str(data_dir), "--no-report",
         "-o", "sandbox.python=/bin/false"],
        capture_output=True, text=True, cwd=home, env=cli_env(), timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "shadow" not in done.stdout + done.stderr + (sweep / "sweep.json").read_text()
    assert "Traceback" not in done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1, done.stderr
    assert error[0].startswith(
        "error: sweep stopped: its first 3 runs all failed with "
        "\"SandboxError: cannot run the solutions' interpreter /bin/false"
    ), error
    # 7 runs, 3 at a time: the 3rd run to end trips it. Each of the first two to end frees a
    # slot that another run may take before the trip, so 3 to 5 started, whatever the timing.
    unstarted = re.search(r"\((\d+) runs? not started\)$", error[0])
    assert unstarted and unstarted[1] in ("2", "3", "4"), error
    assert list(states(sweep).values()).count("pending") == int(unstarted[1])  # for --resume
