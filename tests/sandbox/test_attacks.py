"""Attacks on the sandbox, each attempted for real by code running in a kernel.

Every test runs hostile code in ``BwrapSandbox`` and asserts the specific way it fails. Where the
attack is harmless to the host, the same code also runs under ``LocalSandbox`` (no isolation) as
a control, which shows that the attack works when nothing stops it, so a bwrap pass means
something. Attacks that would hurt the host (fork and thread bombs, memory, disk fill, writes to
/etc or the venv) run under bwrap only.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from podium.formats import Journal
from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import (
    BwrapSandbox,
    KernelSandbox,
    LocalSandbox,
    ResourceLimits,
    SandboxOptions,
    bwrap_problem,
    cgroups,
)
from podium.sandbox.bwrap import DISK_WATCH_EVERY_S
from podium.sandbox.trees import MAX_DEPTH
from tests.support import (
    REPO,
    TOY_TASK,
    cli_env,
    descendants,
    podium_cli,
    process_gone,
    processes,
    scaled,
)

_BWRAP_PROBLEM = bwrap_problem()
_CGROUPS = cgroups.detect()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_BWRAP_PROBLEM is not None, reason=f"no bwrap: {_BWRAP_PROBLEM}"),
]

# A root without a pids cgroup has no process limit at all (RLIMIT_NPROC exempts uid 0): a bomb
# would then hit the host, so those tests are skipped there.
needs_pids_cgroup = pytest.mark.skipif(
    _CGROUPS.pids is None and os.getuid() == 0,
    reason=f"no pids cgroup for root ({_CGROUPS.describe()}): a bomb would hit the host",
)

GRACE_S = 1.0
SLACK_S = 5.0  # scheduling on a slow, busy 2-core CI machine (``scaled`` where it is used)
# The deadline of an attack that something else must stop (a limit, the relay, its own end):
# never reached when the protection works, so generous (a loaded machine is slow, not wrong).
BACKSTOP_S = 120.0
MEMORY = 512 * 1024**2
PROCESSES = 64
WORKSPACE_BYTES = 100 * 1024**2
OPTIONS = SandboxOptions(
    preimports=(),
    warm_pool=False,
    interrupt_grace_s=GRACE_S,
    limits=ResourceLimits(
        memory_bytes=MEMORY, max_processes=PROCESSES, workspace_bytes=WORKSPACE_BYTES
    ),
)
EROFS = f"OSError {errno.EROFS}"
EACCES = f"PermissionError {errno.EACCES}"
ENOENT = f"FileNotFoundError {errno.ENOENT}"


# --- helpers -------------------------------------------------------------------------------


def make_sandbox(kind: str, options: SandboxOptions = OPTIONS) -> KernelSandbox:
    """``bwrap``: cold kernels; ``forked``: the same sandbox, its pool served by a kernel
    factory (each execution gets a forked kernel); ``local``: no isolation."""
    if kind == "forked":
        return BwrapSandbox(dataclasses.replace(options, warm_pool=True, fork=True))
    return BwrapSandbox(options) if kind == "bwrap" else LocalSandbox(options)


async def forked_pool(sandbox: KernelSandbox, ws: Workspace, kernels: int = 1) -> None:
    """Start the pool (and its factory) a forked sandbox executes from; nothing otherwise."""
    if isinstance(sandbox, BwrapSandbox) and sandbox.options.warm_pool:
        await sandbox.warm_up(ws.root.parent / ".pool", ws.input_dir, kernels)
        await sandbox.forking.settled()
        assert sandbox.forking.current is not None, sandbox.forking.problem


def run_all(
    kind: str,
    ws: Workspace,
    *codes: str,
    timeout_s: float = BACKSTOP_S,
    max_output_bytes: int = 65536,
    options: SandboxOptions = OPTIONS,
) -> list[ExecResult]:
    """Execute each code in turn on one sandbox object (a fresh kernel each); all the results."""

    async def go() -> list[ExecResult]:
        sandbox = make_sandbox(kind, options)
        try:
            await forked_pool(sandbox, ws)
            limits = Limits(timeout_s, max_output_bytes)
            return [await sandbox.execute(code, ws, limits) for code in codes]
        finally:
            await sandbox.aclose()

    return asyncio.run(go())


def with_limits(**changes: Any) -> SandboxOptions:
    return dataclasses.replace(OPTIONS, limits=dataclasses.replace(OPTIONS.limits, **changes))


def run(kind: str, ws: Workspace, code: str, timeout_s: float = BACKSTOP_S) -> ExecResult:
    return run_all(kind, ws, code, timeout_s=timeout_s)[0]


_ATTEMPT = """
import json
def attempt(action):
    try:
        return f"ok {action()}"
    except Exception as exc:
        return f"{type(exc).__name__} {getattr(exc, 'errno', None)}"
outcomes = {}
"""


def attack_code(setup: str = "", **attempts: str) -> str:
    """Code that tries each ``name=expression`` and prints how each went: ``ok <value>`` or
    ``<exception name> <errno>``, as JSON on an ``ATTACK`` line."""
    lines = [_ATTEMPT, setup]
    lines += [f"outcomes[{name!r}] = attempt(lambda: {expr})" for name, expr in attempts.items()]
    lines.append("print('ATTACK', json.dumps(outcomes))")
    return "\n".join(lines) + "\n"


def outcomes(result: ExecResult) -> dict[str, str]:
    assert result.status is ExecStatus.OK, result.output
    match = re.search(r"^ATTACK (.*)$", result.output, re.MULTILINE)
    assert match, result.output
    return dict(json.loads(match.group(1)))


def attack(kind: str, ws: Workspace, setup: str = "", **attempts: str) -> dict[str, str]:
    return outcomes(run(kind, ws, attack_code(setup, **attempts)))


def running(argv: list[str]) -> list[int]:
    return [pid for pid, (_, a) in processes().items() if a == argv and not process_gone(pid)]


def our_cgroups() -> set[Path]:
    """The per-kernel cgroups this test process created that still exist."""
    parents = {p for p in (_CGROUPS.memory, _CGROUPS.pids) if p is not None}
    return {group for parent in parents for group in parent.glob(f"podium-{os.getpid()}-*")}


def our_ipc_dirs() -> set[Path]:
    """The kernels' ipc directories this test process made that still exist."""
    return set(Path("/tmp").glob(f"podium-{os.getpid()}-*"))


def reset_peak_rss() -> None:
    """Make ru_maxrss start again from the current RSS (Linux >= 4.0), so growth shows."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


@dataclass
class Host:
    """The host side of a node: public data, private answers beside it, and other host files."""

    ws: Workspace
    answers: Path
    secret: str
    elsewhere: Path  # a host directory outside the workspace


@pytest.fixture
def host(tmp_path: Path) -> Host:
    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("id,y\n1,0\n")
    secret = f"SECRET-ANSWERS-{uuid.uuid4().hex}"
    private = tmp_path / "private"
    private.mkdir()
    (private / "answers.csv").write_text(f"id,y\n1,{secret}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ws = Workspace(root=tmp_path / "node", input_dir=public)
    return Host(ws, private / "answers.csv", secret, elsewhere)


@pytest.fixture(params=["bwrap", "forked", "local"])
def kind(request: pytest.FixtureRequest) -> str:
    """The sandbox under attack; ``local`` is the control: the attack works without isolation."""
    return str(request.param)


@pytest.fixture(params=["bwrap", "forked"])
def isolated(request: pytest.FixtureRequest) -> str:
    """The isolating sandbox under attack: cold kernels, or kernels forked from a factory."""
    return str(request.param)


# --- network -------------------------------------------------------------------------------


@pytest.fixture
def host_server() -> Iterator[tuple[int, list[bytes]]]:
    """A real TCP server on the host's 127.0.0.1 that answers ``pong``: (port, what it got)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                received.append(conn.recv(64))
                conn.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join(5)
    server.close()


