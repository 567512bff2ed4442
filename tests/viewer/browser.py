"""What the viewer's page must show, checked in a real browser, live and exported alike
(``test_browser.py`` runs each check on both), against the recorded run
(``tests/recorded_run.py``).

The DOM contract these checks hold the page (``podium/viewer/static/``) to:

* header: ``#run-title`` (task), ``#run-status`` (running, finished, ...), ``#node-count``
  (``N nodes``), ``#live`` (shown only while the run is live);
* graph: ``svg#graph``; a ``g.node[data-node-id]`` per node with its kind as a class (``good``
  ``buggy`` ``running`` ``interrupted`` ``analysis``), plus ``best``, ``on-best-path``,
  ``selected``, ``filtered-out``; a ``<title>`` tooltip; the id and metric (or ✗) as its label; one
  ``path.edge[data-from][data-to]`` per parent, and one ``path.edge.reference`` per node it
  cites (``#legend-refs`` shown when there is any);
* ``#node-list``: a ``tr[data-node-id]`` per node (same classes), with the bug reason (an
  analysis: its findings in a line, ``td.why``);
* filters: ``select#filter-operator``, ``select#filter-state`` (good, buggy, running,
  interrupted, analysis, best-path), ``input#filter-text``, ``#match-count`` (``k of N``);
  ``#goto-best``; ``#legend`` with a ``.chip`` per kind;
* ``#detail[data-node-id]`` with ``#detail-title``, ``-meta`` (``references`` and ``cited by``
  rows of ``button[data-goto]`` links where there are any), ``-metric``, ``-bug``,
  ``-summary`` (titled by ``#summary-title``: Review, or an analysis's Findings, with its
  ``table#detail-ablation`` rows: part, score, change vs baseline), ``-plan``, ``-code``
  (``pre.hl``), ``-output``, ``-error``, ``-usage``,
  ``-timings``, ``-calls`` (a ``.call`` per model call, ``.message[data-role]``, ``.response``);
* an agentic node's ``#sec-notebook`` (hidden for the others): ``#notebook-meta`` and
  ``#detail-notebook``, holding in order a ``.nb-turn[data-turn]`` line (the turn's model call)
  before each turn's entries, ``.nb-words`` (the model's words) and ``.nb-cell[data-cell]
  [data-status]`` (``.nb-head``, ``pre.nb-code``, ``pre.nb-output``, ``.nb-error``), or one
  ``.nb-problem`` line;
* the URL hash ``#node=N`` names the open node.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from playwright.sync_api import Page, expect

from tests.recorded_run import (
    AGENTIC_TURNS,
    FINDINGS,
    FINDINGS_LINE,
    FIX_OUTPUT,
    XSS_CELL_CODE,
    XSS_CELL_ERROR,
    XSS_CELL_OUTPUT,
    XSS_CODE,
    XSS_FRAME_LINE,
    XSS_OUTPUT,
    XSS_PLAN,
    XSS_REASON,
    XSS_WORDS,
    AgenticRun,
    RecordedRun,
)

SYSTEM_PROMPT = "You are a Kaggle grandmaster. <b>Be brief.</b>"
XSS_CODE_LINE = "</script><script>window.__pwned = 1</script>"
XSS_SEARCH = "<img src=x onerror=window.__pwned=5>"  # typed into the search box
EDGES = {(2, 3), (1, 4), (3, 5), (4, 5), (5, 6), (5, 7), (4, 8), (4, 9)}  # (parent, child)
METRICS = {1: "0.71", 3: "0.75", 4: "0.78", 5: "0.82", 9: "0.8"}
OPERATORS = ["ablate", "crossover", "debug", "draft", "improve", "refine"]
KINDS = {"good", "buggy", "running", "interrupted", "analysis"}
# The analysis's ablation table as the panel shows it: part, score, change vs baseline.
ABLATION_ROWS = [
    ["baseline", "0.78", "baseline"],
    ["without <i>markup</i> text features", "0.7", "-0.08"],
    ["without scaling", "0.775", "-0.005"],
]

# Elements that exist only if a hostile string was parsed as HTML (tests/recorded_run.py).
_PARSED_JS = """() => [
    ...document.querySelectorAll('#injected, img[src="x"], [onerror], [onload]'),
    ...[...document.querySelectorAll('b, i, em')].filter(e => ['bold?', 'markup', 'looks',
        'Be brief.'].includes(e.textContent)),
    ...[...document.querySelectorAll('script')].filter(e => e.textContent.includes('__pwned')
        && e.id !== 'podium-data' && e.id !== 'podium-details'),
].map(e => e.outerHTML)"""
_IDS_JS = """sel => [...document.querySelectorAll(sel)]
    .filter(e => !e.classList.contains('filtered-out'))
    .map(e => Number(e.getAttribute('data-node-id'))).sort((a, b) => a - b)"""


def _local(url: str) -> bool:
    return url.startswith(("http://127.0.0.1:", "file:"))


@dataclass
class Watched:
    """A page and what it did. ``allowed(url)`` decides which requests go through; the rest are
    aborted and listed in ``blocked``."""

    page: Page
    allowed: Callable[[str], bool] = _local
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def problems(self) -> dict[str, list[str]]:
        """Everything that should not happen in normal use; empty lists when all is well."""
        return {
            "console errors/warnings": self.console,
            "page errors": self.errors,
            "failed requests": self.failed,
            "blocked requests": self.blocked,
        }

    def assert_quiet(self) -> None:
        problems = {k: v for k, v in self.problems().items() if v}
        assert not problems, problems


def kinds(run: RecordedRun) -> dict[int, str]:
    """The class each node is drawn with. The recorded run holds no lock, so its node left
    executing is ``interrupted`` (RunView.kind), not running."""
    out = {}
    for node_id in range(1, run.node_count + 1):
        if node_id in run.buggy:
            out[node_id] = "buggy"
        elif node_id == run.running:
            out[node_id] = "interrupted"
        elif node_id == run.analysis:
            out[node_id] = "analysis"
        else:
            out[node_id] = "good"
    return out


def node_count(page: Page) -> int:
    return int(page.locator("g.node").count())


def wait_nodes(page: Page, count: int, timeout: float = 5000) -> None:
    page.wait_for_function(
        "n => document.querySelectorAll('g.node').length === n", arg=count, timeout=timeout
    )


def node_classes(page: Page, node_id: int) -> set[str]:
    value = page.locator(f'g.node[data-node-id="{node_id}"]').get_attribute("class") or ""
    return set(value.split())


def shown_ids(page: Page, selector: str = "g.node") -> list[int]:
    """Ids of the nodes (or rows) a filter leaves undimmed."""
    return list(page.evaluate(_IDS_JS, selector))


def wait_shown(page: Page, expected: set[int]) -> None:
    """Wait (debounce, search round trip) until exactly ``expected`` lack ``filtered-out``, in
    the graph and in the node list."""
    want = sorted(expected)
    for selector in ("g.node", "#node-list tr[data-node-id]"):
        try:
            page.wait_for_function(
                f"want => JSON.stringify(({_IDS_JS})({json.dumps(selector)})) === "
                "JSON.stringify(want)",
                arg=want,
                timeout=5000,
            )
        except Exception:
            pass  # the assertion below says what is shown instead
        assert shown_ids(page, selector) == want, selector


def edge_pairs(page: Page, selector: str) -> list[tuple[int, int]]:
    """(from, to) of each edge ``selector`` finds."""
    pairs = page.locator(selector).evaluate_all(
        "es => es.map(e => [Number(e.dataset.from), Number(e.dataset.to)])"
    )
    return [(a, b) for a, b in pairs]


def label(page: Page, node_id: int) -> str:
    """A graph node's visible label: its text without the <title> tooltip."""
    return str(
        page.locator(f'g.node[data-node-id="{node_id}"]').evaluate(
            """g => { const c = g.cloneNode(true);
                      c.querySelectorAll('title').forEach(t => t.remove());
                      return c.textContent; }"""
        )
    )


