"""``podium show RUN NODE`` on a node still running: its output so far, and ``--follow``, which
prints the output as it comes and exits once the node has ended (Ctrl-C: exit 130).

The follower is the real command line in a subprocess; the run it follows is a real
``podium.run`` (scripted model, real kernel) whose solution blocks until the test releases it,
or the recorded run with its lock held (a run in progress, for the cases that need no kernel).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import podium
from podium.cli.app import app
from podium.cli.show_text import new_output
from podium.errors import UserError
from podium.exec_output import CappedOutput
from podium.formats import Journal, RunDir
from podium.records import NodeState
from tests.recorded_run import RecordedRun
from tests.support import (
    node_answers,
    podium_popen,
    run_config,
    solution,
    wait_until,
    write_script,
)

BACKSTOP_S = 300  # never reached when the test releases the solution: bounds a broken test
WAITING, GO_ON, RELEASE = "waiting-for-release", "go-on", "release"


class Follower:
    """``podium show RUN NODE --follow`` in a subprocess, its stdout collected as it comes."""

    def __init__(self, run_dir: Path, node_id: int) -> None:
        self.process = podium_popen("show", str(run_dir), str(node_id), "--follow")
        self.out: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.out.append(line)

    @property
    def text(self) -> str:
        return "".join(self.out)

    def wait_for(self, text: str) -> None:
        wait_until(lambda: text in self.text or self.process.poll() is not None, BACKSTOP_S)
        if self.process.poll() is not None:  # ended: all it printed is read once the pipe is
            self._reader.join(BACKSTOP_S)
        assert text in self.text, (self.text, self.stderr())

    def finish(self) -> int:
        code = self.process.wait(BACKSTOP_S)
        self._reader.join(BACKSTOP_S)
        return code

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(BACKSTOP_S)


def waits_for(name: str) -> str:
    """Solution lines that block until the test creates ``name`` in the solution's cwd."""
    return (
        f"deadline = time.monotonic() + {BACKSTOP_S}\n"
        f"while not os.path.exists({name!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
    )


@pytest.fixture
def live_run(tmp_path: Path, data_dir: Path) -> Iterator[RunDir]:
    """A one-node ``podium.run`` in a thread whose solution prints a line, waits for GO_ON,
    prints another, waits for RELEASE, then finishes well. Whatever still waits is released
    at the end, so a failed test still lets its run end."""
    code = "import os, time\nprint('the first line')\n" + f"open({WAITING!r}, 'w').close()\n"
    code += waits_for(GO_ON) + "print('the second line')\n" + waits_for(RELEASE) + solution(0.8)
    script = write_script(tmp_path / "s.jsonl", [node_answers(code)])
    config = run_config(script, tmp_path / "run", data_dir, steps=1, exec={"timeout": BACKSTOP_S})
    thread = threading.Thread(target=podium.run, args=(config,), daemon=True)
    thread.start()
    rd = RunDir(tmp_path / "run")
    try:
        yield rd
    finally:
        for waiting in rd.root.rglob(WAITING):
            for name in (GO_ON, RELEASE):
                (waiting.parent / name).touch()
        thread.join(BACKSTOP_S)


def slot(rd: RunDir) -> Path:
    """The waiting solution's working directory (in the sandbox's scratch)."""
    wait_until(lambda: next(rd.root.rglob(WAITING), None) is not None, BACKSTOP_S)
    return next(rd.root.rglob(WAITING)).parent


@pytest.mark.slow
def test_follow_prints_lines_as_they_come_and_exits_when_the_node_ends(
    live_run: RunDir,
) -> None:
    cwd = slot(live_run)
    wait_until(lambda: live_run.node_output(1).is_file(), BACKSTOP_S)
    follower = Follower(live_run.root, 1)
    try:
        follower.wait_for("[following its output until it finishes; Ctrl-C stops]")
        shown = follower.text.split("── output so far", 1)[1]  # (the code prints them too)
        assert "still running (executing)" in shown
        assert "the first line\n" in shown and "the second line" not in shown
        (cwd / GO_ON).touch()
        follower.wait_for("the second line\n")
        assert follower.process.poll() is None  # the node still runs: it keeps following
        assert follower.text.count("the first line\n") == 1  # only what is new is printed
        (cwd / RELEASE).touch()
        assert follower.finish() == 0, follower.stderr()
    finally:
        follower.stop()
    after = follower.text.split("the second line\n", 1)[1]
    assert after.startswith("VALIDATION_METRIC: 0.8\n")
    assert "node 1 finished: good, metric 0.8" in after


