"""``benchmark/id`` or a folder path → a loaded Task, with one-line errors listing choices.

A folder inside an MLE-bench checkout's registry (``<checkout>/mlebench/competitions/<id>``) is
loaded as the ``mlebench`` benchmark's task ``<id>`` from that checkout: the data ``mlebench
prepare`` made (``--data-dir``, default MLE-bench's own), graded as MLE-bench grades it, and
never prepared by Podium. A folder of data and a description alone (what MLE-bench's harness
mounts at ``/home/data``) is an ungraded data-folder task. Any other folder is a Podium task
folder.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from podium.benchmarks.data_folder import is_data_folder, load_data_folder
from podium.benchmarks.folder import load_folder_task
from podium.benchmarks.mlebench import MLEBench, registry_competition
from podium.errors import TaskError, UserError
from podium.interfaces import Task
from podium.plugins import Registry


def resolve_task(
    ref: str, registry: Registry, data_dir: Path | None, obfuscated: bool = False
) -> Task:
    if not ref:
        raise TaskError("no task given", hint=_hint(registry))
    path = Path(ref).expanduser()
    if path.is_dir():
        if is_data_folder(path):  # MLE-bench's agent-side /home/data
            return load_data_folder(path, obfuscated=obfuscated)
        competition = registry_competition(path)
        if competition is not None:
            checkout, task_id = competition
            return MLEBench(checkout).load_task(task_id, data_dir, obfuscated=obfuscated)
        return load_folder_task(path, data_dir, obfuscated=obfuscated)
    if path.exists():
        raise TaskError(f"{ref} is a file, not a task folder", hint=_hint(registry))
    bench, sep, task_id = ref.partition("/")
    if sep and bench in registry.benchmarks:
        benchmark = registry.benchmark(bench)
        ids = benchmark.task_ids()
        if task_id not in ids:
            raise TaskError(f"unknown task {ref!r}", hint=_choices(bench, task_id, ids))
        return benchmark.load_task(task_id, data_dir, obfuscated=obfuscated)
    if (sep and "/" in task_id) or ref.startswith((".", "/", "~")):
        raise TaskError(
            f"task folder not found: {ref}",
            hint="give an existing task folder, or <benchmark>/<task id> (podium tasks lists them)",
        )
    guess = _closest_task(ref, registry)
    hint = f"did you mean {guess}? " if guess else ""
    raise TaskError(f"unknown task {ref!r}", hint=hint + _hint(registry))


def _choices(bench: str, task_id: str, ids: list[str]) -> str:
    """The closest ids to the one asked for, then the benchmark's tasks (for a long list, the
    command that lists them)."""
    close = difflib.get_close_matches(task_id, ids, n=1, cutoff=0.6)
    guess = f"did you mean {bench}/{close[0]}? " if close else ""
    if len(ids) <= 12:
        return f"{guess}{bench} has: {', '.join(ids) or '(no tasks)'}"
    return f"{guess}`podium tasks {bench}` lists its {len(ids)} tasks"


def _closest_task(ref: str, registry: Registry) -> str | None:
    """``titanic`` or ``mnii/titanic`` → ``mini/titanic``: the registered ``benchmark/id``
    closest to ``ref``, matched on the whole name and on the id alone."""
    bench_part, _, id_part = ref.rpartition("/")
    candidates: list[str] = []
    for name in registry.benchmarks:
        try:
            candidates += [f"{name}/{task_id}" for task_id in registry.benchmark(name).task_ids()]
        except UserError:  # a benchmark that is not installed here (MLE-bench) has no names
            continue
    by_id: dict[str, list[str]] = {}
    for full in candidates:
        by_id.setdefault(full.partition("/")[2], []).append(full)
    whole = difflib.get_close_matches(ref, candidates, n=1, cutoff=0.6)
    if bench_part and whole:
        return whole[0]
    close_ids = difflib.get_close_matches(id_part, list(by_id), n=1, cutoff=0.6)
    if close_ids:
        return " or ".join(by_id[close_ids[0]])
    return whole[0] if whole else None


def _hint(registry: Registry) -> str:
    benches = ", ".join(registry.benchmarks) or "(none installed)"
    return f"give <benchmark>/<task id> (benchmarks: {benches}) or a task folder path"
