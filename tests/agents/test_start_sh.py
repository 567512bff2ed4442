"""``agents/podium/start.sh`` run as MLE-bench's harness runs it, but outside Docker: against a
simulated ``/home`` in a temporary directory (the bundled Titanic task's public data and
description as ``data/``, instructions of our own, a fake validation server on 127.0.0.1), with
the ``baseline`` model. Everything is checked on the host afterwards, where the harness would
look: ``submission/``, ``logs/``, ``code/``."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from podium.api.config import load_config
from podium.api.runs import build_strategy, load_registry
from podium.benchmarks.folder import FolderTask
from podium.sandbox import bwrap_problem, container_evidence
from tests.agents.fake_grading_server import FakeGradingServer
from tests.support import REPO, TITANIC, cli_env

AGENT = REPO / "agents" / "podium"
START = AGENT / "start.sh"
HARNESS_VARIABLES = ("SUBMISSION_DIR", "LOGS_DIR", "CODE_DIR", "AGENT_DIR", "DATA_DIR",
                     "INSTRUCTIONS", "SANDBOX", "HARDWARE", "PRESET", "OBFUSCATE", "RUN_DIR",
                     "COMPETITION_ID", "SOLUTION_PYTHON", "CONDA_ENV")  # fmt: skip
INSTRUCTIONS = "TEST RULES: train a model; write /home/submission/submission.csv.\n"
PATIENCE_S = 600.0  # what a slow, busy 2-core machine may need; nothing waits for it to pass


def simulated_home(root: Path, titanic: FolderTask) -> Path:
    """MLE-bench's container layout below ``root``: the competition read-only in data/."""
    home = root / "home"
    shutil.copytree(titanic.public_dir, home / "data")
    shutil.copy(TITANIC / "description.md", home / "data" / "description.md")
    (home / "instructions.txt").write_text(INSTRUCTIONS)
    for path in [home / "data", *(home / "data").iterdir()]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    return home


def harness_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in cli_env().items() if k not in HARNESS_VARIABLES}
    env = {k: v for k, v in env.items() if not k.startswith("MLEBENCH_")}
    env.update(PODIUM_HOME=str(home), PODIUM=f"{sys.executable} -m podium", **extra)
    return env


def start_args() -> list[str]:
    """Outside any container and without bubblewrap, say that something encloses the test."""
    if bwrap_problem() is not None and container_evidence() is None:
        return ["sandbox.assume_container=true"]
    return []


@dataclass
class HarnessRun:
    home: Path
    done: subprocess.CompletedProcess[str]
    server: FakeGradingServer

    @property
    def run_dir(self) -> Path:
        return self.home / "agent" / "run"

    def summary(self) -> dict[str, Any]:
        return dict(json.loads((self.home / "logs" / "summary.json").read_text()))


@pytest.fixture(scope="module")
def harness_run(tmp_path_factory: pytest.TempPathFactory, titanic: FolderTask) -> HarnessRun:
    home = simulated_home(tmp_path_factory.mktemp("harness"), titanic)
    server = FakeGradingServer()
    with server.running():
        env = harness_env(home, STEP_LIMIT="1", TIME_LIMIT_SECS="3600",
                          COMPETITION_ID="titanic-sim",
                          MLEBENCH_VALIDATION_URL=server.url)  # fmt: skip
        done = subprocess.run(["bash", str(START), *start_args()], env=env, capture_output=True,
                              text=True, timeout=PATIENCE_S)  # fmt: skip
    return HarnessRun(home, done, server)


pytestmark = pytest.mark.slow


def test_the_submission_is_the_runs_best(harness_run: HarnessRun) -> None:
    done = harness_run.done
    assert done.returncode == 0, done.stdout + done.stderr
    best = harness_run.run_dir / "best"
    submitted = harness_run.home / "submission" / "submission.csv"
    assert submitted.read_bytes() == (best / "submission.csv").read_bytes()
    node = json.loads((best / "node.json").read_text())
    assert json.loads((harness_run.home / "logs" / "best.json").read_text()) == node
    assert f"submission: {submitted} (node {node['node_id']})" in done.stderr
    code = harness_run.home / "code" / "solution.py"
    assert code.read_text() == (best / "solution.py").read_text()
    summary = harness_run.summary()
    assert (summary["task"], summary["steps"], summary["stop_reason"]) == (
        "titanic-sim",
        1,
        "steps",
    )
    assert summary["best_node"] == node["node_id"] and summary["lower_is_better"] is False


def test_every_node_was_checked_by_the_validation_server(harness_run: HarnessRun) -> None:
    nodes = sorted((harness_run.run_dir / "nodes").glob("*/submission.csv"))
    assert len(nodes) == 1
    assert sorted(harness_run.server.received) == sorted(p.read_bytes() for p in nodes)


