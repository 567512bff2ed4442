"""A Podium run's fixed cost: what a run costs beyond its nodes (start to first node, and the end).

Runs ``podium run mini/titanic`` (its defaults: bwrap, the warm pool, forked kernels, one
worker) against the stand-in model of ``perf/aide_comparison.py`` (the fake OpenAI server in a
thread of this process, answering at once with the same logistic-regression solution and a good
review; the runs, their environment and their checks are that script's) for ``--short`` nodes
(2) and ``--long`` nodes (10), ``--repeats`` times each, alternating, after an untimed warm-up.

CPU is the run's whole process tree, sandboxed kernels and the kernel factory included: a
cpuacct cgroup (v1, as root) it starts in (``perf/machine.py``); the machine's busy CPU from
/proc/stat over the same span is printed beside it, as a cross-check on a quiet machine. Two
estimates of the fixed cost, from independent data:

    fit          two run lengths: per node = (CPU(long) - CPU(short)) / (long - short), fixed =
                 CPU(short) - short x per node (medians)
    stamps       one run: the stand-in reads the cgroup's CPU (and the wall clock) at every
                 request, so each long run splits into phases with no instrumentation of Podium:
                     start-up   process start -> the first code request (imports, config, the
                                environment probe, the factory's start as far as the first node
                                waits for it, the first kernel)
                     node 1     first code request -> second code request
                     nodes      second code request -> last code request: the steady per-node
                                cost (each node = code request, execution, review request)
                     last node  last code request -> its review request
                     end        the last review request -> the process's exit (review parsed,
                                the final choice, the best submission graded on the host, the
                                sandbox closed, interpreter shutdown)
                 fixed = total - nodes x steady per node

``--per-process`` also polls the cgroup's processes every 10 ms and adds up each one's CPU by
role: the host (``podium run``), the environment probe, the interpreter probe of the hidden
paths, the grader worker, bwrap, the kernel factory (the processes of its pid namespace: the
zygote, its supervisor, the learner) and the forked kernels (every other pid namespace running
the zygote's program); a process's CPU after the last poll that saw it (at most 10 ms) and a
process that lived under 10 ms are "unattributed" (the tree's CPU less the sum).

``--profile DIR`` adds one ``--short`` run of the host process under cProfile (the kernels
and the factory are other processes) and prints its costliest calls by cumulative time.

Targets (issue "The house, v2"): fixed cost <= 2 CPU s (the process tree).

Usage:  .venv/bin/python perf/run_fixed_cost.py [--short 2] [--long 10] [--repeats 3]
            [--warmup 2] [--wait-quiet S] [--per-process] [--profile DIR] [--json FILE]
            [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aide_comparison import (  # this script's directory
    Run,
    check_podium,
    log,
    podium_run_command,
    prepare_task,
    quiet_check,
    quiet_line,
    respond,
    timed,
    wait_quiet,
)
from machine import CpuCgroup, machine

from podium.testing import FakeOpenAI, Received, Reply

FIXED_TARGET = 2.0  # CPU s


@dataclass
class Stamp:
    kind: str  # "code" or "review"
    wall_s: float  # since the run's start
    cpu_s: float | None  # the run's cgroup CPU so far


@dataclass
class Stamped:
    """The stand-in's responder, stamping every request with the current run's cgroup CPU."""

    group: CpuCgroup | None = None
    t0: float = 0.0
    stamps: list[Stamp] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, group: CpuCgroup) -> None:
        with self.lock:
            self.group, self.t0, self.stamps = group, time.perf_counter(), []

    def __call__(self, received: Received) -> Reply:
        kind = "review" if "submit_review" in received.tools else "code"
        with self.lock:
            cpu = self.group.cpu_s() if self.group is not None else None
            self.stamps.append(Stamp(kind, time.perf_counter() - self.t0, cpu))
        return respond(received)


CLK_TCK = os.sysconf("SC_CLK_TCK")
ROLES = (("host", " -m podium run "), ("environment probe", "importlib.metadata"),
         ("interpreter probe", " -E -s -c"), ("grader worker", "grader_worker"))  # fmt: skip


class Processes:
    """Each process of a cgroup, polled every 10 ms: its role and the CPU last seen."""

    def __init__(self, group: CpuCgroup) -> None:
        self.group = group
        # pid: role, pid namespace, start (clock ticks after boot), CPU s
        self.seen: dict[int, tuple[str, str, int, float]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, name="per-process", daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        assert self.group.group is not None
        while not self.stop.wait(0.01):
            with contextlib.suppress(OSError):
                for pid in map(int, (self.group.group / "cgroup.procs").read_text().split()):
                    if pid != os.getpid():
                        self._look(pid)

    def _look(self, pid: int) -> None:
        """Read again at every poll: a process forked by another has its parent's command
        line (and pid namespace) until it execs (and unshares)."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            used, start = (int(fields[11]) + int(fields[12])) / CLK_TCK, int(fields[19])
            role, ns, _, _ = self.seen.get(pid, ("other", "", 0, 0.0))
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if cmdline:  # empty once it has exited
                role, ns = self._role(cmdline), str(Path(f"/proc/{pid}/ns/pid").readlink())
            self.seen[pid] = (role, ns, start, used)

    @staticmethod
    def _role(cmdline: bytes) -> str:
        text = cmdline.decode(errors="replace")
        if text.split(" ", 1)[0].endswith("bwrap"):  # its argv names the zygote too
            return "bwrap"
        if "zygote.py" in text:
            return "zygote"
        return next((role for role, mark in ROLES if mark in text), "other")

    def close(self, tree_cpu_s: float) -> dict[str, float]:
        """CPU seconds by role (see the module's doc)."""
        self.stop.set()
        self.thread.join()
        zygotes = [(start, ns) for role, ns, start, _ in self.seen.values() if role == "zygote"]
        factory_ns = min(zygotes)[1] if zygotes else None  # the first zygote's: the factory's
        out: dict[str, float] = {}
        for role, ns, _, used in self.seen.values():
            if role == "zygote":
                role = "kernel factory" if ns == factory_ns else "forked kernels"
            out[role] = out.get(role, 0.0) + used
        out["unattributed"] = tree_cpu_s - sum(out.values())
        return out


