"""The bubblewrap command line, read as data: mount order, what is bound, GPU pass-through.

Whether the isolation *works* is tested by attacking it (test_attacks.py); these tests pin the
parts no attack on a GPU-less machine can exercise, and the ordering rules bwrap imposes.
"""

from __future__ import annotations

from pathlib import Path

from podium.sandbox.bwrap_command import (
    BwrapFds,
    BwrapLayout,
    FactoryLayout,
    bwrap_argv,
    factory_argv,
    gpu_devices,
)
from podium.sandbox.identity import SandboxUser

ROOT = SandboxUser(65533, 65533, "podium-sandbox", switch=True)  # Podium is root
USER = SandboxUser(1000, 1000, "someone", switch=False)  # Podium is an ordinary user


def layout(tmp_path: Path, **extra: object) -> BwrapLayout:
    values: dict = {
        "workspace": tmp_path / "slot",
        "input_dir": tmp_path / "public",
        "ipc_dir": Path("/tmp/podium-ipc/kernel"),
        "user": ROOT,
        "fds": BwrapFds(passwd=7, group=8, seccomp=9, info=10),
        "python_paths": [Path("/opt/env"), Path("/opt/env/lib/python3.11"), Path("/usr")],
        "env": {"PATH": "/opt/env/bin:/usr/bin", "HOME": "/tmp"},
    }
    values.update(extra)
    return BwrapLayout(**values)


def pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


def test_the_workspace_is_writable_the_input_read_only_and_nothing_else_of_the_task(
    tmp_path: Path,
) -> None:
    argv = bwrap_argv("/usr/bin/bwrap", layout(tmp_path), ["python", "-m", "ipykernel_launcher"])
    assert pairs(argv, "--bind") == [
        ("/tmp/podium-ipc/kernel", "/tmp/podium-ipc/kernel"),
        (str(tmp_path / "slot"), "/workspace"),
    ]
    assert (str(tmp_path / "public"), "/workspace/input") in pairs(argv, "--ro-bind")
    assert argv[argv.index("--chdir") + 1] == "/workspace"
    assert argv[-4:] == ["--", "python", "-m", "ipykernel_launcher"]
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--clearenv",
                 "--new-session"):  # fmt: skip
        assert flag in argv


def test_a_tmpfs_comes_before_the_binds_beneath_it_and_the_root_is_made_read_only_last(
    tmp_path: Path,
) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path), ["k"])
    tmp_mount = argv.index("/tmp", argv.index("--tmpfs"))
    ipc_bind = argv.index("/tmp/podium-ipc/kernel")
    assert tmp_mount < ipc_bind
    assert argv[argv.index("--tmpfs") - 4 : argv.index("--tmpfs")] == [
        "--perms", "01777", "--size", str(2 * 1024**3)]  # fmt: skip
    assert argv[-4:-2] == ["--remount-ro", "/"]  # the last mount operation


def test_the_python_environment_is_bound_once_read_only_and_usr_not_twice(tmp_path: Path) -> None:
    ro = pairs(bwrap_argv("bwrap", layout(tmp_path), ["k"]), "--ro-bind")
    assert ("/opt/env", "/opt/env") in ro
    assert ("/opt/env/lib/python3.11", "/opt/env/lib/python3.11") not in ro  # inside /opt/env
    assert ro.count(("/usr", "/usr")) == 1


def test_only_the_environment_podium_sets_is_passed(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path), ["k"])
    assert pairs(argv, "--setenv") == [("HOME", "/tmp"), ("PATH", "/opt/env/bin:/usr/bin")]
    assert "--clearenv" in argv


def test_no_gpu_means_no_device_nodes(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path), ["k"])
    assert not any("nvidia" in a for a in argv)
    assert "CUDA_VISIBLE_DEVICES" not in argv


def test_chosen_gpus_pass_their_device_nodes_and_set_cuda_visible_devices(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path, gpus="1,3"), ["k"])
    devices = [a for a, _ in pairs(argv, "--dev-bind-try")]
    assert devices == ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                       "/dev/nvidia-modeset", "/dev/nvidia1", "/dev/nvidia3"]  # fmt: skip
    assert ("CUDA_VISIBLE_DEVICES", "1,3") in pairs(argv, "--setenv")
    assert argv.index("--dev-bind-try") > argv.index("--dev")  # after the minimal /dev


