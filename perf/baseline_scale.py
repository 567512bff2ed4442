"""Node 1 of the baseline on tasks beyond the bundled ones' size: time and peak memory of the
first draft's script at 10x and 100x a test fixture's size, before and after sizing (issue 39).

Every fixture shape of the baseline's tests, made by tests/scaffolds/baseline/synthetic.py at
``scale`` times the test fixture's size: the tabular ``leaf`` (leaf-classification: 192
numeric columns, 99 classes; 1x is MLE-bench's 990 rows, 100x 99,000), ``wide`` (2,000
numeric columns, binary; 1x is 300 rows, 10x the 3,000 that took 662 s) and ``taxi`` (the
taxi-fare table's 7 columns; 1x is 20,000 rows); ``text`` (reviews, 120 documents whose
vocabulary grows with them), ``image`` (8x8 digit PNGs, 90), ``series`` (monthly series, 3
of 72 months), ``forecast`` (AIDE's bitcoin shape: one daily table, no test set, 150 days),
``pizza`` (random-acts-of-pizza's JSON records, 90), ``targets`` (multi-target regression,
120 rows) and ``cactus`` (aerial-cactus' zipped 32x32 JPEGs, 80). For each, the draft the
baseline writes first (index 0; ``--draft`` for another) is rendered by the current checkout
("after") and, with ``--before DIR``, by an older copy of the ``podium`` package in DIR
("before"; e.g. ``git archive <commit> podium | tar -x -C DIR``), then run as a subprocess of
the Python running this script in a node-like workspace
(./input, ./submission) under ``/usr/bin/time``, capped at ``--timeout`` seconds. CPU seconds
(user + system) are the figure to compare on a shared machine; wall seconds and peak RSS are
reported too.

Usage:  .venv/bin/python perf/baseline_scale.py [--before DIR] [--shapes leaf,wide,...]
            [--scales 10,100] [--timeout 600] [--only after|before] [--draft 0] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.scaffolds.baseline import synthetic  # noqa: E402

PYTHON = Path(sys.executable)  # the Python this runs under (the repo's venv)
BASE: dict[str, Callable[[Path, int], synthetic.SyntheticTask]] = {
    "leaf": lambda root, scale: synthetic.leaf(root, per_class=10 * scale),
    "wide": lambda root, scale: synthetic.wide(root, rows=300 * scale),
    "taxi": lambda root, scale: synthetic.taxi(root, rows=20_000 * scale),
    "text": lambda root, scale: synthetic.reviews_at(root, rows=120 * scale),
    "image": lambda root, scale: synthetic.digits_at(root, images=90 * scale),
    "series": lambda root, scale: synthetic.employment(root, n_series=3 * scale),
    "forecast": lambda root, scale: synthetic.bitcoin_forecast_at(root, days=150 * scale),
    "pizza": lambda root, scale: synthetic.pizza_at(root, records=90 * scale),
    "targets": lambda root, scale: synthetic.two_targets_at(root, rows=120 * scale),
    "cactus": lambda root, scale: synthetic.cactus_at(root, images=80 * scale),
}
RENDER = """
import random, sys
from pathlib import Path
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.kinds import KINDS
spec = analyse(Path(sys.argv[1]), sys.argv[2])
kind = KINDS[spec.kind]
recipe = kind.draft(spec, int(sys.argv[3]), random.Random(int(sys.argv[3])))
sys.stdout.write(kind.describe(spec, recipe) + "\\n" + kind.render(spec, recipe))
"""


def render(task: synthetic.SyntheticTask, package_root: Path, draft: int = 0) -> tuple[str, str]:
    """(plan, code) of the ``draft``-th draft (0: node 1's) as the ``podium`` package under
    ``package_root`` writes it, in a fresh process so an older copy can be imported instead of
    the checkout's."""
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    done = subprocess.run(
        [str(PYTHON), "-c", RENDER, str(task.public_dir), task.metric_name, str(draft)],
        env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    plan, code = done.stdout.split("\n", 1)
    return plan, code


def run(code: str, public: Path, timeout: float) -> dict[str, Any]:
    """Run a solution in a node-like workspace; its wall and CPU seconds, peak RSS, metric."""
    with tempfile.TemporaryDirectory(prefix="baseline-scale-") as folder:
        ws = Path(folder)
        (ws / "input").symlink_to(public)
        (ws / "submission").mkdir()
        (ws / "solution.py").write_text(code)
        times = ws / "time.txt"
        command = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(times),
                   "timeout", str(int(timeout)), str(PYTHON), "solution.py"]  # fmt: skip
        done = subprocess.run(command, cwd=ws, capture_output=True, text=True)
        fields = times.read_text().split()[-4:]
        wall, user, system, rss_kb = float(fields[0]), float(fields[1]), float(fields[2]), fields[3]
        metric = [ln for ln in done.stdout.splitlines() if ln.startswith("VALIDATION_METRIC")]
        status = "ok" if done.returncode == 0 else "timeout" if done.returncode == 124 else "failed"
        return {
            "status": status, "wall_s": round(wall, 1), "cpu_s": round(user + system, 1),
            "peak_rss_mb": round(int(rss_kb) / 1024), "metric": metric[-1].split()[-1] if metric
            else None, "error": done.stderr.strip().splitlines()[-1:] if status == "failed" else [],
        }  # fmt: skip


def measure(
    shape: str, scale: int, versions: list[tuple[str, Path]], timeout: float, draft: int = 0
) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix=f"scale-{shape}-") as folder:
        started = time.perf_counter()
        task = BASE[shape](Path(folder), scale)
        made = time.perf_counter() - started
        for version, root in versions:
            plan, code = render(task, root, draft)
            result = run(code, task.public_dir, timeout)
            row = {"shape": shape, "scale": scale, "version": version, "plan": plan, **result}
            print(json.dumps(row), f"(fixture made in {made:.0f} s)", flush=True)
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a folder holding an older podium package")
    parser.add_argument("--shapes", default=",".join(BASE))
    parser.add_argument("--scales", default="10,100")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--only", choices=("after", "before"), help="measure one version only")
    parser.add_argument("--draft", type=int, default=0, help="another draft than node 1's (0)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    versions = [("after", REPO)] + ([("before", args.before)] if args.before else [])
    versions = [v for v in versions if args.only in (None, v[0])]
    rows = []
    for shape in args.shapes.split(","):
        for scale in (int(s) for s in args.scales.split(",")):
            rows += measure(shape, scale, versions, args.timeout, args.draft)
    print(f"\n{'shape':6} {'scale':>5} {'version':7} {'status':8} {'cpu_s':>7} {'wall_s':>7} "
          f"{'rss_mb':>7}  metric")  # fmt: skip
    for r in rows:
        print(f"{r['shape']:6} {r['scale']:>5} {r['version']:7} {r['status']:8} {r['cpu_s']:>7} "
              f"{r['wall_s']:>7} {r['peak_rss_mb']:>7}  {r['metric']}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
