"""A benchmark whose tasks are the registry-layout folders inside one directory."""

from __future__ import annotations

from pathlib import Path

from podium.benchmarks.folder import load_folder_task
from podium.errors import TaskError
from podium.interfaces import Benchmark, Task


class FolderBenchmark(Benchmark):
    def __init__(self, name: str, root: Path, description: str = "") -> None:
        self.name, self.root, self.description = name, root, description

    def task_ids(self, split: str | None = None) -> list[str]:
        if split is not None:
            raise TaskError(f"benchmark {self.name} has no splits (asked for {split!r})")
        return sorted(p.name for p in self.root.iterdir() if (p / "config.yaml").is_file())

    def load_task(self, task_id: str, data_dir: Path | None, obfuscated: bool = False) -> Task:
        return load_folder_task(
            self.root / task_id, data_dir, task_id=f"{self.name}/{task_id}", obfuscated=obfuscated
        )