def test_all_gpus_are_the_numbered_device_nodes_present(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "null"):
        (dev / name).touch()
    devices, visible = gpu_devices("all", dev=str(dev))
    assert devices[-2:] == [str(dev / "nvidia0"), str(dev / "nvidia1")]
    assert str(dev / "nvidiactl") in devices
    assert visible is None  # every device the node can see is visible


def test_as_root_no_user_namespace_and_only_the_launchers_capabilities(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path), ["k"])
    assert "--unshare-user" not in argv  # in one, uid 0 would be host root
    caps = [argv[i + 1] for i, a in enumerate(argv) if a in ("--cap-add", "--cap-drop")]
    assert caps == ["ALL", "CAP_SETUID", "CAP_SETGID"]


def test_as_a_user_a_user_namespace_that_allows_no_other(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path, user=USER), ["k"])
    assert "--unshare-user" in argv and "--disable-userns" in argv
    assert "--cap-add" not in argv


def test_proc_is_read_only_and_the_parents_of_binds_are_made_reachable(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path), ["k"])
    assert argv[argv.index("--proc") : argv.index("--proc") + 4] == [
        "--proc", "/proc", "--remount-ro", "/proc"]  # fmt: skip
    made = [argv[i + 1] for i, a in enumerate(argv) if a == "--dir"]
    assert made.index("/opt") < argv.index("/opt/env")  # created 0755 before its bind
    assert "/tmp/podium-ipc" in made and "/tmp" not in made  # /tmp is a tmpfs already


def test_passwd_group_seccomp_and_info_come_from_the_descriptors_given(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", layout(tmp_path), ["k"])
    assert ("7", "/etc/passwd") in pairs(argv, "--ro-bind-data")
    assert ("8", "/etc/group") in pairs(argv, "--ro-bind-data")
    assert argv[argv.index("--seccomp") + 1] == "9"
    assert argv[argv.index("--info-fd") + 1] == "10"
    assert "/etc/passwd" not in [a for a, _ in pairs(argv, "--ro-bind-try")]  # the host's


def test_a_factory_sees_every_slot_under_staging_keeps_its_caps_and_binds_no_workspace(
    tmp_path: Path,
) -> None:
    kernel = layout(tmp_path, workspace=tmp_path / "scratch", ipc_dir=Path("/tmp/podium-1-x"),
                    fds=BwrapFds(passwd=7, group=8))  # fmt: skip
    factory = FactoryLayout(kernel, Path("/pkg/zygote.py"), "/tmp/.podium", ("CAP_SYS_ADMIN",))
    argv = factory_argv("bwrap", factory, ["python", "/tmp/.podium/zygote.py"])
    assert pairs(argv, "--bind") == [
        (str(tmp_path / "scratch"), "/tmp/.podium/slots"),
        ("/tmp/podium-1-x", "/tmp/podium-1-x"),
    ]
    assert (str(tmp_path / "public"), "/tmp/.podium/input") in pairs(argv, "--ro-bind")
    assert ("/pkg/zygote.py", "/tmp/.podium/zygote.py") in pairs(argv, "--ro-bind")
    assert argv.index("/tmp", argv.index("--tmpfs")) < argv.index("/tmp/.podium/slots")
    at = argv.index("/workspace")
    assert argv[at - 1 : at + 1] == ["--dir", "/workspace"]  # an empty mount point
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--cap-add") + 1] == "CAP_SYS_ADMIN"
    assert "--seccomp" not in argv  # the factory loads it into each kernel it forks
    assert "--unshare-user" not in argv  # as root: the kernels' uid is switched to, not mapped
    as_user = factory_argv("bwrap", FactoryLayout(
        layout(tmp_path, user=USER, fds=BwrapFds(passwd=7, group=8)), Path("/z.py"), "/s", ()),
        ["k"])  # fmt: skip
    assert "--unshare-user" in as_user and "--disable-userns" not in as_user
