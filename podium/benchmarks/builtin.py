"""The benchmarks room's builtin plugins: the bundled offline suite ``mini`` and MLE-bench."""

from __future__ import annotations

from pathlib import Path

from podium.benchmarks import mlebench
from podium.benchmarks.folder_benchmark import FolderBenchmark
from podium.plugins import BenchmarkSpec, hookimpl

MINI_ROOT = Path(__file__).parent / "mini"
MINI_DESCRIPTION = "small offline competitions bundled with Podium (MLE-bench layout)"


@hookimpl
def podium_benchmarks() -> list[BenchmarkSpec]:
    return [
        BenchmarkSpec(
            name="mini",
            create=lambda: FolderBenchmark("mini", MINI_ROOT, MINI_DESCRIPTION),
            description=MINI_DESCRIPTION,
        ),
        BenchmarkSpec(name="mlebench", create=mlebench.MLEBench, description=mlebench.DESCRIPTION),
    ]
