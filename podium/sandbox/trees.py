"""Walking the trees a sandbox wrote: counted by the watchdog, made safe when kept.

A solution shapes these trees as it likes, so a walk never follows a link, never needs a path
longer than one name (each directory is opened relative to its parent's descriptor: a tree
deeper than PATH_MAX is walked like any other), never recurses in Python (Python's own walks
give up past ~1000 levels) and holds at most ``MAX_DEPTH`` descriptors. A tree deeper than
``MAX_DEPTH`` is itself a breach: no solution needs one, and a walk that skipped it would let
bytes hide from the disk limit. Removing such trees is ``podium.untrusted.remove_tree``'s job.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from podium.untrusted import sparse

MAX_DEPTH = 64  # directory levels below a walked root
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_UNSAFE_MODE = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH


class TooDeep(Exception):
    """A tree with directories more than ``MAX_DEPTH`` levels down."""

    def __init__(self, root: Path) -> None:
        super().__init__(f"{root.name}/ is more than {MAX_DEPTH} directories deep")


@dataclass(frozen=True)
class Usage:
    bytes: int = 0
    entries: int = 0
    too_deep: bool = False


def entries(root: Path) -> Iterator[tuple[int, str, os.stat_result]]:
    """Every entry below ``root`` as (its directory's descriptor, its name, its lstat).

    The descriptor is valid until the next item is asked for; a directory is yielded before
    what is in it. Unreadable directories are skipped. Raises TooDeep past ``MAX_DEPTH``.
    """
    try:
        top = os.open(root, _OPEN_DIR)
    except OSError:
        return
    frames = [(top, _subdirs_after_listing(top))]
    try:
        while frames:
            fd, listing = frames[-1]
            item = next(listing, None)
            if item is None:
                os.close(fd)
                frames.pop()
                continue
            name, info = item
            yield fd, name, info
            if stat.S_ISDIR(info.st_mode):
                if len(frames) >= MAX_DEPTH:
                    raise TooDeep(root)
                with contextlib.suppress(OSError):
                    child = os.open(name, _OPEN_DIR, dir_fd=fd)
                    frames.append((child, _subdirs_after_listing(child)))
    finally:
        for fd, _ in frames:
            os.close(fd)


def _subdirs_after_listing(fd: int) -> Iterator[tuple[str, os.stat_result]]:
    try:
        with os.scandir(fd) as found:
            names = [entry.name for entry in found]
    except OSError:
        names = []
    for name in names:
        with contextlib.suppress(OSError):
            yield name, os.stat(name, dir_fd=fd, follow_symlinks=False)


def disk_usage(roots: list[Path], stop_bytes: int | None, stop_entries: int | None) -> Usage:
    """Bytes (allocated blocks, so sparse files count as written) and entries (files,
    directories, links: each costs an inode) under ``roots``; ``too_deep`` past MAX_DEPTH.

    Stops counting once past either bound: a watchdog only needs to know that.
    """
    total = count = 0
    try:
        for root in roots:
            for _fd, _name, info in entries(root):
                count += 1
                total += info.st_blocks * 512
                if (stop_bytes is not None and total > stop_bytes) or (
                    stop_entries is not None and count > stop_entries
                ):
                    return Usage(total, count)
    except TooDeep:
        return Usage(total, count, too_deep=True)
    return Usage(total, count)


def make_safe(tree: Path) -> None:
    """Make a dead sandbox's tree the host's: owned by Podium's uid, no setuid/setgid or
    world-writable bit, nothing but regular files and directories (links, FIFOs, sockets and
    device nodes are removed), and no file with holes (removed: ``podium.untrusted.sparse``;
    its size is no bound on what a later copy of the tree, a ``tar`` or an ``scp``, writes).
    Raises TooDeep; the tree is then half done, not to be kept."""
    me = (os.getuid(), os.getgid())
    parent = os.open(tree.parent, _OPEN_DIR)
    try:
        _make_entry_safe(parent, tree.name, os.stat(tree.name, dir_fd=parent,
                                                    follow_symlinks=False), me)  # fmt: skip
    finally:
        os.close(parent)
    for fd, name, info in entries(tree):
        _make_entry_safe(fd, name, info, me)


def _make_entry_safe(dir_fd: int, name: str, info: os.stat_result, me: tuple[int, int]) -> None:
    with contextlib.suppress(FileNotFoundError):
        kind = stat.S_IFMT(info.st_mode)
        if kind not in (stat.S_IFREG, stat.S_IFDIR) or (
            kind == stat.S_IFREG and _sparse(dir_fd, name, info)
        ):
            os.unlink(name, dir_fd=dir_fd)
            return
        if (info.st_uid, info.st_gid) != me and os.getuid() == 0:
            os.chown(name, *me, dir_fd=dir_fd, follow_symlinks=False)
        if info.st_mode & _UNSAFE_MODE:
            # A regular file or a directory, and nothing runs to swap it: the tree's
            # processes are dead or frozen (Linux has no lchmod to ask for more).
            os.chmod(name, stat.S_IMODE(info.st_mode) & ~_UNSAFE_MODE, dir_fd=dir_fd)


def _sparse(dir_fd: int, name: str, info: os.stat_result) -> bool:
    """Whether a regular file of a dead tree has holes. Only a file holding less than its
    size on the disk is opened; one that cannot be opened is taken as sparse then."""
    if info.st_size <= info.st_blocks * 512:
        return False
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
    except OSError:
        return True
    try:
        return sparse(fd, name) is not None
    finally:
        os.close(fd)
