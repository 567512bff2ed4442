"""What running a solution costs per node: a fresh process, a cold kernel, or a warm-pool kernel.

Two snippets, each run ``--repeats`` times in every configuration, medians reported:

    print      ``print(1)``: the bare cost of the mechanism
    sklearn    import pandas + scikit-learn, fit a LogisticRegression on 2000x20 random data

Configurations:

    (a)  fresh ``python`` process per node: the snippet written to a file and run with
         ``subprocess.run([sys.executable, file])`` (what AIDE does)
    (b)  fresh bwrap-sandboxed kernel per node, cold (``warm_pool=False``, no warm_up)
    (b') fresh UNsandboxed kernel per node, cold (``LocalSandbox``, ``warm_pool=False``):
         (b) - (b') is bubblewrap's own start cost
    (c)  bwrap kernel from the warm pool (``warm_up(kernels=1)``, default pre-imports), each
         started cold (``fork=False``); the pool is ready before the first node and refills
         between nodes (as it does while the model writes the next solution); wall time is
         what the caller of ``execute`` waits
    (d)  as (c), but the pool's kernels are forked from the kernel factory (the default): the
         factory's own start (ipykernel and the pre-imports, once per run) is reported apart

Wall time per node is measured around the call (``execute`` or ``subprocess.run``); the kernel
column is ``ExecResult.kernel_start_s``, how long ``execute`` waited for its kernel (a cold start:
slot, cgroup, process, first reply; or the take from the pool). CPU per node is what the machine
spends for it, this process included, over the whole series divided by the number of nodes: for
the pool that counts every kernel it started, the one left in the pool after the last node too
(warm_up's kernel + one refill per node, killed at aclose).

CPU accounting. ``RUSAGE_SELF`` covers this process (event loop, ZMQ). ``RUSAGE_CHILDREN``
covers (a) exactly, and the local kernels of (b'), which Podium kills and then reaps. It does
NOT see a bwrap kernel: the kernel runs as a child of bwrap's pid-namespace init, and when
that init is killed the Linux kernel reaps the namespace's processes itself (SIGCHLD ignored),
so their CPU time is accounted to nobody. So every kernel's process tree (the launched process
and all its descendants, utime + stime + children's times from /proc/<pid>/stat) is read just
before Podium sends it SIGKILL (``LiveKernel.kill`` is wrapped here), and the sandboxed
configurations count ``RUSAGE_SELF`` + those trees. For (b') both methods apply; the JSON
carries both, as a check of the /proc one. Resolution: 1/CLK_TCK (10 ms) per process.

A forked kernel (d) is counted by a cpuacct cgroup the script joins before it starts the
factory (cgroup v1, root: Podium puts a kernel in memory and pids cgroups only): everything
the factory and its kernels spend, forks and exits included, read once the pool is ready
(after the factory's start-up, reported apart) and again after the last node's clean-up, minus
this process's own ``RUSAGE_SELF``, which is added back as for (c). The spare kernel left in
the pool at the end is counted as far as it got (its fork and start-up ran during the
series); the first node's kernel, forked before, is not.

Memory per extra kernel (``--memory``): the private pages (``Private_Clean + Private_Dirty``
of ``/proc/<pid>/smaps_rollup``, every process of the kernel) of each of 4 idle pooled kernels,
cold (c) and forked (d): what one more kernel costs, shared pages counted once (not at all).

Other load on the machine distorts every figure; the CPU that other processes used during the
measured series (machine busy time from /proc/stat minus this benchmark's own) is printed.

Targets: (c) >= 10x faster than (a) in wall time on the sklearn snippet; (b) within 100 ms of
(b') in median kernel start (both snippets' cold starts pooled). ``--preimports`` changes what the
pool's kernels import in (c), to see what a different default would give.

Usage:  .venv/bin/python perf/sandbox_overhead.py [--repeats 7] [--json perf/results/sandbox.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import CpuCgroup, machine  # noqa: E402  (perf/machine.py: this script's directory)

from podium.interfaces import Limits, Workspace  # noqa: E402
from podium.sandbox import BwrapSandbox, KernelSandbox, LocalSandbox, SandboxOptions  # noqa: E402
from podium.sandbox.kernel import LiveKernel  # noqa: E402
from podium.sandbox.options import DEFAULT_PREIMPORTS, limits_from_config  # noqa: E402

SNIPPETS = {
    "print": "print(1)\n",
    "sklearn": (
        "import numpy as np\n"
        "import pandas as pd\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "rng = np.random.default_rng(0)\n"
        "X = pd.DataFrame(rng.normal(size=(2000, 20)))\n"
        "y = (X[0] + X[1] + 0.5 * rng.normal(size=2000) > 0).astype(int)\n"
        "model = LogisticRegression(max_iter=1000).fit(X, y)\n"
        'print(f"accuracy {model.score(X, y):.4f}")\n'
    ),
}
EXPECTED = {"print": "1", "sklearn": "accuracy "}
SNIPPET_TITLES = {"print": "`print(1)`", "sklearn": "pandas + sklearn fit"}
CONFIGS = {
    "a": "(a) fresh `python` process per node",
    "b": "(b) fresh bwrap kernel per node, cold",
    "b'": "(b') fresh plain kernel per node, cold (local)",
    "c": "(c) bwrap kernel from the warm pool, cold-started",
    "d": "(d) bwrap kernel from the warm pool, forked from the kernel factory",
}
LIMITS = Limits(timeout_s=120)
CLK_TCK = os.sysconf("SC_CLK_TCK")

# --- CPU accounting -----------------------------------------------------------------------------


def _rusage() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all cores; not idle, not iowait)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK


def tree_cpu_s(root: int) -> float:
    """CPU seconds of ``root`` and every descendant, each with the times of its reaped children."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[1].split()  # rest[0] is the state, field 3 of stat
        pid = int(entry.name)
        parent[pid] = int(rest[1])
        cpu[pid] = sum(int(v) for v in rest[11:15]) / CLK_TCK  # utime stime cutime cstime
    total = 0.0
    for pid, seconds in cpu.items():
        p = pid
        while p > 1 and p != root:
            p = parent.get(p, 0)
        if p == root:
            total += seconds
    return total