@dataclass
class Measured:
    run: Run
    stamps: list[Stamp]
    processes: dict[str, float] = field(default_factory=dict)

    @property
    def tree_cpu_s(self) -> float:
        assert self.run.tool_tree_cpu_s is not None
        return self.run.tool_tree_cpu_s

    def figure(self, what: str) -> float:
        """``cpu`` (the process tree's), ``machine_cpu`` or ``wall``, in seconds."""
        if what == "cpu":
            return self.tree_cpu_s
        return float(self.run.machine_cpu_s if what == "machine_cpu" else self.run.wall_s)


def run_podium(fake: FakeOpenAI, stamped: Stamped, data_dir: Path, base: Path, nodes: int,
               label: str, python: tuple[str, ...] = (),
               per_process: bool = False) -> Measured:  # fmt: skip
    out = base / f"podium-{label}"
    out.mkdir()
    run = Run("podium", nodes)
    command, env = podium_run_command(fake, data_dir, nodes, out, python)
    group = CpuCgroup(f"fixed-{label}")
    if group.group is None:
        raise SystemExit("no cpuacct cgroup could be made (cgroup v1 and root needed)")
    log(f"podium {label}: {nodes} nodes ...")
    problems0 = len(fake.problems)
    stamped.start(group)
    processes = Processes(group) if per_process else None
    try:
        timed(run, command, env, out, group)
    finally:
        roles = processes.close(run.tool_tree_cpu_s or 0.0) if processes else {}
    stamps, stamped.group = list(stamped.stamps), None
    check_podium(run, out)
    if len(fake.problems) > problems0 or run.good_nodes != nodes:
        raise RuntimeError(f"podium {label}: rejected requests or bad nodes ({out})")
    log(f"  {run.wall_s:.2f} s wall, {run.tool_tree_cpu_s:.2f} CPU s (tree), "
        f"{run.machine_cpu_s:.2f} (machine)")  # fmt: skip
    return Measured(run, stamps, roles)


def cpu(stamp: Stamp) -> float:
    return stamp.cpu_s or 0.0


