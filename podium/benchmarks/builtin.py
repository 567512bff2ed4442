"""The benchmarks room's builtin plugins: the bundled offline suite ``mini`` (a quick smoke
suite) and MLE-bench."""

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
