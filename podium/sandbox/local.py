"""The ``local`` sandbox: a fresh kernel per node, no isolation at all.

It protects nothing (the solution can read anything Podium can), so it is used only when asked
for, and every run made with it is stamped ``sandboxed: false``. It still never hands the
kernel Podium's environment: API keys and other secrets stay in the host process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from podium.interfaces import Limits, Sandbox, Workspace
from podium.records import EnvironmentInfo, ExecResult
from podium.sandbox.environment import probe_environment
from podium.sandbox.kernel import FreshKernels, KernelCommand, ipykernel_argv
from podium.sandbox.workspace import prepare_linked_workspace

PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "CUDA_VISIBLE_DEVICES")


def kernel_env() -> dict[str, str]:
    """Only the variables a solution needs; nothing that could hold a secret."""
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update(PYTHONUNBUFFERED="1", MPLBACKEND="Agg", PYTHONHASHSEED="0")
    return env


class LocalSandbox(Sandbox):
    name = "local"
    isolated = False

    def __init__(self, python: str | None = None, interrupt_grace_s: float = 3.0) -> None:
        self.python = python or sys.executable
        self.interrupt_grace_s = interrupt_grace_s
        self._environment: EnvironmentInfo | None = None
        self._kernels = FreshKernels()

    async def environment(self) -> EnvironmentInfo:
        if self._environment is None:
            self._environment = await probe_environment(self.python)
        return self._environment

    async def execute(self, code: str, workspace: Workspace, limits: Limits) -> ExecResult:
        prepare_linked_workspace(workspace)
        command = KernelCommand(
            argv=ipykernel_argv(self.python),
            env=kernel_env(),
            cwd=workspace.root,
            interrupt_grace_s=self.interrupt_grace_s,
        )
        return await self._kernels.run(code, command, limits.timeout_s, limits.max_output_bytes)

    async def aclose(self) -> None:
        await self._kernels.aclose()


def create(options: Mapping[str, Any]) -> LocalSandbox:
    return LocalSandbox(python=options.get("python") or None)