def text(page: Page, selector: str) -> str:
    return page.locator(selector).text_content() or ""


def open_node(page: Page, node_id: int, *, via: str = "graph") -> None:
    """Click a node in the graph (or its row in the list) and wait for its detail."""
    if via == "graph":
        page.locator(f'g.node[data-node-id="{node_id}"]').click()
    else:
        page.locator(f'#node-list tr[data-node-id="{node_id}"]').click()
    page.locator(f'#detail[data-node-id="{node_id}"]').wait_for()
    expect(page.locator("#detail-title")).to_contain_text(str(node_id))


def load(watch: Watched, url: str, run: RecordedRun) -> None:
    """Open the page and wait for the whole graph; if it never comes, say what went wrong."""
    watch.page.goto(url)
    try:
        wait_nodes(watch.page, run.node_count)
    except Exception as error:
        shown = node_count(watch.page)
        raise AssertionError(
            f"the page shows {shown} of {run.node_count} nodes; {watch.problems()}"
        ) from error


# --- the checks (each test file runs them against its own page) -----------------------------


def check_graph(page: Page, run: RecordedRun) -> None:
    """Every node, edge, kind, the best node and its path, the labels and the node list."""
    wait_nodes(page, run.node_count)
    expect(page.locator("#run-title")).to_contain_text("toy")
    expect(page.locator("#run-status")).to_contain_text("finished")
    expect(page.locator("#node-count")).to_have_text(re.compile(rf"\b{run.node_count} nodes\b"))
    expect(page.locator("svg#graph")).to_be_visible()
    edges = edge_pairs(page, "path.edge:not(.reference)")
    assert {tuple(e) for e in edges} == EDGES and len(edges) == len(EDGES)
    assert page.locator(f'path.edge[data-to="{run.crossover}"]').count() == 2
    cited = {(r, node_id) for node_id, refs in run.refs.items() for r in refs}
    assert sorted(edge_pairs(page, "path.edge.reference")) == sorted(cited), "references"
    drawn = page.locator("path.edge.reference").evaluate_all("es => es.map(e => e.classList.value)")
    assert set(drawn) == {"edge reference"}, drawn  # never drawn as the tree's or the path's
    first = page.locator("#edge-layer > path").first
    assert "reference" in (first.get_attribute("class") or ""), "references drawn under the tree"
    expect(page.locator("#legend-refs")).to_be_visible()
    assert "cites: #1, #3" in text(page, 'g.node[data-node-id="6"] > title')
    for node_id, kind in kinds(run).items():
        classes = node_classes(page, node_id)
        assert kind in classes, (node_id, classes)
        others = KINDS - {kind}
        assert not classes & others, (node_id, classes)
        assert ("best" in classes) == (node_id == run.best), (node_id, classes)
        assert ("on-best-path" in classes) == (node_id in run.best_path), (node_id, classes)
        assert "filtered-out" not in classes and "selected" not in classes, (node_id, classes)
        assert str(node_id) in label(page, node_id)
    for node_id, metric in METRICS.items():
        assert metric in label(page, node_id), node_id
    for node_id in run.buggy:
        assert "✗" in label(page, node_id), node_id
    best_title = text(page, f'g.node[data-node-id="{run.best}"] > title')
    assert "crossover" in best_title and "0.82" in best_title, best_title
    assert XSS_REASON in text(page, 'g.node[data-node-id="2"] > title')
    check_analysis_drawn(page, run)
    rows = page.locator("#node-list tr[data-node-id]")
    assert rows.count() == run.node_count
    assert XSS_REASON in text(page, '#node-list tr[data-node-id="2"]')
    assert "crossover" in text(page, f'#node-list tr[data-node-id="{run.crossover}"]')
    expect(page.locator("#goto-best")).to_be_enabled()
    expect(page.locator("#live")).to_be_hidden()  # no lock held: nothing to watch