def test_tcp_to_a_server_on_the_host_loopback(
    kind: str, host: Host, host_server: tuple[int, list[bytes]]
) -> None:
    port, received = host_server
    setup = (
        "import socket\n"
        "def talk():\n"
        f"    with socket.create_connection(('127.0.0.1', {port}), timeout=3) as s:\n"
        "        s.sendall(b'ping')\n"
        "        return s.recv(4).decode()\n"
    )
    got = attack(kind, host.ws, setup, tcp="talk()")
    if kind != "local":  # its own network namespace: a loopback with nothing listening
        assert got["tcp"] == f"ConnectionRefusedError {errno.ECONNREFUSED}"
        assert received == []
    else:
        assert got["tcp"] == "ok pong"
        assert received == [b"ping"]


def test_no_name_resolution_and_no_route_out(isolated: str, host: Host) -> None:
    # No control: whether the host itself reaches the internet depends on the machine.
    got = attack(
        isolated,
        host.ws,
        "import socket",
        dns="socket.getaddrinfo('pypi.org', 443)",
        external="socket.create_connection(('1.1.1.1', 53), timeout=3)",
    )
    assert got["dns"].startswith("gaierror "), got
    assert got["external"] == f"OSError {errno.ENETUNREACH}"


# --- files ---------------------------------------------------------------------------------


def test_reading_host_files(kind: str, host: Host) -> None:
    note = host.elsewhere / "notes.txt"
    note.write_text("host-only note")
    paths = {
        "answers": str(host.answers),
        "proc_1_root": f"/proc/1/root{host.answers}",
        "proc_self_root": f"/proc/self/root{host.answers}",
        "host_file": str(note),
    }
    got = attack(kind, host.ws, **{name: f"open({p!r}).read()" for name, p in paths.items()})
    expected_answers = f"ok {host.answers.read_text()}"
    if kind != "local":
        # pid 1 is bwrap's init: not even its root is reachable when it runs as another uid.
        assert got.pop("proc_1_root") in (ENOENT, EACCES)
        assert got == dict.fromkeys(set(paths) - {"proc_1_root"}, ENOENT)
        return
    assert got["answers"] == expected_answers
    assert got["proc_self_root"] == expected_answers
    assert got["host_file"] == "ok host-only note"
    try:  # pid 1 may live in another mount namespace than the tests do
        visible = Path(paths["proc_1_root"]).read_text() == host.answers.read_text()
    except OSError:
        visible = False
    if visible:
        assert got["proc_1_root"] == expected_answers


def test_the_answers_are_nowhere_in_the_sandbox(isolated: str, host: Host) -> None:
    answers = str(host.answers)
    code = (
        "import os, subprocess\n"
        f"print(subprocess.run(['cat', {answers!r}], capture_output=True, text=True))\n"
        "found = []\n"
        "for top, dirs, files in os.walk('/'):\n"
        "    if top == '/':\n"
        "        dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev', 'usr')]\n"
        "    found += [os.path.join(top, f) for f in files if f == 'answers.csv']\n"
        "print('FOUND', found)\n"
    )
    result = run(isolated, host.ws, code)
    assert result.status is ExecStatus.OK, result.output
    assert host.secret not in result.output
    assert "No such file or directory" in result.output
    assert "FOUND []\n" in result.output


def test_writing_system_directories_is_refused(isolated: str, host: Host) -> None:
    # No control: under ``local`` these writes would really land in the host's /etc and venv.
    name = f"podium-attack-{uuid.uuid4().hex}"
    targets = {
        "etc": f"/etc/{name}",
        "usr": f"/usr/local/{name}",
        "repo": str(REPO / name),
    }
    attempts = {key: f"open({path!r}, 'w').write('pwned')" for key, path in targets.items()}
    attempts["venv"] = f"open(os.path.join(sys.prefix, {name!r}), 'w').write('pwned')"
    # A .pth file in site-packages would run in every later kernel.
    attempts["site_packages"] = (
        f"open(os.path.join(sysconfig.get_paths()['purelib'], {name + '.pth'!r}), 'w')"
        ".write('import os')"
    )
    site = Path(sysconfig.get_paths()["purelib"], f"{name}.pth")
    try:
        got = attack(isolated, host.ws, "import os, sys, sysconfig", **attempts)
    finally:
        candidates = [*targets.values(), f"{sys.prefix}/{name}", str(site)]
        leaked = [p for p in candidates if Path(p).exists()]
        for path in leaked:
            Path(path).unlink()
    assert not leaked
    for key in ("etc", "usr", "venv", "site_packages"):
        assert got[key] in (EROFS, EACCES), (key, got)
    # The repo holds the venv, so its directory exists inside, on the read-only root; a clone
    # under /tmp (CI's) is shadowed by the private /tmp, where the write lands (not leaked above).
    allowed = (
        (EROFS, EACCES, ENOENT, "ok 5") if REPO.is_relative_to("/tmp") else (EROFS, EACCES, ENOENT)
    )
    assert got["repo"] in allowed, got


def test_writing_the_host_tmp(kind: str, host: Host) -> None:
    target = Path(f"/tmp/podium-attack-{uuid.uuid4().hex}")
    try:
        got = attack(
            kind,
            host.ws,
            write=f"open({str(target)!r}, 'w').write('pwned')",
            read_back=f"open({str(target)!r}).read()",
        )
        if kind != "local":  # the write works, into the kernel's private /tmp
            assert got == {"write": "ok 5", "read_back": "ok pwned"}
            assert not target.exists()
        else:
            assert got["write"] == "ok 5"
            assert target.read_text() == "pwned"
    finally:
        target.unlink(missing_ok=True)


def test_writing_outside_the_workspace(kind: str, host: Host) -> None:
    target = host.elsewhere / "pwned.txt"
    got = attack(kind, host.ws, write=f"open({str(target)!r}, 'w').write('pwned')")
    if kind != "local":
        assert got["write"] in (ENOENT, EROFS, EACCES)
        assert not target.exists()
    else:
        assert got["write"] == "ok 5"
        assert target.read_text() == "pwned"


# --- secrets -------------------------------------------------------------------------------