def phases(m: Measured) -> dict[str, float]:
    """CPU and wall of each phase of one run, from the stand-in's stamps (see the doc)."""
    codes = [s for s in m.stamps if s.kind == "code"]
    reviews = [s for s in m.stamps if s.kind == "review"]
    n = m.run.nodes
    if len(codes) != n or len(reviews) != n or n < 3:
        return {}
    total_cpu, total_wall = m.tree_cpu_s, m.run.wall_s
    steady_cpu = (cpu(codes[-1]) - cpu(codes[1])) / (n - 2)
    steady_wall = (codes[-1].wall_s - codes[1].wall_s) / (n - 2)
    return {
        "startup_cpu_s": cpu(codes[0]), "startup_wall_s": codes[0].wall_s,
        "node1_cpu_s": cpu(codes[1]) - cpu(codes[0]),
        "node1_wall_s": codes[1].wall_s - codes[0].wall_s,
        "steady_cpu_per_node_s": steady_cpu, "steady_wall_per_node_s": steady_wall,
        "last_node_cpu_s": cpu(reviews[-1]) - cpu(codes[-1]),
        "end_cpu_s": total_cpu - cpu(reviews[-1]), "end_wall_s": total_wall - reviews[-1].wall_s,
        "total_cpu_s": total_cpu, "total_wall_s": total_wall,
        "fixed_cpu_s": total_cpu - n * steady_cpu, "fixed_wall_s": total_wall - n * steady_wall,
    }  # fmt: skip


def fit(short: list[Measured], long: list[Measured]) -> dict[str, float]:
    """Fixed and per-node cost from the medians of two run lengths."""
    ns, nl = short[0].run.nodes, long[0].run.nodes
    out: dict[str, float] = {}
    for what in ("cpu", "machine_cpu", "wall"):
        cs, cl = (statistics.median(m.figure(what) for m in runs) for runs in (short, long))
        per = (cl - cs) / (nl - ns)
        out[f"{what}_per_node_s"], out[f"{what}_fixed_s"] = per, cs - ns * per
    return out


def profile(fake: FakeOpenAI, stamped: Stamped, data_dir: Path, base: Path, nodes: int,
            where: Path) -> str:  # fmt: skip
    """One run of the host process under cProfile: its costliest calls, by cumulative time."""
    where.mkdir(parents=True, exist_ok=True)
    out = where / "podium.prof"
    run_podium(fake, stamped, data_dir, base, nodes, "profile", ("-m", "cProfile", "-o", str(out)))
    text = where / "podium.txt"
    with text.open("w") as stream:
        pstats.Stats(str(out), stream=stream).sort_stats("cumulative").print_stats(45)
    return text.read_text()


def median_phases(runs: list[Measured]) -> dict[str, float]:
    each = [p for p in map(phases, runs) if p]
    return {k: statistics.median(p[k] for p in each) for k in each[0]} if each else {}


def report(info: dict[str, Any], quiet: tuple[dict[str, float], dict[str, float]],
           short: list[Measured], long: list[Measured],
           started: datetime.datetime) -> dict[str, Any]:  # fmt: skip
    f, p = fit(short, long), median_phases(long)
    print(f"\nPodium's fixed cost, {started:%Y-%m-%d %H:%M %Z}: {len(short)} runs of "
          f"{short[0].run.nodes} nodes and {len(long)} of {long[0].run.nodes}, "
          "alternating")  # fmt: skip
    print(f"machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}, "
          f"Python {info['python']}, {info['bwrap']}; load average at start "
          f"{' '.join(info['loadavg_at_start'])}")  # fmt: skip
    print(quiet_line(*quiet) + "\n")
    print("| nodes | wall s (runs) | tree CPU s (runs) | machine CPU s (runs) |\n|---|---|---|---|")
    for runs in (short, long):
        cells = [" ".join(f"{getattr(m.run, k) if k != 'tree' else m.tree_cpu_s:.2f}" for m in runs)
                 for k in ("wall_s", "tree", "machine_cpu_s")]  # fmt: skip
        print(f"| {runs[0].run.nodes} | " + " | ".join(cells) + " |")
    print(f"\nfit (medians): fixed {f['cpu_fixed_s']:.2f} CPU s "
          f"(machine {f['machine_cpu_fixed_s']:.2f}) + {f['cpu_per_node_s']:.3f} CPU s per node "
          f"(machine {f['machine_cpu_per_node_s']:.3f}); wall {f['wall_fixed_s']:.2f} s + "
          f"{f['wall_per_node_s']:.3f} s per node")  # fmt: skip
    if p:
        print(f"stamps ({long[0].run.nodes}-node runs, medians): start-up {p['startup_cpu_s']:.2f}"
              f" CPU s ({p['startup_wall_s']:.2f} s wall), node 1 {p['node1_cpu_s']:.2f} "
              f"({p['node1_wall_s']:.2f}), steady {p['steady_cpu_per_node_s']:.3f} per node "
              f"({p['steady_wall_per_node_s']:.3f}), last node to its review "
              f"{p['last_node_cpu_s']:.2f}, end {p['end_cpu_s']:.2f} ({p['end_wall_s']:.2f});"
              f" fixed {p['fixed_cpu_s']:.2f} CPU s ({p['fixed_wall_s']:.2f} s wall)")  # fmt: skip
    split = per_process(short, long)
    if split:
        print(
            "\nCPU s by process (medians; fixed and per node fitted as above):\n"
            "| role | short runs | long runs | fixed | per node |\n|---|---|---|---|---|"
        )
        for role, row in split.items():
            print(
                f"| {role} | "
                + " | ".join(f"{row[k]:.3f}" for k in ("short", "long", "fixed", "per_node"))
                + " |"
            )
    fixed = f["cpu_fixed_s"]
    print(f"{'PASS' if fixed <= FIXED_TARGET else 'FAIL'}  fixed cost <= {FIXED_TARGET:g} CPU s "
          f"(fit, process tree): {fixed:.2f} CPU s")  # fmt: skip
    return {"fit": f, "phases": p, "per_process": split}