def check_analysis_drawn(page: Page, run: RecordedRun) -> None:
    """The analysis: its own shape and colour (and legend), "analysis" where a metric would be,
    its findings in a line in its tooltip and its list row; never on the best path."""
    analysis = f'g.node[data-node-id="{run.analysis}"]'
    assert label(page, run.analysis) == f"#{run.analysis} ablateanalysis"
    assert f"findings: {FINDINGS_LINE}" in text(page, f"{analysis} > title")
    assert "on-best-path" not in node_classes(page, run.analysis)
    shape = page.locator(f"{analysis} .box").evaluate(
        "e => [getComputedStyle(e).fill, getComputedStyle(e).rx]"
    )
    good = page.locator('g.node[data-node-id="4"] .box').evaluate("e => getComputedStyle(e).rx")
    assert shape[0] != "none" and shape[1] != good, (shape, good)  # a pill, not a box
    expect(page.locator("#legend .chip.analysis")).to_be_visible()
    row = page.locator(f'#node-list tr[data-node-id="{run.analysis}"]')
    expect(row.locator(".badge")).to_have_text("analysis")
    expect(row.locator("td.why")).to_have_text(FINDINGS_LINE)


def check_details(page: Page, run: RecordedRun) -> None:
    """A good node's code, output, metric and review; a buggy node's reason, error and calls."""
    open_node(page, run.best)
    assert "selected" in node_classes(page, run.best)
    assert page.evaluate("location.hash") == f"#node={run.best}"
    expect(page.locator("#detail-code")).to_contain_text("print(0.82)")
    assert page.locator("#detail-code span[class]").count() > 0, "code is not highlighted"
    assert page.locator("#detail-code.hl, #detail-code pre.hl").count() > 0
    expect(page.locator("#detail-output")).to_contain_text("VALIDATION_METRIC: 0.82")
    expect(page.locator("#detail-metric")).to_contain_text("0.82")
    expect(page.locator("#detail-summary")).to_contain_text("Node 5 <em>looks</em> fine.")
    expect(page.locator("#detail-plan")).to_contain_text("Plan of node 5.")
    expect(page.locator("#detail-meta")).to_contain_text("crossover")
    bug = page.locator("#detail-bug")
    assert not bug.is_visible() or not (bug.text_content() or "").strip(), "bug shown for 5"
    for part in ("#detail-usage", "#detail-timings"):
        assert (page.locator(part).text_content() or "").strip(), f"{part} is empty"
    expect(page.locator("#sec-notebook")).to_be_hidden()  # a one-shot node has none

    # The newcomer's question, "why did it fail?", answered on the page.
    open_node(page, 2, via="list")
    assert "selected" in node_classes(page, 2) and "selected" not in node_classes(page, run.best)
    expect(page.locator("#detail-bug")).to_be_visible()
    expect(page.locator("#detail-bug")).to_contain_text(run.buggy[2])
    error = text(page, "#detail-error")
    assert "ValueError" in error and "could not convert" in error, error
    assert "\x1b" not in error and "[0;31m" not in error, f"ANSI escapes left: {error!r}"
    calls = page.locator("#detail-calls .call")
    assert calls.count() == 2
    system = page.locator('#detail-calls .message[data-role="system"]').first
    expect(system).to_contain_text(SYSTEM_PROMPT)
    expect(page.locator('#detail-calls .message[data-role="user"]').first).to_contain_text(
        "Write a solution for node 2."
    )
    assert page.locator("#detail-calls .response").count() == 2
    expect(page.locator("#detail-calls")).to_contain_text("It failed.")  # the review's summary
    expect(page.locator("#detail-calls")).to_contain_text("submit_review")  # its tool call

    open_node(page, 6)
    expect(page.locator("#detail-bug")).to_contain_text("execution timed out after 60s")
    expect(page.locator("#detail-error")).to_contain_text("timed out after 60s")
    meta = text(page, "#detail-meta")
    assert "references#1#3" in meta and "cited by#7" in meta, meta  # links: dt, then buttons
    page.locator('#detail-meta button[data-goto="3"]').click()  # a reference's link opens it
    page.locator('#detail[data-node-id="3"]').wait_for()
    meta = text(page, "#detail-meta")
    assert "cited by#6" in meta and "references" not in meta, meta
    open_node(page, run.running)  # left executing by a run no longer live
    expect(page.locator("#detail-summary")).to_have_text("(interrupted before its review)")

    # An analysis: its findings and its ablation table instead of a metric and a review.
    open_node(page, run.analysis)
    expect(page.locator("#summary-title")).to_have_text("Findings")
    expect(page.locator("#detail-summary")).to_have_text(FINDINGS)
    expect(page.locator("#detail-metric")).to_contain_text("no metric: an analysis")
    table = page.locator("#detail-ablation")
    expect(table).to_be_visible()
    rows = table.locator("tbody tr").evaluate_all(
        "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert rows == ABLATION_ROWS, rows
    assert "cited by#9" in text(page, "#detail-meta")
    open_node(page, run.refine)
    expect(page.locator("#summary-title")).to_have_text("Review")
    expect(page.locator("#detail-ablation")).to_be_hidden()
    assert "references#8" in text(page, "#detail-meta")


def check_safety(page: Page, run: RecordedRun) -> None:
    """Hostile content, opened everywhere, stays text: nothing runs, nothing is injected."""
    for node_id in range(1, run.node_count + 1):
        open_node(page, node_id, via="list" if node_id % 2 else "graph")
    page.locator("#filter-text").fill(XSS_SEARCH)
    page.wait_for_timeout(600)  # past the search's debounce
    page.locator("#filter-text").fill("")
    assert page.evaluate("typeof window.__pwned") == "undefined", "a hostile script ran"
    assert page.locator("#injected").count() == 0
    assert page.evaluate(_PARSED_JS) == [], "hostile markup was parsed as HTML"
    open_node(page, 1)
    assert XSS_CODE_LINE in text(page, "#detail-code")
    assert XSS_CODE.strip() in text(page, "#detail-code")
    assert XSS_OUTPUT.strip() in text(page, "#detail-output")
    assert XSS_PLAN in text(page, "#detail-plan")
    expect(page.locator("#detail-code")).to_be_visible()
    expect(page.locator("#detail-output")).to_be_visible()
    assert SYSTEM_PROMPT in text(page, "#detail-calls")
    open_node(page, 2)
    assert XSS_REASON in text(page, "#detail-bug")
    open_node(page, run.best)
    assert "Node 5 <em>looks</em> fine." in text(page, "#detail-summary")
    assert page.evaluate("typeof window.__pwned") == "undefined", "a hostile script ran"
    assert page.evaluate(_PARSED_JS) == [], "hostile markup was parsed as HTML"


# The notebook's entries in the order shown: "turn N", "words", "cell N".
_NOTEBOOK_JS = """() => [...document.querySelectorAll('#detail-notebook > *')].map(e =>
    e.classList.contains('nb-cell') ? 'cell ' + e.dataset.cell
    : e.classList.contains('nb-turn') ? 'turn ' + e.dataset.turn
    : e.classList.contains('nb-words') ? 'words' : e.className)"""


def check_notebook(page: Page, run: AgenticRun) -> None:
    """An agentic node's cells in order with their outputs and errors, the model's words, each
    turn's call; agent text (code, output, markdown) as text; the other sections still there."""
    open_node(page, run.node)
    expect(page.locator("#sec-notebook")).to_be_visible()
    expect(page.locator("#notebook-meta")).to_have_text("2 cells · 3 turns · finished")
    order = ["turn 0", "words", "cell 1", "turn 1", "cell 2", "turn 2", "words"]
    assert page.evaluate(_NOTEBOOK_JS) == order
    turns = page.locator("#detail-notebook .nb-turn")
    for index, (turn, tokens_in, tokens_out, cost, latency) in enumerate(AGENTIC_TURNS):
        expect(turns.nth(index)).to_have_text(
            f"turn {turn} · code call #{turn} · {tokens_in:,} in / {tokens_out} out tokens · "
            f"${cost:.4f} · {latency:.2f} s"
        )
    words = page.locator("#detail-notebook .nb-words")
    expect(words.first).to_contain_text(XSS_WORDS)  # the markdown as written, not rendered
    failed = page.locator('#detail-notebook .nb-cell[data-cell="1"]')
    expect(failed).to_have_attribute("data-status", "error")
    expect(failed.locator(".nb-head")).to_have_text("[cell 1] · error · 0.25 s")
    assert failed.locator(".nb-code").text_content() == XSS_CELL_CODE
    assert failed.locator(".nb-output").text_content() == XSS_CELL_OUTPUT
    expect(failed.locator(".nb-error .errline")).to_have_text(f"ValueError: {XSS_CELL_ERROR}")
    frame = failed.locator(".nb-error .frame.solution")
    expect(frame.locator(".where")).to_have_text("a cell, line 3")
    expect(frame).to_contain_text("float(html)")
    fixed = page.locator('#detail-notebook .nb-cell[data-cell="2"]')
    assert fixed.locator(".nb-output").text_content() == FIX_OUTPUT
    assert fixed.locator(".nb-error").count() == 0
    expect(page.locator("#detail-code")).to_contain_text("VALIDATION_METRIC")
    expect(page.locator("#detail-output")).to_contain_text("[cell 2]")
    rendered = "#detail-notebook :is(strong, img, script, b, i, em)"
    assert page.locator(rendered).count() == 0, "agent text was parsed as HTML or markdown"
    assert page.evaluate("typeof window.__pwned") == "undefined", "a hostile script ran"
    assert page.evaluate(_PARSED_JS) == [], "hostile markup was parsed as HTML"


def check_filters(page: Page, run: RecordedRun) -> None:
    """State, operator and text filters dim (never remove) the others; the count says so."""
    everyone = set(range(1, run.node_count + 1))
    count = page.locator("#match-count")
    options = page.locator("#filter-operator option").evaluate_all("os => os.map(o => o.value)")
    assert sorted(options) == ["", *OPERATORS], options
    states = page.locator("#filter-state option").evaluate_all("os => os.map(o => o.value)")
    assert set(states) == {"", *KINDS, "best-path"}, states

    page.locator("#filter-state").select_option("buggy")
    wait_shown(page, set(run.buggy))
    expect(count).to_have_text(re.compile(rf"\b{len(run.buggy)} of {run.node_count}\b"))
    assert node_count(page) == run.node_count  # dimmed, not removed
    page.locator("#filter-state").select_option("best-path")
    wait_shown(page, set(run.best_path))
    page.locator("#filter-state").select_option("analysis")
    wait_shown(page, {run.analysis})
    page.locator("#filter-state").select_option("")
    wait_shown(page, everyone)
    expect(count).to_have_text(re.compile(rf"\b{run.node_count} of {run.node_count}\b"))

    page.locator("#filter-operator").select_option("crossover")
    wait_shown(page, {run.crossover})
    expect(count).to_have_text(re.compile(rf"\b1 of {run.node_count}\b"))
    page.locator("#filter-operator").select_option("")
    wait_shown(page, everyone)

    page.locator("#filter-text").fill("Bold")  # only node 1's output has it; any case
    wait_shown(page, {1})
    expect(count).to_have_text(re.compile(rf"\b1 of {run.node_count}\b"))
    page.locator("#filter-text").fill("timed")  # node 6's bug reason; with the state filter
    page.locator("#filter-state").select_option("buggy")
    wait_shown(page, {6})
    page.locator("#filter-state").select_option("good")
    wait_shown(page, set())
    expect(count).to_have_text(re.compile(rf"\b0 of {run.node_count}\b"))
    page.locator("#filter-state").select_option("")
    page.locator("#filter-text").fill("")
    wait_shown(page, everyone)


def check_goto_best_and_hash(page: Page, url: str, run: RecordedRun) -> None:
    """``#node=3`` in the URL opens node 3 on load; the best button opens the best node."""
    page.goto(f"{url}#node=3")
    page.locator('#detail[data-node-id="3"]').wait_for()
    assert "selected" in node_classes(page, 3)
    expect(page.locator("#detail-code")).to_contain_text("print(0.75)")
    page.locator("#goto-best").click()
    page.locator(f'#detail[data-node-id="{run.best}"]').wait_for()
    assert "selected" in node_classes(page, run.best)
    page.wait_for_function("h => location.hash === h", arg=f"#node={run.best}")


def exercise(page: Page, url: str, run: RecordedRun) -> None:
    """Everything a user does in normal use, for the no-errors, no-network checks."""
    check_goto_best_and_hash(page, url, run)
    wait_nodes(page, run.node_count)
    for node_id in range(1, run.node_count + 1):
        open_node(page, node_id, via="graph" if node_id % 2 else "list")
    check_filters(page, run)


# --- what a big run needs: diffs, tracebacks, the list's tools, collapsing, the chart ---------

# Every text drawn in the graph that is displayed, with its height on screen (px).
_TEXT_SIZES_JS = """() => [...document.querySelectorAll('#graph text')]
    .filter(t => t.getClientRects().length > 0 && t.textContent.trim())
    .map(t => [t.textContent, t.getBoundingClientRect().height,
               parseFloat(getComputedStyle(t).fontSize)])"""
# Each node's drawn shape on screen: [id, left, top, width, height] of what is displayed.
_NODE_BOXES_JS = """() => [...document.querySelectorAll('#graph g.node')].map(g => {
    const shape = [...g.querySelectorAll('.box, .dot')].find(e => e.getClientRects().length > 0);
    const r = shape ? shape.getBoundingClientRect() : {left: 0, top: 0, width: 0, height: 0};
    return [Number(g.dataset.nodeId), r.left, r.top, r.width, r.height]; })"""
_FILLS_JS = """() => [...document.querySelectorAll('#graph g.node.good')].map(g => {
    const shape = [...g.querySelectorAll('.box, .dot')].find(e => e.getClientRects().length > 0);
    return [Number(g.dataset.nodeId), getComputedStyle(shape).fill]; })"""
MIN_LABEL_PX = 10.0


def luminance(css_colour: str) -> float:
    """Relative luminance of ``rgb(r, g, b)`` (what a reader sees as light or dark)."""
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css_colour)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def check_legible(page: Page) -> list[str]:
    """Every label shown in the graph is at least ``MIN_LABEL_PX`` tall on screen; the labels."""
    sizes = page.evaluate(_TEXT_SIZES_JS)
    assert sizes, "no label is shown"
    small = [(t, h, f) for t, h, f in sizes if f < MIN_LABEL_PX or h < MIN_LABEL_PX]
    assert not small, f"labels under {MIN_LABEL_PX} px: {small[:5]}"
    return [str(t) for t, _, _ in sizes]


