"""The disclosure card: clean-track wording, strategy configs, budgets, hardware."""

from __future__ import annotations

from pathlib import Path

from podium.benchmarks.reports.disclosure import card_markdown, disclosure
from podium.benchmarks.reports.runs import RunSet, load_runs
from tests.benchmarks.reports.fakes import HOST, Spec, write_run, write_sweep

CLEAN = (
    "All 11 runs executed their code in the bwrap sandbox; grading used the private answers "
    "only after each run ended, on the host; no signal derived from private answers reached any "
    "agent during a run."
)


def test_an_all_sandboxed_sweep_is_clean_track(runset: RunSet) -> None:
    card = disclosure(runset)
    assert card["clean_track"] == {"clean": True, "statement": CLEAN, "unsandboxed_runs": []}
    assert f"**{CLEAN}**" in card_markdown(card)


def test_one_unsandboxed_run_makes_the_report_not_clean_track(tmp_path: Path) -> None:
    write_run(tmp_path / "a", Spec(seed=0))
    write_run(tmp_path / "b", Spec(seed=1, sandbox="local", sandboxed=False))
    write_run(tmp_path / "c", Spec(seed=2))
    card = disclosure(load_runs([tmp_path]))
    statement = f"NOT clean-track: 1 of 3 runs ran unsandboxed ({tmp_path / 'b'})."
    assert card["clean_track"] == {
        "clean": False,
        "statement": statement,
        "unsandboxed_runs": [str(tmp_path / "b")],
    }
    markdown = card_markdown(card)
    assert "All 3 runs" not in markdown and f"`{tmp_path / 'b'}`" in markdown
    assert card["sandboxes"] == {"bwrap": 2, "local": 1}


def test_a_strategy_run_with_different_configs_says_so(tmp_path: Path) -> None:
    write_run(tmp_path / "a", Spec(seed=0, search={"num_drafts": 2}))
    write_run(tmp_path / "b", Spec(seed=1, search={"num_drafts": 5}))
    write_run(tmp_path / "c", Spec(seed=2, search={"num_drafts": 5}))
    card = disclosure(load_runs([tmp_path]))
    assert card["strategies"]["greedy"] == {
        "identical": False,
        "variants": [
            {"value": {"strategy": "greedy", "num_drafts": 5}, "runs": 2},
            {"value": {"strategy": "greedy", "num_drafts": 2}, "runs": 1},
        ],
    }
    assert "`greedy`: NOT identical across its runs, 2 variants" in card_markdown(card)


def test_models_budgets_hardware_seeds_and_versions(runset: RunSet) -> None:
    card = disclosure(runset)
    assert card["models"] == {"code": ["baseline"], "review": ["baseline"]}
    assert card["strategies"]["mcts"] == {
        "identical": True,
        "variants": [{"value": {"strategy": "mcts", "num_drafts": 2}, "runs": 6}],
    }
    assert card["budgets"] == [
        {
            "value": {"steps": 4, "time_s": None, "cost_usd": None, "exec_timeout_s": 60.0},
            "runs": 11,
        }
    ]
    assert card["hardware"] == {
        "source": "runs (host.json)",
        "machines": [{"value": HOST, "runs": 11}],
    }
    assert (card["seeds"], card["podium_versions"], card["runs"], card["expected_runs"]) == (
        [0, 1],
        ["0.1.0"],
        11,
        12,
    )
    assert card["executors"][0]["value"]["name"] == "local"
    assert card["obfuscated_description"] == 0


def test_hardware_falls_back_to_the_manifest(tmp_path: Path) -> None:
    write_sweep(tmp_path, ["mini/a"], ["greedy"], [0], {("mini/a", "greedy", 0): Spec(host=None)})
    card = disclosure(load_runs([tmp_path]))
    assert card["hardware"]["source"] == "sweep manifests (the driver's machine)"
    assert card["hardware"]["machines"][0]["value"]["cpu"] == "Driver CPU"
