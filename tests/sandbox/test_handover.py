"""The hand-over of a dead kernel's slot to its node (``Slot.hand_over``), on hostile slots.

What a solution can leave there is arbitrary: links, FIFOs, setuid files, a replaced
directory. These tests build such slots directly (no kernel: the processes that wrote them are
dead by the time a hand-over happens) and check what reaches the node's directory.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest

from podium.benchmarks.folder import FolderTask
from podium.interfaces import Workspace
from podium.sandbox import Slot
from tests.support import DEEP, make_deep


@pytest.fixture
def slot(tmp_path: Path) -> Slot:
    public = tmp_path / "public"
    public.mkdir()
    return Slot.create(tmp_path / "scratch", public)


def node(tmp_path: Path, keep_working: bool = False) -> Workspace:
    return Workspace(tmp_path / "node", tmp_path / "public", keep_working)


def test_a_regular_submission_is_copied_into_a_file_of_the_host(slot: Slot, tmp_path: Path) -> None:
    written = slot.root / "submission" / "submission.csv"
    written.write_text("id,y\n1,0\n")
    written.chmod(0o4755)
    ws = node(tmp_path)
    assert slot.hand_over(ws) is None
    copy = ws.root / "submission.csv"
    assert copy.read_text() == "id,y\n1,0\n"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o644
    assert sorted(p.name for p in ws.root.iterdir()) == ["submission.csv"]


def test_no_submission_is_not_a_refusal(slot: Slot, tmp_path: Path) -> None:
    ws = node(tmp_path)
    assert slot.hand_over(ws) is None
    assert not (ws.root / "submission.csv").exists()


def test_a_symlinked_submission_is_refused_and_the_target_is_untouched(
    slot: Slot, tmp_path: Path
) -> None:
    secret = tmp_path / "answers.csv"
    secret.write_text("id,y\n1,1\n")
    (slot.root / "submission" / "submission.csv").symlink_to(secret)
    ws = node(tmp_path)
    refused = slot.hand_over(ws)
    assert refused is not None and "symlink" in refused and "1,1" not in refused
    assert not (ws.root / "submission.csv").exists()
    assert secret.read_text() == "id,y\n1,1\n"


def test_a_symlinked_submission_directory_is_refused(slot: Slot, tmp_path: Path) -> None:
    elsewhere = tmp_path / "private"
    elsewhere.mkdir()
    (elsewhere / "submission.csv").write_text("id,y\n1,1\n")
    (slot.root / "submission").rmdir()
    (slot.root / "submission").symlink_to(elsewhere, target_is_directory=True)
    refused = slot.hand_over(node(tmp_path))
    assert refused is not None and "symlink" in refused
    assert not (tmp_path / "node" / "submission.csv").exists()


@pytest.mark.timeout(30)
def test_a_fifo_submission_is_refused_without_blocking(slot: Slot, tmp_path: Path) -> None:
    os.mkfifo(slot.root / "submission" / "submission.csv")
    refused = slot.hand_over(node(tmp_path))
    assert refused is not None and "FIFO" in refused


def test_kept_working_loses_setuid_bits_links_special_files_and_foreign_owners(
    slot: Slot, tmp_path: Path
) -> None:
    working = slot.root / "working"
    (working / "deep" / "er").mkdir(parents=True)
    for path in (working / "sh", working / "deep" / "er" / "sh"):
        path.write_bytes(b"#!/bin/sh\n")
        path.chmod(0o6777)
    (working / "deep").chmod(0o2777)
    os.mkfifo(working / "fifo")
    (working / "link").symlink_to("/etc/passwd")
    if os.getuid() == 0:
        os.chown(working / "sh", 65533, 65533)
    ws = node(tmp_path, keep_working=True)
    assert slot.hand_over(ws) is None
    kept = ws.root / "working"
    found = {p.relative_to(kept).as_posix(): p.lstat() for p in kept.rglob("*")}
    # Nothing but files and directories: no link a later `cp -L` or `cat` would follow.
    assert sorted(found) == ["deep", "deep/er", "deep/er/sh", "sh"]
    for name, info in found.items():
        assert not info.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH), name
        assert info.st_uid == os.getuid(), name
    assert (kept / "sh").read_bytes() == b"#!/bin/sh\n"


def test_a_replaced_working_directory_is_not_kept(slot: Slot, tmp_path: Path) -> None:
    (slot.root / "working").rmdir()
    (slot.root / "working").symlink_to(tmp_path, target_is_directory=True)
    ws = node(tmp_path, keep_working=True)
    slot.hand_over(ws)
    assert (ws.root / "working").is_dir() and not (ws.root / "working").is_symlink()
    assert list((ws.root / "working").iterdir()) == []


@pytest.mark.parametrize("keep_working", [True, False])
def test_a_working_tree_too_deep_to_walk_still_hands_over_and_leaves_nothing(
    slot: Slot, tmp_path: Path, keep_working: bool
) -> None:
    # Python's fwalk and rmtree recurse: 3000 levels raised RecursionError out of the
    # hand-over (the kernel stayed frozen) and left the slot on the host's disk.
    make_deep(slot.root / "working", DEEP)
    (slot.root / "submission" / "submission.csv").write_text("id,y\n1,0\n")
    ws = node(tmp_path, keep_working=keep_working)
    assert slot.hand_over(ws) is None
    assert (ws.root / "submission.csv").read_text() == "id,y\n1,0\n"
    if keep_working:
        assert list((ws.root / "working").iterdir()) == []  # too deep to keep: nothing kept
    slot.discard()
    assert not slot.root.exists()


def test_a_submission_over_the_tasks_bound_is_refused_and_never_copied(
    slot: Slot, tmp_path: Path, titanic: FolderTask
) -> None:
    """The hand-over copies no more than the task could accept: a refused file of a gigabyte
    stayed in every hostile node's directory (within the sandbox's own 1 GiB cap)."""
    bound = titanic.max_submission_bytes()
    assert bound == 100 * 1024 * 1024  # the sample's bound: max(100 MiB, 20 x the sample)
    written = slot.root / "submission" / "submission.csv"
    written.write_bytes(b"PassengerId,Survived\n892,0\n")
    ws = dataclasses.replace(node(tmp_path), max_submission_bytes=20)
    reason = slot.hand_over(ws)
    assert reason is not None and "over the 20-byte limit" in reason, reason
    assert not (ws.root / "submission.csv").exists()
