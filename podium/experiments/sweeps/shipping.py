"""Moving a run dir between machines that share no filesystem: a gzipped tar in memory.

A run dir travels as the bytes :func:`pack_dir` makes and lands with :func:`unpack_dir` (into a
new directory) or :func:`replace_dir` (over the old copy, atomically). Only directories, regular
files and symlinks that stay inside the run dir travel; a symlink pointing elsewhere (a node's
``input`` link to the task data, a link a solution made) and special files (FIFOs, sockets,
devices) are left behind, since they would mean nothing, or something hostile, on the other side.

Unpacking trusts nothing: an archive with an absolute name, a ``..`` component, a link leading out
of the destination or a special file is refused whole (:class:`ShippingError`) before anything is
written, and the extraction itself runs under ``tarfile``'s ``"data"`` filter.
"""

from __future__ import annotations

import ctypes
import io
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zlib
from pathlib import Path

from podium.errors import PodiumError

COMPRESS_LEVEL = 1  # run dirs are mostly CSVs, JSON and SQLite: level 1 gets most of the gain


class ShippingError(PodiumError):
    """An archive of a run dir is unreadable or unsafe to unpack."""


def pack_dir(root: Path, compresslevel: int = COMPRESS_LEVEL) -> bytes:
    """The contents of ``root`` (names relative to it) as a ``.tar.gz``; links are not followed."""
    buf = io.BytesIO()
    with tarfile.open(
        fileobj=buf, mode="w:gz", compresslevel=compresslevel, format=tarfile.PAX_FORMAT
    ) as tar:
        for path, rel in _walk(root):
            _add(tar, path, rel)
    return buf.getvalue()


def unpack_dir(data: bytes, dest: Path) -> None:
    """Unpack an archive made by :func:`pack_dir` into ``dest``, which must not exist yet."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            for member in members:
                _check_member(member)
            dest.mkdir(parents=True)
            tar.extractall(dest, members=members, filter="data")
    except ShippingError:
        raise
    except tarfile.FilterError as exc:
        raise ShippingError(f"unsafe archive member refused: {exc}") from exc
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise ShippingError(f"unreadable run dir archive: {exc}") from exc


def replace_dir(target: Path, data: bytes) -> None:
    """Make ``target`` hold exactly the archive's contents; a crash leaves the old or the new.

    The archive is unpacked into a sibling directory first (a refused or broken archive leaves
    ``target`` untouched), then swapped in with one atomic exchange where the OS has one
    (Linux ``renameat2``), else with two renames.
    """
    parent, prefix = target.parent, f".{target.name}.shipping-"
    parent.mkdir(parents=True, exist_ok=True)
    for stale in parent.glob(f"{prefix}*"):  # what a crash during an earlier swap left
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    incoming = staging / "dir"
    try:
        unpack_dir(data, incoming)
        if not (target.exists() or target.is_symlink()):
            os.replace(incoming, target)
        elif not _exchange(incoming, target):
            os.replace(target, staging / "old")
            os.replace(incoming, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # now holds the old contents, or junk


# --- packing --------------------------------------------------------------------------------


def _walk(root: Path) -> list[tuple[Path, str]]:
    """Every entry under ``root`` with its archive name, parents before children, sorted."""
    out: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        rel_base = base.relative_to(root).as_posix()
        for name in sorted([*dirnames, *filenames]):
            out.append((base / name, name if rel_base == "." else f"{rel_base}/{name}"))
    out.sort(key=lambda item: item[1].split("/"))
    return out


def _add(tar: tarfile.TarFile, path: Path, rel: str) -> None:
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return  # removed while we walked
    if stat.S_ISDIR(mode):
        tar.add(path, arcname=rel, recursive=False)
    elif stat.S_ISLNK(mode):
        target = str(path.readlink())
        if _inside(rel, target):
            tar.add(path, arcname=rel)
    elif stat.S_ISREG(mode):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return  # gone, or swapped for a link since lstat
        with os.fdopen(fd, "rb") as fh:
            info = tar.gettarinfo(arcname=rel, fileobj=fh)
            if info.isreg():
                tar.addfile(info, fh)


def _inside(name: str, link_target: str) -> bool:
    """True when a symlink at ``name`` pointing to ``link_target`` stays inside the root."""
    if not link_target or posixpath.isabs(link_target):
        return False
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), link_target))
    return resolved != ".." and not resolved.startswith("../")


# --- unpacking ------------------------------------------------------------------------------


def _check_member(member: tarfile.TarInfo) -> None:
    name = member.name
    if not name or posixpath.isabs(name):
        raise ShippingError(f"unsafe archive member refused: absolute path {name!r}")
    if ".." in name.split("/"):
        raise ShippingError(f"unsafe archive member refused: {name!r} leaves the run dir")
    if member.issym():
        if not _inside(name, member.linkname):
            raise ShippingError(
                f"unsafe archive member refused: link {name!r} -> {member.linkname!r} "
                "points outside the run dir"
            )
    elif member.islnk():
        link = member.linkname
        if not link or posixpath.isabs(link) or ".." in link.split("/"):
            raise ShippingError(
                f"unsafe archive member refused: hard link {name!r} -> {link!r} "
                "points outside the run dir"
            )
    elif not (member.isdir() or member.isreg()):
        raise ShippingError(f"unsafe archive member refused: {name!r} is not a file or directory")


# --- the atomic swap ------------------------------------------------------------------------

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    here = ctypes.c_int(_AT_FDCWD)
    result = renameat2(here, os.fsencode(a), here, os.fsencode(b), ctypes.c_uint(_RENAME_EXCHANGE))
    return int(result) == 0
