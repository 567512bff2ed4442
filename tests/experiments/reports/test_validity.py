"""Whether runs can be compared at all (``reports.validity``): a missing run is never a paired
outcome, mixed budgets are refused unless allowed, saturated medal rates are flagged, and only
plugins that took part are disclosed. Synthetic sweeps (fakes.py); no plots drawn here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podium.errors import UserError
from podium.experiments.reports import disclosure as disclosure_module
from podium.experiments.reports.disclosure import card_markdown, disclosure
from podium.experiments.reports.paired import paired
from podium.experiments.reports.runs import load_runs
from podium.experiments.reports.validity import validity
from tests.experiments.reports.fakes import Spec, write_sweep

TASKS = ("mini/a", "mini/b", "mini/c")


def _sweep(root: Path, strategies: dict[str, Any], seeds: tuple[int, ...] = (0, 1)) -> Path:
    """``strategies``: name → a function (task, seed) → Spec | state, for every cell."""
    runs = {
        (task, name, seed): make(task, seed)
        for name, make in strategies.items()
        for task in TASKS
        for seed in seeds
    }
    return write_sweep(root, TASKS, list(strategies), seeds, runs)


def _greedy(task: str, seed: int) -> Spec:
    return Spec(task=task, seed=seed, medal="gold", percentile=90.0)


def test_a_strategy_stopped_before_any_run_finished_gets_no_paired_result(
    tmp_path: Path,
) -> None:
    # The issue's case: evolutionary never finished a run. Counting its runs as "no medal,
    # percentile 0" made a significant −90 out of nothing; now there is no pair to test.
    sweep = _sweep(
        tmp_path,
        {
            "greedy": _greedy,
            "evolutionary": lambda t, s: Spec(
                task=t, strategy="evolutionary", seed=s, status="running", graded=False
            ),
        },
    )
    runs = load_runs([sweep])
    (c,) = paired(runs, "greedy")["comparisons"]
    assert c["n_pairs"] == 0 and c["percentile"] is None and c["any_medal_pp"] is None
    assert c["permutation_p"] is None and c["sign_test_p"] is None
    assert c["incomplete"] == {"pairs": 6, "strategy_missing": 6, "baseline_missing": 0}
    assert c["caveats"][0].startswith("incomplete: 6 of 6 pairs left out (evolutionary missing")
    checked = validity(runs)
    assert not checked["complete"]
    missing = {g["strategy"]: g for g in checked["missing"]}
    assert missing["evolutionary"]["missing"] == 6
    assert missing["evolutionary"]["reasons"] == {"running": 6}
    assert missing["greedy"]["missing"] == 0
    assert checked["caveats"][0].startswith(
        "INCOMPLETE: 6 of 12 runs missing (not finished or not graded): "
        "evolutionary (baseline) 6 of 6 [running 6]"
    )
    assert "medal rates count a missing run as no medal" in checked["caveats"][0]


def test_paired_statistics_use_complete_pairs_only(tmp_path: Path) -> None:
    # mcts finished 4 of 6 runs at percentile 80 (greedy: 90 everywhere); one failed, one
    # finished ungraded. Only the 4 complete pairs count: Δ = −10 each, never −90.
    def mcts(task: str, seed: int) -> Spec:
        if (task, seed) == ("mini/a", 0):
            return Spec(task=task, strategy="mcts", seed=seed, status="failed")
        if (task, seed) == ("mini/b", 1):
            return Spec(task=task, strategy="mcts", seed=seed, graded=False)
        return Spec(task=task, strategy="mcts", seed=seed, medal="gold", percentile=80.0)

    runs = load_runs([_sweep(tmp_path, {"greedy": _greedy, "mcts": mcts})])
    (c,) = paired(runs, "greedy")["comparisons"]
    assert c["n_pairs"] == 4 and c["incomplete"]["pairs"] == 2
    assert c["percentile"]["mean_diff"] == pytest.approx(-10.0)
    assert c["percentile"]["ci95"] == [pytest.approx(-10.0), pytest.approx(-10.0)]
    assert c["any_medal_pp"]["mean_diff"] == 0.0  # both medalled in every complete pair
    assert (c["wins"], c["ties"], c["losses"]) == (0, 0, 4)
    reasons = {g["strategy"]: g["reasons"] for g in validity(runs)["missing"]}
    assert reasons["mcts"] == {"failed": 1, "ungraded": 1}


def test_runs_of_different_budgets_are_refused_unless_allowed(tmp_path: Path) -> None:
    sweep = _sweep(
        tmp_path,
        {
            "greedy": _greedy,
            "mcts": lambda t, s: Spec(task=t, strategy="mcts", seed=s, budget={"steps": 20}),
        },
    )
    runs = load_runs([sweep])
    with pytest.raises(UserError) as caught:
        validity(runs)
    message = caught.value.message
    assert message.startswith("these runs were configured with different budgets: ")
    assert "steps 4, time -, cost -" in message and "steps 20, time -, cost -" in message
    assert "\n" not in message
    assert caught.value.hint is not None and "--allow-mixed-budgets" in caught.value.hint
    allowed = validity(runs, allow_mixed_budgets=True)
    assert allowed["mixed_budgets"]
    assert allowed["caveats"][0].startswith("MIXED BUDGETS (allowed by --allow-mixed-budgets): ")


@pytest.mark.parametrize(
    "budget", [{"steps": 4, "time": 3600}, {"steps": 4, "cost": 2.0}], ids=["time", "cost"]
)
def test_a_different_time_or_cost_budget_is_mixed_too(tmp_path: Path, budget: Any) -> None:
    other = lambda t, s: Spec(task=t, strategy="mcts", seed=s, budget=budget)  # noqa: E731
    runs = load_runs([_sweep(tmp_path, {"greedy": _greedy, "mcts": other})])
    with pytest.raises(UserError, match="configured with different budgets"):
        validity(runs)


def test_the_one_draft_control_is_compared_by_its_configured_budget_not_its_steps(
    tmp_path: Path,
) -> None:
    # one-draft stops after one node under the same settings: a fair arm, not a mixed budget.
    one = lambda t, s: Spec(  # noqa: E731
        task=t, strategy="one-draft", seed=s, nodes=1, buggy=0, percentile=30.0
    )
    runs = load_runs([_sweep(tmp_path, {"greedy": _greedy, "one-draft": one})])
    checked = validity(runs)
    assert not checked["mixed_budgets"] and len(checked["budgets"]) == 1
    assert checked["caveats"] == []


@pytest.mark.parametrize(
    ("medal", "expected", "said"),
    [("gold", "all", "every complete run medalled"), (None, "none", "no complete run medalled")],
)
def test_saturated_medal_rates_are_flagged(
    tmp_path: Path, medal: str | None, expected: str, said: str
) -> None:
    def run(strategy: str) -> Any:
        return lambda t, s: Spec(task=t, strategy=strategy, seed=s, medal=medal)

    sweep = _sweep(tmp_path, {name: run(name) for name in ("greedy", "mcts", "random")})
    checked = validity(load_runs([sweep]))
    assert checked["saturated"] == expected
    (caveat,) = checked["caveats"]
    assert caveat.startswith(f"SATURATED: {said}, so medal rates cannot separate the strategies")


def test_medal_rates_that_differ_are_not_saturated(tmp_path: Path) -> None:
    mcts = lambda t, s: Spec(task=t, strategy="mcts", seed=s)  # noqa: E731
    runs = load_runs([_sweep(tmp_path, {"greedy": _greedy, "mcts": mcts})])
    assert validity(runs)["saturated"] is None


def test_the_card_lists_only_plugins_that_took_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = {
        "podium-arena": {"version": "0.3", "commit": None, "dirty": None},
        "podium-beam": {"version": "1.0", "commit": None, "dirty": None},
        "podium-gone": {"version": "2.0", "commit": None, "dirty": None},
    }
    providers = {("strategy", "arena"): "podium-arena", ("strategy", "beam"): "podium-beam"}
    monkeypatch.setattr(disclosure_module, "plugin_providers", lambda: providers)
    runs = {("mini/a", s, 0): Spec(strategy=s, plugins=loaded) for s in ("greedy", "arena")}
    sweep = write_sweep(tmp_path, ["mini/a"], ["greedy", "arena"], [0], runs)
    card = card_markdown(disclosure(load_runs([sweep])))
    (line,) = [x for x in card.splitlines() if x.startswith("- Plugins")]
    assert line.startswith("- Plugins that took part")
    assert "podium-arena 0.3" in line  # provided arena's strategy
    assert "podium-beam" not in line  # loaded, provided nothing these runs used
    assert "podium-gone 2.0 (commit not recorded) (not installed here" in line