def check_nodes_in_view(page: Page, ids: set[int], min_px: float = 5.0) -> None:
    """The nodes ``ids`` are drawn inside the graph's pane, each at least ``min_px`` across."""
    pane = page.locator("#graph-pane").bounding_box()
    assert pane is not None
    boxes = {b[0]: b[1:] for b in page.evaluate(_NODE_BOXES_JS)}
    for node_id in ids:
        left, top, width, height = boxes[node_id]
        assert width >= min_px and height >= min_px, (node_id, width, height)
        assert pane["x"] - 1 <= left and left + width <= pane["x"] + pane["width"] + 1, node_id
        assert pane["y"] - 1 <= top and top + height <= pane["y"] + pane["height"] + 1, node_id


def check_colours_follow_the_metric(page: Page, metrics: dict[int, float], lower: bool) -> None:
    """A better metric is never drawn lighter than a worse one (the scale may saturate: ties)."""
    fills = {node_id: luminance(fill) for node_id, fill in page.evaluate(_FILLS_JS)}
    ranked = sorted(fills, key=lambda i: metrics[i], reverse=not lower)  # best first
    lums = [fills[i] for i in ranked]
    pairs = list(zip(ranked, lums, strict=True))
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(lums)), pairs
    assert lums[0] < lums[-1], "every good node has the same colour"


