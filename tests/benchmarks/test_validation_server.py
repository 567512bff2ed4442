"""MLE-bench's validation server as Podium asks it (``podium.benchmarks.validation_server``),
against a real HTTP server on 127.0.0.1 that speaks its wire format: a slow submission is that
submission's outcome and never switches the server off; a server that is down is re-probed
with backoff and asked again once it answers; requests go one at a time."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from podium.benchmarks.data_folder import load_data_folder
from podium.benchmarks.validation_server import (
    DEFAULT_VALIDATION_URL,
    RETRY_FIRST_S,
    NoVerdict,
    ServerVerdict,
    ValidationServer,
)
from tests.agents.fake_grading_server import RUNNING, VALID, FakeGradingServer
from tests.benchmarks.test_data_folder import INVALID, home, submission
from tests.benchmarks.test_submission_bounds import GREW_AT_MOST_MIB, PEAK, MiB, python
from tests.support import scaled, wait_until

__all__ = ["home"]  # the fixture, used by name

PATIENT_S = 60.0  # a timeout that an answer on a loaded machine always meets
JUDGED_INVALID = (
    "MLE-bench's validator: Submission invalid! The attempt to grade the submission has "
    "resulted in the following error message: missing ids"
)


def settled(fake: FakeGradingServer, posts: int, probes: int) -> None:
    """Wait until ``fake`` has had ``posts`` submissions and ``probes`` health checks."""
    wait_until(lambda: (len(fake.received), fake.health_checks) == (posts, probes), 60)
    assert (len(fake.received), fake.health_checks) == (posts, probes)


class Clock:
    """The time a ValidationServer's retry delays count in, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def running_held(fake: FakeGradingServer, gate: threading.Event) -> Iterator[None]:
    """``fake`` running; its handlers blocked on ``gate`` are let go before it shuts down (its
    close waits for them), whatever the test asserted."""
    with fake.running():
        try:
            yield
        finally:
            gate.set()


