"""What a sandbox produced, handled as hostile: its text made inert, its files read safely.

Two rules live here, so that no other module spells them again:

* **Text.** Anything that came out of a sandbox (a solution's output, its error messages, a
  reason quoting a file it wrote) may carry terminal escape sequences (an OSC 52 clipboard write,
  a screen clear) and other control bytes. :func:`inert` drops escape sequences and shows every
  other control character as a visible escape (``\\x07``), keeping tabs and newlines. The
  records apply it to every such field (:data:`Inert`), so the text is harmless wherever it
  goes afterwards: a terminal, a log line, a prompt, a page.
* **Files.** A file a sandbox wrote is read only through :func:`open_untrusted` (or
  :func:`copy_untrusted`, which hands it over into a file the host creates). No symlink is
  followed at any component below the directory the caller trusts, the open descriptor is
  checked to be a regular file of bounded size, and everything is read from that descriptor:
  a name swapped after the check changes nothing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Annotated, BinaryIO

from pydantic import AfterValidator

# Terminal escape sequences: CSI (colours, cursor moves), OSC (titles, links, clipboard: ended
# by BEL or ESC \), DCS/SOS/PM/APC strings, then the two-byte escapes ("ESC 7", "ESC ( B"...).
ESCAPE_SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|[ -/]*[0-~]?)"
)
SGR = re.compile(r"\x1b\[[0-9;]*m")  # colours and text attributes only
# What is left to neutralise once sequences are gone: C0 controls but tab and newline, DEL,
# the C1 controls (a lone U+009B is a CSI to some terminals), and the bidirectional overrides
# that make text read differently from what it is, and lone surrogates (no encoder writes
# them: one in a record would make it fail to print, to serialise, to reach a page).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

MAX_UNTRUSTED_BYTES = 1024**3  # a file a solution wrote that is larger is refused unread
_CHUNK = 1024**2
# A file larger than SPARSE_RATIO times what it holds on the disk, plus SPARSE_SLACK, is sparse
# even where the file system reports no holes (NFSv3, 9p): compression stays below the ratio
# (btrfs packs 128 KiB into one 4 KiB block at best: 32x), a small inline file below the slack.
SPARSE_RATIO = 64
SPARSE_SLACK = 1024**2


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences."""
    return ESCAPE_SEQUENCE.sub("", text)