def hold_running(recorded_run: RecordedRun, text: str) -> RunDir:
    """The recorded run's executing node, with ``text`` as its output so far."""
    rd = RunDir(recorded_run.root)
    rd.write_live_output(recorded_run.running, text)
    return rd


@pytest.mark.slow  # a CLI process
def test_ctrl_c_ends_a_follow_with_status_130(recorded_run: RecordedRun) -> None:
    rd = hold_running(recorded_run, "epoch 1\n")
    rd.lock()  # as the run in progress holds it
    try:
        follower = Follower(rd.root, recorded_run.running)
        try:
            follower.wait_for("[following its output until it finishes; Ctrl-C stops]")
            rd.write_live_output(recorded_run.running, "epoch 1\nepoch 2\n")
            follower.wait_for("epoch 2\n")
            follower.process.send_signal(signal.SIGINT)
            assert follower.finish() == 130  # as every command exits on Ctrl-C
            assert "Traceback" not in follower.stderr()
        finally:
            follower.stop()
    finally:
        rd.unlock()
    assert "Traceback" not in follower.text


@pytest.mark.slow  # a CLI process
def test_a_follower_ends_when_the_run_stops_being_live(recorded_run: RecordedRun) -> None:
    """A run killed mid-node never finishes the node: the follower sees it interrupted."""
    rd = hold_running(recorded_run, "epoch 1\n")
    rd.lock()
    follower = Follower(rd.root, recorded_run.running)
    try:
        follower.wait_for("[following its output until it finishes; Ctrl-C stops]")
        rd.unlock()  # as a killed run's lock goes with its process
        assert follower.finish() == 0, follower.stderr()
    finally:
        rd.unlock()
        follower.stop()
    assert f"node {recorded_run.running} ended: interrupted (executing)" in follower.text


def test_a_node_that_has_ended_is_just_shown(recorded_run: RecordedRun) -> None:
    done = CliRunner().invoke(app, ["show", str(recorded_run.root), "1", "--follow"])
    assert done.exit_code == 0, done.output
    assert "[following its output" not in done.output and "still running" not in done.output
    journal = Journal.open(RunDir(recorded_run.root).journal)
    try:
        node = next(n for n in journal.nodes() if n.id == 1)
    finally:
        journal.close()
    assert node.state is NodeState.DONE and node.exec is not None
    assert node.exec.output.splitlines()[-1] in done.output


def test_follow_needs_a_node(recorded_run: RecordedRun) -> None:
    done = CliRunner().invoke(app, ["show", str(recorded_run.root), "--follow"])
    assert isinstance(done.exception, UserError) and done.exception.hint == "give a NODE id"


def test_a_running_node_without_follow_shows_its_output_so_far(
    recorded_run: RecordedRun,
) -> None:
    rd = hold_running(recorded_run, "loading\n\x1b]52;c;cGF5bG9hZA==\x07epoch 1\n")
    rd.lock()
    try:
        done = CliRunner().invoke(app, ["show", str(rd.root), str(recorded_run.running)])
    finally:
        rd.unlock()
    assert done.exit_code == 0, done.output
    assert "loading\nepoch 1\n" in done.output  # inert: the clipboard write is dropped
    assert "\x1b" not in done.output
    assert "still running (executing): the output so far" in done.output


def test_a_follower_of_a_capped_output_prints_every_line_once() -> None:
    """Past the cap the file keeps its head and tail: a follower looking often enough prints
    each new line once, in order; one that missed more than a tail says so."""
    output, looks = CappedOutput(4096), []
    for i in range(2001):
        output.write(f"line {i:05d}\n")
        if i % 50 == 0:  # a look every ~550 bytes, well within the 3 KiB tail
            looks.append(output.text())
    assert "bytes of output omitted" in looks[-1]
    printed, shown = [], ""
    for now in looks:
        new, cut = new_output(shown, now)
        assert cut is None
        printed.append(new)
        shown = now
    assert "".join(printed).splitlines() == [f"line {i:05d}" for i in range(2001)]
    # A look at the start, the next at the end: the rest of the head, a cut, the last tail.
    head, tail = looks[-1].split("bytes of output omitted ...]\n")
    new, cut = new_output(looks[1], looks[-1])
    assert looks[1] + new == head[: head.rindex("\n[... ")]
    assert cut == tail and cut.endswith("line 02000\n")
    new, cut = new_output(looks[-20], looks[-1])  # its end left the kept tail in between
    assert (new, cut) == ("", tail)