def test_a_slow_submission_does_not_switch_the_validator_off(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first submission hangs the validation (it is slow); the second, which the
    structural check would pass, is still judged invalid by the server."""
    calls: list[int] = []
    gate = threading.Event()

    def answer(data: bytes) -> tuple[int, object]:
        calls.append(1)
        if len(calls) == 1:
            gate.wait()  # this one file takes longer than the client waits
        return INVALID

    server = FakeGradingServer(answer)
    with running_held(server, gate):
        monkeypatch.setenv("MLEBENCH_VALIDATION_URL", server.url)
        task = load_data_folder(home / "data")
        assert task.server is not None
        slow, later = submission(home, tmp_path), submission(home, tmp_path, rows=418)
        task.server.timeout_s = 1.0  # the slow one is held until the test lets it go
        with caplog.at_level(logging.WARNING, logger="podium.benchmarks"):
            assert task.check_submission(slow) is None  # no verdict: the structural check
        gate.set()
        task.server.timeout_s = scaled(PATIENT_S)
        reason = task.check_submission(later)
    assert reason == JUDGED_INVALID
    settled(server, 2, 1)
    assert task.server.down is None
    said = [r.getMessage() for r in caplog.records]
    assert any(
        str(slow) in m and "did not answer within 1 s on this submission (the server is up)" in m
        for m in said
    ), said


def test_a_hung_server_is_probed_with_backoff_and_asked_again_once_back() -> None:
    """A server that answers neither the submission nor /health is down: not asked until its
    retry is due, re-probed (30 s, then 60 s), and asked again when /health answers."""
    clock = Clock()
    back = threading.Event()  # until set, every request hangs

    def answer(data: bytes) -> tuple[int, object]:
        back.wait()
        return INVALID

    def health() -> tuple[int, object]:
        back.wait()
        return RUNNING

    fake = FakeGradingServer(answer, health)
    with running_held(fake, back):
        server = ValidationServer(fake.url, timeout_s=1.0, health_timeout_s=1.0, clock=clock)
        first = server.ask(b"id\n1\n")
        assert isinstance(first, NoVerdict) and first.cause == "down"
        assert "did not answer within 1 s" in str(first)
        assert "its /health did not answer within 1 s" in str(first)
        settled(fake, 1, 1)  # the handlers given up on may run late on a loaded machine
        clock.now = RETRY_FIRST_S - 1
        waiting = server.ask(b"id\n1\n")
        assert isinstance(waiting, NoVerdict) and waiting.cause == "down"
        assert "asked again in 1 s" in str(waiting)
        assert (len(fake.received), fake.health_checks) == (1, 1)  # not asked
        clock.now = RETRY_FIRST_S  # due: only /health is asked, and it still hangs
        assert isinstance(server.ask(b"id\n1\n"), NoVerdict)
        settled(fake, 1, 2)
        clock.now = 3 * RETRY_FIRST_S - 1  # the wait doubled
        assert isinstance(server.ask(b"id\n1\n"), NoVerdict)
        assert fake.health_checks == 2
        back.set()
        server.timeout_s = server.health_timeout_s = scaled(PATIENT_S)
        clock.now = 3 * RETRY_FIRST_S
        verdict = server.ask(b"id\n1\n")
        assert verdict == ServerVerdict(False, JUDGED_INVALID)
        assert (len(fake.received), fake.health_checks) == (2, 3)
        assert server.down is None


def test_a_server_that_stops_and_starts_again_is_asked_again() -> None:
    """Refused connections (the server's process is gone) make it down; the same port served
    again answers the next submission once its retry is due."""
    clock = Clock()
    first = FakeGradingServer()
    with first.running():
        server = ValidationServer(first.url, timeout_s=scaled(PATIENT_S), clock=clock)
        assert server.ask(b"id\n1\n") == ServerVerdict(True)
    gone = server.ask(b"id\n1\n")
    assert isinstance(gone, NoVerdict) and gone.cause == "down"
    assert "cannot be reached" in str(gone) and server.down is not None
    again = FakeGradingServer(lambda _: INVALID, port=first.port)
    with again.running():
        assert isinstance(server.ask(b"id\n1\n"), NoVerdict) and not again.received  # not due
        clock.now = RETRY_FIRST_S
        assert server.ask(b"id\n1\n") == ServerVerdict(False, JUDGED_INVALID)
    assert again.received == [b"id\n1\n"] and again.health_checks == 1


def test_submissions_are_sent_one_at_a_time() -> None:
    """MLE-bench's server saves every upload to one path: two requests at once could each be
    judged on the other's file. Nodes checked in parallel never overlap at the server."""
    lock = threading.Lock()
    inside: list[int] = [0, 0]  # now, most at once
    entered = threading.Event()

    def answer(data: bytes) -> tuple[int, object]:
        with lock:
            inside[0] += 1
            inside[1] = max(inside)
        entered.set()
        time.sleep(0.05)  # long enough for another request to arrive if allowed
        with lock:
            inside[0] -= 1
        return VALID

    fake = FakeGradingServer(answer)
    with fake.running():
        server = ValidationServer(fake.url, timeout_s=scaled(PATIENT_S))
        verdicts: list[object] = []
        threads = [
            threading.Thread(target=lambda: verdicts.append(server.ask(b"id\n1\n")))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert entered.is_set() and inside[1] == 1
    assert verdicts == [ServerVerdict(True)] * 4 and len(fake.received) == 4


# The host's side of asking the server about one handed-over file: argv: the data folder, the
# submission. MLEBENCH_VALIDATION_URL names the test's server.
ASK_SIDE = (
    PEAK
    + """
import json, sys
from pathlib import Path
from podium.benchmarks.data_folder import load_data_folder

task = load_data_folder(Path(sys.argv[1]))
before = reset()
reason = task.check_submission(Path(sys.argv[2]))
print(json.dumps({"grew": status("VmHWM") - before, "reason": reason}))
"""
)


def test_a_submission_is_streamed_to_the_server_never_held_by_the_host(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 90 MiB submission (one long line: within the size cap) reaches the server whole, and
    the host's peak grows by a few MiB: it read the file whole before sending it (+90 MiB)."""
    path = tmp_path / "node" / "submission.csv"
    path.parent.mkdir()
    with path.open("wb") as out:
        out.write(b"PassengerId,Survived\n892,")
        for _ in range(90):
            out.write(b"7" * MiB)
    server = FakeGradingServer(lambda _: INVALID)
    with server.running():
        monkeypatch.setenv("MLEBENCH_VALIDATION_URL", server.url)
        found = python(ASK_SIDE, str(home / "data"), str(path))
    assert [len(data) for data in server.received] == [path.stat().st_size]
    assert server.received[0] == path.read_bytes()
    assert found["reason"] == JUDGED_INVALID
    assert found["grew"] < GREW_AT_MOST_MIB, found


def test_the_harness_server_is_asked_unnamed_only_inside_the_harness(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside MLE-bench's container a port on localhost is any local user's: one listening
    there and answering "valid" to everything made a file of the wrong columns a good node.
    Unset, the harness's URL is used only where the harness set COMPETITION_ID."""
    assert load_data_folder(home / "data").server is None
    monkeypatch.setenv("COMPETITION_ID", "titanic")
    server = load_data_folder(home / "data").server
    assert server is not None and server.url == DEFAULT_VALIDATION_URL
    monkeypatch.setenv("MLEBENCH_VALIDATION_URL", "")
    assert load_data_folder(home / "data").server is None  # empty: never asked