@dataclass
class KillLedger:
    """CPU of each kernel's process tree, read just before Podium SIGKILLs it."""

    kernels: list[LiveKernel] = field(default_factory=list)
    seen: dict[int, float] = field(default_factory=dict)  # id(kernel) -> CPU seconds

    def record(self, kernel: LiveKernel) -> None:
        process = getattr(kernel.km.provisioner, "process", None)
        pid = getattr(process, "pid", None)
        if pid is None or (process is not None and process.poll() is not None):
            return  # already dead (a second kill): the first reading stands
        seconds = tree_cpu_s(pid)
        if id(kernel) not in self.seen:
            self.kernels.append(kernel)  # keeps it alive, so its id stays unique
        self.seen[id(kernel)] = max(self.seen.get(id(kernel), 0.0), seconds)

    def total(self) -> float:
        return sum(self.seen.values())


LEDGER = KillLedger()


def _account_kills() -> None:
    original = LiveKernel.kill

    async def kill(self: LiveKernel) -> None:
        LEDGER.record(self)
        await original(self)

    LiveKernel.kill = kill  # type: ignore[method-assign]


# --- the configurations -------------------------------------------------------------------------


@dataclass
class Series:
    config: str
    snippet: str
    wall_s: list[float] = field(default_factory=list)
    kernel_start_s: list[float] = field(default_factory=list)
    cpu_self_s: float = 0.0
    cpu_children_rusage_s: float = 0.0
    cpu_kernel_trees_s: float | None = None
    factory_start_s: tuple[float, float] | None = None  # (d): wall, CPU of the factory's start
    series_wall_s: float = 0.0
    other_processes_cpu_s: float = 0.0

    @property
    def cpu_total_s(self) -> float:
        kids = self.cpu_children_rusage_s
        if self.cpu_kernel_trees_s is not None:
            kids = self.cpu_kernel_trees_s
        return self.cpu_self_s + kids

    @property
    def cpu_per_node_s(self) -> float:
        return self.cpu_total_s / len(self.wall_s)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "wall_ms": {
                "median": round(statistics.median(self.wall_s) * 1000, 1),
                "min": round(min(self.wall_s) * 1000, 1),
                "max": round(max(self.wall_s) * 1000, 1),
            },
            "cpu_per_node_s": round(self.cpu_per_node_s, 3),
            "cpu_self_s": round(self.cpu_self_s, 3),
            "cpu_children_rusage_s": round(self.cpu_children_rusage_s, 3),
            "series_wall_s": round(self.series_wall_s, 2),
            "other_processes_cpu_s": round(self.other_processes_cpu_s, 2),
        }
        if self.cpu_kernel_trees_s is not None:
            out["cpu_kernel_trees_s"] = round(self.cpu_kernel_trees_s, 3)
        if self.factory_start_s is not None:
            out["factory_start"] = {"wall_s": round(self.factory_start_s[0], 2),
                                    "cpu_s": round(self.factory_start_s[1], 2)}  # fmt: skip
        if self.kernel_start_s:
            out["kernel_start_ms_median"] = round(statistics.median(self.kernel_start_s) * 1000, 1)
        return out


