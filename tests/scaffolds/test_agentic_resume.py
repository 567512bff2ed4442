"""Agentic nodes are replayable and crash-safe like one-shot ones: a replay of a recorded run
rebuilds it, and a SIGKILL in the middle of a node's conversation (a cell running, an answer
received but not yet recorded), then ``podium resume``, gives the uninterrupted run: the node
is run again from its first turn under its id, asking under the call numbers it had."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from podium.api import runs as api
from podium.formats import Journal
from podium.testing import FakeOpenAI
from tests.api.test_agentic_http import agentic_responder
from tests.support import REPO, TOY_TASK, cli_env, podium_cli

pytestmark = pytest.mark.slow

SESSION = REPO / "tests" / "data" / "agentic_toy_session.jsonl"  # the docs' worked example
OPTIONS = ["-o", "search.operators=agentic", "-o", "search.num_drafts=1"]


def _record(run_dir: Path) -> dict[str, Any]:
    """Everything a run's journal and notebooks say, less timings."""
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        nodes = [
            (n.id, n.step, n.state, n.operator, n.parent_ids, n.plan, n.code, n.is_buggy,
             n.metric.value if n.metric else None, n.exec.output if n.exec else None, n.fresh)
            for n in journal.nodes()
        ]  # fmt: skip
        calls = [
            (c.node_id, c.role, c.seq, c.request.meta.turn, c.request.model_dump_json())
            for c in journal.calls()
        ]
    finally:
        journal.close()
    notebooks = {}
    for path in sorted(run_dir.glob("nodes/*/notebook.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        notebooks[path.parent.name] = [
            (c["cell_type"], c["source"], c.get("outputs")) for c in cells
        ]
    return {"nodes": nodes, "calls": calls, "notebooks": notebooks}


def test_a_replay_rebuilds_an_agentic_run(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config: dict[str, Any] = {
        "task": str(TOY_TASK), "data_dir": str(data_dir), "budget": {"steps": 2},
        "sandbox": {"preimports": []}, "search": {"operators": "agentic", "num_drafts": 1},
    }  # fmt: skip
    with FakeOpenAI(responder=agentic_responder()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        model = {"name": "openai/gpt-4.1", "base_url": fake.url, "retry_wait": 0.01}
        recorded = api.run({**config, "out": str(tmp_path / "rec"), "model": model}).run_dir
    monkeypatch.delenv("OPENAI_API_KEY")
    replay = {"replay": str(recorded), "retry_wait": 0.01}
    replayed = api.run({**config, "out": str(tmp_path / "replay"), "model": replay})
    assert replayed.summary["usage"]["calls"] == replayed.summary["usage"]["replayed"]["calls"]
    assert _record(replayed.run_dir) == _record(recorded)
    assert len(_record(recorded)["notebooks"]) == 2


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("agentic") / "reference"
    done = podium_cli(*_args(out, data_dir))
    assert done.returncode == 0, done.stderr
    return _record(out)


def _args(out: Path, data_dir: Path) -> list[str]:
    return ["run", str(TOY_TASK), "--model", f"scripted:{SESSION}", "--steps", "2",
            "--out", str(out), "--data-dir", str(data_dir), *OPTIONS]  # fmt: skip


@pytest.mark.parametrize(
    "failpoint",
    [
        "exec.running:3",  # node 1's third cell running
        "model.call:4",  # node 1's fourth answer received, not yet recorded
        "exec.running:6",  # node 2's first cell (1-4: node 1's cells, 5: its fresh run)
    ],
)
def test_a_sigkill_inside_an_agentic_node_then_resume_equals_the_uninterrupted_run(
    failpoint: str, reference: dict[str, Any], tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "run"
    killed = podium_cli(*_args(out, data_dir), env=cli_env(PODIUM_FAILPOINTS=failpoint))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = podium_cli("resume", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert _record(out) == reference
