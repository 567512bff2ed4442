"""The ``local`` sandbox: a fresh kernel per node, no isolation at all.

It protects nothing (the solution can read anything Podium can), so it is used only when asked
for, or when ``auto`` finds no working bubblewrap, and every run made with it is stamped
``sandboxed: false``. It still never hands the kernel Podium's environment: API keys and other
secrets stay in the host process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from podium.sandbox.base import Guard, KernelSandbox
from podium.sandbox.ipc import IpcDir
from podium.sandbox.kernel import KernelCommand, ipykernel_argv
from podium.sandbox.options import SandboxOptions, SandboxParams, thread_env
from podium.sandbox.workspace import Slot

PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "CUDA_VISIBLE_DEVICES")
KERNEL_ENV = {"PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}


def kernel_env(threads: int | None = None) -> dict[str, str]:
    """Only the variables a solution needs (and its thread pools' size); nothing that could
    hold a secret."""
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update(KERNEL_ENV)
    env.update(thread_env(threads))
    return env


class LocalSandbox(KernelSandbox):
    name = "local"
    isolated = False

    def __init__(self, options: SandboxOptions | None = None, notice: str | None = None) -> None:
        self.options = options or SandboxOptions()
        super().__init__(self.options.python, self.options.preimports, self.options.warm_pool)
        self.notice = notice

    def describe(self) -> str:
        return "local: NO isolation (the solutions can read and write anything Podium can)"

    def launch(self, slot: Slot, ipc: IpcDir) -> tuple[KernelCommand, Guard]:
        slot.link_input()
        command = KernelCommand(
            argv=ipykernel_argv(self.python, ipc.kernel_connection_file),
            env=kernel_env(self.options.threads),
            cwd=slot.root,
            interrupt_grace_s=self.options.interrupt_grace_s,
            max_message_bytes=self.options.limits.max_message_bytes,
        )
        return command, Guard()


def create(options: SandboxParams | Mapping[str, Any]) -> LocalSandbox:
    return LocalSandbox(SandboxParams.of(options).options())
