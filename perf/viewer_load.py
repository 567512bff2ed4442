"""How fast the viewer answers for a large run: the live API, the export, and the page's first
paint, at 100 to 2,000 nodes (AIDE ran 500 steps on MLE-bench; aira-dojo's MCTS allows 10,000).

The runs are ``tests/viewer/synthetic/``'s: written through the real journal API, grown by
a real strategy (``--strategy``, MCTS by default, 4 workers) and sized like a long LLM run (per
node ~4 KB of code, ~16 KB of output, two model calls whose prompts carry the task, the data
preview, the parent and the memory; a third of the nodes buggy, with kernel tracebacks). Each
is written once, by this checkout, and measured by every ``--tree``, so a change's "before" and
"after" read the same runs:

* the run: its generation time, ``journal.sqlite``'s size;
* baseline: ``Journal.nodes()`` alone, the floor any reader of the journal pays (and, in a
  tree that has it, ``Journal.nodes(light=True)``, without code, output and tracebacks);
* ``GET /api/run`` from the live server (over HTTP on 127.0.0.1, medians of ``--repeats``):
  after a change (the journal's WAL touched before each request, so the run is read again),
  unchanged (the server's cache), and 304 (polled with its ETag: the page's poll while nothing
  happens); the RunJSON's size; ``GET /api/node/<id>`` (one node in full, prompts included);
  ``GET /api/search?q=KeyError``;
* ``podium view --export``: time, file size, size per node;
* first paint in Chromium (Debian's, through Playwright; median of ``--page-repeats``): from
  navigation until the graph is drawn, live and from the exported file. A page that marks it
  (``performance.mark('podium:graph-drawn')``) is timed by that mark; one that does not (the
  page before the rebuild) until every node's ``g.node`` is in the DOM; ``first_paint_*_by``
  says which.

```
.venv/bin/python perf/viewer_load.py [--nodes 100,1000,2000] [--repeats 5] [--page-repeats 3]
    [--strategy mcts] [--tree DIR ...] [--runs DIR] [--json FILE]
```

``--tree DIR`` (repeatable) measures that checkout's viewer (``git archive HEAD | tar -x -C
/tmp/before``, then ``--tree /tmp/before --tree .``): the measuring runs in a process of its own
with DIR first on ``PYTHONPATH``. ``--runs DIR`` keeps the generated runs there and reuses them
on the next call.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [  # as tests/viewer/conftest.py launches it: no sandbox in CI, no network
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT: ViewportSize = {"width": 1500, "height": 950}
PAINT_MARK = "podium:graph-drawn"
MARK_GRACE_MS = 1000  # all nodes drawn, no mark yet: how long to wait for one before timing by DOM
PAGE_TIMEOUT_MS = 180_000
SEARCH = "KeyError"
# Polled once per frame: the graph's first paint, by the page's mark or, failing that, once
# every node is in the DOM; the time is the page's own (milliseconds since navigation began).
PAINTED_JS = """([n, mark, grace]) => {
    const marked = performance.getEntriesByName(mark);
    if (marked.length) return {ms: marked[0].startTime, by: 'mark'};
    const now = performance.now();
    if (window.__podiumAllDrawn === undefined) {
        if (document.querySelectorAll('g.node').length < n) return false;
        window.__podiumAllDrawn = now;
    }
    return now - window.__podiumAllDrawn > grace ? {ms: window.__podiumAllDrawn, by: 'nodes'}
                                                 : false;
}"""


# --- the runs (written by this checkout) ---------------------------------------------------


def ensure_run(runs: Path, nodes: int, strategy: str, seed: int) -> dict[str, Any]:
    """The run of this size, written now or found from an earlier call; its figures."""
    root = runs / f"{strategy}-{nodes}-s{seed}"
    about = root.with_name(root.name + ".json")
    if about.is_file() and root.is_dir():
        found: dict[str, Any] = json.loads(about.read_text())
        return found
    sys.path.insert(0, str(REPO))
    from tests.viewer.synthetic import write_synthetic_run

    run = write_synthetic_run(root, nodes, strategy=strategy, seed=seed)
    figures = {
        "root": str(root),
        "nodes": run.node_count,
        "strategy": strategy,
        "seed": seed,
        "generate_s": round(run.seconds, 2),
        "journal_mb": round((root / "journal.sqlite").stat().st_size / 1e6, 1),
        "buggy": len(run.buggy),
        "best": run.best,
    }
    about.write_text(json.dumps(figures) + "\n")
    return figures


# --- measuring one run with one tree's viewer (in a process of its own) ---------------------


def measure_in(tree: Path, run: dict[str, Any], repeats: int, page_repeats: int) -> dict[str, Any]:
    """``measure`` run by a fresh interpreter that imports Podium from ``tree``."""
    command = [sys.executable, __file__, "--measure", run["root"], "--repeats", str(repeats),
               "--page-repeats", str(page_repeats)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"measuring {run['root']} with {tree} failed: {tail}")
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def measure(root: Path, repeats: int, page_repeats: int) -> dict[str, Any]:
    """Every figure of one run, with the Podium this interpreter imports."""
    import podium
    from podium.formats import Journal, RunDir
    from podium.viewer import export_html, make_server

    def journal_nodes(light: bool = False) -> None:
        journal = Journal.open(RunDir(root).journal)
        if light:
            journal.nodes(light=True)
        else:
            journal.nodes()
        journal.close()

    n = len(_node_ids(root))
    figures: dict[str, Any] = {"podium": str(Path(podium.__file__).parent.parent)}
    figures["baseline_journal_nodes_s"] = timed(journal_nodes, repeats)
    if "light" in inspect.signature(Journal.nodes).parameters:  # a tree that has it
        figures["baseline_journal_nodes_light_s"] = timed(lambda: journal_nodes(light=True),
                                                          repeats)  # fmt: skip
    with serving(make_server, root) as url:
        figures |= api_figures(root, url.split("?")[0] + "api/", n, repeats)
        figures |= page_figures(url, n, page_repeats, "live")
    with tempfile.TemporaryDirectory(prefix="podium-viewer-load-") as tmp:
        dest = Path(tmp) / "run.html"
        figures["export_s"] = timed(lambda: export_html(root, dest), max(1, repeats // 2))
        size = dest.stat().st_size
        figures |= {"export_mb": round(size / 1e6, 1), "export_kb_per_node": round(size / n / 1e3)}
        figures |= page_figures(dest.as_uri(), n, page_repeats, "export")
    return figures


def api_figures(root: Path, api: str, n: int, repeats: int) -> dict[str, Any]:
    """The live API's answers; "cached" and 304 once the server has settled after the last
    change (reading a journal can itself touch its WAL, which the server watches)."""
    node = n // 2

    def changed() -> None:
        touch(root)
        get(api + "run")

    figures = {"api_run_changed_s": timed(changed, repeats)}
    for _ in range(3):
        status, body, etag = get(api + "run")
        assert status == 200, f"GET /api/run: {status}"
    return figures | {
        "api_run_s": timed(lambda: get(api + "run"), repeats),
        "api_run_304_s": timed(lambda: get(api + "run", {"If-None-Match": etag}), repeats),
        "runjson_kb": round(len(body) / 1e3, 1),
        "api_node_s": timed(lambda: get(api + f"node/{node}"), repeats),
        "api_node_kb": round(len(get(api + f"node/{node}")[1]) / 1e3, 1),
        "api_search_s": timed(lambda: get(api + f"search?q={SEARCH}"), repeats),
    }


# After first paint: how long a pan step (a wheel event) and a zoom step (ctrl + wheel) take
# until the frame after them is painted (two animation frames), medians of 30 and 10. A page
# that draws every frame within ~16 ms pans smoothly.
INTERACT_JS = """async () => {
    const pane = document.getElementById('graph-pane'), box = pane.getBoundingClientRect();
    const frame = () => new Promise(r => requestAnimationFrame(() => r()));
    const at = {clientX: box.left + box.width / 2, clientY: box.top + box.height / 2,
                bubbles: true, cancelable: true};
    const step = async (init) => {
        const t0 = performance.now();
        pane.dispatchEvent(new WheelEvent('wheel', {...at, ...init}));
        await frame(); await frame();
        return performance.now() - t0;
    };
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    await frame();
    const pans = [], zooms = [];
    for (let i = 0; i < 30; i++) pans.push(await step({deltaX: 15, deltaY: 10}));
    for (let i = 0; i < 10; i++) zooms.push(await step({deltaY: -60, ctrlKey: true}));
    return {pan: median(pans), zoom: median(zooms)};
}"""


def page_figures(url: str, n: int, repeats: int, label: str) -> dict[str, Any]:
    """First paint of the page at ``url``: the median over ``repeats`` fresh pages, in s."""
    from playwright.sync_api import sync_playwright

    times, signals, moves = [], set(), []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for _ in range(repeats):
                page = browser.new_page(viewport=VIEWPORT)
                page.goto(url, wait_until="commit", timeout=PAGE_TIMEOUT_MS)
                painted = page.wait_for_function(
                    PAINTED_JS, arg=[n, PAINT_MARK, MARK_GRACE_MS], timeout=PAGE_TIMEOUT_MS
                ).json_value()
                times.append(painted["ms"] / 1000)
                signals.add(painted["by"])
                if painted["by"] == "mark":  # today's page: it pans and zooms in place
                    moves.append(page.evaluate(INTERACT_JS))
                page.close()
        finally:
            browser.close()
    figures = {f"first_paint_{label}_s": round(statistics.median(times), 3),
               f"first_paint_{label}_by": "/".join(sorted(signals))}  # fmt: skip
    if moves:
        figures[f"pan_frame_{label}_ms"] = round(statistics.median(m["pan"] for m in moves), 1)
        figures[f"zoom_frame_{label}_ms"] = round(statistics.median(m["zoom"] for m in moves), 1)
    return figures


@contextmanager
def serving(make_server: Callable[[Path, int], Any], root: Path) -> Iterator[str]:
    """The live server on a free port, in a thread; its URL (with its token, which ``get``
    then sends: a tree from before the token has none)."""
    server = make_server(root, 0)
    if token := getattr(server, "token", None):
        AUTH["Authorization"] = f"token {token}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield str(server.url)
    finally:
        server.shutdown()
        server.server_close()


def _node_ids(root: Path) -> list[int]:
    from podium.formats import Journal, RunDir

    journal = Journal.open(RunDir(root).journal)
    try:
        return [node.id for node in journal.nodes()]
    finally:
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
    return round(statistics.median(times), 4)


AUTH: dict[str, str] = {}  # the live server's token, as a header


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, headers={**AUTH, **(headers or {})})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read(), response.headers.get("ETag", "")
    except urllib.error.HTTPError as exc:
        return exc.code, b"", exc.headers.get("ETag", "")


# --- the command line -----------------------------------------------------------------------

COLUMNS = [  # (figure, heading, format)
    ("generate_s", "generate", "{:.1f} s"), ("journal_mb", "journal", "{:.1f} MB"),
    ("baseline_journal_nodes_s", "Journal.nodes()", "{:.3f} s"),
    ("baseline_journal_nodes_light_s", "Journal.nodes(light=True)", "{:.3f} s"),
    ("api_run_changed_s", "/api/run changed", "{:.3f} s"),
    ("api_run_s", "/api/run cached", "{:.4f} s"), ("api_run_304_s", "304", "{:.4f} s"),
    ("runjson_kb", "RunJSON", "{:.0f} KB"), ("api_node_s", "/api/node", "{:.3f} s"),
    ("api_search_s", "/api/search", "{:.3f} s"), ("export_s", "export", "{:.2f} s"),
    ("export_mb", "export size", "{:.1f} MB"), ("export_kb_per_node", "per node", "{} KB"),
    ("first_paint_live_s", "first paint live", "{:.2f} s"),
    ("first_paint_live_by", "timed by", "{}"),
    ("first_paint_export_s", "first paint export", "{:.2f} s"),
    ("first_paint_export_by", "timed by", "{}"),
    ("pan_frame_live_ms", "pan step, to its frame", "{} ms"),
    ("zoom_frame_live_ms", "zoom step, to its frame", "{} ms"),
]  # fmt: skip


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a markdown table: one column per (tree, nodes)."""
    heads = [f"{Path(r['tree']).name or r['tree']} · {r['nodes']} nodes" for r in rows]
    lines = ["| | " + " | ".join(heads) + " |", "|---" * (len(rows) + 1) + "|"]
    for key, heading, fmt in COLUMNS:
        cells = [fmt.format(r[key]) if r.get(key) is not None else "-" for r in rows]
        lines.append(f"| {heading} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", default="100,1000,2000", help="run sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="API timings: median of this many")
    parser.add_argument("--page-repeats", type=int, default=3, help="first paints per page")
    parser.add_argument("--strategy", default="mcts", help="greedy, mcts, evolutionary, random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tree", type=Path, action="append", help="a Podium checkout to measure "
                        "(repeatable; default: this one)")  # fmt: skip
    parser.add_argument("--runs", type=Path, help="keep the generated runs here (and reuse them)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.repeats, args.page_repeats)), flush=True)
        return
    with tempfile.TemporaryDirectory(prefix="podium-viewer-load-") as tmp:
        runs = args.runs or Path(tmp)
        runs.mkdir(parents=True, exist_ok=True)
        rows = run_all(args, runs)
    print(table(rows))
    if args.json:
        from machine import machine

        args.json.write_text(json.dumps({"machine": machine(), "runs": rows}, indent=2) + "\n")


def run_all(args: argparse.Namespace, runs: Path) -> list[dict[str, Any]]:
    rows = []
    trees = [t.resolve() for t in args.tree or [REPO]]
    for nodes in (int(x) for x in args.nodes.split(",")):
        run = ensure_run(runs, nodes, args.strategy, args.seed)
        for tree in trees:
            figures = {"tree": str(tree), **run,
                       **measure_in(tree, run, args.repeats, args.page_repeats)}  # fmt: skip
            rows.append(figures)
            print(json.dumps(figures), flush=True)
    return rows


if __name__ == "__main__":
    main()