class Meter:
    """CPU and machine-busy deltas over one series."""

    def __enter__(self) -> Meter:
        self.rusage0, self.kills0 = _rusage(), LEDGER.total()
        self.busy0, self.t0 = machine_busy_s(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        own, kids = _rusage()
        self.self_s, self.children_s = own - self.rusage0[0], kids - self.rusage0[1]
        self.kernel_trees_s = LEDGER.total() - self.kills0
        self.busy_s = machine_busy_s() - self.busy0
        self.wall_s = time.perf_counter() - self.t0


def run_process(snippet: str, node: Path) -> float:
    node.mkdir(parents=True)
    script = node / "solution.py"
    script.write_text(snippet)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(script)], cwd=node, capture_output=True, text=True, timeout=120
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"solution failed:\n{done.stderr[-2000:]}")
    return wall


async def run_kernel(
    sb: KernelSandbox, snippet: str, node: Path, inputs: Path
) -> tuple[float, Any]:
    node.mkdir(parents=True)
    t0 = time.perf_counter()
    result = await sb.execute(snippet, Workspace(root=node, input_dir=inputs), LIMITS)
    wall = time.perf_counter() - t0
    if result.failed:
        raise RuntimeError(f"solution failed: {result.status}\n{result.output[-2000:]}")
    return wall, result


def make_sandbox(config: str, preimports: tuple[str, ...] = DEFAULT_PREIMPORTS) -> KernelSandbox:
    """The limits a run gets when its config says nothing (memory "auto": a memory cgroup)."""
    limits = limits_from_config({})
    if config == "b":
        return BwrapSandbox(SandboxOptions(limits=limits, warm_pool=False))
    if config == "b'":
        return LocalSandbox(SandboxOptions(limits=limits, warm_pool=False))
    fork = config == "d"
    return BwrapSandbox(SandboxOptions(limits=limits, preimports=preimports, fork=fork))


async def run_nodes(
    series: Series, sb: KernelSandbox, name: str, repeats: int, nodes: Path, inputs: Path
) -> None:
    for i in range(repeats):
        wall, result = await run_kernel(sb, SNIPPETS[name], nodes / str(i), inputs)
        if EXPECTED[name] not in result.output:
            raise RuntimeError(f"unexpected output: {result.output!r}")
        series.wall_s.append(wall)
        series.kernel_start_s.append(result.kernel_start_s)
        await sb.settle()


async def measure_forked(
    series: Series, name: str, repeats: int, base: Path, preimports: tuple[str, ...]
) -> None:
    """(d): the factory's start measured apart, then the nodes (see the module's doc)."""
    inputs, nodes = base / "input", base / "nodes" / f"d-{name}"
    group = CpuCgroup(f"d-{name}")
    group.join()  # the factory and every kernel it forks start in it
    sb = make_sandbox("d", preimports)
    assert isinstance(sb, BwrapSandbox)
    t0, own_start = time.perf_counter(), _rusage()[0]
    await sb.warm_up(base / "scratch", inputs, kernels=1)
    await sb.settle()
    if sb.forking.current is None:
        raise RuntimeError(f"no kernel factory: {sb.forking.problem}")
    all0, own0, busy0 = group.cpu_s(), _rusage()[0], machine_busy_s()
    if all0 is None:
        raise RuntimeError("(d) needs a cpuacct cgroup (cgroup v1, root) to count its kernels")
    series.factory_start_s = (time.perf_counter() - t0, all0 - (own0 - own_start))
    t1 = time.perf_counter()
    await run_nodes(series, sb, name, repeats, nodes, inputs)
    all1 = group.cpu_s() or 0.0
    series.cpu_self_s = _rusage()[0] - own0
    series.cpu_kernel_trees_s = all1 - all0 - series.cpu_self_s
    series.series_wall_s = time.perf_counter() - t1
    series.other_processes_cpu_s = max(0.0, machine_busy_s() - busy0 - series.cpu_total_s)
    await sb.aclose()
    group.close()


