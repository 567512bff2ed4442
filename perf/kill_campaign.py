"""The kill campaign: SIGKILL real ``podium run`` and ``podium resume`` processes at random
moments, resume until the run finishes, and compare every finished tree with the uninterrupted
run's, node by node (id, step, operator, parents, code, bug, metric) and call by call.

```
.venv/bin/python perf/kill_campaign.py [--trials 5] [--workers 1,3] [--backends all] [--json F]
```

Backends: ``scripted`` (answers by node on the toy task), ``replay`` (the scripted reference's
record, matched by content), ``openai`` (the real openai SDK against the fake server on
127.0.0.1; the answer is a function of the prompt) and ``baseline`` (mini/titanic, scikit-learn
solutions). For each backend and worker count: one uninterrupted reference, then ``--trials``
runs, each killed once at a random moment of the reference's duration and, with probability
1/2 per resume, its resumes killed too, until a resume finishes. Reported: kills, lost nodes
(in the reference, missing at the end), duplicated nodes (rows or node dirs beyond the
reference), trees equal to the reference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from podium.formats import Journal  # noqa: E402
from podium.records import Node  # noqa: E402
from podium.testing import FakeOpenAI, Received, Reply  # noqa: E402
from podium.testing.scripted import code_answer, review_answer, write_script  # noqa: E402

TOY = REPO / "tests" / "fixtures" / "tasks" / "toy"
SEARCH = ["-o", "search.num_drafts=3", "-o", "search.debug_prob=0.5"]


def toy_solution(n: int) -> str:
    """Node-specific toy code: sleeps vary so nodes finish out of id order; some fail."""
    sleep = (0.9, 0.1, 0.5)[n % 3]
    fail = "raise KeyError('x3')\n" if n % 4 == 2 else ""
    return (
        f"import shutil, time\ntime.sleep({sleep})\n{fail}"
        f'print("VALIDATION_METRIC: {0.5 + n / 100}")\n'
        'shutil.copy("input/sample_submission.csv", "submission/submission.csv")\n'
    )


def openai_responder(received: Received) -> Reply:
    """A model whose answer depends only on what it is asked (so on the node, not on timing)."""
    if received.forced_tool:
        return Reply.tool_call("submit_review", {"is_bug": False, "summary": "ok", "metric": None})
    n = int(hashlib.sha256(received.prompt_text.encode()).hexdigest(), 16) % 12
    return Reply.text(f"Plan {n}.\n\n```python\n{toy_solution(n)}```\n")


@dataclass
class Result:
    backend: str
    workers: int
    trials: int = 0
    kills: int = 0
    lost: int = 0
    duplicated: int = 0
    equal: int = 0
    reference_s: float = 0.0


def node_row(n: Node) -> tuple[Any, ...]:
    metric = n.metric.value if n.metric else None
    return (n.id, n.step, n.state.value, n.operator, list(n.parent_ids), n.code, n.is_buggy, metric)


def tree(run_dir: Path) -> dict[str, Any]:
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        return {
            "nodes": [node_row(n) for n in journal.nodes()],
            "calls": sorted(
                (c.node_id, c.role, c.request.meta.turn, c.request.messages[-1].content)
                for c in journal.calls()
            ),
        }
    finally:
        journal.close()


def podium(*args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "podium", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )


def finished(run_dir: Path) -> bool:
    try:
        summary = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(summary.get("status") == "finished")


def row_count(run_dir: Path) -> int:
    try:
        with sqlite3.connect(f"file:{run_dir / 'journal.sqlite'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0])
    except sqlite3.Error:
        return 0


def killed_run(args: list[str], out: Path, env: dict[str, str], rng: random.Random,
               span: float, result: Result) -> None:  # fmt: skip
    """Start the run, kill it once at random, then resume (killing with p = 1/2) until done."""
    proc = podium(*args, "--out", str(out), env=env)
    time.sleep(rng.uniform(0.3, span))
    kill = True
    while True:
        if kill and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            result.kills += 1
        proc.wait()
        if finished(out):  # (a kill after its summary said so: `resume` has nothing to do)
            return
        if (out / "journal.sqlite").exists():
            proc = podium("resume", str(out), env=env)
        else:  # killed before its journal existed: start it again, as a user would
            shutil.rmtree(out, ignore_errors=True)
            proc = podium(*args, "--out", str(out), env=env)
        kill = rng.random() < 0.5
        if kill:
            time.sleep(rng.uniform(0.3, span))
        else:
            proc.wait()
            if not finished(out):  # it could not finish (it should have): count and stop
                return


def campaign(backend: str, workers: int, trials: int, base: Path, env: dict[str, str],
             rng: random.Random, args: list[str], keep: Path | None) -> Result:  # fmt: skip
    result = Result(backend, workers)
    run_args = [*args, "-o", f"workers={workers}"]
    t0 = time.monotonic()
    ref = subprocess.run(
        [sys.executable, "-m", "podium", *run_args, "--out", str(base / "reference")],
        env=env, cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    if ref.returncode != 0:
        raise SystemExit(f"{backend}: the reference run failed: {ref.stderr[-2000:]}")
    result.reference_s = time.monotonic() - t0
    reference = tree(base / "reference")
    ids = {n[0] for n in reference["nodes"]}
    for trial in range(trials):
        out = base / f"trial-{trial}"
        killed_run(run_args, out, env, rng, result.reference_s, result)
        result.trials += 1
        got = tree(out) if (out / "journal.sqlite").exists() else {"nodes": [], "calls": []}
        have = {n[0] for n in got["nodes"] if n[2] == "done"}
        result.lost += len(ids - have)
        nodes_dir = out / "nodes"
        dirs = {int(p.name) for p in nodes_dir.iterdir()} if nodes_dir.exists() else set()
        result.duplicated += max(len(got["nodes"]) - len(ids), 0) + len(dirs - ids)
        result.equal += got == reference
        if got != reference and keep is not None:
            shutil.copytree(base, keep / base.name, dirs_exist_ok=True)
    return result


@contextmanager
def backend_args(
    name: str, base: Path, data: Path, env: dict[str, str], workers: int
) -> Iterator[list[str]]:
    common = ["--steps", "9", "--seed", "3", "--data-dir", str(data), *SEARCH,
              "-o", "sandbox.preimports=[]"]  # fmt: skip
    if name == "scripted" or name == "replay":
        answers: list[Any] = []
        for n in range(1, 10):
            answers += [code_answer(toy_solution(n), plan=f"Plan {n}.", node_id=n),
                        review_answer(summary=f"Review {n}.", node_id=n)]  # fmt: skip
        script = write_script(base / "script.jsonl", answers)
        args = ["run", str(TOY), "--model", f"scripted:{script}", *common]
        if name == "replay":
            recorded = base / "recorded"
            subprocess.run([sys.executable, "-m", "podium", *args, "--out", str(recorded),
                            "-o", f"workers={workers}"],  # the record's tree is the one replayed
                           env=env, cwd=REPO, check=True, capture_output=True)  # fmt: skip
            args = ["run", str(TOY), "--replay", str(recorded), *common]
        yield args
    elif name == "openai":
        with FakeOpenAI(responder=openai_responder) as fake:
            env["OPENAI_API_KEY"] = fake.api_key
            yield ["run", str(TOY), "--model", "openai/gpt-4.1", "-o",
                   f"model.base_url={fake.url}", *common]  # fmt: skip
    else:
        yield ["run", "mini/titanic", "--model", "baseline", "--steps", "6", "--seed", "3",
               "--data-dir", str(data), "-o", "search.num_drafts=3"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--workers", default="1,3")
    parser.add_argument("--backends", default="scripted,replay,openai,baseline")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="copy the runs of a failed comparison here")
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    results = []
    with tempfile.TemporaryDirectory(prefix="podium-kills-") as tmp:
        data = Path(tmp) / "data"
        for name in opts.backends.split(","):
            for workers in map(int, opts.workers.split(",")):
                base = Path(tmp) / f"{name}-{workers}"
                base.mkdir()
                run_env = dict(env)  # the openai backend adds its fake server's key
                with backend_args(name, base, data, run_env, workers) as args:
                    r = campaign(name, workers, opts.trials, base, run_env, rng, args, opts.keep)
                results.append(r)
                print(f"{name:9} workers={workers}: {r.kills} kills over {r.trials} runs, "
                      f"{r.lost} lost, {r.duplicated} duplicated, {r.equal}/{r.trials} trees "
                      f"equal to the uninterrupted run (reference {r.reference_s:.0f} s)",
                      flush=True)  # fmt: skip
    if opts.json:
        opts.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
    if any(r.lost or r.duplicated or r.equal != r.trials for r in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