def test_the_logs_hold_the_journal_the_page_and_the_stamp(harness_run: HarnessRun) -> None:
    logs = harness_run.home / "logs"
    with sqlite3.connect(logs / "journal.sqlite") as db:
        assert db.execute("SELECT count(*) FROM nodes").fetchone()[0] == 1
    page = (logs / "run.html").read_text()
    assert page.lstrip().lower().startswith("<!doctype html") and "titanic-sim" in page
    config = (logs / "config.toml").read_text()
    assert 'preset = "mlebench-reference"' in config and "steps = 1" in config
    log = (logs / "agent.log").read_text()
    assert "stopped: step budget spent" in log  # the console
    assert "===== node 1: solution.py" in log and "===== node 1: output" in log
    assert "VALIDATION_METRIC:" in log
    # the stamp: which isolation the solutions had, as start.sh chose it from the check
    checked = (logs / "sandbox_check.txt").read_text().strip().splitlines()[-1]
    chosen = "bwrap" if checked.endswith("-> bwrap") else "container"
    summary = harness_run.summary()
    assert summary["sandbox"] == chosen
    assert summary["sandbox_detail"].startswith(f"{chosen}: ")
    assert summary["sandboxed"] is (chosen == "bwrap")
    if chosen == "container":
        assert "the container is the isolation boundary" in summary["sandbox_detail"]


def test_the_prompt_rules_are_the_harness_instructions_and_the_notes(
    harness_run: HarnessRun,
) -> None:
    rules = (harness_run.home / "agent" / "instructions.txt").read_text()
    assert rules.startswith(INSTRUCTIONS)
    assert "Compute: " in rules and "CPUs and" in rules and "GiB of memory" in rules
    assert "The whole search has 1 hour and at most 1 solutions" in rules
    assert "${" not in rules


def test_a_sigterm_mid_run_still_leaves_the_best_so_far(
    tmp_path: Path, titanic: FolderTask, harness_run: HarnessRun
) -> None:
    home = simulated_home(tmp_path, titanic)
    env = harness_env(home, STEP_LIMIT="50", TIME_LIMIT_SECS="3600", MLEBENCH_VALIDATION_URL="",
                      SANDBOX=harness_run.summary()["sandbox"])  # fmt: skip
    best = home / "agent" / "run" / "best" / "submission.csv"
    with subprocess.Popen(["bash", str(START), *start_args()], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:  # fmt: skip
        deadline = time.monotonic() + PATIENCE_S
        while not best.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert best.exists(), "no node finished"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=PATIENCE_S)
    assert proc.returncode == 130, out + err  # Podium's "interrupted"
    assert "got SIGTERM: stopping Podium" in err
    assert (home / "submission" / "submission.csv").read_bytes() == best.read_bytes()
    assert (home / "code" / "solution.py").is_file()
    summary = json.loads((home / "logs" / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted" and summary["steps"] < 50


def test_bad_limits_are_one_line_with_a_hint(tmp_path: Path) -> None:
    env = harness_env(tmp_path, TIME_LIMIT_SECS="a day")
    done = subprocess.run(["bash", str(START)], env=env, capture_output=True, text=True,
                          timeout=PATIENCE_S)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "podium-agent: error: TIME_LIMIT_SECS=a day is not a number of seconds",
        "podium-agent: hint: e.g. TIME_LIMIT_SECS=86400",
    ]


# --- config.yaml, as MLE-bench's agent registry reads it ------------------------------------


def variants() -> dict[str, dict[str, Any]]:
    """The agent ids (the other top-level keys are YAML anchors the variants merge)."""
    config = yaml.safe_load((AGENT / "config.yaml").read_text())
    return {name: v for name, v in config.items() if name.split("/")[0] == "podium"}


@pytest.mark.parametrize("name", sorted(variants()))
def test_every_variant_is_a_valid_podium_run(name: str) -> None:
    variant = variants()[name]
    assert (AGENT.parent / variant["start"]) == START
    assert (AGENT.parent / variant["dockerfile"]).is_file()
    assert variant["kwargs_type"] == "omegaconf"
    env = variant["env_vars"]
    assert int(env["TIME_LIMIT_SECS"]) > 0 and int(env["STEP_LIMIT"]) > 0
    for key, value in env.items():
        if key.endswith("_API_KEY"):
            assert value == f"${{{{ secrets.{key} }}}}"  # the harness fills it from its env
    # what start.sh makes of it: its flags, then each kwarg as -o key=value
    overrides = [f"{key}={value}" for key, value in variant.get("kwargs", {}).items()]
    cli = {"preset": "mlebench-reference", "budget.steps": env["STEP_LIMIT"],
           "budget.time": f"{env['TIME_LIMIT_SECS']}s"}  # fmt: skip
    cfg = load_config(None, overrides, cli, environ={})
    assert build_strategy(cfg, load_registry()).name == cfg.search.strategy
    assert cfg.model.name and (cfg.model.name == "baseline" or "/" in cfg.model.name)