async def measure_series(
    config: str, name: str, repeats: int, base: Path, preimports: tuple[str, ...]
) -> Series:
    series = Series(config, name)
    snippet, inputs = SNIPPETS[name], base / "input"
    nodes = base / "nodes" / f"{config.replace(chr(39), 'p')}-{name}"
    if config == "d":
        await measure_forked(series, name, repeats, base, preimports)
        return series
    with Meter() as meter:
        if config == "a":
            for i in range(repeats):
                series.wall_s.append(run_process(snippet, nodes / str(i)))
        else:
            sb = make_sandbox(config, preimports)
            if config == "c":
                await sb.warm_up(base / "scratch", inputs, kernels=1)
                await sb.settle()  # the pool is ready before the first node
            await run_nodes(series, sb, name, repeats, nodes, inputs)
            await sb.aclose()  # kills the pool's spare kernel: part of the series' cost
    series.cpu_self_s, series.cpu_children_rusage_s = meter.self_s, meter.children_s
    if config != "a":
        series.cpu_kernel_trees_s = meter.kernel_trees_s
    series.series_wall_s = meter.wall_s
    own = meter.self_s + max(meter.children_s, meter.kernel_trees_s)
    series.other_processes_cpu_s = max(0.0, meter.busy_s - own)
    return series


def private_bytes(root: int) -> int:
    """Private_Clean + Private_Dirty of ``root`` and its descendants (shared pages: none)."""
    total = 0
    for pid in [root, *descendants(root)]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
    return total


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


async def memory_per_kernel(base: Path, preimports: tuple[str, ...]) -> dict[str, float]:
    """Median private MiB of 4 idle pooled kernels, cold (c) and forked (d)."""
    out = {}
    for config in ("c", "d"):
        sb = make_sandbox(config, preimports)
        await sb.warm_up(base / f"scratch-mem-{config}", base / "input", kernels=4)
        await sb.settle()
        pool = sb._pool
        assert pool is not None
        kernels = [await task for task in list(pool._ready)]
        sizes = [private_bytes(k.kernel.process.pid) for k in kernels if k.kernel.process]
        out[config] = round(statistics.median(sizes) / 2**20, 1)
        await sb.aclose()
    return out


async def warm_caches(base: Path) -> None:
    """One untimed run of everything: page cache, the bwrap sandbox's interpreter probe."""
    for name, snippet in SNIPPETS.items():
        run_process(snippet, base / "warm" / f"a-{name}")
    for config in ("b", "b'"):
        sb = make_sandbox(config)
        await run_kernel(sb, SNIPPETS["sklearn"], base / "warm" / f"{config}-k", base / "input")
        await sb.aclose()


async def measure(
    repeats: int, preimports: tuple[str, ...]
) -> tuple[list[Series], dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="podium-sbo-") as tmp:
        base = Path(tmp)
        (base / "input").mkdir()
        (base / "input" / "train.csv").write_text("x,y\n1,0\n")
        await warm_caches(base)
        out = []
        for name in SNIPPETS:
            for config in CONFIGS:
                print(f"measuring {config} {name} ...", file=sys.stderr, flush=True)
                out.append(await measure_series(config, name, repeats, base, preimports))
        print("measuring memory per kernel ...", file=sys.stderr, flush=True)
        return out, await memory_per_kernel(base, preimports)


# --- report -------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    return {**machine(), "bwrap_limits": make_sandbox("b").describe()}


def evaluate(by: Callable[[str, str], Series]) -> list[dict[str, Any]]:
    a_fit = statistics.median(by("a", "sklearn").wall_s)
    c_fit = statistics.median(by("c", "sklearn").wall_s)
    starts_b = by("b", "print").kernel_start_s + by("b", "sklearn").kernel_start_s
    starts_p = by("b'", "print").kernel_start_s + by("b'", "sklearn").kernel_start_s
    delta = statistics.median(starts_b) - statistics.median(starts_p)
    return [
        {
            "target": "(c) >= 10x faster than (a) in wall time, pandas + sklearn fit",
            "value": f"{a_fit / c_fit:.1f}x ({a_fit * 1000:.0f} ms vs {c_fit * 1000:.0f} ms)",
            "passed": c_fit * 10 <= a_fit,
        },
        {
            "target": "(b) within 100 ms of (b'), median cold kernel start",
            "value": (
                f"{delta * 1000:+.0f} ms ({statistics.median(starts_b) * 1000:.0f} ms vs "
                f"{statistics.median(starts_p) * 1000:.0f} ms, {len(starts_b)} starts each)"
            ),
            "passed": delta <= 0.1,
        },
        *forked_targets(by),
    ]


