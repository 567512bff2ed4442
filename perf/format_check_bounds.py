"""How long, and how much memory, the host's checks of a hostile submission take (issue 20).

A solution writes ``submission.csv``; the host then reads it three ways, each measured here on
mini/titanic (sample: 418 rows, 2 columns) in a fresh process of its own:

* ``structural``: the answer-free structural check (``podium.submission_check.check`` on the
  bytes the host reads through ``podium.untrusted``), the fallback of every format check;
* ``node``: the whole node check, ``FolderTask.check_submission`` (the grader worker on public
  stand-ins, then the structural check where it cannot say), run the way the loop runs it,
  ``asyncio.to_thread``, with a 10 ms ticker on the event loop: ``lag`` is the ticker's worst
  delay, i.e. how long every other worker of the run would have been stalled;
* ``grade``: ``podium grade mini/titanic FILE``, the CLI, which reads the file as MLE-bench
  does (``podium.benchmarks.grading``).

Figures: ``s`` the operation's wall time (for ``grade`` the whole command, start-up included),
the peak resident memory of the process and of its largest child (``structural``: the checking
child, where one ran; ``node``: the grader worker or the checking child), and the verdict's
first words. A run that passes ``--timeout`` is killed and shown as ``>T``; every process runs
under an address-space limit (``--memory``, default 6 GiB; the grader worker
sets its own 8 GiB) so a blow-up cannot take the machine.

Usage:  .venv/bin/python perf/format_check_bounds.py [--tree DIR] [--timeout 120]
            [--cases NAME ...] [--modes structural node grade] [--json OUT]

``--tree`` measures another checkout of Podium (e.g. an export of the commit before a change:
``git archive HEAD | tar -x -C /tmp/before``), with this venv.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

REPO = Path(__file__).resolve().parent.parent
ROWS = 418  # the titanic sample's rows
FIRST_ID = 892
MODES = ("structural", "node", "grade")


# --- the files ----------------------------------------------------------------------------


def _wide(columns: int, rows: bool) -> Callable[[BinaryIO], None]:
    """``PassengerId,Survived`` and ``columns - 2`` more; with ``rows``, the sample's rows, the
    extra fields empty (one byte each, the smallest a row that wide can be)."""

    def write(fh: BinaryIO) -> None:
        fh.write(b"PassengerId,Survived" + b"".join(b",c%d" % i for i in range(2, columns)))
        fh.write(b"\n")
        if rows:
            tail = b"," * (columns - 2) + b"\n"
            for i in range(ROWS):
                fh.write(b"%d,0" % (FIRST_ID + i) + tail)

    return write


def _widest_allowed(fh: BinaryIO) -> None:
    """The worst a file within the bounds can be: 10,000 columns (the floor) and rows up to the
    100 MiB size cap, every extra field empty."""
    _wide(10**4, rows=False)(fh)
    tail = b"," * (10**4 - 2) + b"\n"
    for i in range(9_500):
        fh.write(b"%d,0" % (FIRST_ID + i % ROWS) + tail)


def _long_row(size: int) -> Callable[[BinaryIO], None]:
    """The header, then one row whose second field is ``size`` bytes: within the size cap."""

    def write(fh: BinaryIO) -> None:
        fh.write(b"PassengerId,Survived\n892,")
        chunk = b"9" * (1 << 20)
        for _ in range(size >> 20):
            fh.write(chunk)

    return write


def _one_line(size: int) -> Callable[[BinaryIO], None]:
    def write(fh: BinaryIO) -> None:
        fh.write(b"PassengerId,Survived,")
        chunk = b"x" * (1 << 20)
        for _ in range(size >> 20):
            fh.write(chunk)

    return write


def _many_rows(rows: int) -> Callable[[BinaryIO], None]:
    def write(fh: BinaryIO) -> None:
        fh.write(b"PassengerId,Survived\n")
        fh.write(b"".join(b"%d,0\n" % (FIRST_ID + i % ROWS) for i in range(rows)))

    return write


def _unclosed_quote(fh: BinaryIO) -> None:
    """A quote opened on the first row and never closed, over 10⁶ lines."""
    fh.write(b'PassengerId,Survived\n892,"0\n' + b"1,1\n" * 1_000_000)


def _doubled_quotes(fh: BinaryIO) -> None:
    """One quoted field of 10⁷ escaped quotes, the rest of the sample's rows as they should be."""
    fh.write(b'PassengerId,Survived\n892,"' + b'""' * 10_000_000 + b'"\n')
    fh.write(b"".join(b"%d,0\n" % (FIRST_ID + i) for i in range(1, ROWS)))


def _stray_quotes(fh: BinaryIO) -> None:
    """Quotes inside unquoted fields on every row, 10⁴ of them per row (lenient quoting)."""
    noise = b'0"' * 10_000
    fh.write(b"PassengerId,Survived\n")
    fh.write(b"".join(b"%d,%s\n" % (FIRST_ID + i, noise) for i in range(ROWS)))


def _quoted_header(fh: BinaryIO) -> None:
    """A header of 10⁵ quoted names, each holding a newline and a comma."""
    fh.write(b"PassengerId,Survived" + b"".join(b',"c\n,%d"' % i for i in range(100_000)))
    fh.write(b"\n" + b"".join(b"%d,0\n" % (FIRST_ID + i) for i in range(ROWS)))


def _valid(fh: BinaryIO) -> None:
    fh.write(b"PassengerId,Survived\n")
    fh.write(b"".join(b"%d,0\n" % (FIRST_ID + i) for i in range(ROWS)))


