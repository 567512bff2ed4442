"""The bubblewrap command line for one kernel (a pure function, so it can be read and tested).

Layout inside the sandbox: an empty root made read-only at the end; /usr and the solutions'
Python environment read-only at their host paths; a handful of /etc files (never secrets);
private sized tmpfs /tmp and /dev/shm; the kernel's ipc directory; ``/workspace`` (the slot,
read-write) with ``/workspace/input`` (the public data, read-only). The private answers are
never bound. Order matters: a tmpfs must come before the binds beneath it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

WORKSPACE = "/workspace"
ISOLATION_FLAGS = (
    "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
    "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
    "--disable-userns", "--clearenv", "--hostname", "sandbox",
)  # fmt: skip
TOP_LEVEL_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives", "/etc/fonts",
    "/etc/mime.types", "/etc/ssl", "/etc/os-release", "/etc/matplotlibrc",
)  # fmt: skip
NVIDIA_SHARED = (
    "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset",
)  # fmt: skip


@dataclass(frozen=True)
class BwrapLayout:
    workspace: Path
    input_dir: Path
    ipc_dir: Path
    python_paths: Sequence[Path] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    tmp_bytes: int = 2 * 1024**3
    shm_bytes: int = 1024**3
    gpus: str | None = None  # None, "all", or "0,1"


def gpu_devices(gpus: str | None, dev: str = "/dev") -> tuple[list[str], str | None]:
    """(device nodes to pass through, CUDA_VISIBLE_DEVICES) for a ``gpus`` setting."""
    if not gpus:
        return [], None
    shared = [p.replace("/dev", dev, 1) for p in NVIDIA_SHARED]
    if gpus == "all":
        numbered = sorted(
            str(p) for p in Path(dev).glob("nvidia[0-9]*") if p.name[len("nvidia") :].isdigit()
        )
        return shared + numbered, None
    indices = [i.strip() for i in gpus.split(",") if i.strip()]
    return shared + [f"{dev}/nvidia{i}" for i in indices], ",".join(indices)


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in TOP_LEVEL_DIRS:
        path = Path("/", name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for etc in ETC_FILES:
        args += ["--ro-bind-try", etc, etc]
    return args


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """Drop paths inside other paths of the list (a venv inside its base, say)."""
    unique = sorted(set(paths))
    return [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]


def bwrap_argv(bwrap: str, layout: BwrapLayout, command: Sequence[str]) -> list[str]:
    args = [bwrap, *ISOLATION_FLAGS, *_system_binds()]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(layout.tmp_bytes), "--tmpfs", "/tmp"]
    args += ["--size", str(layout.shm_bytes), "--tmpfs", "/dev/shm"]
    for path in _outermost(layout.python_paths):
        if not (path == Path("/usr") or path.is_relative_to("/usr")):
            args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(layout.ipc_dir), str(layout.ipc_dir)]
    args += ["--bind", str(layout.workspace), WORKSPACE]
    args += ["--ro-bind", str(layout.input_dir), f"{WORKSPACE}/input"]
    devices, visible = gpu_devices(layout.gpus)
    for device in devices:
        args += ["--dev-bind-try", device, device]
    env = dict(layout.env)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    args += ["--chdir", WORKSPACE, "--remount-ro", "/", "--", *command]
    return args
