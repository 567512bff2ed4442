"""Who kernels run as (``sandbox.user``), read as data; that it holds is in test_attacks.py."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from podium.errors import ConfigError
from podium.sandbox.identity import ACCOUNT, DEFAULT_ID, SandboxUser, sandbox_user

root_only = pytest.mark.skipif(os.getuid() != 0, reason="what root may choose (CI runs as root)")
user_only = pytest.mark.skipif(os.getuid() == 0, reason="what an ordinary user may choose")


@root_only
def test_as_root_auto_is_the_dedicated_account_or_a_uid_nobody_uses() -> None:
    user = sandbox_user("auto")
    assert user.switch and user.uid != 0 and user.gid != 0
    try:
        entry = pwd.getpwnam(ACCOUNT)
    except KeyError:
        assert (user.uid, user.gid) == (DEFAULT_ID, DEFAULT_ID)
    else:
        assert (user.uid, user.gid) == (entry.pw_uid, entry.pw_gid)


@root_only
def test_as_root_an_account_or_a_uid_can_be_named_but_never_root() -> None:
    nobody = pwd.getpwnam("nobody")
    assert (sandbox_user("nobody").uid, sandbox_user("nobody").gid) == (
        nobody.pw_uid, nobody.pw_gid)  # fmt: skip
    assert sandbox_user(54321).uid == 54321
    assert sandbox_user("54321").gid == 54321
    for setting in ("root", 0, "0"):
        with pytest.raises(ConfigError, match="never run as root"):
            sandbox_user(setting)
    with pytest.raises(ConfigError, match="no account named"):
        sandbox_user("no-such-account-here")


@user_only
def test_an_ordinary_user_can_only_be_themself() -> None:
    assert sandbox_user("auto").uid == os.getuid()
    with pytest.raises(ConfigError, match="only root"):
        sandbox_user("nobody")


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
    user = SandboxUser(65533, 65533, "podium-sandbox", switch=True)
    assert user.passwd().decode().splitlines() == [
        "root:x:0:0:root:/root:/usr/sbin/nologin",
        "podium-sandbox:x:65533:65533:Podium sandbox:/tmp:/bin/sh",
    ]
    assert user.group().decode().splitlines() == ["root:x:0:", "podium-sandbox:x:65533:"]


def test_readability_is_judged_by_the_mode_bits_that_apply(tmp_path: Path) -> None:
    user = SandboxUser(65533, 65533, "podium-sandbox", switch=True)
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "open.csv").write_text("x")
    (data / "open.csv").chmod(0o644)
    (data / "closed.csv").write_text("x")
    (data / "closed.csv").chmod(0o600)
    assert user.can_read(data) and user.can_read(data / "open.csv")
    assert not user.can_read(data / "closed.csv")
    data.chmod(0o700)
    assert not user.can_read(data)
