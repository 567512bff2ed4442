"""Sizes as users write them, and cgroup discovery and set-up on v1 and v2 layouts.

The cgroup tests use a directory shaped like /sys/fs/cgroup: they check which files Podium
writes and reads. That the limits really hold is tested by attacking them (test_attacks.py) on
this machine's real cgroups.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podium.errors import ConfigError
from podium.sandbox import cgroups, format_bytes, parse_bytes


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4G", 4 * 1024**3), ("512M", 512 * 1024**2), ("1.5GiB", int(1.5 * 1024**3)),
     ("2gb", 2 * 1024**3), ("1000", 1000), (" 64 K ", 64 * 1024), (7, 7)],
)  # fmt: skip
def test_sizes_parse_in_binary_units(text: str | int, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["4X", "", "G", "-1G", "four"])
def test_a_size_that_is_not_one_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        parse_bytes(text, "sandbox.memory")


def test_sizes_format_readably() -> None:
    assert format_bytes(8 * 1024**3) == "8 GiB"
    assert format_bytes(1536 * 1024**2) == "1.5 GiB"
    assert format_bytes(100) == "100 B"


V1_SELF = "4:memory:/job/42\n8:pids:/\n1:name=systemd:/\n0::/\n"


def make_v1(root: Path) -> None:
    (root / "memory" / "job" / "42").mkdir(parents=True)
    (root / "pids").mkdir()


def test_v1_groups_go_beneath_our_own_group_per_controller(tmp_path: Path) -> None:
    make_v1(tmp_path)
    support = cgroups.detect(tmp_path, V1_SELF)
    assert support.version == "v1"
    assert support.memory == tmp_path / "memory" / "job" / "42"
    assert support.pids == tmp_path / "pids"
    assert "cgroup v1" in support.describe()


def test_v1_kernel_group_sets_memory_swap_and_pids_limits(tmp_path: Path) -> None:
    make_v1(tmp_path)
    group = cgroups.KernelCgroup(cgroups.detect(tmp_path, V1_SELF), 2 * 1024**3, 128)
    assert group.memory is not None and group.pids is not None
    assert (group.memory / "memory.limit_in_bytes").read_text() == str(2 * 1024**3)
    assert (group.memory / "memory.memsw.limit_in_bytes").read_text() == str(2 * 1024**3)
    assert (group.pids / "pids.max").read_text() == "128"
    assert group.procs_files == sorted(
        [str(group.memory / "cgroup.procs"), str(group.pids / "cgroup.procs")]
    )
    (group.memory / "memory.max_usage_in_bytes").write_text("12345\n")
    (group.memory / "memory.oom_control").write_text(
        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"
    )
    assert group.peak_memory() == 12345 and not group.oom_killed()
    (group.memory / "memory.oom_control").write_text(
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"
    )
    assert group.oom_killed()
    (group.pids / "pids.events").write_text("max 3\n")
    assert group.pids_limited()


def test_v2_groups_need_memory_and_pids_delegated(tmp_path: Path) -> None:
    own = tmp_path / "user.slice" / "podium.scope"
    own.mkdir(parents=True)
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text("memory pids\n")
    support = cgroups.detect(tmp_path, "0::/user.slice/podium.scope\n")
    assert (support.version, support.memory, support.pids) == ("v2", own, own)
    group = cgroups.KernelCgroup(support, 1024**3, 64)
    assert group.memory == group.pids
    assert group.memory is not None
    assert (group.memory / "memory.max").read_text() == str(1024**3)
    assert (group.memory / "pids.max").read_text() == "64"
    assert group.procs_files == [str(group.memory / "cgroup.procs")]
    (group.memory / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n")
    assert group.oom_killed()


def test_without_a_delegated_v2_subtree_podium_says_why(tmp_path: Path) -> None:
    own = tmp_path / "user.slice"
    own.mkdir()
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").mkdir()  # unreadable and unwritable as a file
    support = cgroups.detect(tmp_path, "0::/user.slice\n")
    assert support.version is None
    assert "not delegated" in support.why
    assert "no writable cgroup" in support.describe()


def test_no_writable_hierarchy_is_reported_not_raised(tmp_path: Path) -> None:
    support = cgroups.detect(tmp_path, "4:memory:/a\n8:pids:/b\n")
    assert support.version is None
    assert "not writable" in support.why


@pytest.mark.skipif(os.getuid() != 0, reason="cgroups are writable by root here (and on CI)")
def test_this_machine_has_a_usable_memory_and_pids_cgroup() -> None:
    """CI runs as root on a machine like this one; the attack tests rely on real cgroups."""
    support = cgroups.detect()
    assert support.version is not None, support.why
    assert support.memory is not None and support.pids is not None


def test_v1_kernel_group_joins_the_freezer_and_freezes_and_thaws_it(tmp_path: Path) -> None:
    make_v1(tmp_path)
    (tmp_path / "freezer").mkdir()
    support = cgroups.detect(tmp_path, V1_SELF + "6:freezer:/\n")
    assert support.freezer == tmp_path / "freezer"
    group = cgroups.KernelCgroup(support, None, 64)
    assert group.freezer is not None
    assert str(group.freezer / "cgroup.procs") in group.procs_files
    assert group.freeze() and (group.freezer / "freezer.state").read_text() == "FROZEN"
    assert group.frozen()  # this fake file reads back what was written; the kernel's says when
    group.thaw()
    assert (group.freezer / "freezer.state").read_text() == "THAWED" and not group.frozen()


def test_v2_kernel_group_freezes_itself_and_reads_frozen_from_its_events(tmp_path: Path) -> None:
    own = tmp_path / "podium.scope"
    own.mkdir()
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    (own / "cgroup.subtree_control").write_text("memory pids\n")
    group = cgroups.KernelCgroup(cgroups.detect(tmp_path, "0::/podium.scope\n"), None, 64)
    assert group.freezer == group.memory
    assert group.freeze() and (group.memory / "cgroup.freeze").read_text() == "1"
    (group.memory / "cgroup.events").write_text("populated 1\nfrozen 0\n")
    assert not group.frozen()
    (group.memory / "cgroup.events").write_text("populated 1\nfrozen 1\n")
    assert group.frozen()
