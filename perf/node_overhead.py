"""Podium's own overhead per node: everything except model time, kernel start and the
solution's execution. Target: median <= 20 ms.

Runs a 50-node search on the toy task with the scripted backend (answers are instant) and a
trivial solution, then splits each node's time using the per-phase timings the loop records:

    overhead = node total - code-model time - kernel start - execution - review-model time

"in-node" is that figure per node (median, p90). "per node, whole run" also counts what happens
between nodes (the journal commit of a finished node, best/ and summary.json updates, hooks):
(run wall time - sum of excluded phases) / nodes.

Side by side, the baseline: the same solution run the plain jupyter_client way (start a kernel,
execute, shut it down, repeat) with nothing else around it — the per-node floor for "a fresh
kernel per node" without Podium.

The sandbox is the default one (bwrap where it works) without the warm pool: with answers this
instant, a pool refilling on a 2-core machine only competes with the node being measured (the
pool is measured on its own in perf/sandbox_overhead.py).

Usage:  .venv/bin/python perf/node_overhead.py [--nodes 50] [--json perf/results/overhead.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import machine  # noqa: E402  (perf/machine.py: this script's directory)

import podium  # noqa: E402
from podium.formats import Journal  # noqa: E402
from tests.support import TOY_TASK, node_answers, run_config, solution, write_script  # noqa: E402

SANDBOX = {"warm_pool": False}


async def _bare_kernel_loop(nodes: int, cwd: Path) -> list[float]:
    import subprocess

    from jupyter_client.manager import AsyncKernelManager

    code = solution(0.5).replace('shutil.copy("input/sample_submission.csv", ', "(")
    times = []
    for _ in range(nodes):
        t0 = time.perf_counter()
        km = AsyncKernelManager()
        await km.start_kernel(cwd=str(cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = km.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        await client.execute_interactive(code, timeout=60)
        client.stop_channels()
        await km.shutdown_kernel(now=True)
        times.append(time.perf_counter() - t0)
    return times


def measure(nodes: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        script = write_script(base / "s.jsonl", [node_answers(solution(0.5))] * nodes)
        cfg = run_config(script, base / "run", base / "data", steps=nodes, sandbox=SANDBOX)
        podium.run(cfg)  # warm-up: prepares the data, fills OS caches
        cfg["out"] = str(base / "run2")
        t0 = time.perf_counter()
        podium.run(cfg)
        wall = time.perf_counter() - t0
        done = Journal.open(base / "run2" / "journal.sqlite").nodes()
        bare = asyncio.run(_bare_kernel_loop(nodes, base))
    timings = [n.timings for n in done]
    overhead_ms = sorted(t.overhead_s * 1000 for t in timings)
    excluded = sum(t.model_s + t.kernel_start_s + t.exec_s + t.review_model_s for t in timings)
    return {
        "nodes": len(done),
        "in_node_overhead_ms": {
            "median": round(statistics.median(overhead_ms), 2),
            "p90": round(overhead_ms[int(0.9 * (len(overhead_ms) - 1))], 2),
            "max": round(overhead_ms[-1], 2),
        },
        "whole_run_overhead_per_node_ms": round((wall - excluded) / len(done) * 1000, 2),
        "kernel_start_ms_median": round(
            statistics.median(t.kernel_start_s for t in timings) * 1000, 1
        ),
        "exec_ms_median": round(statistics.median(t.exec_s for t in timings) * 1000, 1),
        "node_total_ms_median": round(statistics.median(t.total_s for t in timings) * 1000, 1),
        "run_wall_s": round(wall, 2),
        "baseline_bare_jupyter_client_per_node_ms_median": round(statistics.median(bare) * 1000, 1),
        "target_ms": 20,
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    assert TOY_TASK.is_dir()
    result = measure(args.nodes)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
