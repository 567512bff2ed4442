"""Node 1 of the baseline on a training file far beyond the kernel's memory (issue 39): the
taxi-fare table at 21.5 M rows, run in the real sandbox under its memory limit.

The table is tests/scaffolds/baseline/synthetic.py's ``taxi`` shape: a fixture of ``--block``
rows whose body is appended to itself until the file holds ``--rows`` training rows (repeated
rows cost the model nothing and make a 2 GB file in seconds). The first draft is rendered by
the current checkout ("after") and, with ``--before DIR``, by an older copy of the ``podium``
package (``git archive <commit> podium | tar -x -C DIR``), then each runs as one cell of a
fresh kernel: ``podium sandbox run --memory 8G`` (the default kernel limit on a 16 GiB machine).
Reported: the kernel's status, its peak memory, the wall seconds, the validation metric.

Usage:  .venv/bin/python perf/baseline_big_file.py [--before DIR] [--rows 21500000]
            [--memory 8G] [--timeout 1200] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from perf.baseline_scale import render  # noqa: E402
from tests.scaffolds.baseline import synthetic  # noqa: E402

PODIUM = [sys.executable, "-m", "podium"]  # the Python this runs under (the repo's venv)


def grow(task: synthetic.SyntheticTask, rows: int) -> int:
    """Append the training file's body to itself until it holds at least ``rows`` rows."""
    train = task.public_dir / "train.csv"
    body = train.read_bytes().split(b"\n", 1)[1]
    per_copy = body.count(b"\n")
    copies = -(-rows // per_copy)
    with train.open("ab") as handle:
        for _ in range(copies - 1):
            handle.write(body)
    return copies * per_copy


def run(code: str, public: Path, memory: str, timeout: float) -> dict[str, Any]:
    """One sandboxed kernel running ``code``: its status, peak memory, seconds and metric."""
    with tempfile.TemporaryDirectory(prefix="big-file-") as folder:
        script, workspace = Path(folder) / "solution.py", Path(folder) / "ws"
        script.write_text(code)
        started = time.perf_counter()
        done = subprocess.run(
            [*PODIUM, "sandbox", "run", str(script), "--workspace", str(workspace),
             "--input", str(public), "--memory", memory, "--timeout", str(timeout), "--json"],
            capture_output=True, text=True,
        )  # fmt: skip
        wall = time.perf_counter() - started
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {"status": "no result", "error": done.stderr.strip().splitlines()[-1:]}
    found = [ln for ln in str(result.get("output", "")).splitlines() if "VALIDATION_METRIC" in ln]
    peak = result.get("peak_memory_bytes")
    return {
        "status": result.get("status"), "killed": result.get("killed_reason"),
        "wall_s": round(wall, 1), "peak_mb": round(peak / 1024**2) if peak else None,
        "metric": found[-1].split()[-1] if found else None,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a folder holding an older podium package")
    parser.add_argument("--rows", type=int, default=21_500_000)
    parser.add_argument("--block", type=int, default=220_000, help="rows of the fixture")
    parser.add_argument("--memory", default="8G")
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    versions = [("after", REPO)] + ([("before", args.before)] if args.before else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="big-taxi-") as folder:
        task = synthetic.taxi(Path(folder), rows=args.block)
        total = grow(task, args.rows)
        size = (task.public_dir / "train.csv").stat().st_size
        print(f"train.csv: {total} rows, {size / 1e9:.2f} GB", flush=True)
        for version, root in versions:
            plan, code = render(task, root)
            row = {"version": version, "rows": total, "plan": plan,
                   **run(code, task.public_dir, args.memory, args.timeout)}  # fmt: skip
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
