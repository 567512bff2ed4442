"""What isolation works on this machine, and why not: ``podium sandbox check`` and ``auto``.

Every line is a real probe (bwrap is run, a kernel is started inside it), not a guess from
version numbers.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.errors import SandboxError
from podium.interfaces import Limits, Sandbox, Workspace
from podium.sandbox import cgroups
from podium.sandbox.bwrap import BwrapSandbox, bwrap_problem, describe_limits
from podium.sandbox.bwrap_command import gpu_devices
from podium.sandbox.local import LocalSandbox
from podium.sandbox.options import SandboxOptions


@dataclass(frozen=True)
class CheckLine:
    name: str
    ok: bool
    detail: str


async def _kernel_line(options: SandboxOptions) -> CheckLine:
    sandbox = BwrapSandbox(SandboxOptions(python=options.python, preimports=(), warm_pool=False))
    with tempfile.TemporaryDirectory(prefix="podium-check-") as tmp:
        data = Path(tmp, "input")
        data.mkdir()
        code = "import socket; print(len(socket.if_nameindex()))"
        try:
            result = await sandbox.execute(code, Workspace(Path(tmp, "ws"), data), Limits(60))
        except SandboxError as exc:
            return CheckLine("kernel", False, str(exc))
        finally:
            await sandbox.aclose()
    if result.failed:
        return CheckLine("kernel", False, f"{result.error_name}: {result.error_value}")
    interfaces = result.output.strip()
    isolated = interfaces == "1"
    return CheckLine(
        "kernel",
        isolated,
        f"ipykernel over ipc started in {result.kernel_start_s:.2f} s; network interfaces "
        f"inside: {interfaces} ({'loopback only' if isolated else 'NOT isolated'})",
    )


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
    if problem is None:
        lines.append(asyncio.run(_kernel_line(opts)))
    support = cgroups.detect()
    lines.append(CheckLine("cgroups", support.version is not None, support.describe()))
    for phrase in describe_limits(opts.limits, support):
        lines.append(CheckLine("limit", "watchdog" not in phrase and "nothing" not in phrase,
                               phrase))  # fmt: skip
    if opts.gpus:
        devices, _ = gpu_devices(opts.gpus)
        missing = [d for d in devices if not Path(d).exists()]
        lines.append(CheckLine("gpu", not missing, f"missing {missing}" if missing else "ok"))
    return lines


def create_auto(options: Mapping[str, Any]) -> Sandbox:
    """bwrap when it works here; otherwise ``local``, with the reason as a loud notice."""
    opts = SandboxOptions.from_config(options)
    problem = bwrap_problem()
    if problem is None:
        return BwrapSandbox(opts)
    notice = f"no isolation: {problem}; solutions run UNSANDBOXED (sandboxed: false)"
    return LocalSandbox(opts, notice=notice)
