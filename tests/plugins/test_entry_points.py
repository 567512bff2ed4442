"""The example plugin packages are pip-installed and found through their entry points."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from podium.formats import Journal
from tests.support import REPO, TOY_TASK, cli_env, podium_cli

pytestmark = pytest.mark.slow

EXAMPLES = [REPO / "examples" / name for name in ("podium-topk-strategy", "podium-study-strategy")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples installed (offline, no dependencies) into a directory of their own."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), *map(str, EXAMPLES)],
        check=True, capture_output=True, cwd=build,
    )  # fmt: skip
    return target


def test_an_installed_plugin_is_listed_with_its_distribution(site: Path) -> None:
    listing = podium_cli("plugins", env=cli_env(PYTHONPATH=str(site)))
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if " topk " in line)
    assert "entry point podium-topk-strategy 0.1.0" in row

    hidden = podium_cli(
        "plugins", env=cli_env(PYTHONPATH=str(site), PODIUM_DISABLE_PLUGIN_AUTOLOAD="1")
    )
    assert " topk " not in hidden.stdout


def test_an_installed_strategy_runs(site: Path, tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    args = ["run", str(TOY_TASK), "--model", "fixed/0.8", "-p",
            str(REPO / "tests/fixtures/plugins/recorder.py"), "--strategy", "topk",
            "-o", "search.num_drafts=2", "-o", "search.k=1", "-o", "search.debug_prob=0",
            "--steps", "3", "--out", str(out), "--data-dir", str(data_dir)]  # fmt: skip
    run = podium_cli(*args, env=cli_env(PYTHONPATH=str(site)))
    assert run.returncode == 0, run.stderr
    nodes = Journal.open(out / "journal.sqlite").nodes()
    assert [(n.operator, n.parent_ids) for n in nodes] == [
        ("draft", ()), ("draft", ()), ("improve", (1,)),
    ]  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["strategy"] == "topk"
    assert "k = 1" in (out / "config.toml").read_text()

    refused = podium_cli(
        *args[:-4], "--out", str(tmp_path / "other"), "--data-dir", str(data_dir),
        env=cli_env(PYTHONPATH=str(site), PODIUM_DISABLE_PLUGIN_AUTOLOAD="1"),
    )  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "error: unknown strategy 'topk'",
        "hint: available: evolutionary, greedy, mcgs, mcts, one-draft, random, refine",
    ]  # fmt: skip


def test_the_study_example_studies_refines_and_ends_on_an_ensemble(
    site: Path, tmp_path: Path, data_dir: Path
) -> None:
    """A 2026-style strategy from outside the package: an analysis node, refines citing it,
    and the budget's last step an ensemble."""
    out = tmp_path / "run"
    run = podium_cli(
        "run", str(TOY_TASK), "--model", "fixed/0.8", "-p",
        str(REPO / "tests/fixtures/plugins/recorder.py"), "--strategy", "study",
        "-o", "search.num_drafts=1", "-o", "search.refines=2", "-o", "search.k=2",
        "--steps", "6", "--out", str(out), "--data-dir", str(data_dir),
        env=cli_env(PYTHONPATH=str(site)),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    nodes = Journal.open(out / "journal.sqlite").nodes()
    assert [(n.operator, n.parent_ids, n.ref_ids, n.kind) for n in nodes] == [
        ("draft", (), (), "solution"),
        ("ablate", (1,), (), "analysis"),
        ("refine", (1,), (2,), "solution"),
        ("refine", (1,), (2,), "solution"),
        ("improve", (1,), (), "solution"),
        ("ensemble", (1, 3), (), "solution"),
    ]
