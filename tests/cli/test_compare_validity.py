"""``podium compare`` on sweeps that cannot be read naively: what a user sees (terminal lines,
summary.md, the figures' own text) when runs are missing, budgets are mixed, or every run
medalled; and ``podium bench --resume`` leaving an earlier comparison's files alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from podium.cli.app import app
from podium.errors import UserError
from tests.experiments.reports.fakes import Spec, write_sweep

TASKS = ("mini/a", "mini/b", "mini/c")
SEEDS = (0, 1)
Make = Callable[[str, int], "Spec | str"]


def _sweep(root: Path, strategies: dict[str, Make], **kw: Any) -> Path:
    runs = {
        (task, name, seed): make(task, seed)
        for name, make in strategies.items()
        for task in TASKS
        for seed in SEEDS
    }
    return write_sweep(root, TASKS, list(strategies), SEEDS, runs, **kw)


def _compare(*args: str) -> Any:
    return CliRunner().invoke(app, ["compare", *args])


def _figure_texts(report: Path) -> dict[str, str]:
    """Each PNG's Description metadata (what a figure pasted elsewhere carries with it)."""
    texts = {}
    for png in sorted(report.glob("*.png")):
        with Image.open(png) as image:
            texts[png.stem] = str(image.info.get("Description", ""))
    return texts


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def incomplete(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """greedy finished everything (gold, 90); evolutionary finished 4 of 6 (60), the sweep was
    stopped with its other two still running."""

    def evolutionary(task: str, seed: int) -> Spec:
        if task == "mini/c":
            return Spec(task=task, strategy="evolutionary", seed=seed, status="running")
        return Spec(task=task, strategy="evolutionary", seed=seed, percentile=60.0)

    sweep = _sweep(
        tmp_path_factory.mktemp("incomplete"),
        {
            "greedy": lambda t, s: Spec(task=t, seed=s, medal="gold", percentile=90.0),
            "evolutionary": evolutionary,
        },
    )
    done = _compare(str(sweep), "--baseline", "greedy")
    assert done.exit_code == 0, done.output
    return sweep, done


def test_missing_runs_lead_the_terminal_and_are_counted_per_strategy(
    incomplete: tuple[Path, Any],
) -> None:
    _, done = incomplete
    lines = done.output.splitlines()
    assert lines[0].startswith("CAVEAT: INCOMPLETE: 2 of 12 runs missing")
    assert "evolutionary (baseline) 2 of 6 [running 2]" in _flat(done.output)
    assert "Paired statistics use complete pairs only" in _flat(done.output)
    header = next(line for line in lines if line.startswith("strategy") and "missing" in line)
    assert "USD / run" in header  # cost per run in the terminal
    rows = {line.split()[0]: line.split() for line in lines if "$0.0100" in line}
    assert rows["evolutionary"][-2:] == ["4/6", "2"] and rows["greedy"][-2:] == ["6/6", "0"]


def test_the_paired_row_uses_complete_pairs_and_says_incomplete(
    incomplete: tuple[Path, Any],
) -> None:
    sweep, done = incomplete
    row = next(
        line for line in done.output.splitlines() if line.startswith("evolutionary") and "[" in line
    )
    assert "-30.0 [-30.0, -30.0]" in row  # 60 − 90 over the 4 complete pairs, not −90 or −50
    assert "INCOMPLETE 2 left out" in row
    assert "incomplete: 2 of 6 pairs left out" in _flat(done.output)
    data = json.loads((sweep / "report" / "summary.json").read_text())
    (c,) = data["paired"]["comparisons"]
    assert c["n_pairs"] == 4 and c["incomplete"]["strategy_missing"] == 2


def test_summary_md_opens_with_the_caveat_and_has_the_per_task_table(
    incomplete: tuple[Path, Any],
) -> None:
    sweep, _ = incomplete
    text = (sweep / "report" / "summary.md").read_text()
    assert text.index("## Caveats") < text.index("## All tasks") < text.index("## Per task")
    assert "- **INCOMPLETE: 2 of 12 runs missing" in text
    assert "| mini/c | evolutionary | baseline | - | - | 0/0 | 0/2 |" in text
    assert "| mini/a | greedy | baseline | 0.8 | 90.0 | 2/2 | 2/2 |" in text
    assert "| runs done | missing |" in text


def test_every_figure_carries_the_caveat_its_n_and_the_forest_its_p(
    incomplete: tuple[Path, Any],
) -> None:
    sweep, _ = incomplete
    report = sweep / "report"
    texts = _figure_texts(report)
    assert {"medal_rates", "cost_vs_percentile", "paired_differences"} <= texts.keys()
    for name, text in texts.items():
        assert "CAVEAT: INCOMPLETE: 2 of 12 runs missing" in _flat(text), name
    assert "small n" in _flat(texts["paired_differences"])  # its own comparison's caveats too
    data = json.loads((report / "summary.json").read_text())
    assert data["plot_captions"].keys() == texts.keys()
    assert data["caveats"][0].startswith("INCOMPLETE")


def test_the_forest_label_gives_n_p_and_the_pairs_left_out() -> None:
    from podium.experiments.reports.plots import forest_rows

    comparison = {
        "strategy": "mcts",
        "baseline": "greedy",
        "model": "m",
        "n_pairs": 4,
        "n_tasks": 2,
        "permutation_p": 0.125,
        "identical_trees": 0,
        "all_identical": False,
        "incomplete": {"pairs": 2, "strategy_missing": 2, "baseline_missing": 0},
        "percentile": {"mean_diff": -30.0, "ci95": [-30.0, -30.0]},
        "per_task": [],
    }
    (row,) = forest_rows({"baseline": "greedy", "comparisons": [comparison]})
    assert "n = 4 pairs, 2 tasks; p = 0.125 (sign-flip)" in row.label
    assert "INCOMPLETE: 2 pairs left out" in row.label


def test_mixed_budgets_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    sweep = _sweep(
        tmp_path,
        {
            "greedy": lambda t, s: Spec(task=t, seed=s, medal="gold"),
            "mcts": lambda t, s: Spec(task=t, strategy="mcts", seed=s, budget={"steps": 20}),
        },
    )
    done = _compare(str(sweep), "--baseline", "greedy")
    assert isinstance(done.exception, UserError)  # printed by podium's main as one line + hint
    assert done.exception.message.startswith("these runs were configured with different budgets")
    assert "--allow-mixed-budgets" in (done.exception.hint or "")
    assert not (sweep / "report").exists()
    allowed = _compare(str(sweep), "--baseline", "greedy", "--allow-mixed-budgets")
    assert allowed.exit_code == 0, allowed.output
    assert allowed.output.startswith("CAVEAT: MIXED BUDGETS (allowed by --allow-mixed-budgets)")
    text = (sweep / "report" / "summary.md").read_text()
    assert "- **MIXED BUDGETS" in text and "steps 20" in text
    for name, caption in _figure_texts(sweep / "report").items():
        assert "CAVEAT: MIXED BUDGETS" in caption, name


def test_a_saturated_sweep_says_so_and_leads_with_percentiles(tmp_path: Path) -> None:
    # The second case: 3 mini tasks × 3 strategies × 2 seeds, all 18 runs medalled.
    def medalled(strategy: str, percentiles: tuple[float, ...]) -> Make:
        return lambda t, s: Spec(
            task=t, strategy=strategy, seed=s, medal="gold", percentile=percentiles[s]
        )

    sweep = _sweep(
        tmp_path,
        {
            "greedy": medalled("greedy", (90.0, 92.0)),
            "mcts": medalled("mcts", (95.0, 97.0)),
            "one-draft": medalled("one-draft", (80.0, 81.0)),
        },
    )
    done = _compare(str(sweep))
    assert done.exit_code == 0, done.output
    out = done.output
    assert out.startswith("CAVEAT: SATURATED: every complete run medalled, so medal rates cannot")
    assert out.index("per task: score and percentile") < out.index("all tasks")
    header = next(line for line in out.splitlines() if line.startswith("strategy  "))
    assert header.index("percentile") < header.index("any medal %")
    assert "mini/b  mcts" in out and "96.0" in out  # per task × strategy: mean percentile
    text = (sweep / "report" / "summary.md").read_text()
    assert text.index("## Caveats") < text.index("## Per task") < text.index("## All tasks")
    assert "- **SATURATED: every complete run medalled" in text
    assert all("SATURATED" in c for c in _figure_texts(sweep / "report").values())


def test_the_time_plot_needs_one_cpu_share(tmp_path: Path) -> None:
    curve = [(1, 5.0, 50.0), (2, 9.0, 70.0)]

    def make(strategy: str) -> Make:
        return lambda t, s: Spec(task=t, strategy=strategy, seed=s, curve=curve)

    both = {"greedy": make("greedy"), "mcts": make("mcts")}
    alone = _sweep(
        tmp_path / "alone", both, executor={"name": "local", "parallel": 1, "cpus_per_run": 1}
    )
    shared = _sweep(tmp_path / "shared", both)  # 2 parallel runs on 2 cores: cores shared
    assert _compare(str(alone)).exit_code == 0
    assert (alone / "report" / "percentile_vs_time.png").is_file()
    done = _compare(str(shared))
    assert done.exit_code == 0, done.output
    assert not (shared / "report" / "percentile_vs_time.png").exists()
    assert (shared / "report" / "percentile_vs_step.png").is_file()
    assert "percentile-by-wall-time plot is skipped" in _flat(done.output)
