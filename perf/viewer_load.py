"""How fast the viewer answers for a large run: the live API, the export, and the page.

A synthetic run of N nodes is written through the real journal API, sized like a long LLM run:
each node has ~4 KB of code, ~16 KB of output, and two model calls whose prompts total ~40 KB
(the code prompt carries the task description, data preview and memory). Then, side by side:

* baseline: ``Journal.nodes()`` alone, the floor any reader of the journal pays;
* ``GET /api/run`` from the live server: after a change (the journal touched before each
  request, so the run is read again), unchanged (answered from the server's cache), and 304 (an
  unchanged run polled with its ETag: what the page's poll costs every second while nothing
  happens); ``GET /api/node/<id>``; a text search;
* ``podium view --export`` time and file size;
* Chromium (Debian's, through Playwright): from navigation until all N nodes are drawn, live and
  export.

```
.venv/bin/python perf/viewer_load.py [--nodes 100,300,1000] [--repeats 5] [--json FILE]
```
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from machine import machine

from podium.records import (
    ExecResult,
    ExecStatus,
    Message,
    Metric,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Node,
    NodeState,
    Usage,
)
from podium.scaffolds import Journal, RunDir
from podium.viewer import export_html, make_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip


def write_run(root: Path, n: int, seed: int = 0) -> None:
    """An evolutionary-looking DAG: drafts, improves, debugs of buggy nodes, crossovers."""
    rng = random.Random(seed)
    rd = RunDir(root)
    root.mkdir(parents=True)
    rd.config.write_text('task = "synthetic"\n', encoding="utf-8")
    journal = Journal.create(rd.journal, {"podium_version": "perf", "task_id": "synthetic"})
    state = random.Random(0).getstate()
    code = "import pandas as pd\n" + "x = 1  # feature engineering step\n" * 110
    output = "epoch 1 loss 0.5\n" * 900 + "VALIDATION_METRIC: 0.8\n"
    prompt = "## Task description\n" + "The goal is to predict the target.\n" * 1100
    good: list[int] = []
    buggy: list[int] = []
    for i in range(1, n + 1):
        if i <= 5 or not good:
            op, parents = "draft", ()
        elif buggy and rng.random() < 0.2:
            op, parents = "debug", (rng.choice(buggy[-10:]),)
        elif len(good) > 2 and rng.random() < 0.2:
            op, parents = "crossover", tuple(sorted(rng.sample(good[-10:], 2)))
        else:
            op, parents = "improve", (rng.choice(good[-10:]),)
        is_buggy = rng.random() < 0.3
        node = Node(id=i, parent_ids=parents, operator=op)
        journal.begin(node, state, state, float(i))
        for role in ("code", "review"):
            journal.record_call(ModelCall(
                node_id=i, role=role, seq=i, model="perf/model",
                request=ModelRequest(messages=[Message(role="system", content="Be an expert."),
                                               Message(role="user", content=prompt)]),
                response=ModelResponse(text="A plan.\n```python\n" + code + "```",
                                       usage=Usage(input_tokens=9000, output_tokens=900,
                                                   cost_usd=0.02, calls=1)),
            ))  # fmt: skip
        result = ExecResult(status=ExecStatus.ERROR if is_buggy else ExecStatus.OK,
                            output=output, duration_s=30.0)  # fmt: skip
        journal.update(node.model_copy(update={
            "state": NodeState.DONE, "step": i, "code": code, "plan": "Plan. " * 40,
            "exec": result, "is_buggy": is_buggy, "summary": "Looks fine.",
            "bug_reason": "KeyError: 'target'" if is_buggy else None,
            "metric": None if is_buggy else Metric(value=rng.random(), lower_is_better=False),
            "finished_at": datetime.now(UTC),
        }), float(i))  # fmt: skip
        (buggy if is_buggy else good).append(i)
    journal.close()


def touch(root: Path) -> None:
    """Make the run look changed to the server (a new mtime on its journal's WAL)."""
    wal = root / "journal.sqlite-wal"
    wal.touch()
    os.utime(wal, ns=(time.time_ns(), time.time_ns()))


def timed(fn: Callable[[], Any], repeats: int) -> float:
    """Median seconds of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read(), response.headers.get("ETag", "")
    except urllib.error.HTTPError as exc:
        return exc.code, b"", exc.headers.get("ETag", "")


def page_load_s(url: str, n: int, repeats: int) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        times = []
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1500, "height": 950})
            t0 = time.perf_counter()
            page.goto(url)
            page.wait_for_function(
                "n => document.querySelectorAll('g.node').length === n", arg=n, timeout=120_000
            )
            times.append(time.perf_counter() - t0)
            page.close()
        browser.close()
    return statistics.median(times)


def measure(n: int, repeats: int, tmp: Path) -> dict[str, Any]:
    root = tmp / f"run{n}"
    write_run(root, n)
    server = make_server(root, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = server.url + "api/"
    _, body, etag = get(api + "run")

    def journal_nodes() -> None:
        journal = Journal.open(RunDir(root).journal)
        journal.nodes()
        journal.close()

    figures = {
        "nodes": n,
        "journal_mb": round((root / "journal.sqlite").stat().st_size / 1e6, 1),
        "baseline_journal_nodes_s": timed(journal_nodes, repeats),
        "api_run_changed_s": timed(lambda: (touch(root), get(api + "run")), repeats),
        "api_run_s": timed(lambda: get(api + "run"), repeats),
        "api_run_304_s": timed(lambda: get(api + "run", {"If-None-Match": etag}), repeats),
        "api_run_kb": round(len(body) / 1e3, 1),
        "api_node_s": timed(lambda: get(api + f"node/{n // 2}"), repeats),
        "api_search_s": timed(lambda: get(api + "search?q=KeyError"), repeats),
    }
    dest = tmp / f"run{n}.html"
    figures["export_s"] = timed(lambda: export_html(root, dest), max(1, repeats // 2))
    figures["export_mb"] = round(dest.stat().st_size / 1e6, 1)
    figures["page_live_s"] = page_load_s(server.url, n, 3)
    figures["page_export_s"] = page_load_s(dest.as_uri(), n, 3)
    server.shutdown()
    server.server_close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", default="100,300,1000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine(), "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.nodes.split(",")):
            figures = measure(n, args.repeats, Path(tmp))
            results["runs"].append(figures)
            print(json.dumps(figures), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