def open_code_view(page: Page, view: str) -> None:
    page.locator(f'#code-views button[data-view="{view}"]').click()


def check_diff(page: Page, run: RecordedRun) -> None:
    """An improve's code against its parent's, unified and side by side; a crossover's against
    each parent; ``d`` cycles the views."""
    open_node(page, 4)  # improve of 1, whose code is the hostile print
    open_code_view(page, "unified:0")
    diff = page.locator("#detail-diff table.diff.unified")
    expect(diff).to_be_visible()
    assert diff.get_attribute("data-parent") == "1"
    expect(diff.locator("tr.del")).to_contain_text(XSS_CODE.strip())
    expect(diff.locator("tr.add")).to_contain_text("print(0.78)")
    expect(page.locator("#detail-code")).to_be_hidden()
    page.locator("body").press("d")  # -> side by side
    split = page.locator("#detail-diff table.diff.split")
    expect(split.locator("td.code.del")).to_contain_text(XSS_CODE.strip())
    expect(split.locator("td.code.add")).to_contain_text("print(0.78)")
    page.locator("body").press("d")  # -> the code again
    expect(page.locator("#detail-code")).to_be_visible()
    open_node(page, run.crossover)
    assert page.locator('#code-views button[data-view^="unified:"]').count() == 2
    open_code_view(page, "unified:1")
    expect(page.locator("#detail-diff table.diff")).to_have_attribute("data-parent", "4")
    open_node(page, 1)  # a draft: nothing to diff
    assert page.locator('#code-views button[data-view^="unified:"]').count() == 0


