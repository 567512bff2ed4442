"""What a sweep costs on top of its runs: ``podium bench`` against the same runs launched by
hand (``podium run``, as many at once, by ``xargs -P``).

The grid (issue 8): the 8 mini tasks × 2 strategies (greedy, mcts) × 2 seeds, the baseline model,
``--steps 3`` per run, 2 runs at once (the 2-core VM). Data are prepared by a warm-up first, so
neither side pays for it.

Reported:

* wall time of the whole grid, for the sweep and for the hand-launched baseline;
* per run, from the manifest: the worker's wall time (its process start to its end, as the
  driver saw it) against the run's own search time (``elapsed_s`` in summary.json). The
  difference is what a run costs outside its search: interpreter start and imports, task
  loading, the sandbox check and kernel warm-up, grading the final submission and the curve
  (each best-so-far node graded), writing host.json;
* the driver's own share: sweep wall − Σ worker wall / parallel (scheduling, manifest writes,
  progress output; negative values mean the runs overlapped better than the mean);
* the report (``podium compare``) time.

Usage:  .venv/bin/python perf/sweep_overhead.py [--steps 3] [--seeds 2] [--parallel 2]
            [--strategies greedy,mcts] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import machine

PODIUM = [sys.executable, "-m", "podium"]
MINI = ["titanic", "adult", "ames-house-prices", "seattle-weather", "mnist-5k",
        "rotten-tomatoes", "bike-sharing", "us-employment"]  # fmt: skip


def sweep(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    out = root / "sweep"
    cmd = [*PODIUM, "bench", "--tasks", "mini", "--strategies", args.strategies,
           "--seeds", str(args.seeds), "--steps", str(args.steps), "--parallel",
           str(args.parallel), "--out", str(out), "--data-dir", str(root / "data"),
           "--no-report"]  # fmt: skip
    started = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - started
    runs = json.loads((out / "sweep.json").read_text())["runs"]
    worker, search = [], []
    for run in runs:
        summary = json.loads((out / run["path"] / "summary.json").read_text())
        span = _seconds(run["finished_at"]) - _seconds(run["started_at"])
        worker.append(span)
        search.append(summary["elapsed_s"])
    started = time.monotonic()
    subprocess.run([*PODIUM, "compare", str(out)], check=True, stdout=subprocess.DEVNULL)
    report = time.monotonic() - started
    outside = [w - s for w, s in zip(worker, search, strict=True)]
    return {
        "runs": len(runs),
        "wall_s": round(wall, 1),
        "report_s": round(report, 1),
        "worker_wall_s_mean": round(statistics.mean(worker), 2),
        "search_s_mean": round(statistics.mean(search), 2),
        "outside_search_s_median": round(statistics.median(outside), 2),
        "outside_search_s_p90": round(sorted(outside)[int(0.9 * (len(outside) - 1))], 2),
        "driver_s": round(wall - sum(worker) / args.parallel, 1),
        "medals": sum(1 for r in runs if r["medal"]),
    }


def by_hand(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The same grid as one ``podium run`` per cell, ``xargs -P`` at a time."""
    lines = []
    for task in MINI:
        for strategy in args.strategies.split(","):
            for seed in range(args.seeds):
                run = root / "hand" / f"{task}.{strategy}.s{seed}"
                cmd = [*PODIUM, "run", f"mini/{task}", "--strategy", strategy, "--seed",
                       str(seed), "--steps", str(args.steps), "--out", str(run),
                       "--data-dir", str(root / "data")]  # fmt: skip
                lines.append(shlex.join(cmd))
    script = root / "hand.txt"
    script.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    subprocess.run(
        f"xargs -P {args.parallel} -I CMD sh -c 'CMD >/dev/null' < {shlex.quote(str(script))}",
        shell=True, check=True,
    )  # fmt: skip
    return {"runs": len(lines), "wall_s": round(time.monotonic() - started, 1)}


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--strategies", default="greedy,mcts")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="podium-sweep-perf-") as tmp:
        root = Path(tmp)
        warm = [*PODIUM, "bench", "--tasks", "mini", "--steps", "1", "--out",
                str(root / "warm"), "--data-dir", str(root / "data"), "--no-report",
                "--parallel", str(args.parallel)]  # fmt: skip
        subprocess.run(warm, check=True, stdout=subprocess.DEVNULL)
        result = {"machine": machine(), "grid": vars(args) | {"json": None},
                  "sweep": sweep(root, args), "by_hand": by_hand(root, args)}  # fmt: skip
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
