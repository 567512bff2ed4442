"""The bubblewrap command line for one kernel (a pure function, so it can be read and tested).

Layout inside the sandbox: an empty root made read-only at the end; /usr and the solutions'
Python environment read-only at their host paths (their parent directories created 0755, so
an unprivileged uid can reach them); a handful of /etc files (never secrets) and a generated
passwd/group; its own /proc, read-only (no sysctl write, no sysrq); private sized tmpfs /tmp
and /dev/shm, writable by anyone (sticky); the kernel's side of its ipc directory; and
``/workspace`` (the slot, read-write) with ``/workspace/input`` (the public data, read-only).
The private answers are never bound, and every secret path (``layout.secrets``: what the
answers can be derived from) that lies under a bound path is masked, last: a read-only empty
tmpfs over a directory, ``/dev/null`` over a file (``hidden_mounts``); a secret that cannot be
masked (it is what a bind shows, or a bind lies inside it) refuses the command. Order matters:
a tmpfs must come before the binds beneath it, a mask after the binds it covers.

Two ways to start it (see ``identity.py``): as an ordinary user, in an unprivileged user
namespace; as root, without one, keeping only the capabilities the launcher needs to switch to
the sandbox's unprivileged uid (they are gone once it has).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from podium.errors import SandboxUnavailable
from podium.sandbox.identity import SandboxUser

WORKSPACE = "/workspace"
COMMON_FLAGS = (
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--clearenv", "--hostname", "sandbox",
    "--cap-drop", "ALL",
)  # fmt: skip
USER_NAMESPACE_FLAGS = ("--unshare-user", "--disable-userns")
SWITCH_FLAGS = ("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
TOP_LEVEL_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/alternatives", "/etc/fonts", "/etc/mime.types", "/etc/ssl",
    "/etc/os-release", "/etc/matplotlibrc",
)  # fmt: skip
NVIDIA_SHARED = (
    "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset",
)  # fmt: skip


def isolation_flags(switch: bool) -> tuple[str, ...]:
    """The namespace and capability flags: ``switch`` when Podium is root (see the doc)."""
    return COMMON_FLAGS + (SWITCH_FLAGS if switch else USER_NAMESPACE_FLAGS)


@dataclass(frozen=True)
class BwrapFds:
    """Descriptors the command reads (they must be passed to bwrap, open)."""

    passwd: int
    group: int
    seccomp: int | None = None  # the compiled filter; None: no filter (a gap it reports)
    info: int | None = None  # where bwrap writes the pid of the namespace's init

    @property
    def all(self) -> tuple[int, ...]:
        fds = (self.passwd, self.group, self.seccomp, self.info)
        return tuple(fd for fd in fds if fd is not None)


@dataclass(frozen=True)
class BwrapLayout:
    workspace: Path
    input_dir: Path
    ipc_dir: Path  # the kernel's side only
    user: SandboxUser
    fds: BwrapFds
    python_paths: Sequence[Path] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    tmp_bytes: int = 2 * 1024**3
    shm_bytes: int = 1024**3
    gpus: str | None = None  # None, "all", or "0,1"
    secrets: Sequence[Path] = ()  # host paths no kernel may read: masked wherever bound


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


@dataclass(frozen=True)
class Bound:
    """One host path bound into the sandbox: ``source`` on the host, seen at ``inside``."""

    source: Path
    inside: PurePosixPath
    what: str  # for a refusal: "the solutions' Python environment", ...


class _Tree:
    """The directories that exist inside the sandbox so far; emits ``--dir`` for the rest.
    Also records every bind, for the masks (``hidden_mounts``).

    bwrap would create a bind's missing parents itself, but mode 0700 when run as root, which
    the sandbox's uid could not traverse.
    """

    def __init__(self) -> None:
        self.made = {PurePosixPath("/")}
        self.bound: list[Bound] = []

    def mark(self, path: str | Path) -> None:
        self.made.add(PurePosixPath(path))

    def bind(self, flag: str, source: str | Path, inside: str | Path, what: str) -> list[str]:
        """The arguments of one bind (``--ro-bind``, ``--bind``...), recorded."""
        self.bound.append(Bound(Path(source), PurePosixPath(inside), what))
        return [flag, str(source), str(inside)]

    def parents(self, path: str | Path) -> list[str]:
        args: list[str] = []
        for parent in reversed(PurePosixPath(path).parents):
            if parent not in self.made:
                args += ["--dir", str(parent)]
                self.made.add(parent)
        self.made.add(PurePosixPath(path))
        return args


SYSTEM = "the system"
ENVIRONMENT = "the solutions' Python environment"
PUBLIC = "the task's public data"
WORKSPACE_DIR = "the workspace"
IPC = "the kernel's ipc directory"
PROGRAM = "the kernel factory's program"


def _system_binds(tree: _Tree) -> list[str]:
    args = tree.bind("--ro-bind", "/usr", "/usr", SYSTEM)
    tree.mark("/usr")
    for name in TOP_LEVEL_DIRS:
        path = Path("/", name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            args += tree.bind("--ro-bind", path, path, SYSTEM)
        tree.mark(path)
    for etc in ETC_FILES:
        args += [*tree.parents(etc), *tree.bind("--ro-bind-try", etc, etc, SYSTEM)]
    return args


def _python_binds(tree: _Tree, python_paths: Sequence[Path]) -> list[str]:
    args: list[str] = []
    for path in _outermost(python_paths):
        if not (path == Path("/usr") or path.is_relative_to("/usr")):
            args += [*tree.parents(path), *tree.bind("--ro-bind", path, path, ENVIRONMENT)]
    return args


def _real(path: Path) -> Path | None:
    """``path`` with every link resolved, or None when it does not exist (nothing to read)."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


