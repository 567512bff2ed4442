"""How well parallel workers scale: nodes per minute for W = 1, 2, 4, 8 workers.

Target (issue 6): speed-up >= 0.8 x W up to W = 4.

Each W gets one greedy search (default strategy parameters: 5 drafts, then improvements) on
the bundled toy task, ``steps = max(steps-per-worker x W, min-steps)`` nodes, against a fake
OpenAI server whose every answer (code and review calls alike) takes a latency drawn uniformly
from [1, 2] s (seeded, reseeded per run, stratified in blocks of 16 calls so that every run sees
the same mean). The solution is trivial (standard library: print the metric line, copy the
sample submission), kernel pre-imports are off, the sandbox and the warm pool are the defaults
(``auto``, one pre-started kernel per worker). Model ``openai/gpt-4.1``.

The fake server runs in a separate process, so its threads neither compete with Podium's event
loop for the GIL nor count as Podium's CPU. Data are prepared once by a short warm-up run.

Reported per W, over the search span (from the moment the search starts, kernels of the pool
still starting, to the last node's finish):

* nodes/min, speed-up vs W = 1 and efficiency (speed-up / W); also a *steady-state* rate,
  between the finish of node W and of node N - W, when every worker is busy (it leaves out
  the first kernels' start-up and the tail, where workers run out of steps);
* worker time, as shares of W x span: inside nodes, between a worker's nodes (settling one,
  launching the next), and idle at the start and the end (no steps left to launch);
* per node, means from the nodes' ``timings``: code-model and review-model time, the wait for a
  kernel, execution, Podium's own overhead; and how much longer a model call took in Podium than
  the delay the server slept (HTTP client, event loop);
* CPU, in cores (CPU seconds / span): the whole machine (``/proc/stat``), Podium's process
  (``RUSAGE_SELF``), its event-loop thread alone (``time.thread_time`` in the loop), the
  kernels (everything Podium started: a cpuacct cgroup of the script's own, see
  ``machine.CpuCgroup``, minus Podium's process), the fake server, and other load;
* kernel starts (wall time of each, pool refills included);
* event-loop lag (how late a 20 ms timer fires: p50 / p99 / max) and the time per node the loop
  spends blocked in synchronous calls: journal transactions, run-directory file work, launching
  a kernel process, terminating a kernel's ZMQ context at clean-up.

``--what-if-control-linger-0`` changes one thing in jupyter_client (see ``control_linger_0``) to
measure what the 100 ms waits at kernel clean-up cost; it is not how Podium runs.

Usage:  .venv/bin/python perf/parallel_throughput.py [--workers 1,2,4,8] [--steps-per-worker 8]
            [--min-steps 16] [--latency 1,2] [--seed 0] [--schedule reproducible|eager]
            [--json FILE]
            [--what-if-control-linger-0]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import CpuCgroup, machine  # noqa: E402  (perf/machine.py: this script's directory)

if TYPE_CHECKING:
    from podium.api import RunStart
    from podium.interfaces import RunInfo
    from podium.records import Node

TOY_TASK = REPO / "tests" / "fixtures" / "tasks" / "toy"
MODEL = "openai/gpt-4.1"
TICK = os.sysconf("SC_CLK_TCK")
LAG_EVERY_S = 0.02
WORKER_TIME = {"in_nodes": "in nodes", "between_nodes": "between", "start_end": "start+end"}
NOISY_CORES = 0.1  # other load above this during a run is reported
STRATA = 16  # model latencies are drawn in stratified blocks of this many calls
BLOCKING_GROUPS = ("journal", "run dir", "kernel launch", "zmq term")
TARGET_EFFICIENCY = 0.8
TARGET_UP_TO_W = 4
SOLUTION = (
    "import shutil\n"
    'print("VALIDATION_METRIC: 0.5")\n'
    'shutil.copy("input/sample_submission.csv", "submission/submission.csv")\n'
)
F = TypeVar("F", bound=Callable[..., Any])


# --- the fake model, in its own process --------------------------------------------------------


def serve() -> None:
    """``--serve``: a FakeOpenAI answering every call after a seeded uniform delay.

    Protocol on stdin/stdout, one JSON line per answer: first ``{"url", "api_key", "pid"}``;
    then ``reset SEED LO HI`` (reseed, new latency range, zero the counters) and ``stats``
    (calls and seconds slept, per role). Ends when stdin closes.
    """
    from podium.testing import FakeOpenAI, Received, Reply

    lock = threading.Lock()
    state: dict[str, Any] = {"rng": random.Random(0), "lo": 1.0, "hi": 2.0, "block": []}
    calls = {"code": 0, "review": 0}
    slept = {"code": 0.0, "review": 0.0}

    def draw() -> float:
        """Uniform on [lo, hi], stratified: each block of STRATA calls gets one delay from each
        1/STRATA of the range, in a seeded random order. Runs of different lengths then see
        the same mean latency, and speed-ups compare Podium, not the luck of the draws."""
        if not state["block"]:
            rng = state["rng"]
            block = [(i + rng.random()) / STRATA for i in range(STRATA)]
            rng.shuffle(block)
            state["block"] = block
        u: float = state["block"].pop()
        return float(state["lo"] + u * (state["hi"] - state["lo"]))

    def respond(received: Received) -> Reply:
        role = "review" if received.forced_tool == "submit_review" else "code"
        with lock:
            delay = draw()
            calls[role] += 1
            slept[role] += delay
        if role == "review":
            args = {"is_bug": False, "summary": "Ran fine.", "metric": 0.5}
            return Reply.tool_call("submit_review", args, delay_s=delay)
        return Reply.text(f"A plan.\n\n```python\n{SOLUTION}```\n", delay_s=delay)

    def say(data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data) + "\n")
        sys.stdout.flush()

    with FakeOpenAI(responder=respond) as fake:
        say({"url": fake.url, "api_key": fake.api_key, "pid": os.getpid()})
        for line in sys.stdin:
            word, *rest = line.split()
            with lock:
                if word == "reset":
                    state["rng"] = random.Random(int(rest[0]))
                    state["lo"], state["hi"] = float(rest[1]), float(rest[2])
                    state["block"] = []
                    calls.update(code=0, review=0)
                    slept.update(code=0.0, review=0.0)
                    say({})
                elif word == "stats":
                    say({"calls": dict(calls), "slept_s": dict(slept), "problems": fake.problems})


class FakeModel:
    def __init__(self) -> None:
        script = str(Path(__file__).resolve())
        self.proc = subprocess.Popen(
            [sys.executable, "-u", script, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        hello = self._read()
        self.url: str = hello["url"]
        self.api_key: str = hello["api_key"]
        self.pid: int = hello["pid"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the fake model server exited")
        data: dict[str, Any] = json.loads(line)
        return data

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def cpu_s(self) -> float:
        return proc_cpu_s(self.pid)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


# --- CPU accounting ---------------------------------------------------------------------------


def proc_cpu_s(pid: int) -> float:
    """utime + stime of one process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_busy_s() -> float:
    """CPU seconds the whole machine spent not idle (all cores), since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:7]) - idle) / TICK  # user..softirq (guest is in user; steal is not ours)


def self_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuMark:
    wall: float
    epoch: float
    machine: float
    podium: float
    loop: float
    fake: float
    tree: float | None

    @classmethod
    def now(cls, fake: FakeModel, tree: CpuCgroup) -> CpuMark:
        return cls(time.perf_counter(), time.time(), machine_busy_s(), self_cpu_s(),
                   time.thread_time(), fake.cpu_s(), tree.cpu_s())  # fmt: skip


def background_cores(seconds: float = 3.0) -> float:
    """What the machine uses with nothing of ours running."""
    t0, b0 = time.perf_counter(), machine_busy_s()
    time.sleep(seconds)
    return (machine_busy_s() - b0) / (time.perf_counter() - t0)


# --- time spent in synchronous work on the event loop -----------------------------------------


@dataclass
class Probes:
    """Seconds the loop spent inside wrapped synchronous methods, by group; and the wall time
    of every kernel start (pool refills included: they run while nodes wait on the model)."""

    seconds: dict[str, float] = field(default_factory=dict)
    kernel_starts: list[float] = field(default_factory=list)

    def wrap(self, group: str, fn: F) -> F:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                return fn(*args, **kwargs)  # the loop runs in the main thread
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[group] = self.seconds.get(group, 0.0) + time.perf_counter() - t0

        return timed  # type: ignore[return-value]


@contextmanager
def probed(probes: Probes) -> Iterator[None]:
    """Time what the loop does synchronously: journal transactions, run-directory file work,
    launching a kernel process (fork + exec, waited for by ``subprocess``) and terminating a
    ZMQ context (``jupyter_client`` does it when a kernel is cleaned up; it waits out the
    linger of unsent messages). Also time kernel starts. Everything is put back afterwards."""
    import zmq
    from jupyter_client.provisioning import local_provisioner

    from podium.formats.journal import Journal
    from podium.formats.rundir import RunDir
    from podium.sandbox import base
    from podium.sandbox.kernel import LiveKernel, start_kernel

    async def timed_start(*args: Any, **kwargs: Any) -> LiveKernel:
        t0 = time.perf_counter()
        kernel = await start_kernel(*args, **kwargs)
        probes.kernel_starts.append(time.perf_counter() - t0)
        return kernel

    targets: list[tuple[object, str, tuple[str, ...]]] = [
        (Journal, "journal", ("begin", "update", "record_call")),
        (RunDir, "run dir", ("reset_node", "write_text", "publish_best", "write_json")),
        (local_provisioner, "kernel launch", ("launch_kernel",)),
        (zmq.Context, "zmq term", ("term",)),
    ]  # fmt: skip
    saved = []
    for cls, group, names in targets:
        for name in names:
            original = getattr(cls, name)
            saved.append((cls, name, original))
            setattr(cls, name, probes.wrap(group, original))
    base.start_kernel = timed_start  # type: ignore[attr-defined]
    try:
        yield
    finally:
        base.start_kernel = start_kernel  # type: ignore[attr-defined]
        for cls, name, original in saved:
            setattr(cls, name, original)


async def _watch_lag(lags: list[float]) -> None:
    while True:
        t0 = time.perf_counter()
        await asyncio.sleep(LAG_EVERY_S)
        lags.append(time.perf_counter() - t0 - LAG_EVERY_S)


def control_linger_0() -> None:
    """``--what-if-control-linger-0``. jupyter_client connects a control socket to each kernel
    with a linger of 100 ms; when the kernel is cleaned up (already SIGKILLed), closing that
    socket and terminating its context often waits those 100 ms, on the event loop."""
    from jupyter_client.manager import KernelManager

    close = KernelManager._close_control_socket

    def close_at_once(self: KernelManager) -> None:
        if self._control_socket is not None:
            self._control_socket.linger = 0
        close(self)

    KernelManager._close_control_socket = close_at_once  # type: ignore[method-assign]


# --- one run ----------------------------------------------------------------------------------


def _config(
    base: Path,
    name: str,
    data_dir: Path,
    workers: int,
    steps: int,
    url: str,
    seed: int,
    schedule: str = "reproducible",
) -> dict[str, Any]:
    return {
        "task": str(TOY_TASK),
        "out": str(base / name),
        "data_dir": str(data_dir),
        "workers": workers,
        "schedule": schedule,
        "seed": seed,
        "budget": {"steps": steps},
        "model": {"name": MODEL, "base_url": url},
        "sandbox": {"preimports": []},
    }


def worker_time(nodes: list[Node], workers: int, t0: float, t1: float) -> dict[str, float]:
    """Where the workers' time went, as fractions of workers x span: inside nodes (from the
    node's creation to the start of its settlement), between a worker's nodes (settling the
    finished node, choosing and launching the next), and idle at the start and the end (after
    its last node, once no steps are left to launch)."""
    by_worker: dict[int, list[tuple[float, float]]] = {w: [] for w in range(workers)}
    for x in nodes:
        assert x.finished_at is not None
        by_worker[x.worker].append((x.created_at.timestamp(), x.finished_at.timestamp()))
    inside = between = ends = 0.0
    for spans in by_worker.values():
        spans.sort()
        if not spans:
            ends += t1 - t0
            continue
        inside += sum(b - a for a, b in spans)
        between += sum(spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1))
        ends += spans[0][0] - t0 + t1 - spans[-1][1]
    total = workers * (t1 - t0)
    return {"in_nodes": inside / total, "between_nodes": between / total, "start_end": ends / total}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else 0.0


def measure(
    fake: FakeModel,
    tree: CpuCgroup,
    base: Path,
    data_dir: Path,
    workers: int,
    steps: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    import podium

    fake.ask(f"reset {args.seed} {args.latency[0]} {args.latency[1]}")
    marks: dict[str, CpuMark] = {}
    finished: list[tuple[float, Node]] = []
    lags: list[float] = []
    watchers: list[asyncio.Task[None]] = []
    probes = Probes()

    blocked: dict[str, dict[str, float]] = {}  # the probes' totals at the span's ends

    def on_start(info: RunInfo, start: RunStart) -> None:
        marks["start"] = CpuMark.now(fake, tree)
        blocked["start"] = dict(probes.seconds)
        watchers.append(asyncio.get_running_loop().create_task(_watch_lag(lags)))

    def on_node(node: Node) -> None:
        finished.append((time.perf_counter(), node))
        if len(finished) == steps:
            marks["end"] = CpuMark.now(fake, tree)
            blocked["end"] = dict(probes.seconds)
            for watcher in watchers:
                watcher.cancel()

    cfg = _config(
        base, f"run-w{workers}", data_dir, workers, steps, fake.url, args.seed, args.schedule
    )
    t0 = time.perf_counter()
    with probed(probes):
        result = podium.run(cfg, on_node=on_node, on_start=on_start)
    run_wall = time.perf_counter() - t0
    served = fake.ask("stats")
    start, end = marks["start"], marks.get("end") or CpuMark.now(fake, tree)
    span = end.wall - start.wall
    nodes = [n for _, n in finished]
    times = [t - start.wall for t, _ in finished]
    n = len(nodes)
    lo, hi = (workers, n - workers) if n > 2 * workers else (0, n)
    steady = (hi - lo) / (times[hi - 1] - (times[lo - 1] if lo else 0.0)) * 60

    def mean(get: Callable[[Node], float]) -> float:
        return statistics.fmean(get(x) for x in nodes)

    calls = served["calls"]["code"] + served["calls"]["review"]
    slept = served["slept_s"]["code"] + served["slept_s"]["review"]
    in_podium = sum(x.timings.model_s + x.timings.review_model_s for x in nodes)
    cores = {
        "machine": (end.machine - start.machine) / span,
        "podium": (end.podium - start.podium) / span,
        "loop": (end.loop - start.loop) / span,
        "fake": (end.fake - start.fake) / span,
    }
    if start.tree is not None and end.tree is not None:
        cores["kernels"] = (end.tree - start.tree) / span - cores["podium"]
        cores["other"] = cores["machine"] - cores["podium"] - cores["kernels"] - cores["fake"]
    else:  # kernels and any other load together
        cores["kernels"] = cores["machine"] - cores["podium"] - cores["fake"]
    waits = [x.timings.kernel_start_s for x in nodes]
    summary = json.loads((result.run_dir / "summary.json").read_text())
    return {
        "workers": workers,
        "steps": steps,
        "nodes": n,
        "buggy_nodes": sum(x.is_buggy for x in nodes),
        "operators": {op: sum(x.operator == op for x in nodes) for op in ("draft", "improve")},
        "span_s": span,
        "run_wall_s": run_wall,
        "nodes_per_min": n / span * 60,
        "steady_nodes_per_min": steady,
        "busy_workers": sum(x.timings.total_s for x in nodes) / span,
        "worker_time": worker_time(nodes, workers, start.epoch, end.epoch),
        "phase_mean_s": {
            "code_model": mean(lambda x: x.timings.model_s),
            "review_model": mean(lambda x: x.timings.review_model_s),
            "kernel_wait": mean(lambda x: x.timings.kernel_start_s),
            "exec": mean(lambda x: x.timings.exec_s),
            "overhead": mean(lambda x: x.timings.overhead_s),
            "node_total": mean(lambda x: x.timings.total_s),
        },
        "kernel_wait_p90_s": _pct(waits, 0.9),
        "kernel_wait_max_s": max(waits),
        "nodes_waiting_for_kernel": sum(w > 0.05 for w in waits),
        "model_calls": calls,
        "model_delay_served_mean_s": slept / calls,
        "model_excess_per_call_ms": (in_podium - slept) / calls * 1000,
        "fake_problems": len(served["problems"]),
        "cores": cores,
        "loop_lag_ms": {
            "p50": _pct(lags, 0.5) * 1000,
            "p99": _pct(lags, 0.99) * 1000,
            "max": max(lags, default=0.0) * 1000,
        },
        "loop_blocked_ms_per_node": {
            k: (v - blocked["start"].get(k, 0.0)) / n * 1000
            for k, v in blocked.get("end", probes.seconds).items()
        },
        "kernel_start_s": {
            "count": len(probes.kernel_starts),
            "median": statistics.median(probes.kernel_starts),
            "p90": _pct(probes.kernel_starts, 0.9),
        },
        "sandbox": summary.get("sandbox"),
        "sandbox_detail": summary.get("sandbox_detail"),
        "stop_reason": summary.get("stop_reason"),
    }


# --- report -----------------------------------------------------------------------------------


def _md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def tables(rows: list[dict[str, Any]], nproc: int) -> str:
    """Throughput and per-node phases; then where the CPU went and how the loop fared."""
    base = next((r for r in rows if r["workers"] == 1), None)
    first = []
    for r in rows:
        w, p = r["workers"], r["phase_mean_s"]
        speed = r["nodes_per_min"] / base["nodes_per_min"] if base else None
        steady = r["steady_nodes_per_min"] / base["steady_nodes_per_min"] if base else None
        first.append([
            str(w), str(r["nodes"]), f"{r['span_s']:.1f}", f"{r['nodes_per_min']:.1f}",
            f"{speed:.2f}x / {speed / w:.2f}" if speed else "-",
            f"{r['steady_nodes_per_min']:.1f}",
            f"{steady:.2f}x / {steady / w:.2f}" if steady else "-",
            " / ".join(f"{r['worker_time'][k]:.1%}" for k in WORKER_TIME),
            f"{r['model_delay_served_mean_s']:.3f}",
            f"{p['code_model']:.2f}", f"{p['review_model']:.2f}",
            f"{r['model_excess_per_call_ms']:.0f}",
            f"{p['kernel_wait']:.2f} / {r['kernel_wait_p90_s']:.2f} / {r['kernel_wait_max_s']:.2f}",
            f"{p['exec'] * 1000:.0f}", f"{p['overhead'] * 1000:.0f}", f"{p['node_total']:.2f}",
        ])  # fmt: skip
    second = []
    for r in rows:
        c, lag, blk = r["cores"], r["loop_lag_ms"], r["loop_blocked_ms_per_node"]
        ks = r["kernel_start_s"]
        other = f"{c['other']:.2f}" if "other" in c else "(in kernels)"
        second.append([
            str(r["workers"]), f"{c['machine']:.2f}", f"{c['podium']:.2f}", f"{c['loop']:.2f}",
            f"{c['kernels']:.2f}", f"{c['fake']:.2f}", other,
            f"{c['kernels'] * r['span_s'] / r['nodes']:.2f}",
            f"{ks['median']:.2f} / {ks['p90']:.2f}",
            f"{lag['p50']:.0f} / {lag['p99']:.0f} / {lag['max']:.0f}",
            " / ".join(f"{blk.get(g, 0.0):.1f}" for g in BLOCKING_GROUPS),
        ])  # fmt: skip
    return "\n\n".join([
        _md(["W", "nodes", "span s", "nodes/min", "speed-up / effic.", "steady nodes/min",
             "steady speed-up / effic.", "worker time: " + " / ".join(WORKER_TIME.values()),
             "served latency s", "code model s",
             "review model s",
             "model +ms/call", "kernel wait s mean / p90 / max", "exec ms", "overhead ms",
             "node s"], first),
        _md(["W", f"CPU cores: machine (of {nproc})", "Podium process", "its event loop",
             "kernels", "fake model", "other load", "kernel CPU s / node",
             "kernel start wall s median / p90", "loop lag ms p50 / p99 / max",
             "loop blocked ms / node: " + " / ".join(BLOCKING_GROUPS)], second),
    ])  # fmt: skip


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    base = next((r for r in rows if r["workers"] == 1), None)
    if base is None:
        return ["(no W = 1 run: no speed-up to check)"]
    out = []
    for r in rows:
        w = r["workers"]
        if w == 1 or w > TARGET_UP_TO_W:
            continue
        for label, key in (("whole span", "nodes_per_min"), ("steady", "steady_nodes_per_min")):
            speed = r[key] / base[key]
            ok = speed >= TARGET_EFFICIENCY * w
            out.append(
                f"{'PASS' if ok else 'FAIL'}  W={w} ({label}): speed-up {speed:.2f}x, "
                f"target >= {TARGET_EFFICIENCY * w:.1f}x (efficiency {speed / w:.2f})"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4,8", help="comma-separated W values")
    parser.add_argument("--steps-per-worker", type=int, default=8)
    parser.add_argument("--min-steps", type=int, default=16)
    parser.add_argument("--latency", default="1,2", help="model latency range LO,HI in seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--schedule",
        default="reproducible",
        choices=["reproducible", "eager"],
        help="the loop's schedule (config key `schedule`)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--what-if-control-linger-0",
        action="store_true",
        help="a what-if, not Podium as shipped: close jupyter_client's control socket with "
        "linger 0, so cleaning up a kernel never blocks the loop for its 100 ms linger",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    args.latency = tuple(float(v) for v in args.latency.split(","))
    if args.what_if_control_linger_0:
        control_linger_0()
    workers = [int(w) for w in args.workers.split(",")]
    started = time.perf_counter()
    info = machine()
    background = background_cores()
    fake = FakeModel()
    tree = CpuCgroup("parallel")
    tree.join()  # after the fake server started: it stays out of the cgroup
    os.environ["OPENAI_API_KEY"] = fake.api_key
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base, data_dir = Path(tmp), Path(tmp) / "data"
            import podium

            fake.ask(f"reset {args.seed} 0 0")  # warm-up: prepares the data, fills OS caches
            podium.run(_config(base, "warm-up", data_dir, 1, 2, fake.url, args.seed))
            for w in workers:
                steps = max(args.steps_per_worker * w, args.min_steps)
                row = measure(fake, tree, base, data_dir, w, steps, args)
                rows.append(row)
                print(f"W={w}: {row['nodes']} nodes in {row['span_s']:.1f} s", file=sys.stderr)
    finally:
        tree.close()
        fake.close()
    total = time.perf_counter() - started
    print(tables(rows, info["nproc"]))
    print()
    for line in verdict(rows):
        print(line)
    for r in rows:
        if r["buggy_nodes"] or r["fake_problems"]:
            print(f"WARNING W={r['workers']}: {r['buggy_nodes']} buggy nodes, "
                  f"{r['fake_problems']} requests the fake model rejected")  # fmt: skip
        if r["cores"].get("other", 0.0) > NOISY_CORES:
            print(f"WARNING W={r['workers']}: other load used {r['cores']['other']:.2f} cores "
                  "during the run; the machine was not quiet")  # fmt: skip
    sandboxes = {f"{r['sandbox']} ({r['sandbox_detail']})" for r in rows}
    print(f"\nsandbox: {', '.join(sorted(sandboxes))}")
    print(f"background load before the runs: {background:.2f} cores")
    print(f"machine: {json.dumps(info)}")
    if args.what_if_control_linger_0:
        print("WHAT-IF: jupyter_client's control socket closed with linger 0 (not as shipped)")
    print(f"script wall time: {total:.0f} s")
    if args.json:
        result = {"runs": rows, "background_cores": background, "machine": info,
                  "latency_s": args.latency, "script_wall_s": total,
                  "what_if_control_linger_0": args.what_if_control_linger_0}  # fmt: skip
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
