"""AIDE and Podium end to end, on the same task, the same stand-in model, the same solution.

One invocation runs **AIDE** (Weco AI's ``aideml`` 0.2.2 from PyPI, its own CLI) and then
**Podium** (``podium run mini/titanic``, its own CLI), each for ``--nodes`` N nodes (default
30), and records for each run:

    wall            from the tool's process start to its exit (interpreter start, imports,
                    workspace set-up, the N nodes, and whatever the tool does at the end:
                    Podium grades its best submission; AIDE's final report is turned off, as it
                    would call a real OpenAI model)
    machine CPU     busy CPU seconds of the whole machine over the same span, from /proc/stat
                    (user + nice + system + irq + softirq + steal, all cores; not idle, not
                    iowait)

and both per node (divided by N). Two more CPU figures per run, as cross-checks:

    process tree    the cpuacct cgroup (v1, as root) the tool is started in: everything it
                    starts, dead or alive, sandboxed kernels included, and nothing else's; so
                    machine - tree - stand-in model is the CPU of *other* processes during the
                    run ("n/a" where no such cgroup can be made)
    RUSAGE_CHILDREN this process's reaped children. Complete for AIDE; not for Podium, whose
                    bwrap kernels die in their own pid namespace and are reaped by the Linux
                    kernel, so their CPU is added to no parent (see perf/sandbox_overhead.py):
                    for Podium it is about its own process only

Everything else on the machine counts in the machine figure, hence the quiet machine check:
the machine's busy time during an idle window of ``--quiet-s`` seconds (3) before the runs and
again after them, reported as cores in use (with a warning above 10 % of one core), and the
load average at start; ``--wait-quiet S`` waits up to S seconds for a quiet check to pass
before starting.

The stand-in model is Podium's fake OpenAI server (``podium.testing.FakeOpenAI``: real HTTP on
127.0.0.1, the Chat Completions wire format, every request checked against the API's schema)
in a thread of this process, shared by both tools; its CPU is in the machine figure of both. It
answers at once. A code request (any request offering no ``submit_review`` tool) gets a plan and
the same fixed solution in a ```python block: a plain logistic regression on Titanic (pandas +
scikit-learn; 5-fold CV accuracy printed as ``VALIDATION_METRIC: <x>``, then the test
predictions written to ``submission/submission.csv`` when ``submission/`` exists (Podium's
layout) and to ``working/submission.csv`` otherwise (AIDE's); both read ``input/``). A review
request (both tools force a ``submit_review`` function call) gets that call, with ``is_bug``
false, a summary, the metric read from the execution output in the prompt, and
``lower_is_better`` false (AIDE requires it; Podium ignores it). So every node of both tools is
good, nothing is ever debugged, and both searches do AIDE's greedy policy: 5 drafts, then
improvements of the best node, 2 model calls per node. AIDE runs the code after formatting it
with black (its own step), Podium as given.

The task is Podium's bundled ``mini/titanic``: its data is prepared once (into the temporary
directory, before any timing), Podium reads it through ``--data-dir``, AIDE gets a copy of the
same public files (``data_dir=``) and the same description (``desc_file=``). AIDE's model name is
``stand-in`` (a name AIDE's OpenAI backend sends to ``OPENAI_BASE_URL`` over Chat Completions;
``gpt-*`` names would go to api.openai.com's Responses API), Podium's ``openai/stand-in`` with
``--base-url``. Both write their logs to files (no terminal: AIDE's rich live display does not
render, which only spares AIDE CPU). Podium runs with its defaults (sandbox ``auto``: bwrap, the
warm pool, forked kernels, one worker); AIDE with its defaults (a fresh ``multiprocessing``
process per node, code exec'd in it).

AIDE is installed by ``ensure_aide()`` into its own virtualenv outside the repository
(``~/.cache/podium-perf/aide-venv``, reused when its recorded requirements match):
``aideml==0.2.2`` with ``--no-deps`` (its metadata pulls torch, transformers, streamlit and ~70
more), then only what its CLI imports (read from its source: openai, anthropic, omegaconf, rich,
funcy, humanize, jsonschema, dataclasses-json, shutup, coolname, igraph, genson, black, backoff,
at AIDE's own pins where it pins them) and the solution's stack (numpy, pandas, scikit-learn,
scipy, joblib, threadpoolctl) at the versions of the interpreter running this script, i.e.
Podium's kernels' versions, so both tools run the solution on the same library code (AIDE's
metadata pins older ones). An install that brings torch or NVIDIA packages is refused.

Both tools' processes get this environment without ``PYTHONDONTWRITEBYTECODE`` and with
``PYTHONPYCACHEPREFIX=~/.cache/podium-perf/pycache``: a machine that sets the former (this one
does) would otherwise have Podium, run from a source checkout, compile its own modules at every
start while AIDE's pip-installed ones come compiled; with a shared cache outside the repository
neither compiles after its warm-up, and nothing is written into the work tree. (Podium's
kernels get no host environment: they read the virtualenv's own bytecode, as always.)

Before the measured runs, each tool does an untimed warm-up run of ``--warmup`` nodes (2; 0
skips it): page cache, bytecode, first imports (its figures are in the JSON; being first, they
are no guide to a short run's cost). ``--repeats R`` runs each tool
R times (AIDE, Podium, AIDE, ...) and reports min and median. Every run is checked: exit status
0, exactly N nodes in its journal, all good, no request the stand-in rejected.

Targets (set at N = 30): Podium >= 3.5x faster than AIDE in wall time and >= 4x cheaper in
machine CPU (medians).

Usage:  .venv/bin/python perf/aide_comparison.py [--nodes 30] [--repeats 1] [--warmup 2]
            [--wait-quiet S] [--json FILE] [--keep]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import CpuCgroup, machine  # noqa: E402  (perf/machine.py: this script's directory)

from podium.testing import FakeOpenAI, Received, Reply  # noqa: E402

TASK = "mini/titanic"
MODEL = "stand-in"
AIDE_VERSION = "0.2.2"
CACHE = Path.home() / ".cache" / "podium-perf"
AIDE_VENV = CACHE / "aide-venv"
PYCACHE = CACHE / "pycache"
AIDE_RUNTIME = (
    "openai>=1.69.0", "anthropic>=0.20.0", "omegaconf>=2.3.0", "rich==13.7.0", "funcy==2.0",
    "humanize==4.8.0", "jsonschema==4.19.2", "dataclasses-json>=0.6.4", "shutup>=0.2.0",
    "coolname>=2.2.0", "igraph>=0.11.3", "genson>=1.2.0", "black==24.3.0", "backoff",
)  # fmt: skip
SOLUTION_STACK = ("numpy", "pandas", "scikit-learn", "scipy", "joblib", "threadpoolctl")
FORBIDDEN = re.compile(r"^(torch|nvidia-|triton)", re.IGNORECASE)
TARGET_NODES, WALL_TARGET, CPU_TARGET = 30, 3.5, 4.0
QUIET_CORES = 0.1  # above this, the quiet check warns (and --wait-quiet waits)
CLK_TCK = os.sysconf("SC_CLK_TCK")

PLAN = (
    "A plain logistic regression on the numeric columns and the passenger's sex, missing ages "
    "and fares filled with the training medians, scored by 5-fold cross-validated accuracy."
)
SOLUTION = """\
import os

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

