"""The strategy in docs/strategies.md works exactly as written, loaded as ``module:Class``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from podium.formats import Journal
from tests.support import (
    REPO,
    TOY_TASK,
    cli_env,
    node_answers,
    podium_cli,
    solution,
    write_script,
)

pytestmark = pytest.mark.slow


def test_the_documented_strategy_runs_from_its_class_path(tmp_path: Path, data_dir: Path) -> None:
    code = re.search(
        r"^```python\n(.*?)^```$", (REPO / "docs/strategies.md").read_text(), re.S | re.M
    )
    assert code is not None
    (tmp_path / "explore_exploit.py").write_text(code.group(1))
    metrics = (0.5, 0.6, 0.55, 0.58, 0.7)  # two improves of node 2 fail: patience 2 -> draft
    script = write_script(tmp_path / "s.jsonl", [node_answers(solution(m)) for m in metrics])
    args = ["run", str(TOY_TASK), "--model", f"scripted:{script}",
            "--strategy", "explore_exploit:ExploreExploit", "-o", "search.epsilon=0",
            "-o", "sandbox.preimports=[]", "--data-dir", str(data_dir), "--steps", "5"]  # fmt: skip
    env = cli_env(PYTHONPATH=str(tmp_path))
    done = podium_cli(*args, "--out", str(tmp_path / "run"), env=env)
    assert done.returncode == 0, done.stderr
    journal = Journal.open(tmp_path / "run" / "journal.sqlite")
    assert [(n.operator, n.parent_ids) for n in journal.nodes()] == [
        ("draft", ()), ("draft", ()), ("improve", (2,)), ("improve", (2,)), ("draft", ()),
    ]  # fmt: skip
    journal.close()
    assert "epsilon = 0" in (tmp_path / "run" / "config.toml").read_text()

    wrong = podium_cli(*args, "-o", "search.nope=1", "--out", str(tmp_path / "x"), env=env)
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines()[0] == "error: search.nope: unknown key"
    missing = podium_cli(*args[:4], "--strategy", "no_such_module:X", env=env)
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: cannot import strategy module 'no_such_module'")
