"""perf/suite_power.py: its statistics against values computed by hand, and its analysis of a
synthetic sweep (the files ``podium bench`` leaves, written by the report tests' fakes), one of
whose runs has no selection.json, so its nodes are graded here by the toy task's grader."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

from podium.benchmarks.folder import FolderTask
from podium.formats import RunDir
from podium.interfaces import SUBMISSION
from tests.experiments.reports.fakes import Spec, TreeNode, write_journal, write_sweep
from tests.support import REPO, TOY_TASK


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("suite_power", REPO / "perf" / "suite_power.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["suite_power"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


power = _load()


# --- the statistics ---------------------------------------------------------------------------


def test_wilcoxon_exact_p_matches_the_hand_computed_distribution() -> None:
    # ranks 1..5, the negative one is rank 4; P(T ≤ 4) = 7/32 subsets, two-sided 14/32
    assert power.wilcoxon_p([1.0, 2.0, 3.0, -4.0, 5.0]) == pytest.approx(14 / 32)
    assert power.wilcoxon_p([40.0, 10.0, 30.0, 0.0]) == pytest.approx(2 / 8)
    assert power.wilcoxon_p([0.0, 0.0]) is None


def test_pairs_and_seeds_needed_by_the_normal_approximation() -> None:
    # ((1.959964 + 0.841621) · 10 / 5)² = 31.40 → 32 pairs; over 10 tasks, 4 seeds
    assert power.pairs_needed(10.0, 5.0) == 32
    assert power.seeds_needed(32, 10) == 4
    assert power.seeds_needed(32, 40) == 1
    assert power.pairs_needed(0.0, 5.0) == 2  # an SD needs two pairs
    assert power.pairs_needed(10.0, 0.0) is None
    assert power.seeds_needed(None, 10) is None


def test_spearman() -> None:
    assert power.spearman([(1, 1), (2, 3), (3, 2)]) == pytest.approx(0.5)  # 1 − 6·2/(3·8)
    assert power.spearman([(1, 3), (2, 2), (3, 1)]) == pytest.approx(-1.0)
    assert power.spearman([(1, 1), (2, 2)]) is None
    assert power.spearman([(1, 1), (1, 2), (1, 3)]) is None
    assert power.spearman([(1, 1), (2, 2), (math.nan, 0), (3, 3)]) == pytest.approx(1.0)


def row(task: str, strategy: str, seed: int, pct: float, medal: str | None = None) -> Any:
    return power.RunRow(task, strategy, seed, "finished", pct, None, medal, 10.0, 2, None)


def test_medal_rate_is_mlebenchs_per_seed_mean_and_sem() -> None:
    rows = [
        row("a", "greedy", 0, 90, "gold"),
        row("b", "greedy", 0, 10),
        row("a", "greedy", 1, 90, "gold"),
        row("b", "greedy", 1, 90, "bronze"),
    ]
    rate = power.medal_rate(rows, "greedy")
    assert rate["per_seed"] == {0: 50.0, 1: 100.0}
    assert rate["mean"] == 75.0 and rate["sem"] == pytest.approx(25.0)  # SD 35.36 / √2
    assert rate["per_task"] == {"a": 100.0, "b": 50.0}


def test_projection_from_seconds_per_node() -> None:
    rows = [
        power.RunRow("a", "greedy", 0, "finished", 0, None, None, 30.0, 3, None),  # 10 s a node
        power.RunRow("a", "random", 0, "finished", 0, None, None, 40.0, 2, None),  # 20 s
        power.RunRow("a", "one-draft", 0, "finished", 0, None, None, 5.0, 1, None),  # 5 s
        power.RunRow("a", "random", 1, "failed", 0, None, None, 999.0, 1, None),  # not counted
    ]
    proj = power.projection(rows, overhead_s=10.0, seeds=5, steps=20, parallel=2)
    # per seed: (10 + 20·10) + (10 + 20·20) + (10 + 1·5) = 635 s; × 5 seeds
    assert proj["run_seconds"] == pytest.approx(3175.0)
    assert proj["wall_s"] == pytest.approx(1587.5)
    assert power.projection(rows[:1], 0.0, 5, 20, 1)["run_seconds"] is None  # no random time


def test_bench_command_makes_a_new_sweep_and_resumes_an_existing_one(tmp_path: Path) -> None:
    args = power.argparse.Namespace(
        sweep=tmp_path / "sw", suite="arena", seeds=5, steps=20, parallel=2, data_dir=None
    )
    made = power.bench_command(args)
    assert made[: len(power.PODIUM)] == power.PODIUM
    assert made[len(power.PODIUM) :] == [
        "bench",
        "--tasks",
        "arena",
        "--strategies",
        "greedy,random,one-draft",
        "--seeds",
        "5",
        "--steps",
        "20",
        "--out",
        str(tmp_path / "sw"),
        "--parallel",
        "2",
    ]
    write_sweep(tmp_path / "sw", ["mini/a"], ["greedy"], [0], {})
    resumed = power.bench_command(args)[len(power.PODIUM) :]
    assert resumed == ["bench", "--resume", str(tmp_path / "sw"), "--parallel", "2"]


# --- a synthetic sweep, analysed end to end ---------------------------------------------------

B = "mini/b"
# (strategy, seed) → (percentile, medal) per task; greedy − one-draft: 40, 10 (toy), 30, 0 (b)
PERCENTILES = {
    ("greedy", 0): ((90.0, "gold"), (70.0, None)),
    ("greedy", 1): ((80.0, "silver"), (60.0, "bronze")),
    ("one-draft", 0): ((50.0, None), (40.0, None)),
    ("one-draft", 1): ((70.0, "bronze"), (60.0, None)),
    ("random", 0): ((95.0, "gold"), (20.0, None)),
    ("random", 1): ((80.0, None), (60.0, None)),
}


def selection(metrics: list[float], scores: list[float]) -> dict[str, Any]:
    nodes = [
        {"node_id": i, "metric": m, "score": s, "percentile": 0.0, "medal": None}
        for i, (m, s) in enumerate(zip(metrics, scores, strict=True), start=1)
    ]
    return {"format": "podium-selection/1", "nodes": nodes, "best": nodes[0]}


def toy_submissions(run: Path, toy_task: FolderTask) -> list[float]:
    """Three nodes whose submissions score 1.0, 0.5 and the share of zeros on the toy task's
    answers (validation metrics 0.9, 0.6, 0.3); returns those scores."""
    write_journal(run, [TreeNode(metric=0.9), TreeNode(metric=0.6), TreeNode(metric=0.3)])
    answers = pd.read_csv(toy_task.answers)
    half = answers.copy()
    half.loc[: len(half) // 2 - 1, "y"] = 1 - half.loc[: len(half) // 2 - 1, "y"]
    rd = RunDir(run)
    for node_id, table in ((1, answers), (2, half)):
        rd.node_dir(node_id).mkdir(parents=True, exist_ok=True)
        table.to_csv(rd.node_dir(node_id) / SUBMISSION, index=False)
    rd.node_dir(3).mkdir(parents=True, exist_ok=True)
    shutil.copy(toy_task.sample_submission, rd.node_dir(3) / SUBMISSION)  # all zeros
    return [1.0, 0.5, float((answers["y"] == 0).mean())]


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    toy = str(TOY_TASK)
    runs = {}
    for (strategy, seed), ((toy_pct, toy_medal), (b_pct, b_medal)) in PERCENTILES.items():
        runs[toy, strategy, seed] = Spec(
            toy, strategy, seed=seed, percentile=toy_pct, medal=toy_medal
        )
        runs[B, strategy, seed] = Spec(B, strategy, seed=seed, percentile=b_pct, medal=b_medal)
    root = write_sweep(tmp_path / "sweep", [toy, B], list(power.STRATEGIES), [0, 1], runs)
    return root


def greedy_dir(root: Path, task: str, seed: int) -> Path:
    name = Path(task).name
    return root / "runs" / f"{name}.greedy.baseline.s{seed}"


@pytest.mark.slow  # the report (plots) and the toy grader in a subprocess: seconds
def test_analysis_of_a_synthetic_sweep(sweep: Path, toy_task: FolderTask, data_dir: Path) -> None:
    toy = str(TOY_TASK)
    RunDir(greedy_dir(sweep, B, 0)).selection.write_text(
        json.dumps(selection([0.1, 0.2, 0.3], [1.0, 3.0, 2.0]))
    )
    RunDir(greedy_dir(sweep, B, 1)).selection.write_text(
        json.dumps(selection([0.4, 0.5], [4.0, 5.0]))
    )
    RunDir(greedy_dir(sweep, toy, 0)).selection.write_text(
        json.dumps(selection([0.2, 0.8, 0.4], [0.2, 0.8, 0.7]))
    )
    toy_scores = toy_submissions(greedy_dir(sweep, toy, 1), toy_task)  # no selection.json
    out = sweep.parent / "power.json"

    code = power.main(
        ["--sweep", str(sweep), "--read-only", "--json", str(out), "--data-dir", str(data_dir)]
    )

    assert code == 0
    result = json.loads(out.read_text())
    assert result["bench"] is None and "--read-only" in result["command"]
    assert result["machine"]["nproc"] >= 1 and result["seeds"] == 2
    one = result["comparisons"]["greedy - one-draft"]
    assert [p["diff"] for p in one["pairs"]] == [40.0, 10.0, 30.0, 0.0]  # the toy path first
    assert one["mean_diff"] == 20.0
    assert one["sd"] == pytest.approx(math.sqrt(1000 / 3))  # deviations ±20, ±10
    assert one["sem"] == pytest.approx(math.sqrt(1000 / 3) / 2)
    assert (one["wins"], one["ties"], one["losses"]) == (3, 1, 0)
    assert one["permutation_p"] == pytest.approx(0.25)  # only ±(40+10+30) reach 80
    assert one["permutation_method"].startswith("exact")
    assert one["wilcoxon_exact_p"] == pytest.approx(0.25)
    # ((1.959964 + 0.841621) · 18.257 / 5)² = 104.6 → 105 pairs; ⌈105 / 2 tasks⌉ = 53 seeds
    assert one["power"]["pairs_needed"] == 105 and one["power"]["seeds_needed"] == 53
    assert one["per_task_mean_diff"] == {B: 15.0, toy: 25.0}
    rand = result["comparisons"]["greedy - random"]
    assert [p["diff"] for p in rand["pairs"]] == [-5.0, 0.0, 50.0, 0.0]
    assert rand["permutation_p"] == 1.0  # |±5 ± 50| ≥ 45 always
    medals = result["medal_rate"]
    assert (medals["greedy"]["mean"], medals["greedy"]["sem"]) == (75.0, pytest.approx(25.0))
    assert (medals["one-draft"]["mean"], medals["one-draft"]["sem"]) == (25.0, pytest.approx(25.0))
    assert medals["random"]["per_seed"] == {"0": 50.0, "1": 0.0}
    agreement = result["validation_vs_private"]
    # mini/b pooled: metric ranks 1..5, score ranks 1,3,2,4,5: ρ = 1 − 6·2/(5·24) = 0.9
    assert agreement[B]["spearman_pooled"] == pytest.approx(0.9)
    assert agreement[B]["spearman_mean_per_run"] == pytest.approx(0.5)  # seed 1: 2 nodes only
    assert agreement[B]["runs_with_rho"] == 1
    assert result["runs_graded_here"] == 1  # the toy's seed-1 run, by the toy task's grader
    pooled = list(zip([0.2, 0.8, 0.4, 0.9, 0.6, 0.3], [0.2, 0.8, 0.7, *toy_scores], strict=True))
    assert agreement[toy]["nodes"] == 6
    assert agreement[toy]["spearman_pooled"] == pytest.approx(power.spearman(pooled))
    targets = result["targets"]
    assert not targets["greedy_beats_one_draft_p_lt_0.01"]["met"]
    assert targets["one_draft_medal_rate_le_30"]["met"]
    assert targets["no_strategy_at_100"]["met"]


def test_a_run_whose_task_cannot_be_loaded_is_a_note_not_a_crash(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write_journal(run, [TreeNode(metric=0.5)])
    grades = power.NodeGrades(data_dir=None, regrade=False)
    assert grades.nodes(run, "mini/no-such-task") == []
    assert grades.graded_here == 0 and len(grades.notes) == 1
    assert "no-such-task" in grades.notes[0]
    assert grades.nodes(tmp_path / "never-ran", "mini/no-such-task") == []  # no journal: no try


def test_score_noise_is_the_full_tests_standard_error(toy_task: FolderTask, tmp_path: Path) -> None:
    """Half of the toy's 100 answers right: accuracy 0.5, whose SE over 100 rows is
    √(0.5·0.5/100) = 0.05; halves drawn without replacement give that SD (finite-population
    correction), so the estimate lands near it, and the toy board's gaps are read in SEs."""
    answers = pd.read_csv(toy_task.answers)
    submission = answers.copy()
    submission.loc[::2, "y"] = 1 - submission.loc[::2, "y"]
    path = tmp_path / SUBMISSION
    submission.to_csv(path, index=False)

    noise = power.score_noise(toy_task, path)

    assert noise["se"] == pytest.approx(0.05, abs=0.008)
    t = power.medal_thresholds(power.read_leaderboard(toy_task.folder / "leaderboard.csv"))
    assert noise["gold_silver_gap_se"] == pytest.approx(abs(t.gold - t.silver) / noise["se"])
