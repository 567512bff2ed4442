"""The benchmarks room's builtin plugins: the bundled offline suite ``mini`` (a quick smoke
suite), ``arena`` (the
suite that tells strategies apart) and MLE-bench."""

from __future__ import annotations

from podium.benchmarks import mlebench
from podium.benchmarks.folder_benchmark import FolderBenchmark
from podium.plugins import BenchmarkSpec, hookimpl
from podium.secret_paths import bundled_tasks

# Where ``podium.secret_paths`` knows the bundled tasks are: their raw data is masked in every
# sandbox, in every copy of the package the solutions' environment holds.
MINI_ROOT = bundled_tasks("mini")
MINI_DESCRIPTION = (
    "small offline competitions bundled with Podium (MLE-bench layout): a quick smoke suite; "
    "its medals are too easy to tell strategies apart"
)
ARENA_ROOT = bundled_tasks("arena")
ARENA_DESCRIPTION = (
    "offline competitions (tabular, text, image, time series; MLE-bench layout) whose "
    "leaderboards leave a first draft without a medal: the suite for comparing strategies"
)


@hookimpl
def podium_benchmarks() -> list[BenchmarkSpec]:
    return [
        BenchmarkSpec(
            name="mini",
            create=lambda: FolderBenchmark("mini", MINI_ROOT, MINI_DESCRIPTION),
            description=MINI_DESCRIPTION,
        ),
        BenchmarkSpec(
            name="arena",
            create=lambda: FolderBenchmark("arena", ARENA_ROOT, ARENA_DESCRIPTION),
            description=ARENA_DESCRIPTION,
        ),
        BenchmarkSpec(name="mlebench", create=mlebench.MLEBench, description=mlebench.DESCRIPTION),
    ]
