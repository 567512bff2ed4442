"""Who a sandboxed kernel is on the host: never root, and by default nobody else either.

As root, uid 0 inside a user namespace *is* host uid 0 to every check that compares uids
(sysctl writes, setuid bits, file ownership), whatever capabilities are dropped. So when Podium
runs as root, bubblewrap runs without a user namespace, and a launcher inside the sandbox (or
the kernel factory's child, for a forked kernel) switches to an unprivileged uid and gid (and
no supplementary groups) before it executes the kernel.

Which uid: ``sandbox.user = "auto"`` (the default) gives **each kernel a uid and gid of its
own**, allocated when it launches from ``KERNEL_UIDS`` and given back once none of its
processes is left. The Linux kernel keeps many limits per uid, not per process or namespace:
inotify instances and watches, ``RLIMIT_NPROC``'s count, pipe buffers, locked and message-queue
memory. Kernels sharing one uid shared those: one kernel holding its 128 inotify instances made
every other kernel's ``inotify_init()`` fail, across runs too. A uid of its own per kernel
makes each such limit the kernel's own. ``sandbox.user`` naming an account or a uid keeps that
one identity for every kernel (their per-uid limits are then shared). As an ordinary user the
kernel keeps that user's uid, the only one it can have, in an unprivileged user namespace.

The allocation is race-free across every Podium process on the machine: a uid is a kernel's
while this process holds an ``flock`` on a file named after it in a directory only root can
enter (``lock_directory``); the Linux kernel drops the lock when the process dies, however it
dies. A uid is never handed out while it is listed as an account or a group, falls in a
subordinate range of ``/etc/subuid`` or ``/etc/subgid`` (a rootless container's uids, which
their owner controls), or is any process's uid or gid (real, effective, saved or filesystem):
the last also keeps a crashed Podium's dying kernels from sharing their uid with a new one.

The sandbox's ``/etc/passwd`` and ``/etc/group`` are written for each kernel (root and that
kernel's user only), so tools that look the user up work and no host account is listed.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import logging
import os
import pwd
import shutil
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from podium.errors import ConfigError, SandboxError, SandboxUnavailable

log = logging.getLogger("podium")

ACCOUNT = "podium-sandbox"  # the name a kernel's own uid has in its sandbox's /etc/passwd
# 65536 ids at 0x70000000: above every range with a convention (systemd's DynamicUser
# 61184–65519, nspawn's containers up to 0x6FFFFFFF, useradd's subordinate ids up to
# 600100000, LXD's default up to 10^9), below 2^31 (where software that reads uid_t as
# signed breaks) and far from 65534 (nobody) and (uid_t) -1.
KERNEL_UIDS = range(0x70000000, 0x70000000 + 0x10000)
# /run where it is root's alone (a tmpfs no cleaner ages), else /tmp: every Podium on the
# machine picks the same one by the same test.
LOCK_DIRS = (Path("/run/podium-uids"), Path("/tmp/.podium-uids"))
SUBORDINATE_IDS = (Path("/etc/subuid"), Path("/etc/subgid"))
RETURN_POLL_S = 0.05  # how often a uid with processes left is looked at again
RELEASE_WARN_S = 60.0  # a uid still in use this long after its kernel ended is said
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
    """One kernel's user: ``switch`` when Podium is root (the launcher switches to it)."""

    uid: int
    gid: int
    name: str
    switch: bool

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
        return _mode_allows(path, self.uid, self.gid)


def _mode_allows(path: Path, uid: int | None, gid: int | None) -> bool:
    """Whether ``uid``/``gid`` may read (and list) ``path`` by its mode bits; None: a uid and
    gid that own nothing, to which only the bits for others apply."""
    try:
        info = path.stat()
    except OSError:
        return False
    need = 0o5 if stat.S_ISDIR(info.st_mode) else 0o4
    if info.st_uid == uid:
        return info.st_mode >> 6 & need == need
    if info.st_gid == gid:
        return info.st_mode >> 3 & need == need
    return info.st_mode & need == need


