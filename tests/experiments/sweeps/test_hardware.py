"""host.json's machine and the share of its CPUs each sweep run was given."""

from __future__ import annotations

import pytest

from podium.experiments.sweeps.hardware import (
    CPU_SHARE_ENV,
    available_cpus,
    cpu_share,
    cpu_share_env,
    describe_host,
    kernel_threads,
)


def test_runs_side_by_side_get_their_cpus_per_run_and_a_lone_run_the_machine() -> None:
    assert cpu_share(cpu_share_env(2.0, parallel=4)) == 2
    assert cpu_share(cpu_share_env(0.5, parallel=4)) == 0.5
    assert cpu_share(cpu_share_env(2.0, parallel=1)) == available_cpus()


@pytest.mark.parametrize("value", ["", "lots", "0", "-2", "nan", "inf"])
def test_a_share_that_is_not_a_positive_number_is_not_recorded(value: str) -> None:
    assert cpu_share({CPU_SHARE_ENV: value}) is None


def test_host_json_has_the_share_only_in_a_sweeps_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CPU_SHARE_ENV, raising=False)
    assert "cpu_share" not in describe_host()  # the driver describing its own machine
    monkeypatch.setenv(CPU_SHARE_ENV, "3")
    host = describe_host()
    assert host["cpu_share"] == 3 and host["cpus"] == available_cpus()


@pytest.mark.parametrize(
    ("share", "workers", "threads"),
    [("4", 2, 2), ("1", 2, 1), ("0.5", 1, 1), ("3", 2, 1), ("8", 1, 8)],
)
def test_a_kernels_threads_are_the_runs_share_divided_among_its_workers(
    share: str, workers: int, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CPU_SHARE_ENV, share)
    assert kernel_threads(workers) == threads


def test_outside_a_sweep_a_kernels_threads_share_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CPU_SHARE_ENV, raising=False)
    assert kernel_threads(1) == available_cpus()
    assert kernel_threads(available_cpus() + 1) == 1
