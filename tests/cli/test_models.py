"""``podium models check``, ``podium calls list`` and the backends ``podium plugins`` shows."""

from __future__ import annotations

from pathlib import Path

from podium.testing import FakeOpenAI, Received, Reply
from tests.support import cli_env, code_answer, podium_cli, review_answer, solution, write_script


def test_check_reports_endpoint_key_tools_usage_and_price(fake_openai: FakeOpenAI) -> None:
    env = cli_env(OPENAI_API_KEY=fake_openai.api_key)
    done = podium_cli("models", "check", "openai/gpt-4.1", "--base-url", fake_openai.url, env=env)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines() if " " in line)
    assert lines["endpoint"] == fake_openai.url
    assert lines["key"] == "OPENAI_API_KEY (set)"
    assert lines["tools"] == "function calls work"
    assert "per million tokens" in lines["price"] and lines["usage"].endswith(tuple("0123456789"))
    assert done.stdout.splitlines()[-1] == "ok"
    assert fake_openai.received[0].forced_tool == "reply"


def test_check_falls_back_to_text_where_tools_are_refused(fake_openai: FakeOpenAI) -> None:
    def no_tools(received: Received) -> Reply:
        return Reply.error(400, "tools are not supported") if received.tools else Reply.text("OK")

    fake_openai.responder = no_tools
    env = cli_env(OPENAI_API_KEY=fake_openai.api_key)
    done = podium_cli("models", "check", "openai/qwen", "--base-url", fake_openai.url, env=env)
    assert done.returncode == 0, done.stderr
    assert "not supported" in done.stdout and "price     no price known" in done.stdout


def test_check_failures_are_one_line_and_a_hint(fake_openai: FakeOpenAI) -> None:
    wrong = podium_cli(
        "models", "check", "openai/gpt-4.1", "--base-url", fake_openai.url,
        env=cli_env(OPENAI_API_KEY="sk-not-the-right-one"),
    )  # fmt: skip
    assert wrong.returncode == 1
    assert wrong.stderr.splitlines() == [
        wrong.stderr.splitlines()[0],
        "hint: check OPENAI_API_KEY",
    ]
    assert wrong.stderr.startswith("error: openai: API key rejected")
    env = {k: v for k, v in cli_env().items() if k != "OPENAI_API_KEY"}
    missing = podium_cli("models", "check", "openai/gpt-4.1", env=env)
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[0] == "error: openai: no API key: OPENAI_API_KEY is not set"
    unknown = podium_cli("models", "check", "nosuch/model", env=env)
    assert unknown.returncode == 2 and "unknown model provider 'nosuch'" in unknown.stderr
    for done in (wrong, missing, unknown):
        assert "Traceback" not in done.stderr


def test_plugins_lists_the_three_backends() -> None:
    done = podium_cli("plugins", env=cli_env())
    backends = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("backend")]
    assert backends == [
        "anthropic/<model>",
        "litellm/<provider>/<model>",
        "openai/<model>",
        "scripted:<file.jsonl>",
    ]


def test_calls_list_shows_each_call(tmp_path: Path, data_dir: Path) -> None:
    from podium.api import runs as api
    from tests.support import run_config

    usage = {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.25}
    script = write_script(
        tmp_path / "s.jsonl", [code_answer(solution(), usage=usage), review_answer(usage=usage)]
    )
    result = api.run(run_config(script, tmp_path / "run", data_dir, steps=1))
    done = podium_cli("calls", "list", str(result.run_dir), env=cli_env())
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows[0][:4] == ["node", "role", "seq", "model"]
    assert [r[1] for r in rows[1:]] == ["code", "review"]
    assert rows[1][5:8] == ["100", "20", "0.2500"]
    assert rows[2][-2:] == ["called", "submit_review"]
    missing = podium_cli("calls", "list", str(tmp_path / "nope"), env=cli_env())
    assert missing.returncode == 2 and missing.stderr.startswith(f"error: {tmp_path / 'nope'} does")
