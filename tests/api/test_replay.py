"""``--replay`` and ``podium calls export``: a recorded run answers a new one, offline."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from podium.api import runs as api
from podium.formats import Journal
from podium.records import NodeState
from podium.testing import FakeOpenAI, Received, Reply
from tests.support import TOY_TASK, agent_responder, cli_env, podium_cli, solution

pytestmark = pytest.mark.slow


def varied_responder() -> Any:
    """Code answers differ call by call (the first one crashes), so order mistakes show."""
    counter = itertools.count()
    review = agent_responder()

    def respond(received: Received) -> Reply:
        if received.forced_tool:
            return review(received)
        n = next(counter)
        code = solution(error="ValueError('boom')") if n == 0 else solution(0.5 + n / 10)
        return Reply.text(f"Attempt {n}.\n\n```python\n{code}```\n")

    return respond


def config(out: Path, data_dir: Path, **model: Any) -> dict[str, Any]:
    return {
        "task": str(TOY_TASK), "out": str(out), "data_dir": str(data_dir),
        "budget": {"steps": 3}, "model": {"retry_wait": 0.01, **model},
        "sandbox": {"preimports": []},
    }  # fmt: skip


def tree(run_dir: Path) -> list[tuple[Any, ...]]:
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        return [
            (n.id, n.operator, n.parent_ids, n.code, n.metric, n.is_buggy)
            for n in journal.nodes(NodeState.DONE)
        ]
    finally:
        journal.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """A 3-step run against the fake OpenAI server; the first two drafts ask the same thing."""
    out = tmp_path_factory.mktemp("recorded") / "run"
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI(responder=varied_responder()) as fake:
        mp.setenv("OPENAI_API_KEY", fake.api_key)
        api.run(config(out, data_dir, name="openai/gpt-4.1", base_url=fake.url))
        drafts = [r.prompt_text for r in fake.received if not r.forced_tool]
    # The first two drafts ask the same (but for the budget sentence, which matching ignores):
    # identical requests are answered in recorded order.
    assert re.sub(r"Steps left.*", "", drafts[0]) == re.sub(r"Steps left.*", "", drafts[1])
    return out


def test_replay_rebuilds_the_same_tree_without_network_or_key(
    recorded: Path, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = api.run(config(tmp_path / "replay", data_dir, replay=str(recorded)))
    assert tree(result.run_dir) == tree(recorded)
    assert [n[5] for n in tree(recorded)] == [True, False, False]
    assert result.summary["model"] == "openai/gpt-4.1"
    assert result.summary["usage"]["calls"] == result.summary["usage"]["replayed"]["calls"] == 6


def test_export_makes_a_scripted_file_and_a_replay_file(
    recorded: Path, tmp_path: Path, data_dir: Path
) -> None:
    done = podium_cli("calls", "export", str(recorded), env=cli_env())
    assert done.returncode == 0, done.stderr
    session = tmp_path / "session.jsonl"
    session.write_text(done.stdout)
    assert len(done.stdout.splitlines()) == 6
    scripted = api.run(config(tmp_path / "scripted", data_dir, name=f"scripted:{session}"))
    assert tree(scripted.run_dir) == tree(recorded)
    replayed = api.run(config(tmp_path / "replayed", data_dir, replay=str(session)))
    assert tree(replayed.run_dir) == tree(recorded)


def test_a_diverging_request_is_a_clear_error_or_goes_live(
    recorded: Path, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changed = {"draft": "Write a solution for: $task_description"}
    cfg = config(tmp_path / "miss", data_dir, replay=str(recorded)) | {"prompts": changed}
    result = api.run(cfg)
    assert result.summary["status"] == "failed"
    assert "replay: no recorded answer for code call #1" in result.summary["error"]
    assert "differs at character" in result.summary["error"]

    with FakeOpenAI(responder=agent_responder()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        live = config(tmp_path / "live", data_dir, replay=str(recorded), replay_miss="live",
                      base_url=fake.url) | {"prompts": changed}  # fmt: skip
        result = api.run(live)
    assert result.summary["status"] == "finished"
    assert fake.hits >= 3  # every draft prompt differs from the record


def test_a_replay_past_the_end_of_its_record_stops_cleanly(
    recorded: Path, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = config(tmp_path / "longer", data_dir, replay=str(recorded))
    result = api.run(cfg | {"budget": {"steps": 6}})  # the record holds 3 steps
    assert result.summary["status"] == "finished", result.summary["error"]
    assert result.summary["stop_reason"] == "replayed"
    assert result.summary["error"] is None
    assert tree(result.run_dir) == tree(recorded)