def inert(text: str) -> str:
    """``text`` safe to print anywhere: no escape sequence, no raw control character.

    Carriage returns become newlines (a progress bar's redraws read as lines); any other
    control character is shown as its Python escape (``\\x1b``, ``\\u202e``).
    """
    text = strip_ansi(text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _inert_or_none(text: str | None) -> str | None:
    return None if text is None else inert(text)


Inert = Annotated[str, AfterValidator(inert)]
InertOrNone = Annotated[str | None, AfterValidator(_inert_or_none)]


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it, whatever a sandbox made of it.

    Python's ``shutil.rmtree`` recurses and gives up past ~1000 levels (a solution makes that
    many in milliseconds), leaving the tree behind; coreutils' ``rm`` walks any depth, never
    follows a link and here never leaves the file system. A second pass first gives the owner
    back the permissions a solution took away (a non-root Podium cannot enter a mode-000
    directory). What still cannot be removed stays: the caller's work goes on.
    """
    if not os.path.lexists(path):
        return
    for fix in ([], ["chmod", "-R", "--", "u+rwx", str(path)]):
        if fix:
            subprocess.run(fix, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        rm = ["rm", "-rf", "--one-file-system", "--", str(path)]
        subprocess.run(rm, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        if not os.path.lexists(path):
            return


class Refused(Exception):
    """A file a sandbox wrote that the host will not read; the message says why, in words."""


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFLNK: "a symlink",
}


def _open_below(trusted: Path, relative: PurePosixPath) -> int:
    """A descriptor for ``trusted/relative``, no component below ``trusted`` followed as a link."""
    parts = relative.parts
    if not parts or relative.is_absolute() or ".." in parts:
        raise Refused(f"{relative} is not a path inside {trusted}")
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(trusted, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            inner = os.open(name, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it.
        return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def _why_not(exc: OSError, shown: str) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return f"{shown} is a symlink (or lies below one); links are never followed"
    if exc.errno == errno.ENXIO:
        return f"{shown} is a socket, not a regular file"
    return f"{shown} cannot be opened: {exc.strerror}"


@contextlib.contextmanager
def open_untrusted(
    path: Path,
    *,
    trusted: Path | None = None,
    max_bytes: int | None = MAX_UNTRUSTED_BYTES,
    shown: str | None = None,
) -> Iterator[BinaryIO]:
    """Open a file a sandbox wrote, for reading; raise :class:`Refused` if it is not safe.

    ``trusted`` is the deepest directory the sandbox could not have replaced (default: the
    file's parent); no component from there on is followed as a symlink. The file must be a
    regular file of at most ``max_bytes``; a missing one raises FileNotFoundError. ``shown``
    names it in the reasons (default: its path).
    """
    shown = shown or str(path)
    base = trusted if trusted is not None else path.parent
    try:
        fd = _open_below(base, PurePosixPath(path.relative_to(base)))
    except ValueError:
        raise Refused(f"{path} is not inside {base}") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Refused(_why_not(exc, shown)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise Refused(f"{shown} is {kind}, not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise Refused(f"{shown} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        yield handle


def read_untrusted(
    path: Path,
    *,
    trusted: Path | None = None,
    max_bytes: int = MAX_UNTRUSTED_BYTES,
    shown: str | None = None,
) -> bytes:
    """The bytes of a file a sandbox wrote (see :func:`open_untrusted`), at most ``max_bytes``.

    Reads what the file holds, not the cap: ``read(n)`` allocates ``n`` bytes up front, so a
    3-byte file read under a 1 GiB cap would cost a gigabyte of address space."""
    with open_untrusted(path, trusted=trusted, max_bytes=max_bytes, shown=shown) as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(min(size, max_bytes) + 1)
        if len(data) > size:  # it grows while being read: read on, to the cap
            data += fh.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:  # it grew after the check (a writer still alive)
        raise Refused(f"{shown or path} grew past the {max_bytes:,}-byte limit while being read")
    return data


def copy_untrusted(
    path: Path,
    dest: Path,
    *,
    trusted: Path | None = None,
    max_bytes: int = MAX_UNTRUSTED_BYTES,
    shown: str | None = None,
) -> int:
    """Copy a file a sandbox wrote into ``dest``, a new file the host creates (mode 0644).

    Nothing of the source but its bytes comes along: not its owner, not its mode (no setuid or
    setgid bit can reach the host), not a link. Returns the bytes copied; raises
    :class:`Refused` (leaving no ``dest``) when the source is not safe to read, or is
    :func:`sparse` (its holes would be written out). Copied with plain reads and writes: ``dest``
    shares no extent with a file a sandbox wrote.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with open_untrusted(path, trusted=trusted, max_bytes=max_bytes, shown=shown) as src:
        if why := sparse(src.fileno(), shown or str(path)):
            raise Refused(why)
        out = os.open(dest, flags, 0o644)
        copied = 0
        try:
            os.fchmod(out, 0o644)  # whatever the umask
            while chunk := src.read(_CHUNK):
                copied += len(chunk)
                if copied > max_bytes:
                    raise Refused(f"{shown or path} grew past the {max_bytes:,}-byte limit")
                _write_all(out, chunk)
        except BaseException:
            os.close(out)
            dest.unlink(missing_ok=True)
            raise
        os.close(out)
    return copied


def sparse(fd: int, shown: str) -> str | None:
    """Why the regular file open at ``fd`` must not be copied, if it has holes: bytes that read
    as zeros but take no disk (``truncate``, a seek past the end), so that a copy would cost
    the host its whole size (1 GiB for 4 KiB written). Read on the descriptor, before a byte
    is copied; the file's offset is left at the start.

    A file holding at least its size on the disk costs a copy no more than it cost its writer,
    holes or not (XFS may allocate past the end); otherwise any hole the file system reports
    (``SEEK_HOLE`` before the end), or a size far beyond the blocks (``SPARSE_RATIO``) where it
    reports none, refuses it.
    """
    info = os.fstat(fd)
    held = info.st_blocks * 512
    if info.st_size <= held:
        return None
    try:
        hole = os.lseek(fd, 0, os.SEEK_HOLE)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:  # no SEEK_HOLE here: the blocks alone tell
        hole = info.st_size
    if hole < info.st_size or info.st_size > SPARSE_RATIO * held + SPARSE_SLACK:
        return (
            f"{shown} is sparse: {info.st_size:,} bytes, of which only {held:,} are on the "
            "disk (a file with holes is never copied: the copy would write them all)"
        )
    return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
