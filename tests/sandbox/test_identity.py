"""Who kernels run as (``sandbox.user``), and the allocator of a uid of its own per kernel.

That the uid holds from inside a kernel, and that two kernels share no per-uid limit, is in
test_attacks.py and test_attacks_identity.py. The allocator is tested here with real locks,
real processes and real uids, in a lock directory and a slice of the range of the test's own.
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podium.errors import ConfigError, SandboxError, SandboxUnavailable
from podium.sandbox import identity
from podium.sandbox.identity import (
    ACCOUNT,
    KERNEL_UIDS,
    KernelIdentity,
    SandboxUser,
    UidLease,
    allocate,
    in_use,
    kernel_identity,
    lock_directory,
    open_lock_dir,
)
from tests.support import REPO

root_only = pytest.mark.skipif(os.getuid() != 0, reason="what root may choose (CI runs as root)")
user_only = pytest.mark.skipif(os.getuid() == 0, reason="what an ordinary user may choose")

# The top of the range: kernels of tests running beside these take the lowest free uids.
UIDS = range(KERNEL_UIDS[-64], KERNEL_UIDS[-1] + 1)
BACKSTOP_S = 120.0  # an event that must come; never reached when it does (a loaded machine)


@pytest.fixture
def locks(tmp_path: Path) -> Path:
    return tmp_path / "uids"


@pytest.fixture
def free() -> range:
    """The slice of ``UIDS`` from its first uid no process has (hermetic beside other runs)."""
    first = next(uid for uid in UIDS if not in_use(uid))
    return range(first, UIDS[-1] + 1)


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + BACKSTOP_S
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


# --- who, for each setting ---------------------------------------------------------------------


@root_only
def test_as_root_auto_is_a_uid_of_its_own_per_kernel(locks: Path, free: range) -> None:
    auto = kernel_identity("auto")
    assert auto.per_kernel and auto.switch and not auto.root and auto.uids == KERNEL_UIDS
    assert auto.describe() == "a uid of its own per kernel (from 1879048192–1879113727)"
    ours = KernelIdentity(uids=free, lock_dir=locks)
    leases = [ours.lease() for _ in range(3)]
    users = [lease.user for lease in leases]
    assert len({u.uid for u in users}) == 3 and all(u.uid == u.gid for u in users)
    assert all(ours.owns(u.uid) and u.switch and u.name == ACCOUNT for u in users)
    for lease in leases:
        lease.release()


@root_only
def test_as_root_an_account_or_a_uid_is_one_fixed_identity_but_never_root() -> None:
    nobody = pwd.getpwnam("nobody")
    fixed = kernel_identity("nobody")
    assert fixed.fixed is not None and not fixed.per_kernel
    assert (fixed.fixed.uid, fixed.fixed.gid) == (nobody.pw_uid, nobody.pw_gid)
    assert fixed.describe() == f"uid {nobody.pw_uid} (nobody)"
    lease = fixed.lease()  # every kernel is that one user; nothing is held for it
    assert lease.user == fixed.fixed and not lease.held
    assert kernel_identity(54321).any_uid == 54321
    assert kernel_identity("54321").fixed == SandboxUser(54321, 54321, ACCOUNT, switch=True)
    for setting in ("root", 0, "0"):
        with pytest.raises(ConfigError, match="never run as root"):
            kernel_identity(setting)
    with pytest.raises(ConfigError, match="no account named"):
        kernel_identity("no-such-account-here")


@user_only
def test_an_ordinary_user_can_only_be_themself() -> None:
    mine = kernel_identity("auto")
    assert mine.fixed is not None and mine.fixed.uid == os.getuid() and not mine.switch
    with pytest.raises(ConfigError, match="only root"):
        kernel_identity("nobody")


def test_the_switch_drops_groups_gid_uid_and_capabilities() -> None:
    user = SandboxUser(65533, 65533, "podium-sandbox", switch=True)
    argv = user.launch("/venv/bin/python", ["/venv/bin/python", "-m", "ipykernel_launcher"])
    assert argv[-3:] == ["/venv/bin/python", "-m", "ipykernel_launcher"]
    if Path(argv[0]).name == "setpriv":
        assert argv[1:5] == ["--reuid", "65533", "--regid", "65533"]
        assert {"--clear-groups", "--inh-caps=-all", "--ambient-caps=-all"} <= set(argv)
    else:
        assert argv[:4] == ["/venv/bin/python", "-I", "-S", "-c"]
    same = SandboxUser(1000, 1000, "me", switch=False)
    assert same.launch("p", ["p", "k"]) == ["p", "k"]  # no switch: the user namespace's uid


def test_the_sandboxs_passwd_lists_root_and_its_user_only() -> None:
    user = SandboxUser(1879048197, 1879048197, ACCOUNT, switch=True)
    assert user.passwd().decode().splitlines() == [
        "root:x:0:0:root:/root:/usr/sbin/nologin",
        "podium-sandbox:x:1879048197:1879048197:Podium sandbox:/tmp:/bin/sh",
    ]
    assert user.group().decode().splitlines() == ["root:x:0:", "podium-sandbox:x:1879048197:"]


def test_readability_is_judged_by_the_mode_bits_that_apply(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    for name, mode in (("open.csv", 0o644), ("group.csv", 0o640), ("closed.csv", 0o600)):
        (data / name).write_text("x")
        (data / name).chmod(mode)
    info = data.stat()
    member = KernelIdentity(SandboxUser(65533, info.st_gid, "member", switch=True))
    per_kernel = KernelIdentity()  # a uid that owns nothing, in no group: others' bits only
    for who in (member, per_kernel):
        assert who.can_read(data) and who.can_read(data / "open.csv")
        assert not who.can_read(data / "closed.csv")
    assert member.can_read(data / "group.csv") and not per_kernel.can_read(data / "group.csv")
    data.chmod(0o750)
    assert member.can_read(data) and not per_kernel.can_read(data)


# --- the allocator -----------------------------------------------------------------------------

_HOLDER = """
import json, sys
from pathlib import Path
from podium.sandbox.identity import allocate
uids, locks, count = range(int(sys.argv[1]), int(sys.argv[2])), Path(sys.argv[3]), int(sys.argv[4])
print("ready", flush=True)
sys.stdin.readline()  # every holder starts at once
leases = [allocate(uids, locks) for _ in range(count)]
print(json.dumps([lease.user.uid for lease in leases]), flush=True)
sys.stdin.readline()  # held until told (or killed)
"""


def _holders(
    free: range, locks: Path, processes: int, each: int
) -> Iterator[subprocess.Popen[str]]:
    for _ in range(processes):
        yield subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(free[0]), str(free[-1] + 1), str(locks), str(each)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
        )  # fmt: skip


def _start_together(holders: list[subprocess.Popen[str]]) -> list[list[int]]:
    for holder in holders:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
    for holder in holders:
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
    found = []
    for holder in holders:
        assert holder.stdout is not None
        found.append(json.loads(holder.stdout.readline()))
    return found


def test_concurrent_processes_never_get_the_same_uid(locks: Path, free: range) -> None:
    holders = list(_holders(free, locks, processes=4, each=6))
    try:
        got = _start_together(holders)
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
    uids = [uid for each in got for uid in each]
    assert len(uids) == 24 and len(set(uids)) == 24, got
    assert all(uid in free for uid in uids)


def test_a_uid_comes_back_on_release_and_when_its_holder_dies(locks: Path, free: range) -> None:
    first, second = allocate(free, locks), allocate(free, locks)
    assert (first.user.uid, second.user.uid) == (free[0], free[1])
    first.release()
    assert not first.held
    again = allocate(free, locks)
    assert again.user.uid == free[0]  # the lowest free: the one just given back
    [holder] = list(_holders(free, locks, processes=1, each=1))
    [[theirs]] = _start_together([holder])
    assert theirs == free[2]  # held by that process now
    assert allocate(free, locks).user.uid == free[3]
    holder.send_signal(signal.SIGKILL)  # no clean-up of its own: the Linux kernel drops its lock
    holder.wait()
    assert allocate(free, locks).user.uid == free[2]


@root_only
def test_a_uid_that_a_process_has_is_never_handed_out(locks: Path, free: range) -> None:
    squatter = subprocess.Popen(["sleep", "600"], user=free[0], group=free[1])
    try:
        _wait_for(lambda: in_use(free[0]) and in_use(free[1]), "the squatter's uid and gid")
        assert allocate(free, locks).user.uid == free[2]  # free[0] a uid, free[1] a gid in use
    finally:
        squatter.kill()
        squatter.wait()
    assert allocate(free, locks).user.uid == free[0]


@root_only
def test_a_lease_whose_uid_still_runs_is_given_back_only_once_none_does(
    locks: Path, free: range
) -> None:
    lease = allocate(free, locks)
    straggler = subprocess.Popen(["sleep", "600"], user=lease.user.uid, group=lease.user.gid)
    try:
        _wait_for(lambda: in_use(lease.user.uid), "the straggler running as the kernel's uid")
        lease.release()  # returns at once; the uid stays held while the straggler lives
        assert lease.held
        assert allocate(free, locks).user.uid == free[1]
    finally:
        straggler.kill()
        straggler.wait()
    _wait_for(lambda: not lease.held, "the uid given back once the straggler is gone")
    assert allocate(free, locks).user.uid == free[0]


def test_accounts_groups_and_subordinate_ranges_are_never_handed_out(
    locks: Path, free: range, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    with pytest.raises(SandboxError, match="no free uid"):
        allocate(range(nobody, nobody + 1), locks)
    with pytest.raises(SandboxError, match="no free uid"):
        allocate(range(1), locks)  # root, above all
    subuid, subgid = tmp_path / "subuid", tmp_path / "subgid"
    subuid.write_text(f"someone:{free[0]}:2\n")
    subgid.write_text(f"# a comment\nsomeone:{free[2]}:1\n")
    monkeypatch.setattr(identity, "SUBORDINATE_IDS", (subuid, subgid))
    assert allocate(free, locks).user.uid == free[3]


def test_a_lock_directory_anyone_else_could_touch_is_refused(tmp_path: Path) -> None:
    open_mode = tmp_path / "open"
    open_mode.mkdir(mode=0o755)
    open_mode.chmod(0o755)
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    for path, why in ((open_mode, "not root's own 0700"), (link, "cannot be opened")):
        with pytest.raises(SandboxUnavailable, match=why):
            allocate(UIDS, path)
        with pytest.raises(SandboxUnavailable, match=why):
            KernelIdentity(lock_dir=path).check()
    made = tmp_path / "made"
    os.close(open_mode_fd := open_lock_dir(made))  # made 0700 where missing
    assert open_mode_fd >= 0 and (made.stat().st_mode & 0o777) == 0o700


def test_every_podium_of_the_machine_picks_the_same_lock_directory() -> None:
    run = Path("/run").stat()
    mine = run.st_uid == 0 and not run.st_mode & 0o022 and os.access("/run", os.W_OK)
    expected = "/run/podium-uids" if mine else None
    assert str(lock_directory()) == (expected or "/tmp/.podium-uids")


def test_a_fixed_lease_holds_nothing() -> None:
    lease = UidLease(SandboxUser(65533, 65533, "x", switch=True))
    lease.release()
    assert not lease.held