def _refuse(secret: PurePath, why: str) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"cannot hide {secret} from the sandbox: {why}",
        hint="keep the task's data (--data-dir) apart from the solutions' environment "
        "(sandbox.python) and the public data",
    )


def hidden_mounts(
    bound: Sequence[Bound], secrets: Sequence[Path]
) -> list[tuple[PurePosixPath, bool]]:
    """Where a mask goes inside the sandbox, and whether it covers a directory, for every
    secret (links resolved) that lies under a bound path, however it is bound (a directory
    bound elsewhere, a link on the way): the outermost ones, sorted. Raises
    ``SandboxUnavailable`` for a secret that cannot be masked: a bound path is the secret
    itself, or a bind lies inside a mask (it would be covered)."""
    sources = [(b, _real(b.source)) for b in bound]
    found: dict[PurePosixPath, bool] = {}
    for secret in secrets:
        real = _real(secret)
        if real is None:
            continue
        for bind, source in sources:
            if source is None or not real.is_relative_to(source):
                continue
            if real == source:
                raise _refuse(secret, f"it is {bind.what}, which the sandbox binds ({source})")
            found[bind.inside / real.relative_to(source)] = real.is_dir()
    masks = sorted(m for m in found if not any(m != o and m.is_relative_to(o) for o in found))
    for mask in masks:
        for bind in bound:
            if bind.inside.is_relative_to(mask):
                raise _refuse(mask, f"{bind.what} ({bind.source}) is bound inside it")
    return [(mask, found[mask]) for mask in masks]


def _mask_args(tree: _Tree, secrets: Sequence[Path]) -> list[str]:
    """After every bind: an empty read-only tmpfs over each secret directory, ``/dev/null``
    over each secret file."""
    args: list[str] = []
    for inside, is_dir in hidden_mounts(tree.bound, secrets):
        if is_dir:
            args += ["--perms", "0555", "--tmpfs", str(inside), "--remount-ro", str(inside)]
        else:
            args += ["--ro-bind", "/dev/null", str(inside)]
    return args


def check_hideable(
    python_paths: Sequence[Path], secrets: Sequence[Path], public: Path | None = None
) -> None:
    """Raise ``SandboxUnavailable`` now, before anything is started, if a secret could not be
    masked in what every kernel binds: the system, the solutions' Python environment and
    (given) the public data."""
    tree = _Tree()
    _system_binds(tree)
    _python_binds(tree, python_paths)
    if public is not None:
        tree.bind("--ro-bind", public, f"{WORKSPACE}/input", PUBLIC)
    hidden_mounts(tree.bound, secrets)


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """Drop paths inside other paths of the list (a venv inside its base, say)."""
    unique = sorted(set(paths))
    return [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]


