"""Kernel slots: the directory a kernel works in, prepared before the node it will serve exists.

A pre-started kernel cannot know its node, so it works in a slot (``working/``,
``submission/``, the read-only ``input``, and ``validate_submission.py``, the format-only
check the solution may run on its submission) under the run's scratch directory, on the same
filesystem as the node directories. Once every process of the kernel is dead, ``hand_over``
gives the node what the ``Workspace`` contract promises (the submission copied by descriptor
into a file the host creates; ``working/`` renamed over, only when kept, stripped of
setuid/setgid bits and special files) and the rest of the slot is thrown away. Nothing in the
slot is ever followed as a link.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from podium.interfaces import SUBMISSION, SUBMISSION_WRITTEN, Workspace
from podium.submission_check import install_script
from podium.untrusted import Refused, copy_untrusted

OUTPUT_DIRS = ("working", "submission")
_slots = itertools.count()
_UNSAFE_MODE = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH


@dataclass(frozen=True)
class Slot:
    root: Path
    input_dir: Path

    @classmethod
    def create(cls, scratch: Path, input_dir: Path) -> Slot:
        # Absolute: bwrap resolves bind sources against its own cwd, which is the slot.
        root = scratch.resolve() / f"slot-{os.getpid()}-{next(_slots)}"
        for sub in OUTPUT_DIRS:
            (root / sub).mkdir(parents=True)
        install_script(root)
        return cls(root, input_dir)

    @property
    def writable(self) -> list[Path]:
        """The directories the kernel may write (a sandbox may give them to its uid)."""
        return [self.root, *(self.root / sub for sub in OUTPUT_DIRS)]

    def link_input(self) -> None:
        """For sandboxes that cannot bind-mount: ``input`` is a symlink to the public data."""
        (self.root / "input").symlink_to(self.input_dir.resolve(), target_is_directory=True)

    def hand_over(self, workspace: Workspace) -> str | None:
        """Give ``workspace`` its outputs; call only once every process of the kernel is dead.

        Returns why the submission was refused (a symlink, a FIFO, too large), or None.
        """
        workspace.root.mkdir(parents=True, exist_ok=True)
        target = workspace.root / SUBMISSION
        target.unlink(missing_ok=True)
        refused = None
        try:
            copy_untrusted(self.root / SUBMISSION_WRITTEN, target, trusted=self.root,
                           shown=SUBMISSION_WRITTEN)  # fmt: skip
        except FileNotFoundError:
            pass
        except Refused as exc:
            refused = str(exc)
        if workspace.keep_working:
            _keep_working(self.root / "working", workspace.root / "working")
        return refused

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _keep_working(source: Path, target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    if not stat.S_ISDIR(source.lstat().st_mode):  # the solution replaced it: keep nothing
        target.mkdir()
        return
    make_safe(source)
    source.rename(target)


def make_safe(tree: Path) -> None:
    """Make a dead sandbox's tree the host's: owned by Podium's uid, no setuid/setgid or
    world-writable bit, no FIFO, socket or device node (symlinks stay, never followed)."""
    me = (os.getuid(), os.getgid())
    _make_entry_safe(str(tree), None, me)
    for _top, dirs, files, dir_fd in os.fwalk(tree, follow_symlinks=False):
        for name in [*dirs, *files]:
            _make_entry_safe(name, dir_fd, me)


def _make_entry_safe(name: str, dir_fd: int | None, me: tuple[int, int]) -> None:
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        kind = stat.S_IFMT(info.st_mode)
        if kind not in (stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK):
            os.unlink(name, dir_fd=dir_fd)
            return
        if (info.st_uid, info.st_gid) != me and os.getuid() == 0:
            os.chown(name, *me, dir_fd=dir_fd, follow_symlinks=False)
        if kind != stat.S_IFLNK and info.st_mode & _UNSAFE_MODE:
            os.chmod(name, stat.S_IMODE(info.st_mode) & ~_UNSAFE_MODE, dir_fd=dir_fd)


@dataclass(frozen=True)
class Usage:
    bytes: int = 0
    entries: int = 0


def disk_usage(roots: list[Path], stop_bytes: int | None, stop_entries: int | None) -> Usage:
    """Bytes (allocated blocks, so sparse files count as written) and entries (files,
    directories, links: each costs an inode) under ``roots``, never following a link.

    Stops counting once past either bound: a watchdog only needs to know that.
    """
    total = entries = 0
    stack = [str(root) for root in roots]
    while stack:
        try:
            with os.scandir(stack.pop()) as found:
                listed = list(found)
        except OSError:
            continue
        for entry in listed:
            entries += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
        if (stop_bytes is not None and total > stop_bytes) or (
            stop_entries is not None and entries > stop_entries
        ):
            break
    return Usage(total, entries)
