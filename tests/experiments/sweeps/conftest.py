"""Shared pieces of the sweep tests: jobs whose worker is a stand-in script (the real worker
runs a whole Podium run); the manifest and run dirs in every state come from the formats' tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from podium.experiments.sweeps import Job
from tests.formats.conftest import manifest, write_summary


@dataclass(frozen=True)
class ScriptJob(Job):
    """A job whose worker is ``python SCRIPT RUN_DIR`` instead of the Podium worker."""

    worker: str = "the stand-in script"  # argv runs the script instead
    script: Path = Path()

    def argv(self, python: str, run_dir: Path | None = None) -> list[str]:
        return [python, str(self.script), str(run_dir or self.run_dir)]


def script(tmp_path: Path, body: str, name: str = "worker.py") -> Path:
    path = tmp_path / name
    path.write_text(
        "import os, sys, signal, time, json, pathlib\nrun_dir = pathlib.Path(sys.argv[1])\n" + body
    )
    return path


__all__ = ["ScriptJob", "manifest", "script", "write_summary"]  # the fixture, used by name