def test_host_secrets_stay_on_the_host(
    kind: str, host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "OPENAI_API_KEY": f"sk-openai-{uuid.uuid4().hex}",
        "ANTHROPIC_API_KEY": f"sk-ant-{uuid.uuid4().hex}",
        "HF_TOKEN": f"hf_{uuid.uuid4().hex}",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    result = run(
        kind,
        host.ws,
        attack_code(
            "import os\nprint('ENV', dict(os.environ))",
            host_environ=f"b'PATH=' in open('/proc/{os.getpid()}/environ', 'rb').read()",
        ),
    )
    got = outcomes(result)
    for name, value in secrets.items():
        assert name not in result.output
        assert value not in result.output
    # The host process's environment through /proc: invisible in bwrap's pid namespace. (Its
    # /proc/PID/environ shows the environment it started with, without monkeypatch's secrets,
    # so the control shows only that it is readable.)
    assert got["host_environ"] == (ENOENT if kind != "local" else "ok True")


# --- processes -----------------------------------------------------------------------------


def test_signalling_a_host_process(kind: str, host: Host) -> None:
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        got = attack(kind, host.ws, "import os", kill=f"os.kill({sleeper.pid}, 9)")
        if kind != "local":  # the host's pids do not exist in its pid namespace
            assert got["kill"] == f"ProcessLookupError {errno.ESRCH}"
            time.sleep(0.2)
            assert sleeper.poll() is None
        else:
            assert got["kill"] == "ok None"
            assert sleeper.wait(timeout=60) == -signal.SIGKILL
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


@needs_pids_cgroup
def test_a_fork_bomb_is_stopped_and_cleaned_up(isolated: str, host: Host) -> None:
    # bwrap only: under ``local`` this would take the host down.
    before = our_cgroups()
    code = "import os\nwhile True:\n    os.fork()\n"
    bomb, after = run_all(isolated, host.ws, code, "print('still here')")
    assert bomb.status in (ExecStatus.ERROR, ExecStatus.DIED), bomb.output
    if bomb.status is ExecStatus.ERROR:
        assert bomb.error_name == "BlockingIOError", bomb.output
    else:  # the forked kernels' copies can pass the memory limit before forks are refused
        assert bomb.killed_reason is not None
        assert re.search(r"memory limit|process limit", bomb.killed_reason), bomb.killed_reason
    assert not bomb.timed_out  # stopped by a limit, not by its deadline
    assert after.status is ExecStatus.OK, after.output
    assert after.output == "still here\n"
    # A kernel's cgroup can only be removed once no process is left in it.
    assert our_cgroups() <= before


@needs_pids_cgroup
def test_forking_stops_at_the_process_limit(isolated: str, host: Host) -> None:
    code = (
        "import os, time\n"
        "children = 0\n"
        "try:\n"
        "    while children < 1000:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "except OSError as exc:\n"
        "    print('REFUSED', children, type(exc).__name__)\n"
    )
    result = run(isolated, host.ws, code)
    assert result.status is ExecStatus.OK, result.output
    match = re.search(r"^REFUSED (\d+) BlockingIOError$", result.output, re.MULTILINE)
    assert match, result.output
    assert 0 < int(match.group(1)) < PROCESSES


@needs_pids_cgroup
def test_a_thread_bomb_is_stopped(isolated: str, host: Host) -> None:
    # bwrap only: under ``local`` this would exhaust the host's threads.
    code = (
        "import threading, time\n"
        "while True:\n"
        "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    )
    bomb, after = run_all(isolated, host.ws, code, "print('still here')")
    assert bomb.status is ExecStatus.ERROR, bomb.output
    assert bomb.error_name == "RuntimeError"
    assert bomb.error_value == "can't start new thread"
    assert bomb.killed_reason == f"process limit ({PROCESSES}) reached"
    assert after.status is ExecStatus.OK, after.output


# --- resources -----------------------------------------------------------------------------


def test_memory_past_the_limit_kills_only_that_kernel(isolated: str, host: Host) -> None:
    # bwrap only: under ``local`` this would take 2 GiB of the host's memory.
    code = "import time\nhog = b'x' * (2 * 1024**3)\nprint('allocated')\ntime.sleep(30)\n"
    timeout = BACKSTOP_S
    hog, after = run_all(isolated, host.ws, code, "print('still here')", timeout_s=timeout)
    assert hog.status is ExecStatus.DIED, hog.output
    assert hog.killed_reason is not None
    assert "memory limit" in hog.killed_reason
    assert not hog.timed_out
    assert hog.duration_s < timeout
    assert hog.peak_memory_bytes is not None
    if _CGROUPS.memory is not None:  # killed by the cgroup before the allocation completes
        assert hog.killed_reason == "memory limit (512 MiB) exceeded"
        assert hog.error_name == "MemoryLimitExceeded"
        assert "allocated" not in hog.output
        assert hog.peak_memory_bytes <= MEMORY
    assert after.status is ExecStatus.OK, after.output
    assert after.output == "still here\n"


@pytest.mark.parametrize(
    ("code", "many_files"),
    [
        pytest.param(
            "with open('working/fill', 'wb') as f:\n"
            "    while True:\n"
            "        f.write(b'\\1' * 1024**2)\n",
            False,
            id="one-file",
        ),
        pytest.param(
            "import itertools\n"
            "for i in itertools.count():\n"
            "    with open(f'working/fill-{i}', 'wb') as f:\n"
            "        for _ in range(4):\n"
            "            f.write(b'\\1' * 1024**2)\n",
            True,
            id="many-files",
        ),
    ],
)
def test_filling_the_disk_is_stopped(
    isolated: str, host: Host, code: str, many_files: bool
) -> None:
    # bwrap only: under ``local`` nothing would stop it before the host's disk is full.
    result = run(isolated, host.ws, code)  # the slot is discarded after
    assert result.failed
    assert not result.timed_out
    if result.status is ExecStatus.ERROR:  # RLIMIT_FSIZE on one file
        assert result.error_name == "OSError", result.output
        assert result.error_value == "[Errno 27] File too large"
    else:  # the workspace watchdog
        assert result.status is ExecStatus.DIED
        assert result.killed_reason == "workspace size limit (100 MiB)"
    if many_files:  # each file stays under RLIMIT_FSIZE: only the watchdog can stop this
        assert result.status is ExecStatus.DIED, result.output
    # The watchdog looks once a second: stopped within a few looks. (A fast disk gets well
    # past the limit meanwhile: 0.4-2 GiB were written here against 100 MiB.)
    assert result.duration_s < scaled(2 * DISK_WATCH_EVERY_S + SLACK_S)


def test_a_huge_print_kills_the_kernel_without_host_memory(isolated: str, host: Host) -> None:
    reset_peak_rss()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run(isolated, host.ws, "print('x' * 10**8)")
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    assert result.status is ExecStatus.DIED, result.output[:500]
    assert result.killed_reason is not None
    assert result.killed_reason.startswith("output limit"), result.killed_reason
    assert len(result.output) < 65536 + 200
    assert grown < 40 * 1024**2, f"the host grew by {grown / 1024**2:.0f} MiB"


@pytest.mark.parametrize(
    ("code", "must_be_killed"),
    [
        pytest.param("while True:\n    pass\n", False, id="busy-loop"),
        pytest.param(
            "import signal, time\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "while True:\n"
            "    time.sleep(0.05)\n",
            True,
            id="ignores-sigint",
        ),
        pytest.param(  # catastrophic backtracking in C: holds the GIL, no handler runs here
            "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')\n", False, id="regex-holds-the-gil"
        ),
    ],
)
def test_code_that_never_ends_times_out(
    isolated: str, host: Host, code: str, must_be_killed: bool
) -> None:
    timeout = 2.0
    t0 = time.perf_counter()
    started = "import time\nprint('started', flush=True)\ntime.sleep(0.3)\n"
    result = run(isolated, host.ws, started + code, timeout_s=timeout)
    wall = time.perf_counter() - t0
    assert result.status is ExecStatus.TIMEOUT, result.output
    assert result.timed_out
    assert result.error_name == "TimeoutError"
    assert result.killed_reason is not None
    assert result.killed_reason.startswith("timeout")
    if must_be_killed:
        assert result.killed_reason == "timeout (the kernel ignored the interrupt and was killed)"
    assert "started" in result.output
    assert timeout <= result.duration_s < timeout + GRACE_S + scaled(SLACK_S)
    assert wall < timeout + GRACE_S + scaled(2 * SLACK_S)


# --- crashes -------------------------------------------------------------------------------


def test_an_exiting_kernel_is_detected_promptly(isolated: str, host: Host) -> None:
    code = "import os\nprint('about to exit', flush=True)\nos._exit(3)\n"
    result = run(isolated, host.ws, code)
    assert result.status is ExecStatus.DIED
    assert result.killed_reason == "kernel died (exit status 3)"
    assert not result.timed_out
    assert result.duration_s < scaled(3.0)


def test_a_segfault_does_not_affect_the_next_execution(isolated: str, host: Host) -> None:
    crash, after = run_all(
        isolated, host.ws, "import ctypes\nctypes.string_at(0)\n", "print(6 * 7)"
    )
    assert crash.status is ExecStatus.DIED
    assert crash.killed_reason == "kernel died (signal SIGSEGV)"
    assert "KernelDied" in crash.output
    assert after.status is ExecStatus.OK, after.output
    assert after.output == "42\n"


def _big_print_then_exit(pause_s: float) -> str:
    """30 MB of output (under the 32 MiB message cap), a pause, then exit status 3."""
    return (
        "import os, sys, time\n"
        "sys.stdout.write('x' * (30 * 10**6))\n"
        "sys.stdout.flush()\n"
        f"time.sleep({pause_s})\n"
        "os._exit(3)\n"
    )


def test_a_crash_is_reported_as_a_crash_not_as_the_output_limit(isolated: str, host: Host) -> None:
    # A dying kernel drops its iopub connection just as one whose message was refused does. A
    # race, so several tries: the pause before the exit lands the death while the host is still
    # reading the 30 MB message on machines 3x faster or slower than this one (0.04-0.16 s
    # here), and a plain print-then-crash was misreported ~20% of the time before the fix.
    pauses = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32)
    crashes = {
        "import os\nprint('about to exit', flush=True)\nos._exit(3)\n": "exit status 3",
        "import ctypes\nprint('about to crash', flush=True)\nctypes.string_at(0)\n": (
            "signal SIGSEGV"
        ),
    }
    tries = [(_big_print_then_exit(p), "exit status 3") for p in pauses]
    tries += [*crashes.items(), *crashes.items()]
    results = run_all(isolated, host.ws, *(code for code, _ in tries), timeout_s=30.0)
    assert [r.status for r in results] == [ExecStatus.DIED] * len(tries)
    assert [r.killed_reason for r in results] == [f"kernel died ({why})" for _, why in tries]


# --- the host process is killed ------------------------------------------------------------

_OUTER = """
import asyncio, sys
from pathlib import Path
from podium.interfaces import Limits, Workspace
from podium.sandbox import BwrapSandbox, LocalSandbox, ResourceLimits, SandboxOptions

kind, root, public, code = sys.argv[1:]
options = SandboxOptions(preimports=(), warm_pool=kind == "forked",
                         limits=ResourceLimits(max_processes=64))
sandbox = BwrapSandbox(options) if kind != "local" else LocalSandbox(options)
async def main():
    if kind == "forked":
        await sandbox.warm_up(Path(root).parent / ".pool", Path(public), 1)
    await sandbox.execute(code, Workspace(Path(root), Path(public)), Limits(timeout_s=300))
asyncio.run(main())
"""


def _wait_for(condition: Callable[[], object], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def _clean_up_after(outer_pid: int, tree: dict[int, list[str]]) -> None:
    """What a SIGKILLed Podium leaves behind: the ipc directory and the (empty) cgroups."""
    for argv in tree.values():
        for arg in argv:
            if arg.endswith("/kernel.json") and Path(arg).parent.name.startswith("podium-"):
                shutil.rmtree(Path(arg).parent, ignore_errors=True)
    for parent in {p for p in (_CGROUPS.memory, _CGROUPS.pids) if p is not None}:
        for group in parent.glob(f"podium-{outer_pid}-*"):
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


def test_killing_the_host_process_leaves_nothing_running(
    kind: str, host: Host, tmp_path: Path
) -> None:
    marker = f"{4242 + os.getpid() % 1000}.{uuid.uuid4().int % 10**9}"
    code = (
        "import subprocess, time\n"
        f"subprocess.Popen(['setsid', 'sleep', {marker!r}])\n"
        "while True:\n"
        "    time.sleep(1)\n"
    )
    log = tmp_path / "outer.log"
    with log.open("w") as err:
        outer = subprocess.Popen(
            [sys.executable, "-c", _OUTER, kind, str(host.ws.root), str(host.ws.input_dir), code],
            cwd=REPO,
            env=cli_env(),
            stdout=err,
            stderr=err,
        )
    tree: dict[int, list[str]] = {}
    try:
        started = _wait_for(lambda: running(["sleep", marker]) or outer.poll() is not None, 60)
        assert started and outer.poll() is None, log.read_text()
        tree = descendants(outer.pid)
        kernel = "zygote.py" if kind == "forked" else "ipykernel_launcher"
        assert any(any(kernel in arg for arg in argv) for argv in tree.values()), tree
        assert any(argv == ["sleep", marker] for argv in tree.values()), tree
        outer.kill()
        outer.wait()
        kernels = [pid for pid, argv in tree.items() if argv != ["sleep", marker]]
        assert _wait_for(lambda: all(process_gone(pid) for pid in kernels), 60), {
            pid: tree[pid] for pid in kernels if not process_gone(pid)
        }
        if kind != "local":  # the pid namespace dies with the kernel, setsid or not
            assert _wait_for(lambda: not running(["sleep", marker]), 60)
        else:  # control: without a pid namespace the detached child outlives everything
            time.sleep(0.5)
            assert running(["sleep", marker])
    finally:
        if outer.poll() is None:
            outer.kill()
            outer.wait()
        for pid in running(["sleep", marker]):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _clean_up_after(outer.pid, tree)


# --- the host itself: sysctls, setuid files, keyrings --------------------------------------

# What a solution running as host root could change for the whole machine. All read back on the
# host: the sandbox's own view of them proves nothing.
HOST_SYSCTLS = ("kernel/core_pattern", "kernel/core_uses_pid", "vm/overcommit_memory")
EPERM = f"PermissionError {errno.EPERM}"


def _host_path_of_workspace() -> str:
    """Sandbox-side code: where /workspace is on the host, from /proc/self/mountinfo (the
    mount's root within its filesystem: the host path when it is the root filesystem)."""
    return (
        "def host_workspace():\n"
        "    for line in open('/proc/self/mountinfo'):\n"
        "        fields = line.split()\n"
        "        if fields[4] == '/workspace':\n"
        "            return fields[3]\n"
    )


def test_host_sysctls_stay_untouched_and_a_core_pattern_helper_never_runs(
    isolated: str, host: Host
) -> None:
    # bwrap only: without isolation, as root, this would really reconfigure the host.
    before = {name: Path("/proc/sys", name).read_text() for name in HOST_SYSCTLS}
    ran = host.elsewhere / "the-helper-ran"
    stolen = host.elsewhere / "stolen-answers"
    helper = f"#!/bin/sh\ntouch {ran}\ncat {host.answers} > {stolen}\n"
    setup = (
        "import os, signal\n"
        + _host_path_of_workspace()
        + f"open('working/h.sh', 'w').write({helper!r})\n"
        "os.chmod('working/h.sh', 0o755)\n"
        "pattern = '|' + host_workspace() + '/working/h.sh'\n"
        "def write(name, value):\n"
        "    with open('/proc/sys/' + name, 'w') as f:\n"
        "        f.write(value)\n"
        "def crash():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.abort()\n"
        "    return os.waitpid(pid, 0)[1] & 0x7f\n"
    )
    attempts = {"core_pattern": "write('kernel/core_pattern', pattern)",
                "core_uses_pid": "write('kernel/core_uses_pid', '0')",
                "overcommit": "write('vm/overcommit_memory', '2')",
                "crash": "crash()"}  # fmt: skip
    try:
        got = attack(isolated, host.ws, setup, **attempts)
    finally:  # had it worked, the host must not stay broken
        for name, value in before.items():
            if Path("/proc/sys", name).read_text() != value:
                Path("/proc/sys", name).write_text(value)
    assert {k: v for k, v in got.items() if k != "crash"} == {
        "core_pattern": got["core_pattern"], "core_uses_pid": got["core_pattern"],
        "overcommit": got["core_pattern"]}  # fmt: skip
    assert got["core_pattern"] in (EROFS, EACCES), got
    assert got["crash"] == f"ok {signal.SIGABRT}"  # the crash did happen...
    assert {name: Path("/proc/sys", name).read_text() for name in HOST_SYSCTLS} == before
    time.sleep(0.5)  # ...and a helper, had one been started, would have run by now
    assert not ran.exists() and not stolen.exists()


def _setuid_files(root: Path) -> list[str]:
    found = []
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
            found.append(str(path.relative_to(root)))
    return found


def test_no_file_with_a_setuid_bit_ever_leaves_the_sandbox(kind: str, host: Host) -> None:
    setup = (
        "import os, shutil\n"
        "shutil.copy('/bin/sh', 'submission/submission.csv')\n"
        "shutil.copy('/bin/sh', 'working/sh')\n"
        "os.mkdir('working/dir')\n"
        "def creat(path):\n"
        "    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o6755))\n"
        "    return oct(os.stat(path).st_mode)\n"
        "def fchmod(path):\n"
        "    fd = os.open(path, os.O_RDONLY)\n"
        "    os.fchmod(fd, 0o4755)\n"
    )
    attempts = {
        "chmod": "os.chmod('submission/submission.csv', 0o4755)",
        "chmod_working": "os.chmod('working/sh', 0o6755)",
        "setgid_dir": "os.chmod('working/dir', 0o2775)",
        "fchmod": "fchmod('working/sh')",
        "creat": "creat('working/created')",
        "mknod": "os.mknod('working/node', stat.S_IFREG | 0o4755)",
    }
    ws = Workspace(host.ws.root, host.ws.input_dir, keep_working=True)
    got = attack(kind, ws, setup + "import stat\n", **attempts)
    if kind != "local":  # the seccomp filter refuses every way of setting the bits
        assert set(got.values()) == {EPERM}, got
    else:  # control: nothing refuses them (the mode of 'creat' is the umask's, not a refusal)
        assert got["chmod"] == "ok None" and got["chmod_working"] == "ok None", got
    # Whatever happened inside, what reaches the host never carries the bits.
    assert _setuid_files(ws.root) == []
    assert (ws.root / "submission.csv").read_bytes() == Path("/bin/sh").read_bytes()
    assert stat.S_IMODE((ws.root / "submission.csv").stat().st_mode) == 0o644


KEYCTL = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}  # add_key, request_key, keyctl
_KEYS = """
import ctypes, json, os
ADD, REQUEST, KEYCTL = {numbers}
libc = ctypes.CDLL(None, use_errno=True)
def call(*args):
    got = libc.syscall(*args)
    return got if got >= 0 else os.strerror(ctypes.get_errno())
def read(key):
    buf = ctypes.create_string_buffer(256)
    got = libc.syscall(KEYCTL, 11, key, buf, 256)  # KEYCTL_READ
    return buf.raw[:got].decode(errors="replace") if got >= 0 else os.strerror(ctypes.get_errno())
seen = {{}}
for name in ({names}):
    key = call(REQUEST, b"user", name.encode(), None, 0)
    seen[name] = read(key) if isinstance(key, int) else key
seen["listed"] = open("/proc/keys").read() if os.path.exists("/proc/keys") else ""
mark = b"MARK-{mark}"
seen["added"] = [call(ADD, b"user", b"podium-left-by-a-kernel", mark, len(mark), ring)
                 for ring in (-3, -4)]  # its session keyring, and its uid's user keyring
print("KEYS " + json.dumps(seen))
"""
_KEY_HOST = """
import asyncio, ctypes, json, sys
from pathlib import Path
from podium.interfaces import Limits, Workspace
from podium.sandbox import BwrapSandbox, LocalSandbox, SandboxOptions
kind, root, public, secret, first, second = sys.argv[1:]
ADD, _, KEYCTL = {numbers}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(KEYCTL, 1, b"podium-test-session")  # like a session started by keyctl or PAM
assert libc.syscall(ADD, b"user", b"podium-host-key", secret.encode(), len(secret), -3) > 0
async def main():
    box = (BwrapSandbox if kind != "local" else LocalSandbox)(
        SandboxOptions(preimports=(), warm_pool=kind == "forked"))
    if kind == "forked":
        await box.warm_up(Path(root, "pool"), Path(public), 1)
    outputs = []
    for n, code in enumerate((first, second)):
        ws = Workspace(Path(root, str(n)), Path(public))
        outputs.append((await box.execute(code, ws, Limits(60))).output)
    await box.aclose()
    print(json.dumps(outputs))
asyncio.run(main())
"""


@pytest.mark.skipif(platform.machine() not in KEYCTL, reason="keyctl numbers for x86_64/aarch64")
def test_no_key_of_the_host_reaches_a_kernel_and_none_passes_between_kernels(
    kind: str, host: Host, tmp_path: Path
) -> None:
    numbers = KEYCTL[platform.machine()]
    secret, mark = f"HOST-KEY-{uuid.uuid4().hex}", uuid.uuid4().hex
    first = _KEYS.format(numbers=numbers, names="'podium-host-key',", mark=mark)
    second = _KEYS.format(numbers=numbers, names="'podium-left-by-a-kernel',", mark="x")
    script = _KEY_HOST.format(numbers=numbers)
    proc = subprocess.run(
        [sys.executable, "-c", script, kind, str(tmp_path / "ws"), str(host.ws.input_dir),
         secret, first, second],
        capture_output=True, text=True, timeout=180, cwd=REPO, env=cli_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    a_output, b_output = json.loads(proc.stdout.splitlines()[-1])
    a = json.loads(re.findall(r"^KEYS (.*)$", a_output, re.MULTILINE)[0])
    b = json.loads(re.findall(r"^KEYS (.*)$", b_output, re.MULTILINE)[0])
    if kind == "local":  # control: an unisolated kernel shares the session and reads the key
        assert a["podium-host-key"] == secret
        return
    assert secret not in a_output and "podium-host-key" not in a["listed"]
    assert a["podium-host-key"] == "Operation not permitted"  # keyctl is denied outright
    assert a["added"] == ["Operation not permitted"] * 2
    assert f"MARK-{mark}" not in b_output and "podium-left-by-a-kernel" not in b["listed"]


# --- the host's disk and memory --------------------------------------------------------------

_IPC_DIR = (
    "import os, sys\n"
    "ipc = os.path.dirname(sys.argv[sys.argv.index('-f') + 1])\n"  # the kernel's connection file
    "print('IPC', ipc, flush=True)\n"
)


def test_filling_the_ipc_directory_counts_against_the_workspace(isolated: str, host: Host) -> None:
    # The ipc directory is on the host's disk, outside the slot: a watchdog counting only the
    # slot let 1.5 GiB through against a 100 MiB limit.
    code = _IPC_DIR + (
        "import itertools\n"
        "for i in itertools.count():\n"
        "    with open(f'{ipc}/fill-{i}', 'wb') as f:\n"
        "        f.write(b'\\1' * 4 * 1024**2)\n"
    )
    result = run(isolated, host.ws, code)
    assert result.status is ExecStatus.DIED, result.output
    assert result.killed_reason == "workspace size limit (100 MiB)"
    assert result.duration_s < scaled(2 * DISK_WATCH_EVERY_S + SLACK_S)
    ipc = re.search(r"^IPC (\S+)$", result.output, re.MULTILINE)
    assert ipc, result.output
    assert not Path(ipc.group(1)).exists()  # removed with the kernel, on the host


@pytest.mark.parametrize("where", ["workspace", "ipc"])
def test_creating_entries_past_the_file_limit_is_stopped(
    isolated: str, host: Host, where: str
) -> None:
    # Directories and empty files take no blocks but do take inodes (and clean-up time).
    base = "ipc" if where == "ipc" else "'working'"
    code = _IPC_DIR + (
        "import itertools\n"
        f"base = {base}\n"
        "for i in itertools.count():\n"
        "    os.mkdir(f'{base}/d{i}')\n"
        "    open(f'{base}/d{i}/a', 'w').close()\n"
        "    open(f'{base}/d{i}/b', 'w').close()\n"
    )
    options = with_limits(max_files=2_000)
    result = run_all(isolated, host.ws, code, options=options)[0]
    assert result.status is ExecStatus.DIED, result.output
    assert result.killed_reason == "file count limit (2000 files and directories)"
    assert result.duration_s < scaled(30.0)


def test_cleaning_up_a_huge_tree_never_blocks_the_event_loop(isolated: str, host: Host) -> None:
    # 150k entries took 34 s to remove on the event loop; now it happens beside it. (Hard
    # links: entries to remove like any others, but quick to make on a slow disk.)
    code = (
        "import os\n"
        "for i in range(100):\n"
        "    os.mkdir(f'working/d{i}')\n"
        "    open(f'working/d{i}/0', 'w').close()\n"
        "    for j in range(1, 1000):\n"
        "        os.link(f'working/d{i}/0', f'working/d{i}/{j}')\n"
        "print('made', sum(len(files) for _, _, files in os.walk('working')))\n"
    )

    async def go() -> tuple[ExecResult, float]:
        gaps: list[float] = []
        stop = asyncio.Event()

        async def tick() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(tick())
        sandbox = make_sandbox(isolated, with_limits(max_files=200_000))
        try:
            result = await sandbox.execute(code, host.ws, Limits(120.0))
            await sandbox.settle()  # the slot's removal included
        finally:
            await sandbox.aclose()
            stop.set()
            await ticker
        return result, max(gaps)

    result, worst = asyncio.run(go())
    assert result.status is ExecStatus.OK, result.output
    assert "made 100000" in result.output
    assert worst < scaled(2.0), f"the event loop stalled for {worst:.1f} s"
    assert not any(host.ws.root.rglob("d99"))


# The kernel's own session (it holds the key) sends what the attack wants, on each channel.
_FLOOD_SETUP = (
    "import time\n"
    "k = get_ipython().kernel\n"
    "ident = k._parent_ident['shell']\n"
    "big = b'x' * (8 * 1024**2)\n"
)
FLOODS = {
    # One display_data of 24 frames of 8 MiB: each frame under the old per-frame cap.
    "iopub-frames": "print('sent', flush=True)\nk.session.send(k.iopub_socket, 'display_data', "
    "{'data': {}}, parent=k.get_parent(), buffers=[big] * 24)\ntime.sleep(30)\n",
    # Many messages, each under the cap: bounded only by how many the host queues (the host
    # reads them all, at its pace, before the execution can end).
    "iopub-messages": "for _ in range(150):\n"
    "    k.session.send(k.iopub_socket, 'display_data', {'data': {}}, parent=k.get_parent(),"
    " buffers=[big[: 6 * 1024**2]])\nprint('sent', flush=True)\n",
    # One 192 MiB reply on the shell channel (the execute_reply's payload).
    "shell": "get_ipython().payload_manager.write_payload({'source': 'page', 'data': "
    "{'text/plain': 'x' * (192 * 1024**2)}})\nprint('sent', flush=True)\n",
    # One 192 MiB input_request on the stdin channel.
    "stdin": "print('sent', flush=True)\nk._input_request('x' * (192 * 1024**2), ident, "
    "k.get_parent('shell'), password=False)\n",
    # One 192 MiB reply on the control channel, to the interrupt sent at the deadline.
    "control": "def reply(stream, ident, parent):\n"
    "    k.session.send(stream, 'interrupt_reply', {}, parent, ident=ident, buffers=[big] * 24)\n"
    "k.control_handlers['interrupt_request'] = reply\n"
    "print('sent', flush=True)\ntime.sleep(30)\n",
}
MESSAGE_CAP = 16 * 1024**2
DEADLINE_FLOODS = ("control",)  # sent in answer to the interrupt at the deadline


@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_a_flood_on_any_channel_keeps_the_host_memory_bounded(
    isolated: str, host: Host, flood: str
) -> None:
    options = with_limits(max_message_bytes=MESSAGE_CAP, memory_bytes=2 * 1024**3)
    reset_peak_rss()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = _FLOOD_SETUP + FLOODS[flood]
    # The control flood needs its deadline; the relay stops the others (or they end) before it.
    timeout_s = scaled(3.0) if flood in DEADLINE_FLOODS else BACKSTOP_S
    result = run_all(isolated, host.ws, code, timeout_s=timeout_s, options=options)[0]
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    assert "sent" in result.output, result.output  # the attack really ran
    assert grown < 100 * 1024**2, f"the host grew by {grown / 1024**2:.0f} MiB"
    if flood != "iopub-messages":  # one message over the cap: refused, and the kernel killed
        assert result.killed_reason == (
            f"output limit: one message of more than {MESSAGE_CAP} bytes"
        ), result.killed_reason


# --- the kernel's own directory, and trees too deep to walk ----------------------------------

_KERNEL_DIR = (
    "import os, socket, time\n"
    "import sys\n"
    "kdir = os.path.dirname(sys.argv[sys.argv.index('-f') + 1])\n"
    "names = sorted(n for n in os.listdir(kdir) if n.startswith('k-'))\n"
)
# Each socket becomes a link (to a host socket, or back to the relay's own), then the kernel
# cuts its accepted connections so that Podium's libzmq reconnects through the links.
_RELINK = (
    _KERNEL_DIR
    + """
print('relinking', flush=True)
time.sleep(0.5)
for n in names:
    os.unlink(os.path.join(kdir, n))
    os.symlink({target!r}.format(n=n), os.path.join(kdir, n))
paths = [os.path.join(kdir, n) for n in names]
for fd in os.listdir('/proc/self/fd'):
    try:
        s = socket.socket(fileno=os.dup(int(fd)))
    except OSError:
        continue
    try:
        if s.family == socket.AF_UNIX and s.getsockname() in paths:
            s.getpeername()  # an accepted connection (a listening socket has no peer)
            s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        s.close()
time.sleep(5)
"""
)


DEPTH_LIMIT = f"directory depth limit ({MAX_DEPTH} levels)"


@pytest.mark.parametrize("target", ["host-socket", "relay-loop"])
def test_a_kernel_socket_swapped_for_a_link_never_connects_the_host_elsewhere(
    isolated: str, host: Host, tmp_path: Path, target: str
) -> None:
    # connect() follows links: the host (root) connected to any socket of the host, and a link
    # back to the relay made it open connections until it ran out of descriptors.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "host.sock"))
    listener.listen(16)
    listener.setblocking(False)
    link = str(tmp_path / "host.sock") if target == "host-socket" else "../host/{n}"
    fds_before = len(list(Path("/proc/self/fd").iterdir()))
    result = run(isolated, host.ws, _RELINK.format(target=link))
    assert "relinking" in result.output, result.output
    assert result.killed_reason and "protocol violation" in result.killed_reason, result
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing of the host ever connected to it
    listener.close()
    assert len(list(Path("/proc/self/fd").iterdir())) <= fds_before + 8


def test_a_tree_too_deep_for_python_in_the_kernel_dir_is_removed(isolated: str, host: Host) -> None:
    # shutil.rmtree gave up on it silently and every later sandbox crashed sweeping it.
    code = _KERNEL_DIR + (
        "fd = os.open(kdir, os.O_RDONLY)\n"
        "for _ in range(3000):\n"
        "    os.mkdir('a', dir_fd=fd)\n"
        "    fd = os.open('a', os.O_RDONLY, dir_fd=fd)\n"
        "print('deep', flush=True)\n"
    )
    before = our_ipc_dirs()  # an earlier test's leftovers are not this one's
    first, second = run_all(isolated, host.ws, code, "print('next')")
    assert first.killed_reason in (None, DEPTH_LIMIT), first  # the watchdog may see it first
    assert second.status is ExecStatus.OK, second.output
    assert our_ipc_dirs() <= before  # the ipc dirs, all removed


@pytest.mark.parametrize("keep_working", [True, False])
def test_a_working_tree_too_deep_for_python_ends_the_node_and_leaves_nothing(
    isolated: str, host: Host, keep_working: bool
) -> None:
    code = (
        "import os\n"
        "open('submission/submission.csv', 'w').write('id,y\\n1,0\\n')\n"
        "fd = os.open('working', os.O_RDONLY)\n"
        "for _ in range(3000):\n"
        "    os.mkdir('a', dir_fd=fd)\n"
        "    fd = os.open('a', os.O_RDONLY, dir_fd=fd)\n"
        "print('deep', flush=True)\n"
    )
    ws = dataclasses.replace(host.ws, keep_working=keep_working)
    before = our_cgroups()  # an earlier test's leftovers are not this one's
    result = run(isolated, ws, code)
    assert result.killed_reason in (None, DEPTH_LIMIT), result  # the watchdog may see it first
    assert (ws.root / "submission.csv").read_text() == "id,y\n1,0\n"
    kept = sorted(p.name for p in ws.root.iterdir())
    assert kept == (["submission.csv", "working"] if keep_working else ["submission.csv"])
    if keep_working:
        assert not any((ws.root / "working").iterdir())  # too deep to keep: nothing kept
    assert our_cgroups() <= before  # thawed and gone: nothing left frozen


def test_reserving_disk_blocks_is_refused_so_writing_them_takes_time(
    isolated: str, host: Host
) -> None:
    # fallocate() reserved 7 GiB in 0.15 s against a 200 MiB limit, between two watchdog looks.
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = os.open('working/big', os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "rc = libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(8 * 1024**3))\n"
        "print('FALLOCATE', rc, ctypes.get_errno(), os.fstat(fd).st_blocks, flush=True)\n"
    )
    result = run(isolated, host.ws, code)
    assert f"FALLOCATE -1 {errno.EOPNOTSUPP} 0" in result.output, result.output


def test_a_lone_surrogate_in_an_error_is_inert_and_every_record_still_serialises(
    isolated: str,
    host: Host,
) -> None:
    # rich could not print it (UnicodeEncodeError) and pydantic could not write the record.
    code = (
        "import json\n"
        "k = get_ipython().kernel\n"
        "pack, k.session.pack = k.session.pack, lambda o: json.dumps(o, default=str).encode()\n"
        "k.session.send(k.iopub_socket, 'error', {'ename': 'Bad\\ud800', 'evalue': 'x\\udfff',"
        " 'traceback': ['\\ud800']}, parent=k.get_parent())\n"
        "k.session.pack = pack\n"
    )
    result = run(isolated, host.ws, code)
    dumped = result.model_dump_json()
    assert "\\\\ud800" in dumped, dumped
    dumped.encode("utf-8")  # no lone surrogate left to fail an encoder


# --- races on the hand-over ------------------------------------------------------------------

_SWAPPER = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
open('submission/submission.csv', 'w').write('id,y\\n1,0\\n')
os.symlink({answers!r}, 'submission/link')
if os.fork() == 0:  # keeps swapping the file and a link to the answers until it is killed
    while True:
        libc.renameat2(-100, b'submission/submission.csv', -100, b'submission/link', 2)
print('swapping', flush=True)
"""
RACED_NODES = 80  # the race once won 1 node in 10: 80 clean nodes leave 0.9**80 = 2e-4 to luck


def test_a_submission_swapped_for_a_link_to_the_answers_never_hands_over_the_answers(
    isolated: str, host: Host, tmp_path: Path
) -> None:
    # Before, the host checked the file, then moved it by name while the node's processes
    # still ran: one node in ten handed over the answers (graded 1.0, gold).
    code = _SWAPPER.format(answers=str(host.answers))
    options = dataclasses.replace(OPTIONS, warm_pool=True)

    async def go() -> list[tuple[ExecResult, Workspace]]:
        sandbox = make_sandbox(isolated, options)
        await sandbox.warm_up(tmp_path / "scratch", host.ws.input_dir, 2)
        done: list[tuple[ExecResult, Workspace]] = []

        async def worker(ids: range) -> None:
            for i in ids:
                ws = Workspace(tmp_path / "nodes" / str(i), host.ws.input_dir)
                done.append((await sandbox.execute(code, ws, Limits(30.0)), ws))

        try:
            await asyncio.gather(worker(range(0, RACED_NODES, 2)), worker(range(1, RACED_NODES, 2)))
        finally:
            await sandbox.aclose()
        return done

    handed, refused = 0, 0
    for result, ws in asyncio.run(go()):
        assert result.status is ExecStatus.OK and "swapping" in result.output, result.output
        submission = ws.root / "submission.csv"
        assert host.secret not in (result.submission_refused or "")
        if submission.exists():
            assert not submission.is_symlink()
            assert submission.read_text() == "id,y\n1,0\n"  # the node's own file, nothing else
            handed += 1
        else:
            assert "symlink" in (result.submission_refused or ""), result.submission_refused
            refused += 1
        assert sorted(p.name for p in ws.root.iterdir()) in ([], ["submission.csv"])
    assert handed + refused == RACED_NODES


# --- what a solution prints -------------------------------------------------------------------

# OSC 52 (write the clipboard), clear screen, an 8-bit CSI, a bell, a title.
TERMINAL_ATTACK = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\x9b31m\x07\x1b]0;pwned\x07"
_ESCAPING = f"""
import sys
print({TERMINAL_ATTACK!r} + 'printed')
sys.stderr.write({TERMINAL_ATTACK!r} + 'to stderr\\n')
open('submission/submission.csv', 'w').write({TERMINAL_ATTACK!r} + 'id,y\\n1,0\\n')
raise ValueError({TERMINAL_ATTACK!r} + 'raised')
"""


def _raw_control(text: str) -> list[str]:
    return sorted({c for c in text if c in "\x07\x1b\x9b" or (ord(c) < 0x20 and c not in "\t\n")})


def test_escape_sequences_from_a_solution_never_reach_a_terminal(
    host: Host, tmp_path: Path
) -> None:
    # `podium sandbox run` printed the output raw: an OSC 52 wrote the user's clipboard.
    solution = tmp_path / "solution.py"
    solution.write_text(_ESCAPING)
    result = podium_cli("sandbox", "run", str(solution), "--workspace", str(host.ws.root),
                        "--input", str(host.ws.input_dir), "--sandbox", "bwrap")  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "printed" in result.stdout and "raised" in result.stdout
    assert _raw_control(result.stdout) == [] and _raw_control(result.stderr) == []


def test_escape_sequences_never_reach_run_rows_prompts_or_the_page(tmp_path: Path) -> None:
    # The same solution in a real run: its rows, the review prompt that quotes its output, the
    # format check's reason (which quotes its header), `podium show` and the exported page.
    code = {"role": "code", "text": f"A plan.\n\n```python\n{_ESCAPING}```\n"}
    review = {"role": "review", "tool_call": {"name": "submit_review", "arguments": {
        "is_bug": True, "summary": "it raised", "metric": None}}}  # fmt: skip
    session = tmp_path / "session.jsonl"
    session.write_text("\n".join(json.dumps(line) for line in (code, review)) + "\n")
    out = tmp_path / "run"
    run = podium_cli("run", str(TOY_TASK), "--model", f"scripted:{session}", "--steps", "1",
                     "--out", str(out), "--data-dir", str(tmp_path / "data"))  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "buggy" in run.stdout and "raised" in run.stdout
    assert _raw_control(run.stdout) == [] and _raw_control(run.stderr) == []
    journal = Journal.open(out / "journal.sqlite")
    prompts = [m.content for call in journal.calls() for m in call.request.messages]
    nodes = journal.nodes()
    journal.close()
    assert any("printed" in p for p in prompts)  # the review prompt quotes the output...
    assert all(_raw_control(p) == [] for p in prompts)  # ...inert
    assert nodes[0].bug_reason and _raw_control(nodes[0].bug_reason) == []
    show = podium_cli("show", str(out), "1")
    assert show.returncode == 0 and _raw_control(show.stdout) == [], show.stderr
    page = tmp_path / "page.html"
    assert podium_cli("view", str(out), "--export", str(page)).returncode == 0
    assert _raw_control(page.read_text()) == []


@pytest.mark.parametrize(
    "message",
    [
        # A message whose signature is wrong: the host's session refuses to read it.
        "k.iopub_socket.send_multipart([b'x', b'<IDS|MSG>', b'bad', b'{}', b'{}', b'{}', b'{}'])",
        # A well-signed one whose content is not an object.
        "s = k.session\nparts = [s.pack(s.msg_header('stream')), s.pack(k.get_parent()['header']),"
        " b'{}', b'[1, 2]']\n"
        "k.iopub_socket.send_multipart([b'stream', b'<IDS|MSG>', s.sign(parts), *parts])",
    ],
    ids=["bad-signature", "not-an-object"],
)
def test_a_message_the_host_cannot_read_ends_the_kernel_not_the_run(
    isolated: str, host: Host, message: str
) -> None:
    code = "import time\nk = get_ipython().kernel\n" + message + "\ntime.sleep(30)\n"
    result = run(isolated, host.ws, code)
    assert result.status is ExecStatus.DIED, result.output
    assert result.killed_reason is not None
    assert result.killed_reason.startswith("protocol violation: an unreadable message")
    assert result.duration_s < scaled(10.0)


@pytest.mark.parametrize("launcher", ["setpriv", "interpreter"])
def test_a_kernel_of_a_root_podium_has_no_host_root_and_no_capability(
    isolated: str, host: Host, launcher: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.getuid() != 0:
        pytest.skip("the switch of uid is what a root Podium does")
    if launcher == "interpreter":  # where the host has no setpriv
        monkeypatch.setattr("podium.sandbox.identity.find_setpriv", lambda: None)
    code = (
        "import os\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
        "print('IDS', os.getresuid(), os.getresgid(), os.getgroups())\n"
        "print('CAPS', *(status[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapAmb')))\n"
        "print('NNP', status['NoNewPrivs'].strip(), 'SECCOMP', status['Seccomp'].strip())\n"
    )
    result = run(isolated, host.ws, code)
    assert result.status is ExecStatus.OK, result.output
    uid = int(result.output.split("IDS (", 1)[1].split(",", 1)[0])
    assert uid != 0 and BwrapSandbox(OPTIONS).identity.owns(uid)  # its own, from the range
    # No user namespace when Podium is root: these are the host's own ids.
    assert f"IDS ({uid}, {uid}, {uid}) ({uid}, {uid}, {uid}) []" in result.output
    assert "CAPS 0000000000000000 0000000000000000 0000000000000000 0000000000000000" in (
        result.output
    )
    assert "NNP 1 SECCOMP 2" in result.output
