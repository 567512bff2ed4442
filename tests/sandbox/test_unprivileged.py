"""The bwrap sandbox as an ordinary user: no root, no writable cgroup, Debian's own python3.

As root (CI), the test makes a user ``podium-tester`` with a venv on /usr/bin/python3 holding
Podium (``scripts/unprivileged-venv``) and runs ``podium sandbox ...`` as that user; run by an
ordinary user, it uses the current user and venv. Either way the limits fall back from cgroups
to an RSS watchdog and RLIMIT_NPROC, and the isolation must hold all the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import UNPRIVILEGED_USER

pytestmark = pytest.mark.slow

USER = UNPRIVILEGED_USER


def _as_user(argv: list[str]) -> list[str]:
    if os.getuid() != 0:
        return argv
    env = ["env", "-i", "PATH=/usr/bin:/bin", f"HOME=/home/{USER}", "LANG=C.UTF-8"]
    return ["runuser", "-u", USER, "--", *env, *argv]


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory the user owns, with public data and (readable on the host) private answers."""
    with tempfile.TemporaryDirectory(prefix="podium-unpriv-") as tmp:
        root = Path(tmp)
        (root / "public").mkdir()
        (root / "public" / "train.csv").write_text("id,y\n1,0\n")
        (root / "private").mkdir()
        (root / "private" / "answers.csv").write_text("id,y\n1,SECRET\n")
        if os.getuid() == 0:
            subprocess.run(["chown", "-R", f"{USER}:", str(root)], check=True)
        yield root


def podium(user_venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = _as_user([str(user_venv / "bin" / "podium"), *args])
    return subprocess.run(argv, capture_output=True, text=True, timeout=180)


def sandbox_run(user_venv: Path, place: Path, code: str, *args: str) -> dict:
    (place / "solution.py").write_text(code)
    if os.getuid() == 0:
        subprocess.run(["chown", f"{USER}:", str(place / "solution.py")], check=True)
    result = podium(user_venv, "sandbox", "run", str(place / "solution.py"), "--workspace",
                    str(place / "ws"), "--input", str(place / "public"), "--json", "--timeout",
                    "20", *args)  # fmt: skip
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def test_check_as_an_ordinary_user_says_which_fallbacks_are_used(user_venv: Path) -> None:
    result = podium(user_venv, "sandbox", "check")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.splitlines()[-1] == "sandbox auto -> bwrap", out
    if os.getuid() == 0:  # the made-up user: certainly no cgroup of its own
        assert "--  cgroups     no writable cgroup" in out
        assert "by RSS watchdog (no cgroup)" in out
        assert "by RLIMIT_NPROC" in out


def test_an_ordinary_users_sandbox_still_isolates(user_venv: Path, place: Path) -> None:
    answers = place / "private" / "answers.csv"
    control = subprocess.run(_as_user(["cat", str(answers)]), capture_output=True, text=True)
    assert "SECRET" in control.stdout  # the user could read the answers outside the sandbox
    code = f"""
import os, socket
for attempt, action in [
    ("answers", lambda: open({str(answers)!r}).read()),
    ("etc", lambda: open("/etc/podium-attack", "w")),
    ("tcp", lambda: socket.create_connection(("127.0.0.1", 22), timeout=2)),
    ("host dir", lambda: os.listdir({str(place)!r})),
]:
    try:
        action()
        print(attempt, "WORKED")
    except OSError as exc:
        print(attempt, "refused", type(exc).__name__)
print("uid", os.getuid(), "input", os.listdir("input"))
"""
    data = sandbox_run(user_venv, place, code)
    assert data["status"] == "ok" and data["sandboxed"] is True, data
    assert "WORKED" not in data["output"], data["output"]
    assert "answers refused FileNotFoundError" in data["output"]
    assert "input ['train.csv']" in data["output"]


def test_an_ordinary_users_memory_limit_is_kept_by_the_watchdog(
    user_venv: Path, place: Path
) -> None:
    code = (
        "import time\nx = bytearray(900 * 2**20)\nx[::4096] = b'x' * len(x[::4096])\ntime.sleep(30)"
    )
    data = sandbox_run(user_venv, place, code, "--memory", "300M")
    assert data["status"] == "died", data
    assert "memory limit (300 MiB" in data["killed_reason"]
    assert data["duration_s"] < 15
