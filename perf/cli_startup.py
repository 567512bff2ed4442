"""How long ``podium --version`` and ``podium --help`` take, this tree against a baseline.

    .venv/bin/python perf/cli_startup.py [--baseline REV] [--repeats 21] [--json FILE]

Each command runs ``--repeats`` times in a fresh interpreter, exactly as the console script
runs it (``from podium.cli import main; main()``), this tree and the baseline interleaved (so
a change in the machine's load falls on both alike). The baseline is ``git worktree``'d into a
temporary directory and put first on ``PYTHONPATH``, with the same interpreter and libraries.
Wall time is from the start of the process to its exit; CPU is the child's user + system
time. The issue's target: a median of at most 0.3 s for both commands on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = (["--version"], ["--help"])
SCRIPT = "import sys; from podium.cli import main; sys.argv[0] = 'podium'; sys.exit(main())"
TARGET_S = 0.3


def timed(tree: Path, argv: list[str]) -> tuple[float, float]:
    """One run of ``podium ARGV`` from ``tree``: (wall s, CPU s)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "100"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


@contextmanager
def worktree(rev: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="podium-baseline-") as tmp:
        path = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(path), rev], cwd=REPO,
                       check=True, capture_output=True)  # fmt: skip
        try:
            yield path
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO,
                           check=False, capture_output=True)  # fmt: skip


def measure(trees: dict[str, Path], repeats: int) -> dict[str, dict[str, dict[str, float]]]:
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for tree in trees.values():  # one warm-up each: byte-code caches written
        for argv in COMMANDS:
            timed(tree, argv)
    for _ in range(repeats):
        for name, tree in trees.items():
            for argv in COMMANDS:
                samples.setdefault((name, " ".join(argv)), []).append(timed(tree, argv))
    result: dict[str, dict[str, dict[str, float]]] = {}
    for (name, command), runs in samples.items():
        result.setdefault(name, {})[command] = {
            "wall_median_s": statistics.median(w for w, _ in runs),
            "cpu_median_s": statistics.median(c for _, c in runs),
            "wall_max_s": max(w for w, _ in runs),
        }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a git revision to compare with (e.g. HEAD~5)")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    trees = {"this tree": REPO}
    baseline = worktree(args.baseline) if args.baseline else nullcontext(None)
    with baseline as base:
        if base is not None:
            trees = {f"baseline {args.baseline}": base, **trees}
        result = measure(trees, args.repeats)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print("| tree | command | wall median | CPU median | wall max |\n|---|---|---|---|---|")
    for name, commands in result.items():
        for command, m in commands.items():
            print(f"| {name} | podium {command} | {m['wall_median_s']:.3f} s | "
                  f"{m['cpu_median_s']:.3f} s | {m['wall_max_s']:.3f} s |")  # fmt: skip
    ours = result["this tree"]
    for command, m in ours.items():
        verdict = "PASS" if m["wall_median_s"] <= TARGET_S else "FAIL"
        print(f"{verdict}  podium {command}: median {m['wall_median_s']:.3f} s <= {TARGET_S} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