class UidLease:
    """A kernel's user for as long as the kernel lives.

    For a uid of its own, ``lock`` is the flock held on its lock file, closed once no process
    has the uid any more (``release``). For a fixed identity there is nothing to hold.
    """

    def __init__(self, user: SandboxUser, lock: int | None = None) -> None:
        self.user, self._lock = user, lock

    @property
    def held(self) -> bool:
        return self._lock is not None

    def release(self) -> None:
        """Give the uid back (call once its kernel was killed): at once where no process has
        it, else by ``_Returns`` once the last is gone, so no later kernel shares it with a
        dying one and no caller waits. Idempotent."""
        if self._lock is not None and not in_use(self.user.uid):
            self._close()
        elif self._lock is not None:
            _RETURNS.add(self)

    def _close(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            os.close(lock)


class _Returns:
    """Leases whose uid still has processes (a kernel that takes a while to exit, or one a
    cancelled start left to its factory): a thread gives each back once its uid is free."""

    def __init__(self) -> None:
        self._pending: dict[UidLease, float] = {}  # since when
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, lease: UidLease) -> None:
        with self._guard:
            self._pending.setdefault(lease, time.monotonic())
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="podium-uids", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(RETURN_POLL_S)
            with self._guard:
                pending = list(self._pending.items())
            for lease, since in pending:
                if in_use(lease.user.uid):
                    if time.monotonic() - since > RELEASE_WARN_S:
                        log.warning("uid %d: processes still run as it %g s after its kernel "
                                    "ended; kept until they are gone", lease.user.uid,
                                    RELEASE_WARN_S)  # fmt: skip
                        with self._guard:
                            self._pending[lease] = float("inf")  # said once
                    continue
                lease._close()
                with self._guard:
                    self._pending.pop(lease, None)
            with self._guard:
                if not self._pending:
                    self._thread = None
                    return

    def pending(self) -> int:
        with self._guard:
            return len(self._pending)


_RETURNS = _Returns()


@dataclass(frozen=True)
class KernelIdentity:
    """Who a sandbox's kernels are: ``fixed``, one user for all of them; or None, a uid and
    gid of its own for each, leased from ``uids`` (locks in ``lock_dir``, by default the
    machine's ``lock_directory()``)."""

    fixed: SandboxUser | None = None
    uids: range = KERNEL_UIDS
    lock_dir: Path | None = field(default=None, compare=False)

    @property
    def per_kernel(self) -> bool:
        return self.fixed is None

    @property
    def switch(self) -> bool:
        """Podium is root and kernels switch uid (always, for a uid of their own)."""
        return self.fixed.switch if self.fixed is not None else True

    @property
    def root(self) -> bool:
        """The kernels would be host root (bubblewrap could only run in a user namespace)."""
        return self.fixed is not None and self.fixed.uid == 0

    @property
    def any_uid(self) -> int:
        """A uid a kernel may have (the fixed one, or the range's first): for what asks only
        whether kernels are root."""
        return self.fixed.uid if self.fixed is not None else self.uids[0]

    def owns(self, uid: int) -> bool:
        """Whether ``uid`` is one a kernel of this identity may have."""
        return uid == self.fixed.uid if self.fixed is not None else uid in self.uids

    def describe(self) -> str:
        """``uid 65533 (name)``, or ``a uid of its own per kernel (from A–B)``."""
        if self.fixed is not None:
            return f"uid {self.fixed.uid} ({self.fixed.name})"
        return f"a uid of its own per kernel (from {self.uids[0]}–{self.uids[-1]})"

    def check(self) -> None:
        """Refuse, in one line, what would fail every kernel: a lock directory that is not
        root's own (only a uid of its own per kernel needs one)."""
        if self.fixed is None:
            os.close(open_lock_dir(self.lock_dir or lock_directory()))

    def lease(self) -> UidLease:
        """The user of the next kernel: the fixed one, or a uid of its own (``allocate``)."""
        if self.fixed is not None:
            return UidLease(self.fixed)
        return allocate(self.uids, self.lock_dir or lock_directory())

    def can_read(self, path: Path) -> bool:
        """Whether every kernel may read ``path``: by the fixed user's mode bits, or by those
        for others (a uid of its own owns nothing and is in no group)."""
        if self.fixed is not None:
            return self.fixed.can_read(path)
        return _mode_allows(path, None, None)


def find_setpriv() -> str | None:
    """util-linux's setpriv, where the host has it (its /usr is the sandbox's)."""
    return shutil.which("setpriv", path="/usr/bin:/bin")