CASES: dict[str, Callable[[BinaryIO], None]] = {
    "valid": _valid,
    "cols_1e4_header": _wide(10**4, rows=False),
    "cols_1e4_rows": _wide(10**4, rows=True),
    "cols_1e5_header": _wide(10**5, rows=False),
    "cols_1e5_rows": _wide(10**5, rows=True),
    "cols_1e6_header": _wide(10**6, rows=False),
    "cols_1e6_rows": _wide(10**6, rows=True),
    "line_200MB": _one_line(200 * 2**20),
    "row_90MB": _long_row(90 * 2**20),
    "widest_allowed_95MB": _widest_allowed,
    "rows_1e6": _many_rows(10**6),
    "quote_unclosed": _unclosed_quote,
    "quotes_doubled_1e7": _doubled_quotes,
    "quotes_stray": _stray_quotes,
    "header_quoted_newlines": _quoted_header,
}


# --- one measurement, in its own process ----------------------------------------------------


def _one(mode: str, path: Path, data_dir: Path) -> dict[str, Any]:
    if mode == "grade":
        return _grade(path, data_dir)
    from podium.benchmarks import load_folder_task
    from tests.support import TITANIC

    task = load_folder_task(TITANIC, data_dir, task_id="mini/titanic")
    if mode == "structural":
        from podium.benchmarks.folder import read_handed_over
        from podium.submission_check import check, size_cap

        start = time.perf_counter()
        cap = size_cap(task.sample_submission)
        data = read_handed_over(path, cap)
        reason = data if isinstance(data, str) else check(data, task.sample_submission, cap)
        seconds = time.perf_counter() - start
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # a checking child
        return {"s": seconds, "verdict": reason or "valid", "rss_kb": _own_rss(),
                "worker_rss_kb": children}  # fmt: skip
    task.warm_up()
    start = time.perf_counter()
    reason, lag = asyncio.run(_in_thread(lambda: task.check_submission(path)))
    seconds = time.perf_counter() - start
    worker = task.__dict__.get("_grader_check")
    if worker is not None:
        if worker._broken:  # the figures must say when the grader never ran
            reason = f"[grader broken: {worker._broken}] {reason}"
        worker.close()
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"s": seconds, "lag": lag, "verdict": reason or "valid", "rss_kb": _own_rss(),
            "worker_rss_kb": children}  # fmt: skip


def _grade(path: Path, data_dir: Path) -> dict[str, Any]:
    """``podium grade`` as a user runs it: the whole command's time and peak memory."""
    command = [sys.executable, "-m", "podium", "grade", "mini/titanic", str(path),
               "--data-dir", str(data_dir), "--json"]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    try:
        report = json.loads(done.stdout)
        verdict = report.get("error") or f"valid, score {report.get('score')}"
    except ValueError:
        verdict = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"s": seconds, "verdict": verdict, "exit": done.returncode, "rss_kb": rss}


def _own_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def _in_thread(fn: Callable[[], str | None]) -> tuple[str | None, float]:
    """``fn()`` in a thread, as the loop runs the check, and the loop's worst tick delay."""
    worst = 0.0
    done = False

    async def tick() -> None:
        nonlocal worst
        while not done:
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            worst = max(worst, time.perf_counter() - before - 0.01)

    ticker = asyncio.create_task(tick())
    try:
        result = await asyncio.to_thread(fn)
    finally:
        done = True
        await ticker
    return result, worst


def _limit(memory: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, resource.RLIM_INFINITY))

    return apply


def measure(
    mode: str, path: Path, data_dir: Path, tree: Path, timeout: float, memory: int
) -> dict[str, Any]:
    """Run one (mode, file) in a fresh process; its figures, or how it ended."""
    command = [sys.executable, __file__, "--one", mode, str(path), str(data_dir)]
    proc = subprocess.Popen(
        command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit(memory),
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return {"s": f">{timeout:.0f} s", "verdict": "killed at the timeout"}
    try:
        found: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (err.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        return {"s": "-", "verdict": f"crashed (exit {proc.returncode}): {tail}"}
    return found


# --- the table ----------------------------------------------------------------------------


def _cell(result: dict[str, Any]) -> str:
    seconds = result["s"]
    text = seconds if isinstance(seconds, str) else f"{seconds:.2f} s"
    if "lag" in result:
        text += f", lag {result['lag'] * 1000:.0f} ms"
    if "rss_kb" in result:
        text += f", {result['rss_kb'] / 1024:.0f} MB"
        if result.get("worker_rss_kb"):
            text += f"/{result['worker_rss_kb'] / 1024:.0f} MB"
    verdict = str(result.get("verdict", ""))
    return f"{text} ({verdict[:70]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="the Podium checkout to measure")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--memory", type=int, default=6 * 1024**3, help="RLIMIT_AS, bytes")
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    parser.add_argument("--data-dir", type=Path, help="where mini/titanic is prepared")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.path.insert(0, str(Path.cwd()))
        mode, path, data_dir = args.one
        print(json.dumps(_one(mode, Path(path), Path(data_dir))))
        return
    sys.path.insert(0, str(args.tree))
    from podium.benchmarks import load_folder_task
    from tests.support import TITANIC

    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="podium-fcb-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        load_folder_task(TITANIC, data_dir, task_id="mini/titanic")
        print(f"tree {args.tree}; timeout {args.timeout:.0f} s; RLIMIT_AS "
              f"{args.memory / 2**30:.0f} GiB", flush=True)  # fmt: skip
        for name in args.cases:
            path = Path(tmp) / "submission.csv"
            with path.open("wb") as fh:
                CASES[name](fh)
            size = path.stat().st_size
            results[name] = {"bytes": size}
            for mode in args.modes:
                found = measure(mode, path, data_dir, args.tree, args.timeout, args.memory)
                results[name][mode] = found
                print(f"{name} ({size / 2**20:.1f} MiB) {mode}: {_cell(found)}", flush=True)
            path.unlink()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
