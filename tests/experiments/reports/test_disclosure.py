"""The disclosure card: clean-track wording, strategy configs and the operator sets that ran,
budgets, hardware and CPU share, attempts, and the commits of the code that ran."""

from __future__ import annotations

from pathlib import Path

from podium.experiments.reports.disclosure import card_markdown, disclosure
from podium.experiments.reports.runs import RunSet, load_runs
from tests.experiments.reports.fakes import HOST, Spec, write_run, write_sweep
from tests.experiments.reports.manifest_fakes import patch_summary, set_attempts

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
        "operators": [{"value": None, "runs": 3}],
    }
    assert (
        "`greedy`: NOT identical across its runs; operators that ran: not recorded (3 runs); "
        "2 config variants:\n    - strategy = greedy, num_drafts = 5 (2 runs)\n"
    ) in card_markdown(card)


def test_models_budgets_hardware_seeds_and_versions(runset: RunSet) -> None:
    card = disclosure(runset)
    assert card["models"] == {"code": ["baseline"], "review": ["baseline"], "plan": ["baseline"]}
    assert card["strategies"]["mcts"] == {
        "identical": True,
        "variants": [{"value": {"strategy": "mcts", "num_drafts": 2}, "runs": 6}],
        "operators": [{"value": None, "runs": 6}],
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


def test_the_card_lists_every_run_that_needed_another_attempt_or_failed(tmp_path: Path) -> None:
    runs = {("mini/a", "greedy", s): Spec(seed=s) for s in (0, 1)}
    runs.update({("mini/a", "greedy", s): Spec(seed=s, status="failed") for s in (2, 3)})
    sweep = write_sweep(tmp_path, ["mini/a"], ["greedy"], [0, 1, 2, 3], runs)
    patch_summary(sweep / "runs" / "a.greedy.baseline.s3", error="ValueError: no target column")
    oom = "CUDA error: out of memory " + "x" * 400
    set_attempts(sweep, "a.greedy.baseline.s0", 2, attempt_errors=[oom])  # failed, then finished
    set_attempts(sweep, "a.greedy.baseline.s1", 2)  # an older manifest: no error kept
    set_attempts(sweep, "a.greedy.baseline.s2", 1, error="the model said no")
    card = disclosure(load_runs([sweep]))
    attempts = card["attempts"]
    assert (attempts["runs"], attempts["retried"], attempts["unrecorded"]) == (4, 2, 0)
    rows = {row["run"]: row for row in attempts["listed"]}
    assert (rows["a.greedy.baseline.s0"]["attempts"], rows["a.greedy.baseline.s0"]["status"]) == (
        2,
        "finished",
    )
    last = rows["a.greedy.baseline.s0"]["last_error"]
    assert last.startswith("CUDA error: out of memory x") and len(last) == 200
    assert rows["a.greedy.baseline.s0"]["path"] == str(sweep / "runs" / "a.greedy.baseline.s0")
    markdown = card_markdown(card)
    assert "- Attempts: 2 of 4 runs needed more than one attempt\n" in markdown
    assert f"  - `a.greedy.baseline.s0`: 2 attempts, finished; last error: {last}\n" in markdown
    assert "  - `a.greedy.baseline.s1`: 2 attempts, finished\n" in markdown
    assert "  - `a.greedy.baseline.s2`: 1 attempt, failed; last error: the model said no\n" in (
        markdown
    )
    assert "`a.greedy.baseline.s3`: 1 attempt, failed; last error: ValueError: no target" in (
        markdown
    )  # the manifest kept no error: the run's summary.json says it


def test_a_sweep_of_first_attempts_lists_only_its_failed_run(runset: RunSet) -> None:
    card = disclosure(runset)
    assert (card["attempts"]["runs"], card["attempts"]["retried"]) == (12, 0)
    assert [(r["run"], r["status"]) for r in card["attempts"]["listed"]] == [
        ("c.greedy.baseline.s1", "failed")
    ]
    assert "- Attempts: 0 of 12 runs needed more than one attempt" in card_markdown(card)


def test_runs_outside_a_sweep_have_no_record_of_attempts(tmp_path: Path) -> None:
    write_run(tmp_path / "a", Spec())
    card = disclosure(load_runs([tmp_path]))
    assert card["attempts"] == {"runs": 0, "retried": 0, "unrecorded": 1, "listed": []}
    assert "- Attempts: not recorded (no sweep manifest)" in card_markdown(card)


def test_the_operator_set_shown_is_the_one_that_ran(tmp_path: Path) -> None:
    asked = {"operators": "llm", "num_drafts": 2}  # config.toml asks for llm operators...
    patch_summary(write_run(tmp_path / "a", Spec(seed=0, search=asked)), operators="baseline")
    write_run(tmp_path / "b", Spec(seed=1, search=asked))  # an older run: not recorded
    card = disclosure(load_runs([tmp_path]))
    assert card["strategies"]["greedy"] == {
        "identical": False,
        "variants": [{"value": {"strategy": "greedy", "num_drafts": 2}, "runs": 2}],
        "operators": [{"value": "baseline", "runs": 1}, {"value": None, "runs": 1}],
    }
    markdown = card_markdown(card)
    assert "operators that ran: baseline (1 run), not recorded (1 run); 1 config variant:" in (
        markdown
    )
    assert "llm" not in markdown  # ...but the baseline model brought its own


def test_podium_and_plugins_are_shown_with_their_commits(tmp_path: Path) -> None:
    commit = "abcdef1" + "0" * 33
    plugin = {"version": "1.2", "commit": None, "dirty": None}
    for seed in (0, 1):
        run = write_run(tmp_path / str(seed), Spec(seed=seed))
        patch_summary(
            run,
            versions={"podium_commit": commit, "podium_dirty": True, "plugins": {"extra": plugin}},
        )
    patch_summary(
        write_run(tmp_path / "2", Spec(seed=2)),
        versions={"podium_commit": commit, "podium_dirty": False, "plugins": {}},
    )
    write_run(tmp_path / "3", Spec(seed=3))  # an older run: neither recorded
    card = disclosure(load_runs([tmp_path]))
    assert card["podium_builds"][0] == {
        "value": {"version": "0.1.0", "commit": commit, "dirty": True},
        "runs": 2,
    }
    lines = card_markdown(card).splitlines()
    assert [line for line in lines if line.startswith(("- Podium", "- Plugins"))] == [
        "- Podium 0.1.0 (commit abcdef1, dirty) (2 runs)",
        "- Podium 0.1.0 (commit abcdef1, clean) (1 run)",
        "- Podium 0.1.0 (commit not recorded) (1 run)",
        # No plugin package is installed here: "extra" cannot be checked, so it stays, marked.
        "- Plugins that took part (provided the runs' strategy, models, sandbox, benchmark or "
        "operators): extra 1.2 (commit not recorded) (not installed here: cannot tell whether "
        "it took part) (2 runs); none (1 run); not recorded (1 run)",
    ]


def test_each_machine_is_shown_with_the_cores_each_run_had(tmp_path: Path) -> None:
    write_run(tmp_path / "a", Spec(seed=0, host={**HOST, "cpu_share": 2}))
    write_run(tmp_path / "b", Spec(seed=1))  # an older host.json: no cpu_share
    markdown = card_markdown(disclosure(load_runs([tmp_path])))
    assert "python = 3.11.7; cores per run: 2 (1 run)" in markdown
    assert "python = 3.11.7; cores per run: not recorded (1 run)" in markdown