def check_traceback(page: Page) -> None:
    """The error once, the solution's frame first with its code, the library's folded."""
    open_node(page, 2)
    error = page.locator("#detail-error")
    frames = error.locator(".frame")
    first = frames.first
    assert "solution" in (first.get_attribute("class") or "")
    expect(first.locator(".where")).to_have_text(re.compile(r"^solution\.py, line 2"))
    expect(first).to_contain_text(XSS_FRAME_LINE)
    folded = error.locator("details.lib-frames")
    expect(folded.locator("summary")).to_contain_text("1 library frame (pandas)")
    assert folded.get_attribute("open") is None, "library frames are folded"
    assert (error.text_content() or "").count("ValueError: could not convert") == 1
    output = text(page, "#detail-output")
    assert "Traceback (most recent call last)" not in output, "the traceback shown twice"
    expect(page.locator("#output-note")).to_be_visible()


def check_list_tools(page: Page, run: RecordedRun) -> None:
    """Sort by a column both ways, hide what the filters leave out, walk with j / k, Enter."""
    header = page.locator('#node-list th[data-sort="metric"]')
    header.click()  # best first, in the task's direction (higher is better here)
    expect(header).to_have_attribute("aria-sort", "ascending")
    expect(page.locator("#node-list tbody tr").first).to_have_attribute("data-node-id", "5")
    header.click()
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(page.locator("#node-list tbody tr").first).to_have_attribute("data-node-id", "1")
    page.locator('#node-list th[data-sort="id"]').click()
    page.locator("#filter-state").select_option("buggy")
    page.locator("#filter-hide").check()
    visible = page.locator("#node-list tbody tr:visible")
    expect(visible).to_have_count(len(run.buggy))
    expect(page.locator("#graph g.node.filtered-out").first).to_be_hidden()
    page.locator("#filter-hide").uncheck()
    page.locator("#filter-state").select_option("")
    open_node(page, 2)  # the keyboard's cursor starts at the open node
    page.locator("body").press("Escape")
    expect(page.locator("#detail-body")).to_be_hidden()
    cursor = page.locator("#node-list tr.cursor")
    page.locator("body").press("j")
    expect(cursor).to_have_attribute("data-node-id", "3")
    page.locator("body").press("k")
    page.locator("body").press("k")
    expect(cursor).to_have_attribute("data-node-id", "1")
    assert "cursor" in node_classes(page, 1)
    page.locator("body").press("Enter")
    page.locator('#detail[data-node-id="1"]').wait_for()


