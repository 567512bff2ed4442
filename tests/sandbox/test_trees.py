"""Trees a solution shaped to break the host's walks: deeper than Python recurses, longer than
PATH_MAX, with links. Built directly (the processes that made them are dead by the time the host
walks them, or the walk is the watchdog's and only counts)."""

from __future__ import annotations

from pathlib import Path

from podium.sandbox.trees import MAX_DEPTH, disk_usage
from podium.untrusted import remove_tree
from tests.support import DEEP, make_deep


def test_a_tree_too_deep_for_python_and_path_max_is_removed(tmp_path: Path) -> None:
    root = tmp_path / "slot"
    root.mkdir()
    make_deep(root, DEEP)
    (root / "link").symlink_to(tmp_path / "kept", target_is_directory=True)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "file").write_text("host's")
    remove_tree(root)
    assert not root.exists()
    assert (tmp_path / "kept" / "file").read_text() == "host's"  # the link was not followed
    remove_tree(root)  # gone already: nothing to do


def test_bytes_below_path_max_are_counted(tmp_path: Path) -> None:
    # Names of 200 characters: 40 levels are a path of 8000, twice PATH_MAX.
    make_deep(tmp_path, 40, name="d" * 200)
    used = disk_usage([tmp_path], None, None)
    assert used.bytes >= 1024 * 1024 and used.entries == 41 and not used.too_deep


def test_a_tree_deeper_than_the_limit_is_reported(tmp_path: Path) -> None:
    make_deep(tmp_path, MAX_DEPTH + 1)
    assert disk_usage([tmp_path], None, None).too_deep
    shallow = tmp_path / "shallow"
    shallow.mkdir()
    make_deep(shallow, MAX_DEPTH - 1)
    assert not disk_usage([shallow], None, None).too_deep