train = pd.read_csv("input/train.csv")
test = pd.read_csv("input/test.csv")


def features(frame):
    return pd.DataFrame(
        {
            "Pclass": frame["Pclass"],
            "Sex": (frame["Sex"] == "male").astype(int),
            "Age": frame["Age"].fillna(train["Age"].median()),
            "SibSp": frame["SibSp"],
            "Parch": frame["Parch"],
            "Fare": frame["Fare"].fillna(train["Fare"].median()),
        }
    )


X, y = features(train), train["Survived"]
model = LogisticRegression(max_iter=1000)
score = cross_val_score(model, X, y, cv=5, scoring="accuracy").mean()
print(f"VALIDATION_METRIC: {score:.5f}")
model.fit(X, y)
predictions = pd.DataFrame(
    {"PassengerId": test["PassengerId"], "Survived": model.predict(features(test))}
)
out = "submission" if os.path.isdir("submission") else "working"
predictions.to_csv(os.path.join(out, "submission.csv"), index=False)
"""
METRIC = re.compile(r"VALIDATION_METRIC: (\d+\.\d+)")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- CPU accounting -----------------------------------------------------------------------------


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all cores; not idle, not iowait)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK


def own_cpu_s() -> tuple[float, float]:
    """(this process, its reaped children): user + system CPU seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def quiet_check(seconds: float) -> dict[str, float]:
    """The machine's busy CPU during an idle window: what other processes use."""
    busy0, t0 = machine_busy_s(), time.perf_counter()
    time.sleep(seconds)
    busy, span = machine_busy_s() - busy0, time.perf_counter() - t0
    return {"window_s": round(span, 2), "busy_cpu_s": round(busy, 2), "cores": busy / span}


