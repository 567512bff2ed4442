"""summary.json says what ran: the operator set actually used (a model may bring its own,
whatever ``search.operators`` says) and the commit of Podium's source. One real run of the
baseline model on the toy task (about 4 s)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import podium
from podium.api import runs as api
from podium.api.config import validate_config
from podium.experiments.sweeps.hardware import CPU_SHARE_ENV
from podium.formats import RunDir, RunSummary
from tests.support import REPO, TOY_TASK


def checkout_commit() -> str | None:
    """This checkout's HEAD, when the Podium under test is its source; else None."""
    source = Path(podium.__file__).resolve().parent
    if shutil.which("git") is None or not source.is_relative_to(REPO):
        return None
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.mark.slow
def test_a_baseline_run_records_the_operators_that_ran_and_podiums_commit(
    tmp_path: Path, data_dir: Path
) -> None:
    cfg = validate_config({
        "task": str(TOY_TASK), "out": str(tmp_path / "run"), "data_dir": str(data_dir),
        "model": {"name": "baseline"}, "budget": {"steps": 1},
        "search": {"operators": "llm"},  # asked for; the baseline model brings its own
        "sandbox": {"preimports": []},
    })  # fmt: skip
    api.run(cfg)
    summary = RunDir(tmp_path / "run").read_summary()
    assert summary is not None and summary.operators == "baseline"
    versions = summary.versions
    assert versions is not None and versions.podium == podium.__version__
    commit = checkout_commit()
    assert versions.podium_commit == commit
    if commit is not None:  # a git checkout (this repository): 40 hex digits, dirty or not
        assert re.fullmatch(r"[0-9a-f]{40}", commit)
        assert isinstance(versions.podium_dirty, bool)
    assert versions.plugins is not None  # {} unless an installed plugin package was loaded


def test_a_summary_written_before_these_fields_reads_them_as_not_recorded() -> None:
    older = RunSummary.parse({"status": "finished", "versions": {"podium": "0.1.0"}})
    assert older.operators is None
    assert older.versions is not None
    assert (older.versions.podium_commit, older.versions.podium_dirty) == (None, None)
    assert older.versions.plugins is None


def test_a_runs_kernels_get_its_cpu_share_divided_among_its_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kernels side by side must not each start a thread per host core (they spin against
    each other); a sandbox told its ``threads`` keeps them."""
    monkeypatch.setenv(CPU_SHARE_ENV, "4")
    cfg = validate_config({"task": str(TOY_TASK), "workers": 2})
    assert api.sandbox_table(cfg)["threads"] == 2
    cfg = validate_config({"task": str(TOY_TASK), "workers": 2, "sandbox": {"threads": 3}})
    assert api.sandbox_table(cfg)["threads"] == 3
