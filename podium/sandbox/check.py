"""What isolation works on this machine, and why not: ``podium sandbox check`` and ``auto``.

Every line is a real probe (bwrap is run, a kernel is started inside it and reports what it
can do), not a guess from version numbers. Each protection of the bwrap sandbox gets a line:
whether it is configured (``BwrapSandbox.protections``) *and* whether the probe kernel found it
holding.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.errors import SandboxError
from podium.interfaces import Limits, Sandbox, Workspace
from podium.sandbox import cgroups
from podium.sandbox.bwrap import (
    KEYCTL,
    BwrapSandbox,
    Protection,
    bwrap_problem,
    describe_limits,
)
from podium.sandbox.bwrap_command import gpu_devices
from podium.sandbox.identity import KernelIdentity
from podium.sandbox.local import LocalSandbox
from podium.sandbox.options import SandboxOptions, SandboxParams

_PROBE = """
import ctypes, json, os, socket
facts = {"interfaces": len(socket.if_nameindex()), "uid": os.getuid()}
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
facts["seccomp"] = status.get("Seccomp", "").strip()
try:
    os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))
    facts["sysctl"] = "writable"
except OSError as exc:
    facts["sysctl"] = exc.strerror
number = %(keyctl)r.get(os.uname().machine)
libc = ctypes.CDLL(None, use_errno=True)
got = libc.syscall(number, 0, -3, 0) if number else -1  # the session keyring's id
facts["keyring"] = got if got >= 0 else os.strerror(ctypes.get_errno())
print("PROBE " + json.dumps(facts))
""".replace("%(keyctl)r", repr(KEYCTL))


@dataclass(frozen=True)
class CheckLine:
    name: str
    ok: bool
    detail: str


async def _probe_kernel(options: SandboxOptions) -> tuple[BwrapSandbox, CheckLine, dict[str, Any]]:
    sandbox = BwrapSandbox(SandboxOptions(python=options.python, preimports=(), warm_pool=False,
                                          user=options.user))  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="podium-check-") as tmp:
        data = Path(tmp, "input")
        data.mkdir()
        try:
            result = await sandbox.execute(_PROBE, Workspace(Path(tmp, "ws"), data), Limits(60))
        except SandboxError as exc:
            return sandbox, CheckLine("kernel", False, str(exc)), {}
        finally:
            await sandbox.aclose()
    match = re.search(r"^PROBE (.*)$", result.output, re.MULTILINE)
    if result.failed or not match:
        return sandbox, CheckLine("kernel", False, result.error_line or "no answer"), {}
    facts: dict[str, Any] = json.loads(match.group(1))
    isolated = facts["interfaces"] == 1
    line = CheckLine(
        "kernel",
        isolated,
        f"ipykernel over ipc started in {result.kernel_start_s:.2f} s; network interfaces "
        f"inside: {facts['interfaces']} ({'loopback only' if isolated else 'NOT isolated'})",
    )
    return sandbox, line, facts


async def _probe_forked(options: SandboxOptions) -> CheckLine:
    """A kernel forked from a kernel factory, probed as the cold one is."""
    sandbox = BwrapSandbox(SandboxOptions(python=options.python, preimports=(), user=options.user,
                                          fork=options.fork))  # fmt: skip
    if sandbox.forking.problem is not None:
        return CheckLine("forked kernels", False, f"off: {sandbox.forking.problem}; cold starts")
    with tempfile.TemporaryDirectory(prefix="podium-check-") as tmp:
        data = Path(tmp, "input")
        data.mkdir()
        try:
            await sandbox.warm_up(Path(tmp, "pool"), data, 1)
            await sandbox.settle()
            result = await sandbox.execute(_PROBE, Workspace(Path(tmp, "ws"), data), Limits(60))
            took = await _time_a_fork(sandbox, Path(tmp), data)
        except SandboxError as exc:
            return CheckLine("forked kernels", False, f"{exc}; cold starts")
        finally:
            forked = sandbox.forking.current is not None
            await sandbox.aclose()
    match = re.search(r"^PROBE (.*)$", result.output, re.MULTILINE)
    facts: dict[str, Any] = json.loads(match.group(1)) if match else {}
    held = facts.get("interfaces") == 1 and facts.get("seccomp") == "2" and facts.get("uid") != 0
    if not forked or not held:
        why = sandbox.forking.problem or "the forked probe kernel was not isolated"
        return CheckLine("forked kernels", False, f"{why}; cold starts")
    detail = f"from a kernel factory, forked and ready in {took * 1000:.0f} ms (own namespaces,"
    return CheckLine("forked kernels", True, f"{detail} uid, seccomp, loopback only)")


async def _time_a_fork(sandbox: BwrapSandbox, tmp: Path, data: Path) -> float:
    """How long a kernel takes to fork and answer, the pool emptied first."""
    await sandbox.settle()
    started = time.perf_counter()
    await sandbox.execute("", Workspace(tmp / "ws2", data), Limits(60))
    await sandbox.settle()
    return time.perf_counter() - started


def _host_session_keyring() -> int | None:
    number = KEYCTL.get(platform.machine())
    if number is None:
        return None
    got = ctypes.CDLL(None, use_errno=True).syscall(number, 0, -3, 0)
    return int(got) if got >= 0 else None


def _confirmed(
    protection: Protection, facts: dict[str, Any], identity: KernelIdentity
) -> CheckLine:
    """A protection's line: configured, and seen holding by the probe kernel."""
    seen: bool | None = None  # None: the probe says nothing about it
    if protection.name == "unprivileged uid":  # not root, and the uid it was given
        seen = facts["uid"] != 0 and identity.owns(facts["uid"])
    elif protection.name == "seccomp":
        seen = facts["seccomp"] == "2"
    elif protection.name == "read-only /proc":
        seen = facts["sysctl"] != "writable"
    elif protection.name == "keyring":
        seen = facts["keyring"] != _host_session_keyring()
    ok = protection.active and seen is not False
    detail = protection.detail
    if protection.active and seen is False:
        detail += " -- but the probe kernel got past it"
    return CheckLine(protection.name, ok, detail)


