"""Sparse files a solution leaves: nothing leaves a slot that costs the host more than it cost
the solution.

A file with holes (``truncate -s 1G``, or a seek past the end and one byte written) takes 4 KiB
of the disk and reads as 1 GiB of zeros. Before, the hand-over copied such a submission dense
into the node's directory, 1 GiB of the run dir per node, kept even though the node was
refused; a kept ``working/`` held such files at their full size for any later copy of the run
(``tar``, ``scp``) to write out. Judged on the host: the blocks the run dir holds (``du``), and
the size of what a node's directory holds.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from podium.interfaces import Workspace
from podium.records import ExecStatus
from podium.sandbox import bwrap_problem
from podium.sandbox.trees import disk_usage
from podium.untrusted import Refused, copy_untrusted, sparse
from tests.sandbox.test_attacks import run_all, with_limits

_BWRAP_PROBLEM = bwrap_problem()
GIB = 1024**3
MIB = 1024**2
AT_MOST = 16 * MIB  # what the run dir may hold on the disk after the node (its slots are gone)
# RLIMIT_FSIZE is the workspace limit: 2 GiB lets a solution make a 1 GiB file, the copy's cap.
ROOMY = with_limits(workspace_bytes=2 * GIB)

_SPARSE = """
import os
GIB = 1024**3
with open('submission/submission.csv', 'w') as f:
    f.write('id,y\\n1,0\\n')
{how}
with open('working/holes.bin', 'wb') as f:  # data at the end only
    f.seek(GIB - 1)
    f.write(b'\\0')
open('working/notes.txt', 'w').write('kept')
info = os.stat('submission/submission.csv')
print('SPARSE', info.st_size, info.st_blocks * 512, flush=True)
"""
HOWS = {
    "truncate": "os.truncate('submission/submission.csv', GIB)",
    "seek": "f = open('submission/submission.csv', 'r+b')\nf.seek(GIB - 1)\nf.write(b'\\n')\n"
    "f.close()",
}


@pytest.fixture(params=["bwrap", "forked"])
def isolated(request: pytest.FixtureRequest) -> str:
    """Cold kernels, or kernels forked from a factory."""
    return str(request.param)


def apparent(root: Path) -> int:
    """What a copy of everything under ``root`` would write (the files' sizes)."""
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
@pytest.mark.skipif(_BWRAP_PROBLEM is not None, reason=f"no bwrap: {_BWRAP_PROBLEM}")
@pytest.mark.parametrize("how", sorted(HOWS))
def test_a_sparse_submission_is_refused_and_costs_the_run_dir_nothing(
    isolated: str, tmp_path: Path, how: str
) -> None:
    public = tmp_path / "public"
    public.mkdir()
    ws = Workspace(tmp_path / "node", public, keep_working=True)
    result = run_all(isolated, ws, _SPARSE.format(how=HOWS[how]), options=ROOMY)[0]
    assert result.status is ExecStatus.OK, result.output
    size, held = map(int, result.output.split("SPARSE ")[1].split()[:2])
    assert size == GIB and held < MIB  # the attack made what it meant to
    refused = result.submission_refused or ""
    assert "submission/submission.csv is sparse" in refused, refused
    assert f"{GIB:,} bytes" in refused
    assert sorted(p.name for p in ws.root.iterdir()) == ["working"]  # no submission.csv
    assert sorted(p.name for p in (ws.root / "working").iterdir()) == ["notes.txt"]
    # On the host: the run dir holds next to nothing, and nothing in it would grow in a copy.
    assert disk_usage([tmp_path], None, None).bytes < AT_MOST
    assert apparent(ws.root) < MIB


def _sparse_file(path: Path, how: str) -> None:
    with path.open("wb") as f:
        if how == "hole at the end":
            f.write(b"id,y\n")
            f.truncate(64 * MIB)
        elif how == "hole in the middle":
            f.write(b"id,y\n")
            f.seek(64 * MIB)
            f.write(b"1,0\n")
        else:  # dense
            f.write(b"id,y\n" + b"1,0\n" * MIB)


@pytest.mark.parametrize("how", ["hole at the end", "hole in the middle", "dense"])
def test_only_a_file_with_holes_is_refused_before_a_byte_is_copied(
    tmp_path: Path, how: str
) -> None:
    source, copy = tmp_path / "written.csv", tmp_path / "copy.csv"
    _sparse_file(source, how)
    if how == "dense":
        assert copy_untrusted(source, copy) == source.stat().st_size
        assert copy.read_bytes() == source.read_bytes()
        return
    with pytest.raises(Refused, match=r"written\.csv is sparse: 67,10\d,\d+ bytes, of which only"):
        copy_untrusted(source, copy)
    assert not copy.exists()


@pytest.mark.parametrize(
    ("size", "held", "refused"),
    [
        (64 * MIB, 4096, True),  # truncated: 4 KiB written
        (100, 0, False),  # a small file inline in its inode
        (32 * MIB, MIB, False),  # compressed 32 times (btrfs's most)
        (128 * MIB, MIB, True),  # 128 times what it holds
    ],
)
def test_where_no_hole_is_reported_the_blocks_tell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, held: int, refused: bool
) -> None:
    """NFSv3 and 9p answer SEEK_HOLE with the end of the file, holes or not."""
    real_lseek = os.lseek
    seen = SimpleNamespace(st_size=size, st_blocks=held // 512)

    def no_holes(fd: int, offset: int, whence: int) -> int:
        return size if whence == os.SEEK_HOLE else real_lseek(fd, offset, whence)

    monkeypatch.setattr(os, "lseek", no_holes)
    monkeypatch.setattr(os, "fstat", lambda fd: seen)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert (sparse(fd, "written.csv") is not None) is refused
    finally:
        os.close(fd)
