"""A kernel's socket directories: one for the kernel, one for Podium, under one short path.

Kernels talk to Podium over ZMQ's ``ipc`` transport (unix sockets: no network namespace is
shared). ``kernel/`` is the only one a sandbox sees: the kernel reads its connection file there
and binds its five sockets in it. ``host/`` holds Podium's copy of the connection file and the
relay's sockets of the same names (see ``relay.py``), so Podium never talks to the kernel's
sockets directly. The root is short (a unix socket path is limited to 107 bytes), lives in
/tmp, and is named after Podium's pid so a killed run's leftovers can be recognised, and a
token of this process's, so that this Podium's kernels and their bwraps (whose argv names
their ipc directories) can be told from any other's (``warden.py``).
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from podium.sandbox.cgroups import LEFTOVER
from podium.sandbox.kernel_args import ORDERED_STREAMS, STARTUP_FILE
from podium.untrusted import remove_tree

CHANNELS = ("shell", "iopub", "stdin", "control", "hb")
SOCKET_PREFIX = "k"  # the sockets are k-1 ... k-5
CONNECTION_FILE = "kernel.json"  # the kernel's start-up script lies beside it (kernel_args)
_TOKEN = secrets.token_hex(4)


def process_prefix() -> str:
    """``podium-<pid>-<token>-``: how this process's ipc directories begin (a forked child has
    another pid, so a prefix of its own)."""
    return f"podium-{os.getpid()}-{_TOKEN}-"


def ipc_root() -> Path:
    """Where ipc directories are made: /tmp, unless it is not writable."""
    return Path("/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir())


@dataclass(frozen=True)
class IpcDir:
    root: Path

    @property
    def host(self) -> Path:
        return self.root / "host"

    @property
    def kernel(self) -> Path:
        return self.root / "kernel"

    @property
    def host_connection_file(self) -> Path:
        return self.host / CONNECTION_FILE

    @property
    def kernel_connection_file(self) -> Path:
        return self.kernel / CONNECTION_FILE

    @property
    def startup_file(self) -> Path:
        return self.kernel / STARTUP_FILE

    @property
    def socket_names(self) -> list[str]:
        return [f"{SOCKET_PREFIX}-{port}" for port in range(1, len(CHANNELS) + 1)]

    @classmethod
    def create(cls, parent: Path | None = None) -> IpcDir:
        """Both directories and both connection files (same ports and key, each its own path);
        under ``parent`` (a kernel factory's ``new_ipc_base``), else at the top of /tmp."""
        if parent is None:
            root = tempfile.mkdtemp(prefix=process_prefix(), dir=ipc_root())
        else:
            root = tempfile.mkdtemp(prefix="", dir=parent)
        ipc = cls(Path(root))
        for side in (ipc.host, ipc.kernel):
            side.mkdir(mode=0o700)
        info: dict[str, str | int] = {
            f"{name}_port": port for port, name in enumerate(CHANNELS, start=1)
        }
        info.update(transport="ipc", signature_scheme="hmac-sha256", kernel_name="podium",
                    key=secrets.token_hex(32))  # fmt: skip
        for side in (ipc.host, ipc.kernel):
            data = {**info, "ip": str(side / SOCKET_PREFIX)}
            path = side / CONNECTION_FILE
            path.write_text(json.dumps(data, indent=2))
            path.chmod(0o600)
        ipc.startup_file.write_text(ORDERED_STREAMS)
        ipc.startup_file.chmod(0o600)
        return ipc

    def hand_kernel_side_to(self, uid: int, gid: int) -> None:
        """Let another uid (the sandbox's) bind its sockets and read its connection file."""
        for path in (self.kernel, self.kernel_connection_file, self.startup_file):
            os.chown(path, uid, gid)

    def remove(self) -> None:
        remove_tree(self.root)


def new_ipc_base() -> Path:
    """A directory for many kernels' ipc directories (a factory sees it whole; each kernel
    only its own). Named like an ipc directory, so a killed run's is swept the same way."""
    return Path(tempfile.mkdtemp(prefix=process_prefix(), dir=ipc_root()))


def sweep_leftovers() -> None:
    """Remove the ipc directories of Podium processes that were killed (their pid is gone)."""
    for entry in ipc_root().glob("podium-*"):
        match = LEFTOVER.match(entry.name)
        if match and entry.is_dir() and not Path(f"/proc/{match.group(1)}").exists():
            remove_tree(entry)