def _python_line(python: str) -> CheckLine:
    probe = "import sys, ipykernel; print(sys.version.split()[0], ipykernel.__version__)"
    try:
        proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return CheckLine("python", False, f"{python}: {exc}")
    if proc.returncode != 0:
        return CheckLine("python", False, f"{python} cannot import ipykernel "
                         f"(install it: {python} -m pip install ipykernel)")  # fmt: skip
    version, ipykernel = proc.stdout.split()
    return CheckLine("python", True, f"{python}: Python {version}, ipykernel {ipykernel}")


def run_checks(options: Mapping[str, Any]) -> list[CheckLine]:
    opts = SandboxOptions.from_config(options)
    lines = [_python_line(opts.python or sys.executable)]
    problem = bwrap_problem()
    lines.append(CheckLine("bubblewrap", problem is None, problem or "namespaces work"))
    kernel_uid = 0
    if problem is None:
        sandbox, kernel, facts = asyncio.run(_probe_kernel(opts))
        lines.append(kernel)
        kernel_uid = sandbox.identity.any_uid
        if facts:
            lines += [_confirmed(p, facts, sandbox.identity) for p in sandbox.protections()]
            lines.append(asyncio.run(_probe_forked(opts)))
    support = cgroups.detect()
    lines.append(CheckLine("cgroups", support.version is not None, support.describe()))
    for phrase in describe_limits(opts.limits, support, kernel_uid):
        lines.append(CheckLine("limit", "watchdog" not in phrase and "nothing" not in phrase,
                               phrase))  # fmt: skip
    if opts.gpus:
        devices, _ = gpu_devices(opts.gpus)
        missing = [d for d in devices if not Path(d).exists()]
        lines.append(CheckLine("gpu", not missing, f"missing {missing}" if missing else "ok"))
    return lines


def create_auto(options: SandboxParams | Mapping[str, Any]) -> Sandbox:
    """bwrap when it works here; otherwise ``local``, with the reason as a loud notice."""
    opts = SandboxParams.of(options).options()
    problem = bwrap_problem()
    if problem is None:
        return BwrapSandbox(opts)
    notice = f"no isolation: {problem}; solutions run UNSANDBOXED (sandboxed: false)"
    return LocalSandbox(opts, notice=notice)
