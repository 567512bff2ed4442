"""``podium view SWEEP``: the sweep's grid as JSON (``podium.viewer.sweep_data``) and each of its
runs served under ``/runs/<id>/`` by the same server, found by id, never by a path from the URL.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium import __version__
from podium.formats import Grid, Manifest, new_runs
from podium.formats.sweep_dir import save_manifest
from podium.viewer.schema import as_sent
from podium.viewer.server import ViewerServer, make_server
from podium.viewer.sweep_data import SweepView
from tests.recorded_run import write_recorded_run
from tests.viewer.test_server import request

GRID = Grid(tasks=("mini/titanic", "mini/adult"), strategies=("greedy",), models=("baseline",),
            seeds=(0, 1))  # fmt: skip
DONE = "titanic.greedy.baseline.s0"


def make_sweep(tmp_path: Path) -> Path:
    """A sweep of four runs: one finished (the recorded run), the others never started."""
    root = tmp_path / "sweep"
    root.mkdir()
    manifest = Manifest(podium_version=__version__, tasks_spec="mini", grid=GRID,
                        runs=new_runs(GRID))  # fmt: skip
    save_manifest(root, manifest)
    write_recorded_run(root / "runs" / DONE)
    return root


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    return make_sweep(tmp_path)


@pytest.fixture
def server(sweep_dir: Path) -> Iterator[ViewerServer]:
    srv = make_server(SweepView(sweep_dir), 0)
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    thread.join()
    srv.server_close()


def test_the_grid_lists_every_run_with_its_state(sweep_dir: Path) -> None:
    grid = as_sent(SweepView(sweep_dir).grid())
    assert grid["axes"] == {"tasks": ["mini/titanic", "mini/adult"], "strategies": ["greedy"],
                            "models": ["baseline"], "seeds": [0, 1]}  # fmt: skip
    runs = {r["id"]: r for r in grid["runs"]}
    assert len(runs) == 4
    done = runs[DONE]
    assert done["state"] == "finished" and done["medal"] == "bronze" and done["steps"] == 8
    assert done["href"] == f"runs/{DONE}/" and done["live"] is False
    assert {r["state"] for i, r in runs.items() if i != DONE} == {"pending"}
    assert grid["sweep"]["counts"]["finished"] == 1 and grid["sweep"]["medals"] == 1
    assert grid["sweep"]["status"] in ("running", "stopped")  # the manifest was just written


def test_the_server_serves_the_grid_and_each_run(server: ViewerServer) -> None:
    page = request(server, "/")
    assert page.status == 200 and b"sweep.js" in page.body
    grid = request(server, "/api/sweep")
    assert grid.status == 200 and len(grid.json()["runs"]) == 4
    etag = grid.headers["ETag"]
    assert request(server, "/api/sweep", {"If-None-Match": etag}).status == 304
    run_page = request(server, f"/runs/{DONE}/")
    assert run_page.status == 200 and b"app.js" in run_page.body
    run = request(server, f"/runs/{DONE}/api/run").json()
    assert run["run"]["task"] == "toy" and len(run["nodes"]) == 9
    assert request(server, f"/runs/{DONE}/api/node/5").json()["id"] == 5
    moved = request(server, f"/runs/{DONE}")
    assert moved.status == 301 and moved.headers["Location"] == f"/runs/{DONE}/"


@pytest.mark.parametrize(
    "path",
    [
        "/runs/adult.greedy.baseline.s1/api/run",  # in the grid, never started: no run dir
        "/runs/no-such-run/api/run",
        "/runs/../../etc/api/run",
        "/runs/%2e%2e/api/run",
        "/api/run",  # a sweep has no run of its own
    ],
)
def test_only_the_sweeps_own_runs_are_served(server: ViewerServer, path: str) -> None:
    reply = request(server, path)
    assert reply.status == 404, path
    assert "error" in reply.json()


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_a_run_dir_outside_the_sweep_is_never_read(
    sweep_dir: Path, tmp_path: Path, how: str
) -> None:
    """A manifest edited to point a run elsewhere, or a symlink under runs/, does not turn the
    viewer into a reader of other directories: neither the run's page nor the grid reads it."""
    outside = write_recorded_run(tmp_path / "elsewhere").root
    summary = json.loads((outside / "summary.json").read_text())
    (outside / "summary.json").write_text(json.dumps({**summary, "error": "OUTSIDE-RUN"}))
    manifest = (sweep_dir / "sweep.json").read_text()
    other = "runs/adult.greedy.baseline.s0"
    if how == "symlink":
        (sweep_dir / other).parent.mkdir(exist_ok=True)
        (sweep_dir / other).symlink_to(outside)
    else:
        where = str(outside) if how == "absolute" else f"../{outside.relative_to(tmp_path)}"
        (sweep_dir / "sweep.json").write_text(manifest.replace(other, where, 1))
    view = SweepView(sweep_dir)
    assert view.run_dir("adult.greedy.baseline.s0") is None
    grid = as_sent(view.grid())
    assert "OUTSIDE-RUN" not in json.dumps(grid)
    run = next(r for r in grid["runs"] if r["id"] == "adult.greedy.baseline.s0")
    assert run["state"] == "pending" and run["steps"] is None


def test_a_nan_score_keeps_the_grid_valid_json(sweep_dir: Path) -> None:
    """A grader may return NaN: the grid stays JSON a browser can parse."""
    path = sweep_dir / "runs" / DONE / "summary.json"
    summary = json.loads(path.read_text())
    summary["grade"]["score"] = float("nan")
    summary["elapsed_s"] = float("inf")
    path.write_text(json.dumps(summary))
    grid = as_sent(SweepView(sweep_dir).grid())
    json.dumps(grid, allow_nan=False)
    done = next(r for r in grid["runs"] if r["id"] == DONE)
    assert done["score"] is None and done["elapsed_s"] is None
