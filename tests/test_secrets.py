"""API keys never reach the run directory, the logs, the progress output or error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.testing import FakeOpenAI
from tests.support import agent_responder, cli_env, podium_cli

pytestmark = pytest.mark.slow

DUMP_ENV = """\
import os, shutil
print(sorted(os.environ.items()))
for pid in os.listdir("/proc"):
    try:
        print(open(f"/proc/{pid}/environ").read())
    except OSError:
        pass
print("VALIDATION_METRIC: 0.5")
shutil.copy("input/sample_submission.csv", "submission/submission.csv")
"""


def leaks(secret: str, run_dir: Path, *outputs: str) -> list[str]:
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    found = [str(p) for p in files if secret.encode() in p.read_bytes()]
    return found + [f"output #{i}" for i, text in enumerate(outputs) if secret in text]


def run_toy(url: str, out: Path, env: dict[str, str]) -> tuple[int, str, str]:
    done = podium_cli(
        "-v", "run", "tests/fixtures/tasks/toy", "--model", "openai/gpt-4.1", "--base-url", url,
        "--steps", "1", "--out", str(out), "-o", "model.retry_wait=0.01", "-o",
        "sandbox.preimports=[]", env=env,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_a_working_key_appears_nowhere(tmp_path: Path) -> None:
    key, other = "sk-podium-PLANTED-4f9a1c2e7b", "sk-ant-PLANTED-other-8d3e"
    with FakeOpenAI(api_key=key, responder=agent_responder(DUMP_ENV)) as fake:
        code, stdout, stderr = run_toy(
            fake.url, tmp_path / "run", cli_env(OPENAI_API_KEY=key, ANTHROPIC_API_KEY=other)
        )
        assert fake.received[0].key == key  # it was really sent
    assert code == 0, stderr
    output = (tmp_path / "run" / "nodes" / "1" / "output.txt").read_text()
    assert "PATH" in output  # the solution did dump its environment
    assert leaks(key, tmp_path / "run", stdout, stderr) == []
    assert leaks(other, tmp_path / "run", stdout, stderr) == []


def test_a_rejected_key_echoed_by_the_server_is_masked(tmp_path: Path) -> None:
    key = "sk-podium-PLANTED-rejected-91b2"
    with FakeOpenAI(api_key="the-right-key", echo_key_in_errors=True) as fake:
        code, stdout, stderr = run_toy(fake.url, tmp_path / "run", cli_env(OPENAI_API_KEY=key))
        assert fake.hits == 1  # an auth failure stops the run: no step is burnt on it
    assert code == 1
    assert "API key rejected" in stderr and "***" in stderr
    assert leaks(key, tmp_path / "run", stdout, stderr) == []