def kernel_identity(setting: str | int | None = "auto") -> KernelIdentity:
    """Who kernels are, for the ``sandbox.user`` setting (``auto``, a name, a uid)."""
    if os.getuid() != 0:
        me = os.getuid()
        if setting not in (None, "auto", me, _name_of(me)):
            raise ConfigError(
                f"sandbox.user: only root can run kernels as another user (got {setting!r})",
                hint='leave sandbox.user = "auto": kernels run as you',
            )
        return KernelIdentity(SandboxUser(me, os.getgid(), _name_of(me) or "user", switch=False))
    if setting in (None, "auto"):
        return KernelIdentity()
    user = _resolve(setting)
    if user.uid == 0 or user.gid == 0:
        raise ConfigError(
            f"sandbox.user: kernels never run as root (got {setting!r})",
            hint='an unprivileged account, or "auto"',
        )
    return KernelIdentity(user)


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


# --- the allocator -----------------------------------------------------------------------------


def lock_directory() -> Path:
    """Where uid locks live: ``/run/podium-uids`` where /run is a writable directory only
    root can write, else ``/tmp/.podium-uids`` (every Podium of the machine decides alike)."""
    try:
        run = Path("/run").stat()
    except OSError:
        return LOCK_DIRS[1]
    mine = stat.S_ISDIR(run.st_mode) and run.st_uid == 0 and not run.st_mode & 0o022
    if mine and os.access("/run", os.W_OK):  # not a read-only mount
        return LOCK_DIRS[0]
    return LOCK_DIRS[1]


def open_lock_dir(path: Path) -> int:
    """A descriptor of ``path``, made 0700 if missing; refused unless it is a directory (not
    a link) of this process's uid that no one else may enter."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise SandboxUnavailable(
            f"the kernels' uid lock directory {path} cannot be opened ({exc.strerror}; "
            "a link is refused)",
            hint=f"remove {path}, or set sandbox.user to an account (kernels then share it)",
        ) from None
    info = os.fstat(fd)
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        os.close(fd)
        raise SandboxUnavailable(
            f"the kernels' uid lock directory {path} is not root's own 0700 directory "
            f"(owner {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o})",
            hint=f"remove {path}, or set sandbox.user to an account (kernels then share it)",
        )
    return fd


def allocate(uids: range, lock_dir: Path) -> UidLease:
    """A uid (and the gid of the same number) of its own for one kernel, from ``uids``: the
    lowest one that no lease of any Podium holds, no account or group is listed as, no
    subordinate id range holds, and no process has. Its lock is taken first, so the checks
    that follow see a uid no one else can take meanwhile."""
    directory = open_lock_dir(lock_dir)
    try:
        subordinate = _subordinate_ranges()
        for uid in uids:
            lock = _try_lock(directory, uid)
            if lock is None:
                continue
            if _listed(uid) or any(uid in held for held in subordinate) or in_use(uid):
                os.close(lock)
                continue
            return UidLease(SandboxUser(uid, uid, ACCOUNT, switch=True), lock)
    finally:
        os.close(directory)
    raise SandboxError(
        f"no free uid for a kernel in {uids[0]}–{uids[-1]} (each is held by a running kernel, "
        "listed as an account, or in use)"
    )


def _try_lock(directory: int, uid: int) -> int | None:
    """The descriptor holding ``uid``'s lock, or None where another holds it. Lock files are
    never removed: a file removed and made again could be locked twice at once."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(str(uid), flags, 0o600, dir_fd=directory)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _listed(uid: int) -> bool:
    """Whether the user database names ``uid`` as an account or a group (files, LDAP, ...)."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
        except KeyError:
            continue
        return True
    return False


def _subordinate_ranges() -> list[range]:
    """The ranges of ``/etc/subuid`` and ``/etc/subgid`` (``name:first:count`` lines)."""
    found = []
    for path in SUBORDINATE_IDS:
        with contextlib.suppress(OSError):
            for line in path.read_text(errors="replace").splitlines():
                parts = line.strip().split(":")
                if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                    found.append(range(int(parts[1]), int(parts[1]) + int(parts[2])))
    return found


def in_use(uid: int) -> bool:
    """Whether any process has ``uid`` as a uid or gid (real, effective, saved, filesystem),
    read from each process's status (a process's /proc owner hides it once not dumpable)."""
    wanted = str(uid).encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"{entry.path}/status", "rb") as status:
                text = status.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith((b"Uid:", b"Gid:")) and wanted in line.split()[1:]:
                return True
    return False