def _base_args(bwrap: str, flags: Sequence[str], layout: BwrapLayout, tree: _Tree) -> list[str]:
    """What a kernel's and a factory's sandboxes share: all but the workspace and the end."""
    args = [bwrap, *flags, *_system_binds(tree)]
    # 0644: bwrap makes such a file 0600 (root's) otherwise, which the kernel's uid cannot read
    args += ["--perms", "0644", "--ro-bind-data", str(layout.fds.passwd), "/etc/passwd"]
    args += ["--perms", "0644", "--ro-bind-data", str(layout.fds.group), "/etc/group"]
    args += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev"]
    args += ["--perms", "01777", "--size", str(layout.tmp_bytes), "--tmpfs", "/tmp"]
    args += ["--perms", "01777", "--size", str(layout.shm_bytes), "--tmpfs", "/dev/shm"]
    for mounted in ("/proc", "/dev", "/tmp", "/dev/shm"):
        tree.mark(mounted)
    return args + _python_binds(tree, layout.python_paths)


def _end_args(layout: BwrapLayout, command: Sequence[str]) -> list[str]:
    args: list[str] = []
    devices, visible = gpu_devices(layout.gpus)
    for device in devices:
        args += ["--dev-bind-try", device, device]
    if layout.fds.seccomp is not None:
        args += ["--seccomp", str(layout.fds.seccomp)]
    if layout.fds.info is not None:
        args += ["--info-fd", str(layout.fds.info)]
    env = dict(layout.env)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    args += ["--chdir", WORKSPACE, "--remount-ro", "/", "--", *command]
    return args


def bwrap_argv(bwrap: str, layout: BwrapLayout, command: Sequence[str]) -> list[str]:
    tree = _Tree()
    args = _base_args(bwrap, isolation_flags(layout.user.switch), layout, tree)
    args += [*tree.parents(layout.ipc_dir),
             *tree.bind("--bind", layout.ipc_dir, layout.ipc_dir, IPC)]  # fmt: skip
    args += [*tree.parents(WORKSPACE),
             *tree.bind("--bind", layout.workspace, WORKSPACE, WORKSPACE_DIR)]  # fmt: skip
    args += tree.bind("--ro-bind", layout.input_dir, f"{WORKSPACE}/input", PUBLIC)
    args += _mask_args(tree, layout.secrets)
    return args + _end_args(layout, command)


@dataclass(frozen=True)
class FactoryLayout:
    """A kernel factory's sandbox (see ``factory.py``): a kernel's layout, but the workspace
    an empty mount point, and under ``staging`` (in /tmp, which each kernel's own /tmp
    covers) every slot of the run, the public data and the factory's program; the ipc root
    at its host path. ``caps`` are the factory's own, dropped by every kernel it forks."""

    kernel: BwrapLayout  # its workspace is the run's scratch directory, its ipc_dir the root
    program: Path
    staging: str
    caps: Sequence[str]


def factory_argv(bwrap: str, layout: FactoryLayout, command: Sequence[str]) -> list[str]:
    kernel = layout.kernel
    tree = _Tree()
    caps = [arg for cap in layout.caps for arg in ("--cap-add", cap)]
    flags = [*COMMON_FLAGS, *(caps if kernel.user.switch else ["--unshare-user", *caps])]
    args = _base_args(bwrap, flags, kernel, tree)
    staging = layout.staging
    args += ["--dir", staging,
             *tree.bind("--bind", kernel.workspace, f"{staging}/slots", WORKSPACE_DIR)]  # fmt: skip
    args += tree.bind("--ro-bind", kernel.input_dir, f"{staging}/input", PUBLIC)
    args += tree.bind("--ro-bind", layout.program, f"{staging}/{layout.program.name}", PROGRAM)
    args += [*tree.parents(kernel.ipc_dir),
             *tree.bind("--bind", kernel.ipc_dir, kernel.ipc_dir, IPC)]  # fmt: skip
    args += [*tree.parents(WORKSPACE), "--dir", WORKSPACE]
    args += _mask_args(tree, kernel.secrets)  # every kernel it forks inherits them
    return args + _end_args(kernel, command)
