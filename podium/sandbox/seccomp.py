"""The seccomp filter every bwrap kernel runs under: what no solution needs is denied.

Built with libseccomp (its official Python bindings where installed, else ``pyseccomp``, a
ctypes binding of the same library) and handed to bubblewrap as BPF (``--seccomp FD``), which
loads it just before it starts the kernel; it then holds for every process the kernel starts.
Scientific Python, native extensions, threads, ``multiprocessing`` and subprocesses keep
working: the filter allows by default and denies, by name,

* the kernel's attack surface a solution never needs: the keyring (``keyctl``, ``add_key``,
  ``request_key``: no key of the host, and no channel between kernels), ``io_uring``, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ptrace and the calls that read other processes'
  memory, module loading, ``kexec``, reboot, swap, clocks, ``open_by_handle_at``;
* everything that changes the sandbox itself: the mount family (old and new API), ``chroot``,
  ``pivot_root``, ``unshare``, ``setns``, and ``clone`` with a namespace flag;
* a setuid or setgid bit on any file (``chmod`` family, and ``open``/``creat``/``mknod``
  creating one), terminal input injection (``TIOCSTI``), and socket families that cross the
  network namespace or widen the attack surface (``AF_VSOCK`` reaches a VM's host);
* ``fallocate`` (``EOPNOTSUPP``: reserving gigabytes takes no time, writing them does, so the
  disk watchdog keeps up; ``posix_fallocate`` falls back to writing);
* calls that cannot be checked by argument and have older equivalents (``clone3``,
  ``openat2``) and every syscall number newer than this list knows: ``ENOSYS``, so the C
  library falls back to the checked call.

Any other architecture's syscalls (a 32-bit ``int 0x80`` from a 64-bit process) kill the
caller: libseccomp's default for a foreign architecture.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import tempfile
from types import ModuleType
from typing import Any

EPERM_CALLS = (
    # the keyring
    "keyctl", "add_key", "request_key",
    # other processes, the kernel's debugging and tracing surfaces
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "perf_event_open", "bpf", "userfaultfd", "lookup_dcookie", "syslog",
    # the sandbox's own shape
    "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount",
    "fspick", "move_mount", "open_tree", "mount_setattr", "unshare", "setns",
    # the machine
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "stime", "vhangup", "iopl", "ioperm",
    "nfsservctl", "uselib", "_sysctl", "open_by_handle_at", "name_to_handle_at",
    "fanotify_init", "vm86", "vm86old",
)  # fmt: skip
ENOSYS_CALLS = ("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3", "openat2")
# Reserving blocks costs no write: a loop of fallocate() fills the host's disk between two
# looks of the watchdog. "Not supported" makes the C library's posix_fallocate write the
# zeros itself, at the disk's pace.
EOPNOTSUPP_CALLS = ("fallocate",)
OPEN_TREE_ATTR = 467  # the newest call named here (Linux 6.15)
LAST_KNOWN = 469  # file_getattr / file_setattr (Linux 6.17): allowed
UNKNOWN_UNTIL = 512  # numbers above LAST_KNOWN up to here: ENOSYS (a decade of new calls)

O_CREAT = 0o100
O_TMPFILE = 0o20000000  # __O_TMPFILE, the same on every architecture Podium runs on
# (syscall, index of its flags argument or None, index of its mode argument)
MODE_CALLS = (
    ("chmod", None, 1), ("fchmod", None, 1), ("fchmodat", None, 2), ("fchmodat2", None, 2),
    ("mknod", None, 1), ("mknodat", None, 2), ("creat", None, 1),
    ("open", 1, 2), ("openat", 2, 3),
)  # fmt: skip
CLONE_NAMESPACES = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
    0x00000080,
)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
TTY_IOCTLS = (0x5412, 0x541C)  # TIOCSTI (type into the terminal), TIOCLINUX
DENIED_FAMILIES = (15, 21, 30, 31, 38, 40, 44)  # KEY, RDS, TIPC, BLUETOOTH, ALG, VSOCK, XDP


class SeccompUnavailable(Exception):
    """libseccomp or its Python bindings are missing here; the message says which."""


def _bindings() -> ModuleType:
    try:
        import seccomp  # type: ignore[import-not-found]  # Debian's python3-seccomp

        return seccomp  # type: ignore[no-any-return]
    except ImportError:
        pass
    try:
        import pyseccomp  # type: ignore[import-untyped]
    except ImportError:
        raise SeccompUnavailable("no libseccomp Python bindings (pip install pyseccomp)") from None
    except OSError as exc:  # pyseccomp loads libseccomp.so.2 at import
        raise SeccompUnavailable(
            f"libseccomp cannot be loaded ({exc}): apt install libseccomp2"
        ) from None
    return pyseccomp  # type: ignore[no-any-return]


def _rule(f: Any, action: int, call: str | int, *args: Any) -> None:
    try:
        f.add_rule(action, call, *args)
    except (OSError, ValueError, RuntimeError):  # a name this architecture does not have
        pass


@functools.cache
def filter_bpf() -> bytes:
    """The compiled filter for this machine's architecture; SeccompUnavailable if it cannot be
    built. The same bytes serve every kernel of the process."""
    sc = _bindings()
    try:
        f = sc.SyscallFilter(sc.ALLOW)
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp cannot build a filter: {exc}") from None
    eperm, enosys = sc.ERRNO(errno.EPERM), sc.ERRNO(errno.ENOSYS)
    for name in EPERM_CALLS:
        _rule(f, eperm, name)
    for name in ENOSYS_CALLS:
        _rule(f, enosys, name)
    for name in EOPNOTSUPP_CALLS:
        _rule(f, sc.ERRNO(errno.EOPNOTSUPP), name)
    _rule(f, eperm, OPEN_TREE_ATTR)
    for number in range(LAST_KNOWN + 1, UNKNOWN_UNTIL):
        _rule(f, enosys, number)
    for call, flags_arg, mode_arg in MODE_CALLS:
        for bit in (stat.S_ISUID, stat.S_ISGID):
            mode = sc.Arg(mode_arg, sc.MASKED_EQ, bit, bit)
            if flags_arg is None:
                _rule(f, eperm, call, mode)
                continue
            for creating in (O_CREAT, O_TMPFILE):
                _rule(f, eperm, call, sc.Arg(flags_arg, sc.MASKED_EQ, creating, creating), mode)
    for flag in CLONE_NAMESPACES:
        _rule(f, eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for request in TTY_IOCTLS:
        _rule(f, eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    for family in DENIED_FAMILIES:
        _rule(f, eperm, "socket", sc.Arg(0, sc.EQ, family))
    return _export(f)


def _export(f: Any) -> bytes:
    with tempfile.TemporaryFile() as fh:
        f.export_bpf(fh)
        fh.flush()
        os.lseek(fh.fileno(), 0, os.SEEK_SET)
        return fh.read()


def seccomp_problem() -> str | None:
    """Why no filter can be had here (one line), or None."""
    try:
        filter_bpf()
    except SeccompUnavailable as exc:
        return str(exc)
    return None