def check_collapse(page: Page, run: RecordedRun) -> None:
    """Collapsing a node hides its subtree (and says how much); expanding shows it again."""
    open_node(page, run.crossover)  # children 6 and 7
    page.locator("#detail-collapse").click()
    for node_id in (6, 7):
        expect(page.locator(f'g.node[data-node-id="{node_id}"]')).to_be_hidden()
    expect(page.locator(f'g.node[data-node-id="{run.crossover}"] text.fold')).to_have_text("+2")
    expect(page.locator("#detail-collapse")).to_contain_text("2 hidden")
    page.locator("#detail-collapse").click()
    for node_id in (6, 7):
        expect(page.locator(f'g.node[data-node-id="{node_id}"]')).to_be_visible()


def check_chart(page: Page, run: RecordedRun) -> None:
    """Every finished solution on the metric chart (an analysis has no metric: not there); a
    point opens its node."""
    page.locator("#tab-chart").click()
    expect(page.locator("#chart")).to_be_visible()
    finished = run.node_count - 2  # all but the one left executing and the analysis
    expect(page.locator("#chart .pt")).to_have_count(finished)
    assert page.locator(f'#chart .pt[data-node-id="{run.analysis}"]').count() == 0
    expect(page.locator("#chart circle.pt")).to_have_count(finished - len(run.buggy))
    assert page.locator("#chart .best-so-far").count() == 1
    page.locator('#chart circle.pt[data-node-id="3"]').click()
    page.locator('#detail[data-node-id="3"]').wait_for()
    page.locator('input[name="chart-x"][value="time"]').check()
    expect(page.locator("#chart .pt")).to_have_count(finished)
    page.locator("#tab-list").click()