def per_process(short: list[Measured], long: list[Measured]) -> dict[str, dict[str, float]]:
    """Each role's CPU (``--per-process``): medians of each length, fixed and per node."""
    if not short[0].processes:
        return {}
    ns, nl = short[0].run.nodes, long[0].run.nodes
    roles = sorted({role for m in short + long for role in m.processes})
    out = {}
    for role in roles:
        cs, cl = (statistics.median(m.processes.get(role, 0.0) for m in runs)
                  for runs in (short, long))  # fmt: skip
        per = (cl - cs) / (nl - ns)
        out[role] = {"short": cs, "long": cl, "fixed": cs - ns * per, "per_node": per}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", type=int, default=2, help="nodes of the short runs")
    parser.add_argument("--long", type=int, default=10, help="nodes of the long runs (>= 3)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each length")
    parser.add_argument("--warmup", type=int, default=2, help="nodes of the untimed warm-up")
    parser.add_argument("--quiet-s", type=float, default=3.0, help="idle window before the runs")
    parser.add_argument("--wait-quiet", type=float, default=0.0, metavar="S",
                        help="wait up to S seconds for a quiet machine")  # fmt: skip
    parser.add_argument("--per-process", action="store_true", help="CPU by process role")
    parser.add_argument("--profile", type=Path, metavar="DIR", help="also a cProfile'd run")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the runs' directories")
    args = parser.parse_args()
    if args.long <= args.short or args.long < 3:
        parser.error("--long must be over --short and at least 3")
    info, started = machine(), datetime.datetime.now().astimezone()
    base = Path(tempfile.mkdtemp(prefix="podium-fixed-"))
    stamped = Stamped()
    try:
        with FakeOpenAI(responder=stamped) as fake:
            data_dir, _ = prepare_task(base)
            if args.warmup:
                run_podium(fake, stamped, data_dir, base, args.warmup, "warmup")
            quiet = wait_quiet(args.quiet_s, args.wait_quiet)
            short: list[Measured] = []
            long: list[Measured] = []
            for i in range(args.repeats):
                for runs, nodes in ((short, args.short), (long, args.long)):
                    time.sleep(1)  # what the last run left behind settles outside the window
                    label = f"{nodes}-{i}"
                    runs.append(run_podium(fake, stamped, data_dir, base, nodes, label,
                                           per_process=args.per_process))  # fmt: skip
            quiet_after = quiet_check(args.quiet_s)
            profiled = profile(fake, stamped, data_dir, base, args.short, args.profile) \
                if args.profile else ""  # fmt: skip
    finally:
        if args.keep:
            log(f"runs kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    result = report(info, (quiet, quiet_after), short, long, started)
    if profiled:
        print(f"\ncProfile of the host process ({args.profile}/podium.prof):\n{profiled}")
    if args.json:
        each = [{**asdict(m.run), "stamps": [asdict(s) for s in m.stamps]} for m in short + long]
        payload = {"date": started.isoformat(timespec="seconds"), "machine": info,
                   "quiet": [quiet, quiet_after], "runs": each, **result}  # fmt: skip
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
