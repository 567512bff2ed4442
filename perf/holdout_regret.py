"""Selection regret with and without ``search.holdout`` on a task whose validation is noisy.

The task: ``mini/titanic`` with its public training set cut to ``--train`` passengers (the test
set, the answers and the leaderboard unchanged), so every node's cross-validated metric is
measured on few rows. For each seed, two runs of the baseline model (no API key): one choosing
its final node by validation metric as usual, one with ``search.holdout`` = ``--share``, which
chooses on the host's held-out labels. Each run's ``selection.json`` (every good node graded on
the private answers after the run) gives its regret: the best node's leaderboard percentile
minus the chosen node's, and the medals lost.

    .venv/bin/python perf/holdout_regret.py [--seeds 10] [--steps 15] [--train 200]
        [--share 0.3] [--parallel 2] [--json perf/results/holdout_regret.json]

Prints one row per seed and the means ± SEM, the paired differences (holdout − validation)
and an exact two-sided sign test on them. Regret is within each run; the chosen node's own
percentile is printed too, since the holdout also trains every node on fewer rows.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TITANIC = ROOT / "podium" / "benchmarks" / "mini" / "titanic"
PODIUM = [sys.executable, "-m", "podium"]


def small_task(where: Path, train: int) -> Path:
    """mini/titanic with its public train.csv cut to its first ``train`` rows."""
    folder = where / "titanic-small"
    shutil.copytree(TITANIC, folder)
    source = (folder / "prepare.py").read_text(encoding="utf-8")
    cut = f"""

def prepare(raw, public, private):
    _prepare_full(raw, public, private)
    table = pd.read_csv(Path(public) / "train.csv", dtype=str, keep_default_na=False)
    table.iloc[:{train}].to_csv(Path(public) / "train.csv", index=False)
"""
    text = source.replace("def prepare(", "def _prepare_full(") + cut
    (folder / "prepare.py").write_text(text, encoding="utf-8")
    config = (folder / "config.yaml").read_text(encoding="utf-8")
    (folder / "config.yaml").write_text(config.replace("id: titanic", "id: titanic-small"))
    return folder


def run(task: Path, out: Path, data: Path, seed: int, steps: int, share: float) -> dict[str, Any]:
    command = [
        *PODIUM,
        "run",
        str(task),
        "--steps",
        str(steps),
        "--seed",
        str(seed),
        "--out",
        str(out),
        "--data-dir",
        str(data),
        "--sandbox",
        "bwrap",
    ]
    if share:
        command += ["-o", f"search.holdout={share}"]
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    selection = json.loads((out / "selection.json").read_text())
    return {
        "regret_pct": selection["regret"]["percentile"],
        "medals_lost": selection["regret"]["medals_lost"],
        "chosen_pct": selection["chosen"]["percentile"] if selection["chosen"] else 0.0,
        "best_pct": selection["best"]["percentile"],
        "spearman": selection["rank_correlation"],
        "held_out_spearman": selection["held_out_rank_correlation"],
    }


def sign_test(diffs: list[float]) -> float:
    """Exact two-sided sign test (ties dropped)."""
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def mean_sem(values: list[float]) -> str:
    sem = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.1f} ± {sem:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--train", type=int, default=200)
    parser.add_argument("--share", type=float, default=0.3)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="podium-holdout-regret-") as tmp:
        where = Path(tmp)
        task = small_task(where, args.train)
        jobs = [(seed, share) for seed in range(args.seeds) for share in (0.0, args.share)]
        with ThreadPoolExecutor(args.parallel) as pool:
            results = list(
                pool.map(
                    lambda job: run(
                        task,
                        where / f"s{job[0]}-{job[1]}",
                        where / "data",
                        job[0],
                        args.steps,
                        job[1],
                    ),
                    jobs,
                )
            )
    rows = dict(zip(jobs, results, strict=True))
    print(
        f"titanic, {args.train} training rows, {args.steps} steps, baseline, holdout share "
        f"{args.share}, {args.seeds} seeds"
    )
    print("seed  regret (validation)  regret (holdout)  chosen pct (val / holdout)")
    for seed in range(args.seeds):
        v, h = rows[seed, 0.0], rows[seed, args.share]
        print(
            f"{seed:>4}  {v['regret_pct']:>19.1f}  {h['regret_pct']:>16.1f}  "
            f"{v['chosen_pct']:.1f} / {h['chosen_pct']:.1f}"
        )
    summary: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    for name, share in (("validation", 0.0), ("holdout", args.share)):
        picked = [rows[s, share] for s in range(args.seeds)]
        keys = ("regret_pct", "medals_lost", "chosen_pct", "best_pct")
        summary[name] = {key: statistics.fmean(r[key] for r in picked) for key in keys}
        print(
            f"{name:>10}: regret {mean_sem([r['regret_pct'] for r in picked])} pct points, "
            f"medals lost {sum(r['medals_lost'] for r in picked)}, chosen "
            f"{mean_sem([r['chosen_pct'] for r in picked])}, best "
            f"{mean_sem([r['best_pct'] for r in picked])}"
        )
    diffs = [
        rows[s, args.share]["regret_pct"] - rows[s, 0.0]["regret_pct"] for s in range(args.seeds)
    ]
    summary["paired_regret_diff"] = {
        "mean": statistics.fmean(diffs),
        "sign_test_p": sign_test(diffs),
    }
    print(
        f"paired regret difference (holdout − validation): {mean_sem(diffs)}, "
        f"sign test p = {sign_test(diffs):.3f}"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "summary": summary,
                    "runs": [{"seed": s, "share": sh, **r} for (s, sh), r in rows.items()],
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
