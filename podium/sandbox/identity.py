"""Who a sandboxed kernel is on the host: never root.

As root, uid 0 inside a user namespace *is* host uid 0 to every check that compares uids
(sysctl writes, setuid bits, file ownership), whatever capabilities are dropped. So when Podium
runs as root, bubblewrap runs without a user namespace, and a launcher inside the sandbox
switches to an unprivileged uid and gid (and no supplementary groups) before it executes the
kernel: the account ``sandbox.user`` names, by default ``podium-sandbox`` where that account
exists, else uid and gid 65533, which no account uses on Debian. As an ordinary user the
kernel keeps that user's uid, the only one it can have, in an unprivileged user namespace.

The sandbox's ``/etc/passwd`` and ``/etc/group`` are written for it (root and the sandbox's
user only), so tools that look the user up work and no host account is listed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from podium.errors import ConfigError

ACCOUNT = "podium-sandbox"
DEFAULT_ID = 65533
# The switch, inside the sandbox, before anything of the solution's runs: util-linux's setpriv
# where the host has it (no interpreter to start), else the solutions' interpreter doing the
# same. Both drop the supplementary groups, the gid, the uid (real, effective and saved after
# the exec: no way back) and every capability, then run the kernel.
SETPRIV = ("--clear-groups", "--inh-caps=-all", "--ambient-caps=-all")
LAUNCHER = (
    "import ctypes, os, sys\n"
    "uid, gid = int(sys.argv[1]), int(sys.argv[2])\n"
    "os.setgroups([])\n"
    "os.setresgid(gid, gid, gid)\n"
    "os.setresuid(uid, uid, uid)\n"
    "assert os.getresuid() == (uid,) * 3 and os.getresgid() == (gid,) * 3\n"
    "header = (ctypes.c_uint32 * 2)(0x20080522, 0)\n"  # capset v3: clear the inheritable set too
    "if ctypes.CDLL(None, use_errno=True).capset(header, (ctypes.c_uint32 * 6)()) != 0:\n"
    "    raise OSError(ctypes.get_errno(), 'capset')\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


@dataclass(frozen=True)
class SandboxUser:
    uid: int
    gid: int
    name: str
    switch: bool  # Podium is root: the launcher switches to this uid inside the sandbox

    def launch(self, python: str, argv: list[str]) -> list[str]:
        """``argv`` run as this user (through the switch when Podium is root)."""
        if not self.switch:
            return argv
        if setpriv := find_setpriv():
            ids = ["--reuid", str(self.uid), "--regid", str(self.gid)]
            return [setpriv, *ids, *SETPRIV, "--", *argv]
        return [python, "-I", "-S", "-c", LAUNCHER, str(self.uid), str(self.gid), *argv]

    def passwd(self) -> bytes:
        lines = ["root:x:0:0:root:/root:/usr/sbin/nologin"]
        if self.uid != 0:
            lines.append(f"{self.name}:x:{self.uid}:{self.gid}:Podium sandbox:/tmp:/bin/sh")
        return ("\n".join(lines) + "\n").encode()

    def group(self) -> bytes:
        lines = ["root:x:0:"]
        if self.gid != 0:
            lines.append(f"{self.name}:x:{self.gid}:")
        return ("\n".join(lines) + "\n").encode()

    def can_read(self, path: Path) -> bool:
        """Whether this user may read ``path`` (and list it, for a directory), by its mode."""
        try:
            info = path.stat()
        except OSError:
            return False
        need = 0o5 if stat.S_ISDIR(info.st_mode) else 0o4
        if info.st_uid == self.uid:
            return info.st_mode >> 6 & need == need
        if info.st_gid == self.gid:
            return info.st_mode >> 3 & need == need
        return info.st_mode & need == need


def find_setpriv() -> str | None:
    """util-linux's setpriv, where the host has it (its /usr is the sandbox's)."""
    return shutil.which("setpriv", path="/usr/bin:/bin")


def sandbox_user(setting: str | int | None = "auto") -> SandboxUser:
    """The user kernels run as, for the ``sandbox.user`` setting (``auto``, a name, a uid)."""
    root = os.getuid() == 0
    if not root:
        me = os.getuid()
        if setting not in (None, "auto", me, _name_of(me)):
            raise ConfigError(
                f"sandbox.user: only root can run kernels as another user (got {setting!r})",
                hint='leave sandbox.user = "auto": kernels run as you',
            )
        return SandboxUser(me, os.getgid(), _name_of(me) or "user", switch=False)
    if setting in (None, "auto"):
        try:
            entry = pwd.getpwnam(ACCOUNT)
        except KeyError:
            return SandboxUser(DEFAULT_ID, DEFAULT_ID, ACCOUNT, switch=True)
        return SandboxUser(entry.pw_uid, entry.pw_gid, ACCOUNT, switch=True)
    user = _resolve(setting)
    if user.uid == 0 or user.gid == 0:
        raise ConfigError(
            f"sandbox.user: kernels never run as root (got {setting!r})",
            hint='an unprivileged account, or "auto"',
        )
    return user


def _resolve(setting: str | int) -> SandboxUser:
    if isinstance(setting, int) or str(setting).isdigit():
        uid = int(setting)
        try:
            entry = pwd.getpwuid(uid)
        except KeyError:
            return SandboxUser(uid, uid, ACCOUNT, switch=True)
        return SandboxUser(uid, entry.pw_gid, entry.pw_name, switch=True)
    try:
        entry = pwd.getpwnam(str(setting))
    except KeyError:
        raise ConfigError(
            f"sandbox.user: no account named {setting!r} on this machine",
            hint='a uid number, an existing account, or "auto"',
        ) from None
    return SandboxUser(entry.pw_uid, entry.pw_gid, entry.pw_name, switch=True)


def _name_of(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None
