"""The backend plugin in docs/backends.md works exactly as written, and so does its test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from podium.testing import FakeOpenAI
from tests.support import REPO, TOY_TASK, agent_responder, cli_env, podium_cli

pytestmark = pytest.mark.slow


def doc_blocks() -> list[str]:
    text = (REPO / "docs" / "backends.md").read_text()
    return re.findall(r"^```python\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    backend, its_test = doc_blocks()
    (tmp_path / "myhttp.py").write_text(backend)
    (tmp_path / "test_myhttp.py").write_text(its_test)
    return tmp_path


def test_the_documented_backend_runs_a_search(plugin_dir: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = agent_responder()
    plugin = str(plugin_dir / "myhttp.py")
    env = cli_env(MYHTTP_API_KEY=fake_openai.api_key)
    done = podium_cli(
        "run", str(TOY_TASK), "-p", plugin, "--model", "myhttp/qwen", "--base-url",
        fake_openai.url, "--steps", "1", "--out", str(plugin_dir / "run"), "-o",
        "sandbox.preimports=[]", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 step, 0 buggy" in done.stdout
    assert fake_openai.problems == [] and fake_openai.received[-1].forced_tool == "submit_review"
    listed = podium_cli("plugins", "-p", plugin, env=env)
    assert re.search(r"^backend\s+myhttp/<model>\s+-p ", listed.stdout, re.MULTILINE)


def test_the_documented_test_passes(plugin_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_myhttp.py"],
        cwd=plugin_dir, capture_output=True, text=True, timeout=120,
        env=cli_env(PYTHONPATH=str(plugin_dir)),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
