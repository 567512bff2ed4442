"""The two-stage stop, in a real process: SIGTERM is always the graceful request, however
often it comes; a person's second Ctrl-C quits at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

PROGRAM = textwrap.dedent(
    """
    import asyncio, sys
    from podium.api.signals import two_stage_stop

    async def main():
        stopped = asyncio.Event()
        def first(signum):
            print("first", signum, flush=True)
            stopped.set()
        with two_stage_stop(first):
            print("ready", flush=True)
            await stopped.wait()
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        print("graceful", flush=True)

    asyncio.run(main())
    """
)


def _start() -> subprocess.Popen[str]:
    """The program stops gracefully when a line arrives on its stdin."""
    proc = subprocess.Popen(
        [sys.executable, "-c", PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def _signal_and_wait_taken(proc: subprocess.Popen[str], signum: int) -> None:
    proc.send_signal(signum)
    assert proc.stdout is not None and proc.stdout.readline() == f"first {signum}\n"


def test_sigterm_again_is_the_same_graceful_stop() -> None:
    proc = _start()
    _signal_and_wait_taken(proc, signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    time.sleep(1.2)  # past the duplicate window: still not an escalation
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate("done\n", timeout=60)
    assert (proc.returncode, out) == (0, "graceful\n")


def test_a_second_ctrl_c_quits_at_once() -> None:
    proc = _start()
    _signal_and_wait_taken(proc, signal.SIGINT)
    time.sleep(1.2)  # a person's second press, not the terminal's copy of the first
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130  # stdin still open: only the signal could end it
    assert proc.stdout is not None and proc.stdout.read() == ""
    assert proc.stdin is not None
    proc.stdin.close()
