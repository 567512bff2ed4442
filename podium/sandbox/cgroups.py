"""One cgroup per kernel for memory, process count and freezing, on cgroup v2 or v1, where
writable.

A cgroup is the only limit that kills just the kernel when it allocates too much (the OOM
killer acts inside the group) and that counts processes for uid 0 too; its freezer stops every
process of a kernel at once, which lets the hand-over start before their (slow, for a large
memory) exit. Podium creates its groups beneath its own (``/proc/self/cgroup``), so it needs no
privileges beyond a delegated subtree; where nothing is writable, ``detect`` says why and the
sandbox falls back to rlimits + watchdog, and waits for the processes' death.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from podium.processes import pid_alive

CGROUP_ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


@dataclass(frozen=True)
class CgroupSupport:
    """Where per-kernel groups go. ``memory``/``pids``/``freezer`` are parent dirs, or None
    (with ``why`` when no group at all can be made)."""

    version: str | None  # "v2", "v1" or None
    memory: Path | None
    pids: Path | None
    why: str = ""
    freezer: Path | None = None

    def describe(self) -> str:
        if self.version is None:
            return f"no writable cgroup ({self.why})"
        parts = [f"memory at {self.memory}" if self.memory else "no memory controller"]
        parts.append(f"pids at {self.pids}" if self.pids else "no pids controller")
        parts.append("freezer" if self.freezer else "no freezer")
        return f"cgroup {self.version}: " + ", ".join(parts)


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """``/proc/self/cgroup`` → {controller: path}; the v2 line is keyed ``""``."""
    paths: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name.removeprefix("name=")] = path
    return paths


def _writable_dir(parent: Path) -> bool:
    probe = parent / f"podium-probe-{os.getpid()}-{next(_counter)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def detect(root: Path = CGROUP_ROOT, proc_cgroup: str | None = None) -> CgroupSupport:
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError as exc:
            return CgroupSupport(None, None, None, f"cannot read /proc/self/cgroup: {exc}")
    own = _own_paths(proc_cgroup)
    if (root / "cgroup.controllers").exists():
        return _detect_v2(root / own.get("", "/").lstrip("/"))
    found = {}
    for controller in ("memory", "pids", "freezer"):
        if controller in own:
            parent = root / controller / own[controller].lstrip("/")
            found[controller] = parent if _writable_dir(parent) else None
    if not (found.get("memory") or found.get("pids")):
        return CgroupSupport(None, None, None, "cgroup v1 memory/pids hierarchies not writable")
    return CgroupSupport("v1", found.get("memory"), found.get("pids"),
                         freezer=found.get("freezer"))  # fmt: skip


def _detect_v2(own: Path) -> CgroupSupport:
    """Groups go beneath our own group, whose subtree must have memory and pids enabled.

    Enabling them fails while our own group holds processes (the no-internal-processes rule);
    running Podium in a delegated scope (``systemd-run --user --scope -p Delegate=yes``) or a
    container with its own cgroup namespace avoids that.
    """
    enabled = _read(own / "cgroup.subtree_control").split()
    missing = [c for c in ("memory", "pids") if c not in enabled]
    if missing:
        with contextlib.suppress(OSError):
            (own / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))
        enabled = _read(own / "cgroup.subtree_control").split()
    if not _writable_dir(own):
        return CgroupSupport(None, None, None, f"cgroup v2 group {own} is not writable")
    memory = own if "memory" in enabled else None
    pids = own if "pids" in enabled else None
    if memory is None and pids is None:
        why = f"cannot enable memory/pids in {own}/cgroup.subtree_control (not delegated)"
        return CgroupSupport(None, None, None, why)
    return CgroupSupport("v2", memory, pids, freezer=own)  # cgroup.freeze: in every v2 group


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def group_prefix() -> str:
    """How the name of each kernel group this process creates begins (``LEFTOVER`` reads the
    pid back)."""
    return f"podium-{os.getpid()}-"


class KernelCgroup:
    """The group(s) of one kernel: created before it starts, joined by its process, removed after.

    With v1 the memory, pids and freezer groups are separate directories; with v2 they are one.
    """

    def __init__(self, support: CgroupSupport, memory_bytes: int | None, max_pids: int | None):
        self.version = support.version
        name = f"{group_prefix()}{next(_counter)}"
        self.memory = support.memory / name if support.memory else None  # peak even unlimited
        self.pids = support.pids / name if support.pids and max_pids else None
        self.freezer = support.freezer / name if support.freezer else None
        self.memory_bytes = memory_bytes
        for group in self._groups:
            group.mkdir()
        if self.memory is not None and memory_bytes is not None:
            self._limit_memory(self.memory, memory_bytes)
        if self.pids is not None:
            (self.pids / "pids.max").write_text(str(max_pids))

    def _limit_memory(self, group: Path, limit: int) -> None:
        if self.version == "v2":
            (group / "memory.max").write_text(str(limit))
            with contextlib.suppress(OSError):
                (group / "memory.swap.max").write_text("0")
            return
        (group / "memory.limit_in_bytes").write_text(str(limit))
        with contextlib.suppress(OSError):  # absent without swap accounting
            (group / "memory.memsw.limit_in_bytes").write_text(str(limit))

    @property
    def _groups(self) -> list[Path]:
        return sorted({g for g in (self.memory, self.pids, self.freezer) if g is not None})

    @property
    def procs_files(self) -> list[str]:
        """Files the kernel's process writes ``0`` to (between fork and exec) to join."""
        return [str(g / "cgroup.procs") for g in self._groups]

    def peak_memory(self) -> int | None:
        if self.memory is None:
            return None
        name = "memory.peak" if self.version == "v2" else "memory.max_usage_in_bytes"
        text = _read(self.memory / name).strip()
        return int(text) if text.isdigit() else None

    def oom_killed(self) -> bool:
        if self.memory is None:
            return False
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        for line in _read(self.memory / name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                return True
        return False

    def pids_limited(self) -> bool:
        """Whether a fork was refused by the process limit (``pids.events`` max count)."""
        if self.pids is None:
            return False
        for line in _read(self.pids / "pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit() and int(value) > 0:
                return True
        return False

    def empty(self) -> bool:
        """Whether no process is left in the group(s)."""
        return all(not _read(g / "cgroup.procs").strip() for g in self._groups)

    def freeze(self) -> bool:
        """Ask the kernel to stop every process of the group where it stands (``frozen`` says
        when it has: then none can run, so none can touch a file). False: no freezer."""
        if self.freezer is None:
            return False
        v2 = self.version == "v2"
        try:
            (self.freezer / ("cgroup.freeze" if v2 else "freezer.state")).write_text(
                "1" if v2 else "FROZEN"
            )
        except OSError:
            return False
        return True

    def frozen(self) -> bool:
        if self.freezer is None:
            return False
        if self.version == "v2":
            return "frozen 1" in _read(self.freezer / "cgroup.events").splitlines()
        return _read(self.freezer / "freezer.state").strip() == "FROZEN"

    def thaw(self) -> None:
        """Let frozen processes run again (a killed one then dies)."""
        if self.freezer is not None:
            v2 = self.version == "v2"
            with contextlib.suppress(OSError):
                (self.freezer / ("cgroup.freeze" if v2 else "freezer.state")).write_text(
                    "0" if v2 else "THAWED"
                )

    def remove(self) -> bool:
        """Remove the groups once empty; False if a process is still inside."""
        done = True
        for group in self._groups:
            try:
                group.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                done = False
        return done


LEFTOVER = re.compile(r"^podium-(\d+)-")


def sweep_leftovers(support: CgroupSupport) -> int:
    """Remove groups a killed Podium left behind (named after its pid, now dead): thawed, so
    that a process frozen in one can die, and removed once empty."""
    removed = 0
    for parent in {p for p in (support.memory, support.pids, support.freezer) if p is not None}:
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        for entry in entries:
            match = LEFTOVER.match(entry.name)
            if match and not pid_alive(int(match.group(1))):
                for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                    if (entry / name).exists():
                        with contextlib.suppress(OSError):
                            (entry / name).write_text(value)
                with contextlib.suppress(OSError):
                    entry.rmdir()
                    removed += 1
    return removed


def join(procs_files: list[str]) -> None:
    """Move the calling process into the groups (used in the child before exec)."""
    for path in procs_files:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