def wait_quiet(seconds: float, patience_s: float) -> dict[str, float]:
    """Quiet checks until one finds under QUIET_CORES in use, for at most ``patience_s``."""
    deadline = time.monotonic() + patience_s
    while True:
        log(f"quiet check: {seconds:g} s idle ...")
        quiet = quiet_check(seconds)
        if quiet["cores"] <= QUIET_CORES or time.monotonic() >= deadline:
            return quiet
        log(f"  {quiet['cores']:.0%} of one core in use by other processes: waiting")
        time.sleep(min(30.0, max(0.0, deadline - time.monotonic())))


# --- AIDE's install -----------------------------------------------------------------------------


def aide_requirements() -> list[str]:
    """AIDE's runtime imports, and the solution's stack at this interpreter's versions."""
    stack = [f"{name}=={importlib.metadata.version(name)}" for name in SOLUTION_STACK]
    return [*AIDE_RUNTIME, *stack]


def pip(venv: Path, *args: str) -> None:
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *args]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")


def installed(venv: Path) -> dict[str, str]:
    command = [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"]
    listing = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return {p["name"]: p["version"] for p in json.loads(listing)}


def ensure_aide(venv: Path = AIDE_VENV) -> Path:
    """AIDE's ``aide`` command in its own virtualenv, installed (no torch) unless already there."""
    wanted = {"aideml": AIDE_VERSION, "requirements": aide_requirements()}
    marker = venv / "podium-perf.json"
    aide = venv / "bin" / "aide"
    if aide.exists() and marker.exists() and json.loads(marker.read_text()) == wanted:
        return aide
    log(f"installing AIDE {AIDE_VERSION} into {venv} (a minute or two) ...")
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip(venv, "--no-deps", f"aideml=={AIDE_VERSION}")
    pip(venv, *wanted["requirements"])
    heavy = sorted(name for name in installed(venv) if FORBIDDEN.match(name))
    if heavy:
        raise RuntimeError(f"AIDE's install brought in {', '.join(heavy)}: refused")
    marker.write_text(json.dumps(wanted, indent=2) + "\n")
    return aide


# --- the stand-in model -------------------------------------------------------------------------


def respond(received: Received) -> Reply:
    """The same fixed solution to every code request; a good review to every review request."""
    if "submit_review" in received.tools:
        found = METRIC.findall(received.prompt_text)
        review = {
            "is_bug": False,
            "summary": "The logistic regression ran and printed its cross-validated accuracy.",
            "metric": float(found[-1]) if found else 0.5,
            "lower_is_better": False,
        }
        return Reply.tool_call("submit_review", review)
    return Reply.text(f"{PLAN}\n\n```python\n{SOLUTION}```\n")


# --- the runs -----------------------------------------------------------------------------------


@dataclass
class Run:
    tool: str
    nodes: int
    wall_s: float = 0.0
    machine_cpu_s: float = 0.0
    rusage_children_cpu_s: float = 0.0
    stand_in_cpu_s: float = 0.0  # this process: the fake server's threads
    tool_tree_cpu_s: float | None = None  # the tool's cpuacct cgroup: everything it started
    model_calls: int = 0
    good_nodes: int = 0
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def others_cpu_s(self) -> float | None:
        """The machine's CPU that neither the tool nor the stand-in model used."""
        if self.tool_tree_cpu_s is None:
            return None
        return max(0.0, self.machine_cpu_s - self.tool_tree_cpu_s - self.stand_in_cpu_s)

    @property
    def wall_per_node_s(self) -> float:
        return self.wall_s / self.nodes

    @property
    def cpu_per_node_s(self) -> float:
        return self.machine_cpu_s / self.nodes


@dataclass
class Setup:
    base: Path
    aide: Path
    data_dir: Path  # Podium's --data-dir (prepared)
    aide_data: Path  # a copy of the public files
    description: Path
    fake: FakeOpenAI


def prepare_task(base: Path) -> tuple[Path, Any]:
    """(Podium's --data-dir, the task): the task's data prepared there, untimed."""
    from podium.api.runs import load_registry
    from podium.benchmarks import resolve_task

    data_dir = base / "podium-data"
    return data_dir, resolve_task(TASK, load_registry(), data_dir)


def prepare(base: Path, aide: Path, fake: FakeOpenAI) -> Setup:
    """The task's data prepared (untimed), and AIDE's copy of its public files and description."""
    data_dir, task = prepare_task(base)
    aide_data = base / "aide-data"
    shutil.copytree(task.public_dir, aide_data)
    description = base / "description.md"
    description.write_text(task.description)
    return Setup(base, aide, data_dir, aide_data, description, fake)


def clean_env(**extra: str) -> dict[str, str]:
    """This environment less Podium's and OpenAI's settings, with a bytecode cache both tools
    share outside the repository (see the module's doc)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODIUM_", "OPENAI_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return {**env, "PYTHONPYCACHEPREFIX": str(PYCACHE), **extra}


def aide_command(s: Setup, nodes: int, out: Path) -> tuple[list[str], dict[str, str]]:
    command = [
        str(s.aide), f"data_dir={s.aide_data}", f"desc_file={s.description}",
        f"agent.steps={nodes}", f"agent.code.model={MODEL}", f"agent.feedback.model={MODEL}",
        "generate_report=False", f"log_dir={out / 'logs'}", f"workspace_dir={out / 'workspaces'}",
    ]  # fmt: skip
    return command, clean_env(OPENAI_BASE_URL=s.fake.url, OPENAI_API_KEY=s.fake.api_key)


def podium_command(s: Setup, nodes: int, out: Path) -> tuple[list[str], dict[str, str]]:
    return podium_run_command(s.fake, s.data_dir, nodes, out)


def podium_run_command(
    fake: FakeOpenAI, data_dir: Path, nodes: int, out: Path, python: tuple[str, ...] = ()
) -> tuple[list[str], dict[str, str]]:
    """``podium run`` for ``nodes`` nodes against ``fake`` (``python``: the interpreter's own
    arguments, e.g. ``-m cProfile -o FILE``)."""
    command = [
        sys.executable, *python, "-m", "podium", "run", TASK, "--model", f"openai/{MODEL}",
        "--base-url", fake.url, "--steps", str(nodes), "--out", str(out / "run"),
        "--data-dir", str(data_dir),
    ]  # fmt: skip
    return command, clean_env(OPENAI_API_KEY=fake.api_key)


def timed(
    run: Run, command: list[str], env: dict[str, str], cwd: Path, group: CpuCgroup | None = None
) -> None:
    """Run the tool to its end; wall, machine busy CPU, RUSAGE_CHILDREN and the tool's cgroup
    (``group``, or one of its own; closed here) over that span."""
    group = group or CpuCgroup(f"{run.tool}-{cwd.name}")
    out, err = (cwd / "stdout.log").open("w"), (cwd / "stderr.log").open("w")
    try:
        own0, kids0 = own_cpu_s()
        busy0, t0 = machine_busy_s(), time.perf_counter()
        with group.joined():  # the tool starts in it; this process leaves it at once
            process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        returncode = process.wait()
        run.wall_s = time.perf_counter() - t0
        run.machine_cpu_s = machine_busy_s() - busy0
        own, kids = own_cpu_s()
    finally:
        out.close()
        err.close()
        run.tool_tree_cpu_s = group.close()
    run.stand_in_cpu_s, run.rusage_children_cpu_s = own - own0, kids - kids0
    if returncode != 0:
        tail = (cwd / "stderr.log").read_text()[-3000:]
        raise RuntimeError(f"{run.tool} exited with {returncode}:\n{tail}")


def check_aide(run: Run, out: Path) -> None:
    journal = next((out / "logs").glob("*/journal.json"))
    nodes = json.loads(journal.read_text())["nodes"]
    run.good_nodes = sum(not n["is_buggy"] for n in nodes)
    run.detail = {
        "journal_nodes": len(nodes),
        "best_metric": max(n["metric"]["value"] or 0 for n in nodes),
    }
    if len(nodes) != run.nodes:
        raise RuntimeError(f"AIDE ran {len(nodes)} nodes, not {run.nodes}")


def check_podium(run: Run, out: Path) -> None:
    summary = json.loads((out / "run" / "summary.json").read_text())
    run.good_nodes = summary["good_nodes"]
    run.detail = {
        "journal_nodes": summary["steps"],
        "best_metric": summary["best_metric"],
        "sandbox": summary["sandbox_detail"],
        "search_elapsed_s": summary["elapsed_s"],
    }
    if summary["steps"] != run.nodes:
        raise RuntimeError(f"Podium ran {summary['steps']} nodes, not {run.nodes}")


def run_tool(s: Setup, tool: str, nodes: int, label: str) -> Run:
    out = s.base / f"{tool}-{label}"
    out.mkdir()
    run = Run(tool, nodes)
    make, check = (aide_command, check_aide) if tool == "aide" else (podium_command, check_podium)
    command, env = make(s, nodes, out)
    hits0, problems0 = s.fake.hits, len(s.fake.problems)
    log(f"{tool} {label}: {nodes} nodes ...")
    timed(run, command, env, out)
    run.model_calls = s.fake.hits - hits0
    check(run, out)
    if len(s.fake.problems) > problems0:
        raise RuntimeError(f"{tool} sent requests the stand-in rejected: {s.fake.problems}")
    if run.good_nodes != nodes:
        raise RuntimeError(f"{tool}: only {run.good_nodes} of {nodes} nodes are good ({out})")
    log(f"  {run.wall_s:.1f} s wall, {run.machine_cpu_s:.1f} machine CPU s")
    return run


def measure(s: Setup, nodes: int, repeats: int, warmup: int) -> tuple[list[Run], list[Run]]:
    """(the warm-up runs, the measured runs)."""
    warmups = [run_tool(s, tool, warmup, "warmup") for tool in ("aide", "podium") if warmup]
    runs = []
    for i in range(repeats):
        for tool in ("aide", "podium"):
            time.sleep(1)  # anything the last run left behind settles outside the next window
            runs.append(run_tool(s, tool, nodes, str(i)))
    return warmups, runs


# --- report -------------------------------------------------------------------------------------


STATS = ("wall_s", "machine_cpu_s", "tool_tree_cpu_s", "others_cpu_s", "rusage_children_cpu_s",
         "stand_in_cpu_s")  # fmt: skip


def stats(runs: list[Run], tool: str) -> dict[str, float | None]:
    mine = [r for r in runs if r.tool == tool]
    out: dict[str, float | None] = {"nodes": mine[0].nodes}
    for name in STATS:
        values = [getattr(r, name) for r in mine]
        missing = None in values
        out[f"{name}_min"] = None if missing else min(values)
        out[f"{name}_median"] = None if missing else statistics.median(values)
    return out


def seconds(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f} s"


def table(summary: dict[str, dict[str, Any]], repeats: int) -> str:
    head = ["tool", "wall", "wall / node", "machine CPU", "machine CPU / node",
            "its process tree (cgroup)", "other processes", "RUSAGE_CHILDREN",
            "stand-in model"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for tool, title in (("aide", f"AIDE {AIDE_VERSION}"), ("podium", "Podium")):
        s, n = summary[tool], summary[tool]["nodes"]
        wall, cpu = s["wall_s_median"], s["machine_cpu_s_median"]
        cells = [title, seconds(wall), seconds(wall / n, 2), seconds(cpu), seconds(cpu / n, 2),
                 seconds(s["tool_tree_cpu_s_median"]), seconds(s["others_cpu_s_median"]),
                 seconds(s["rusage_children_cpu_s_median"]),
                 seconds(s["stand_in_cpu_s_median"], 2)]  # fmt: skip
        if repeats > 1:
            cells[1] += f" (min {s['wall_s_min']:.1f})"
            cells[3] += f" (min {s['machine_cpu_s_min']:.1f})"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    a, p = summary["aide"], summary["podium"]
    speed = a["wall_s_median"] / p["wall_s_median"]
    cheap = a["machine_cpu_s_median"] / p["machine_cpu_s_median"]
    n = int(a["nodes"])
    note = "" if n == TARGET_NODES else f" (targets are set at {TARGET_NODES} nodes; ran {n})"
    return [
        {
            "target": f"Podium >= {WALL_TARGET}x faster than AIDE in wall time, {n} nodes{note}",
            "value": f"{speed:.2f}x ({a['wall_s_median']:.1f} s vs {p['wall_s_median']:.1f} s)",
            "passed": speed >= WALL_TARGET,
        },
        {
            "target": f"Podium >= {CPU_TARGET}x cheaper than AIDE in machine CPU, {n} nodes{note}",
            "value": (
                f"{cheap:.2f}x ({a['machine_cpu_s_median']:.1f} s vs "
                f"{p['machine_cpu_s_median']:.1f} s)"
            ),
            "passed": cheap >= CPU_TARGET,
        },
    ]


def aide_packages() -> dict[str, str]:
    keep = {"aideml", *(re.split(r"[=<>]", r)[0] for r in aide_requirements())}
    found = installed(AIDE_VENV)
    return {name: v for name, v in sorted(found.items()) if name.lower() in keep}


def run_json(run: Run) -> dict[str, Any]:
    per_node = {"wall_per_node_s": run.wall_per_node_s, "cpu_per_node_s": run.cpu_per_node_s}
    return {**asdict(run), "others_cpu_s": run.others_cpu_s, **per_node}


def quiet_line(before: dict[str, float], after: dict[str, float]) -> str:
    line = (
        f"quiet check: other processes used {before['busy_cpu_s']:.2f} CPU s in "
        f"{before['window_s']:.0f} s idle before the runs ({before['cores']:.0%} of one core), "
        f"{after['busy_cpu_s']:.2f} CPU s after them ({after['cores']:.0%})"
    )
    if max(before["cores"], after["cores"]) > QUIET_CORES:
        line += f"\nWARNING: the machine was not quiet (> {QUIET_CORES:.0%} of one core): the "
        line += "figures include other processes' CPU and contention"
    return line


def print_report(args: argparse.Namespace, info: dict[str, Any],
                 quiet: tuple[dict[str, float], dict[str, float]], runs: list[Run],
                 started: datetime.datetime) -> None:  # fmt: skip
    summary = {tool: stats(runs, tool) for tool in ("aide", "podium")}
    kind = "medians of" if args.repeats > 1 else "one run of"
    print(f"\nAIDE vs Podium, {kind} {args.nodes} nodes each, {started:%Y-%m-%d %H:%M %Z}")
    print(f"machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}, "
          f"Python {info['python']}, Podium {info['podium']}, {info['bwrap']}")  # fmt: skip
    print(f"load average at start {' '.join(info['loadavg_at_start'])}")
    print(quiet_line(*quiet) + "\n")
    print(table(summary, args.repeats) + "\n")
    print(f"Podium's sandbox: {runs[-1].detail.get('sandbox', '?')}")
    for t in targets(summary):
        print(f"{'PASS' if t['passed'] else 'FAIL'}  {t['target']}: {t['value']}")


def write_json(path: Path, args: argparse.Namespace, info: dict[str, Any],
               quiet: tuple[dict[str, float], dict[str, float]], warmups: list[Run],
               runs: list[Run], started: datetime.datetime) -> None:  # fmt: skip
    summary = {tool: stats(runs, tool) for tool in ("aide", "podium")}
    result = {
        "date": started.isoformat(timespec="seconds"),
        "nodes": args.nodes,
        "repeats": args.repeats,
        "machine": info,
        "quiet_check_before": quiet[0],
        "quiet_check_after": quiet[1],
        "aide_packages": aide_packages(),
        "solution_sha256": hashlib.sha256(SOLUTION.encode()).hexdigest(),
        "warmup_runs": [run_json(r) for r in warmups],
        "runs": [run_json(r) for r in runs],
        "summary": summary,
        "targets": targets(summary),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=TARGET_NODES, help="nodes per run")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each tool")
    parser.add_argument("--warmup", type=int, default=2, help="nodes of the untimed warm-ups")
    parser.add_argument("--quiet-s", type=float, default=3.0, help="idle window before the runs")
    parser.add_argument(
        "--wait-quiet", type=float, default=0.0, metavar="S",
        help=f"wait up to S seconds for a quiet check under {QUIET_CORES:.0%} of one core",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the runs' directories")
    args = parser.parse_args()
    aide = ensure_aide()
    info = machine()
    started = datetime.datetime.now().astimezone()
    base = Path(tempfile.mkdtemp(prefix="podium-aide-"))
    try:
        with FakeOpenAI(responder=respond) as fake:
            setup = prepare(base, aide, fake)
            quiet = wait_quiet(args.quiet_s, args.wait_quiet)
            warmups, runs = measure(setup, args.nodes, args.repeats, args.warmup)
            quiet_after = quiet_check(args.quiet_s)
    finally:
        if args.keep:
            log(f"runs kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    print_report(args, info, (quiet, quiet_after), runs, started)
    if args.json:
        write_json(args.json, args, info, (quiet, quiet_after), warmups, runs, started)


if __name__ == "__main__":
    main()
