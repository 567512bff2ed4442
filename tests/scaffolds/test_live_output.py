"""A node's ``output.txt`` while it executes: the output so far, masked, and never the reason a
node or a run fails. Real ``podium.run`` runs of the toy task with a scripted model and real
kernels; the solution blocks until the test releases it (a file created in its working
directory, the only place the test can reach it), so what the test reads is a running node's.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import podium
from podium.api.runs import RunResult
from podium.formats import Journal, RunDir
from podium.records import Node, NodeState
from tests.support import (
    GO_ON,
    HELD_BACKSTOP_S,
    RELEASE,
    WAITING,
    node_answers,
    release_held,
    run_config,
    solution,
    wait_until,
    waits_for,
    write_script,
)

pytestmark = pytest.mark.slow
BACKSTOP_S = HELD_BACKSTOP_S

SECRET_ENV = "LIVE_OUTPUT_AUTH"  # no secret-looking name: masked because the config names it
SECRET = "sk-live-PLANTED-7d1f4c9a2e"


@dataclass
class Running:
    """A ``podium.run`` in a thread, with the run dir it writes."""

    run_dir: RunDir
    thread: threading.Thread
    result: list[RunResult] = field(default_factory=list)
    error: list[BaseException] = field(default_factory=list)

    def slot(self) -> Path:
        """The solution's working directory (in the sandbox's scratch), once it waits."""
        wait_until(lambda: next(self.run_dir.root.rglob(WAITING), None) is not None, BACKSTOP_S)
        return next(self.run_dir.root.rglob(WAITING)).parent

    def live_output(self) -> str:
        path = self.run_dir.node_output(1)
        return path.read_text() if path.is_file() else ""

    def node(self) -> Node:
        """Node 1 as the journal holds it now (read as a viewer reads a live run)."""
        journal = Journal.open(self.run_dir.journal)
        try:
            return next(n for n in journal.nodes() if n.id == 1)
        finally:
            journal.close()

    def finish(self) -> RunResult:
        self.thread.join(BACKSTOP_S)
        assert not self.thread.is_alive(), "the run did not end"
        if self.error:
            raise self.error[0]
        return self.result[0]


StartRun = Callable[[str], Running]


@pytest.fixture
def start_run(tmp_path: Path, data_dir: Path) -> Iterator[StartRun]:
    """Starts a one-node run of the given code in a thread; at the end, releases whatever
    still waits (a failed test still lets its run end) and waits for the run."""
    started: list[Running] = []

    def start(code: str) -> Running:
        script = write_script(tmp_path / "s.jsonl", [node_answers(code)])
        config = run_config(
            script, tmp_path / "run", data_dir, steps=1, exec={"timeout": BACKSTOP_S}
        )
        config["model"]["api_key_env"] = SECRET_ENV
        running = Running(RunDir(tmp_path / "run"), threading.Thread(target=lambda: None))

        def go() -> None:
            try:
                running.result.append(podium.run(config))
            except BaseException as exc:  # re-raised in the test's thread by finish()
                running.error.append(exc)

        running.thread = threading.Thread(target=go, daemon=True)
        running.thread.start()
        started.append(running)
        return running

    yield start
    for running in started:
        release_held(running.run_dir.root)
        running.thread.join(BACKSTOP_S)


def test_output_txt_holds_the_output_so_far_masked_while_the_node_runs(
    start_run: StartRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    printed = 'print("key:", "sk-live-" + "PLANTED-7d1f4c9a2e")\nprint("the first line")\n'
    code = "import os, time\n" + printed + f"open({WAITING!r}, 'w').close()\n"
    code += waits_for(RELEASE) + solution(0.8)
    running = start_run(code)
    slot = running.slot()
    wait_until(lambda: "the first line" in running.live_output(), BACKSTOP_S)
    live = running.live_output()
    assert running.node().state is NodeState.EXECUTING  # still running: nothing recorded yet
    assert live == "key: ***\nthe first line\n"
    assert SECRET not in live
    (slot / RELEASE).touch()
    result = running.finish()
    assert result.summary["status"] == "finished", result.summary
    final = running.live_output()
    assert final.startswith("key: ***\nthe first line\nVALIDATION_METRIC: 0.8")
    files = [p for p in result.run_dir.rglob("*") if p.is_file()]
    assert [p for p in files if SECRET.encode() in p.read_bytes()] == []
    node = running.node()
    assert node.exec is not None and node.exec.output == final  # the final write, as before
    assert node.is_good


def test_a_live_write_that_fails_does_not_fail_the_node(
    start_run: StartRun, caplog: pytest.LogCaptureFixture
) -> None:
    """The live file cannot be replaced while a directory holds its temp file's name (as a
    failing or read-only disk refuses it): the node runs on, and its final output is written
    once the obstacle is gone, by the final write's own rules."""
    code = "import os, time\nprint('the first line')\n" + f"open({WAITING!r}, 'w').close()\n"
    code += waits_for(GO_ON) + "print('the second line')\n"
    code += waits_for(RELEASE) + solution(0.8)
    caplog.set_level(logging.INFO)
    running = start_run(code)
    slot = running.slot()
    wait_until(lambda: "the first line" in running.live_output(), BACKSTOP_S)
    output = running.run_dir.node_output(1)
    obstacle = output.with_name(output.name + ".tmp")
    (obstacle / "in-the-way").mkdir(parents=True)
    (slot / GO_ON).touch()

    def failed_write() -> bool:
        return any("its output so far was not written" in r.getMessage() for r in caplog.records)

    wait_until(failed_write, BACKSTOP_S)
    assert running.node().state is NodeState.EXECUTING
    assert running.live_output() == "the first line\n"  # the old version, whole
    shutil.rmtree(obstacle)
    (slot / RELEASE).touch()
    result = running.finish()
    assert result.summary["status"] == "finished", result.summary
    node = running.node()
    assert node.is_good, node.bug_reason
    assert running.live_output().startswith("the first line\nthe second line\nVALIDATION_METRIC")
    warnings = [r for r in caplog.records if "its output so far was not written" in r.getMessage()]
    assert len(warnings) == 1  # logged once, however many writes failed