def forked_targets(by: Callable[[str, str], Series]) -> list[dict[str, Any]]:
    """(d) against (c): the kernel factory's targets (issue 18)."""
    c_cpu, d_cpu = by("c", "print").cpu_per_node_s, by("d", "print").cpu_per_node_s
    d_fit = statistics.median(by("d", "sklearn").wall_s)
    d_print = statistics.median(by("d", "print").wall_s)
    return [
        {
            "target": "(d) <= 0.1 CPU s per node for `print(1)` (everything: host and kernel)",
            "value": f"{d_cpu:.3f} s ({c_cpu / d_cpu:.0f}x less than (c), {c_cpu:.2f} s)",
            "passed": d_cpu <= 0.1,
        },
        {
            "target": "(d) <= 60 ms wall per node for `print(1)` (the kernel's whole overhead)",
            "value": f"{d_print * 1000:.0f} ms (the fit: {d_fit * 1000:.0f} ms)",
            "passed": d_print <= 0.06,
        },
    ]


def table(by: Callable[[str, str], Series]) -> str:
    head = ["configuration"]
    for name in SNIPPETS:
        head += [f"{SNIPPET_TITLES[name]}: wall / node", f"{SNIPPET_TITLES[name]}: CPU / node"]
    head.append("node's wait for its kernel (median)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for config, title in CONFIGS.items():
        row = [title]
        starts: list[float] = []
        for name in SNIPPETS:
            s = by(config, name)
            row += [f"{statistics.median(s.wall_s) * 1000:.0f} ms", f"{s.cpu_per_node_s:.2f} s"]
            starts += s.kernel_start_s
        if config == "a":
            row.append("—")
        else:
            row.append(f"{statistics.median(starts) * 1000:.0f} ms")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="nodes per configuration/snippet")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--preimports",
        default=",".join(DEFAULT_PREIMPORTS),
        help="modules the pool's kernels import before a node (c); default: Podium's default",
    )
    args = parser.parse_args()
    preimports = tuple(m for m in args.preimports.split(",") if m)
    _account_kills()
    info = machine_info()
    started = datetime.datetime.now().astimezone()
    series, memory = asyncio.run(measure(args.repeats, preimports))
    found = {(s.config, s.snippet): s for s in series}

    def by(config: str, snippet: str) -> Series:
        return found[(config, snippet)]

    targets = evaluate(by)
    other = sum(s.other_processes_cpu_s for s in series)
    span = sum(s.series_wall_s for s in series)
    when = f"{started:%Y-%m-%d %H:%M %Z}"
    print(f"\nsandbox overhead, {args.repeats} nodes per cell, medians; {when}")
    print(f"pool pre-imports (c): {', '.join(preimports) or 'none'}")
    print(f"machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}, "
          f"Python {info['python']}, {info['bwrap']}\n")  # fmt: skip
    print(table(by))
    load = " ".join(info["loadavg_at_start"])
    print(f"\nother processes used {other:.1f} CPU s during the {span:.0f} s measured "
          f"({other / span:.0%} of one core); load average at start {load}")  # fmt: skip
    starts = [s.factory_start_s for s in series if s.factory_start_s is not None]
    print(f"kernel factory start (d), once per run: {starts[0][0]:.2f} s wall, "
          f"{starts[0][1]:.2f} CPU s")  # fmt: skip
    print(f"private memory per idle pooled kernel: cold {memory['c']} MiB, "
          f"forked {memory['d']} MiB")  # fmt: skip
    for t in targets:
        print(f"{'PASS' if t['passed'] else 'FAIL'}  {t['target']}: {t['value']}")
    if args.json:
        result = {
            "date": started.isoformat(timespec="seconds"),
            "repeats": args.repeats,
            "preimports": list(preimports),
            "machine": info,
            "series": {f"{s.config} {s.snippet}": s.summary() for s in series},
            "targets": targets,
            "private_memory_per_kernel_mib": memory,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
