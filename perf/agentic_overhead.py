"""Podium's own overhead per turn of an agentic node: everything except the model's answer and
the cell's execution. Target: median <= 10 ms.

Runs agentic nodes on the toy task through the real loop (``podium.run``, the default sandbox,
the scripted backend: answers are instant), each node ``--turns`` cells of trivial code, then
splits the time between consecutive model calls of a node using what the run recorded:

    overhead(turn) = (call t+1 started - call t started) - call t's latency - cell t's duration

so it holds the gateway (retry policy, concurrency cap, cost reservation), journaling the call,
building the next request (the context rule), the session (masking, live output, the capped
transcript) and the notebook: all of Podium's work on a turn. ``duration`` is the kernel's
execute-to-reply time as the sandbox measured it.

Side by side, the baseline: the same cells sent to one plain jupyter_client kernel back to back
with nothing around them, split the same way (wall time between sends minus execute-to-reply):
the floor of "a cell at a time" without Podium.

Usage:  .venv/bin/python perf/agentic_overhead.py [--nodes 3] [--turns 30] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import machine  # noqa: E402  (perf/machine.py: this script's directory)

import podium  # noqa: E402
from podium.formats import Journal  # noqa: E402
from podium.testing import cell_call, finish_call, review_answer, write_script  # noqa: E402
from tests.support import run_config  # noqa: E402

CELL = "x = globals().get('x', 0) + 1\nprint(x)\n"


def podium_turns(nodes: int, turns: int, root: Path) -> list[float]:
    lines: list[dict[str, Any]] = []
    for node in range(1, nodes + 1):
        lines += [{**cell_call(CELL), "node_id": node} for _ in range(turns)]
        lines += [{**finish_call(), "node_id": node}, {**review_answer(), "node_id": node}]
    script = write_script(root / "session.jsonl", lines)
    config = run_config(
        script, root / "run", root / "data", steps=nodes,
        search={"operators": "agentic", "num_drafts": nodes},
        agentic={"max_turns": turns + 1, "fresh_check": False},
    )  # fmt: skip
    podium.run(config)
    journal = Journal.open(root / "run" / "journal.sqlite")
    overheads: list[float] = []
    try:
        for node in range(1, nodes + 1):
            calls = [c for c in journal.calls(node) if c.role == "code"]
            cells = json.loads((root / f"run/nodes/{node}/notebook.ipynb").read_text())["cells"]
            durations = [
                c["metadata"]["podium"]["duration_s"] for c in cells if c["cell_type"] == "code"
            ]
            for t in range(len(durations)):
                gap = (calls[t + 1].started_at - calls[t].started_at).total_seconds()
                latency = calls[t].response.latency_s if calls[t].response else 0.0
                overheads.append(gap - latency - durations[t])
    finally:
        journal.close()
    return overheads


async def bare_turns(turns: int, cwd: Path) -> list[float]:
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager()
    await km.start_kernel(cwd=str(cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = km.client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    overheads = []
    try:
        previous: tuple[float, float] | None = None  # the last cell's send time, duration
        for _ in range(turns):
            sent = time.perf_counter()
            if previous is not None:
                overheads.append(sent - previous[0] - previous[1])
            reply = await client.execute(CELL, reply=True, timeout=60)
            assert reply["content"]["status"] == "ok"
            previous = (sent, time.perf_counter() - sent)
    finally:
        client.stop_channels()
        await km.shutdown_kernel(now=True)
    return overheads


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "median_ms": 1000 * statistics.median(ordered),
        "p90_ms": 1000 * ordered[int(0.9 * (len(ordered) - 1))],
        "max_ms": 1000 * ordered[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "data").mkdir()
        ours = _stats(podium_turns(args.nodes, args.turns, root))
        bare = _stats(asyncio.run(bare_turns(args.turns * args.nodes, root)))
    report = {"machine": machine(), "podium_per_turn": ours, "bare_jupyter_client": bare}
    for name, s in (("Podium, per turn", ours), ("bare jupyter_client", bare)):
        print(f"{name:22} median {s['median_ms']:.1f} ms  p90 {s['p90_ms']:.1f} ms  "
              f"max {s['max_ms']:.1f} ms  (n={s['n']})")  # fmt: skip
    print(f"target: median <= 10 ms: {'PASS' if ours['median_ms'] <= 10 else 'FAIL'}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
