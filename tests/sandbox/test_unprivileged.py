"""The bwrap sandbox as an ordinary user: no root, no writable cgroup, Debian's own python3.

As root (CI), the test makes a user ``podium-tester`` with a venv on /usr/bin/python3 holding
Podium (``scripts/unprivileged-venv``) and runs ``podium sandbox ...`` as that user; run by an
ordinary user, it uses the current user and venv. Either way the limits fall back from cgroups
to an RSS watchdog and RLIMIT_NPROC, and the isolation must hold all the same.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import UNPRIVILEGED_USER, scaled

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


def sandbox_run(user_venv: Path, place: Path, code: str, *args: str) -> dict[str, Any]:
    (place / "solution.py").write_text(code)
    if os.getuid() == 0:
        subprocess.run(["chown", f"{USER}:", str(place / "solution.py")], check=True)
    result = podium(user_venv, "sandbox", "run", str(place / "solution.py"), "--workspace",
                    str(place / "ws"), "--input", str(place / "public"), "--json", "--timeout",
                    "20", *args)  # fmt: skip
    assert result.stdout, result.stderr
    return dict(json.loads(result.stdout))


def test_check_as_an_ordinary_user_says_which_fallbacks_are_used(user_venv: Path) -> None:
    result = podium(user_venv, "sandbox", "check")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.splitlines()[-1] == "sandbox auto -> bwrap", out
    for protection in ("unprivileged uid", "seccomp", "read-only /proc", "keyring"):
        assert any(line.startswith(f"ok  {protection} ") for line in out.splitlines()), out
    if os.getuid() == 0:  # the made-up user: certainly no cgroup of its own
        assert "--  cgroups          no writable cgroup" in out
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
    assert data["duration_s"] < scaled(15)


# The attacks of test_attacks.py that depend on who Podium is, again as an ordinary user: the
# kernels then have that user's uid (no other is possible), so the filter, the hand-over and the
# keyring must hold without root's help. One script runs them all through the library, as the
# user; the test judges the results on the host.
_AS_USER = r"""
import asyncio, ctypes, json, os, platform, sys
from pathlib import Path
from podium.interfaces import Limits, Workspace
from podium.sandbox import BwrapSandbox, SandboxOptions
root, answers, secret = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
ADD, _, KEYCTL = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(KEYCTL, 1, b"podium-test-session")
key = libc.syscall(ADD, b"user", b"podium-host-key", secret.encode(), len(secret), -3)
ATTACKS = {
    "sysctl": "open('/proc/sys/kernel/core_pattern', 'w').write('|/bin/false')",
    "setuid": "import shutil, os\nshutil.copy('/bin/sh', 'submission/submission.csv')\n"
              "os.chmod('submission/submission.csv', 0o4755)",
    "keyring": f"import ctypes\nbuf = ctypes.create_string_buffer(256)\n"
               f"got = ctypes.CDLL(None).syscall({KEYCTL}, 11, {key}, buf, 256)\n"
               "print('READ', got, buf.raw[:max(got, 0)])",
}
SWAP = '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
open('submission/submission.csv', 'w').write('mine')
os.symlink(ANSWERS, 'submission/link')
if os.fork() == 0:
    while True:
        libc.renameat2(-100, b'submission/submission.csv', -100, b'submission/link', 2)
'''.replace("ANSWERS", repr(answers))
async def main():
    box = BwrapSandbox(SandboxOptions(preimports=(), warm_pool=False))
    out = {"gaps": box.isolation_gaps()}
    for name, code in [*ATTACKS.items(), *((f"swap{i}", SWAP) for i in range(10))]:
        result = await box.execute(code, Workspace(root / name, Path(sys.argv[4])), Limits(30))
        out[name] = [result.error_line, result.output, result.submission_refused]
    await box.aclose()
    print(json.dumps(out))
asyncio.run(main())
"""


def test_an_ordinary_users_kernels_hold_against_the_host_attacks(
    user_venv: Path, place: Path
) -> None:
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    secret = "USER-KEY-SECRET-4242"
    answers = place / "private" / "answers.csv"
    argv = [str(user_venv / "bin" / "python"), "-c", _AS_USER, str(place / "ws"), str(answers),
            secret, str(place / "public")]  # fmt: skip
    proc = subprocess.run(_as_user(argv), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["gaps"] == [], got["gaps"]  # the filter and the rest: all there for a user too
    assert Path("/proc/sys/kernel/core_pattern").read_text() == core_pattern
    assert got["sysctl"][0].startswith(("OSError", "PermissionError")), got["sysctl"]
    assert got["setuid"][0].startswith("PermissionError"), got["setuid"]  # seccomp: EPERM
    for path in (place / "ws").rglob("*"):
        assert not path.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID), path
    assert secret not in got["keyring"][1] and "READ -1" in got["keyring"][1]
    for i in range(10):
        submission = place / "ws" / f"swap{i}" / "submission.csv"
        assert "SECRET" not in (got[f"swap{i}"][2] or "")
        assert not submission.exists() or submission.read_text() == "mine"
