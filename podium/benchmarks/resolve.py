"""``benchmark/id`` or a folder path → a loaded Task, with one-line errors listing choices."""

from __future__ import annotations

from pathlib import Path

from podium.benchmarks.folder import default_data_dir, load_folder_task
from podium.errors import TaskError
from podium.interfaces import Task
from podium.plugins import Registry


def resolve_task(ref: str, registry: Registry, data_dir: Path | None) -> Task:
    if not ref:
        raise TaskError("no task given", hint=_hint(registry))
    path = Path(ref).expanduser()
    if path.is_dir():
        return load_folder_task(path, data_dir)
    if path.exists():
        raise TaskError(f"{ref} is a file, not a task folder", hint=_hint(registry))
    bench, sep, task_id = ref.partition("/")
    if sep and bench in registry.benchmarks:
        benchmark = registry.benchmark(bench)
        ids = benchmark.task_ids()
        if task_id not in ids:
            raise TaskError(
                f"unknown task {ref!r}", hint=f"{bench} has: {', '.join(ids) or '(no tasks)'}"
            )
        return benchmark.load_task(task_id, data_dir or default_data_dir())
    if (sep and "/" in task_id) or ref.startswith((".", "/", "~")):
        raise TaskError(f"task folder not found: {ref}")
    raise TaskError(f"unknown task {ref!r}", hint=_hint(registry))


def _hint(registry: Registry) -> str:
    benches = ", ".join(registry.benchmarks) or "(none installed)"
    return f"give <benchmark>/<task id> (benchmarks: {benches}) or a task folder path"
