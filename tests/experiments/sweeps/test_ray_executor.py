"""The Ray executor on a real local Ray instance (2 CPUs, shared by the module), and the
run-dir shipping it relies on (no Ray needed for that part)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from podium.errors import UserError
from podium.experiments.sweeps import EXIT_FAILED, LOG_NAME, Job, shipping
from podium.experiments.sweeps.ray_executor import RayExecutor
from podium.experiments.sweeps.shipping import ShippingError, pack_dir, replace_dir, unpack_dir
from tests.experiments.sweeps.conftest import ScriptJob, script
from tests.support import REPO, scaled, wait_gone

# --- shipping a run dir (pure) ---------------------------------------------------------------


def make_run_dir(root: Path) -> Path:
    (root / "nodes" / "1" / "working").mkdir(parents=True)
    (root / "nodes" / "2").mkdir(parents=True)  # empty directories travel too
    (root / "plan.json").write_text('{"seed": 0}')
    (root / "journal.sqlite").write_bytes(os.urandom(3000))
    (root / "nodes" / "1" / "submission.csv").write_text("id,y\n1,0.5\n")
    (root / "nodes" / "1" / "working" / "latest.csv").symlink_to("../submission.csv")
    return root


def tree(root: Path) -> dict[str, bytes | str | None]:
    """Every entry under root: file bytes, ``->target`` for links, None for directories."""
    out: dict[str, bytes | str | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = f"->{path.readlink()}"
        elif path.is_dir():
            out[rel] = None
        else:
            out[rel] = path.read_bytes()
    return out


def test_a_run_dir_survives_a_round_trip(tmp_path: Path) -> None:
    src = make_run_dir(tmp_path / "src")
    expected = tree(src)
    # What must not travel: links leading out of the run dir and special files.
    (src / "nodes" / "1" / "input").symlink_to(tmp_path, target_is_directory=True)
    (src / "nodes" / "1" / "working" / "answers").symlink_to("../../../../private.csv")
    os.mkfifo(src / "nodes" / "1" / "pipe")

    unpack_dir(pack_dir(src), tmp_path / "dest")

    assert tree(tmp_path / "dest") == expected
    assert (tmp_path / "dest" / "nodes" / "1" / "working" / "latest.csv").read_text() == (
        "id,y\n1,0.5\n"
    )


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def archive(*members: tuple[str, bytes | None, str]) -> bytes:
    """A hand-made tar.gz: (name, data, kind) with kind "file", "sym" or "hard" (data = target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data or b"")
                tar.addfile(info, io.BytesIO(data or b""))
                continue
            info.type = {"sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE}[
                kind
            ]
            info.linkname = (data or b"").decode()
            tar.addfile(info)
    return buf.getvalue()


@pytest.mark.parametrize(
    "members",
    [
        [("/tmp/evil", b"x", "file")],
        [("../evil", b"x", "file")],
        [("nodes/../../evil", b"x", "file")],
        [("ok.txt", b"x", "file"), ("link", b"/etc", "sym")],
        [("nodes/link", b"../../outside", "sym")],
        [("hard", b"/etc/passwd", "hard")],
        [("pipe", None, "fifo")],
    ],
    ids=["absolute", "dotdot", "nested-dotdot", "abs-symlink", "symlink-out", "hardlink", "fifo"],
)
def test_unsafe_archives_are_refused_whole(
    tmp_path: Path, members: list[tuple[str, bytes | None, str]]
) -> None:
    with pytest.raises(ShippingError, match="unsafe archive member refused"):
        unpack_dir(archive(*members), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()  # refused before anything was written
    assert list(tmp_path.iterdir()) == []


def test_garbage_is_refused_as_unreadable(tmp_path: Path) -> None:
    with pytest.raises(ShippingError, match="unreadable"):
        unpack_dir(b"not a tarball", tmp_path / "dest")


@pytest.mark.parametrize("atomic_exchange", [True, False])
def test_replace_dir_swaps_in_the_new_contents_or_leaves_the_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, atomic_exchange: bool
) -> None:
    if not atomic_exchange:
        monkeypatch.setattr(shipping, "_exchange", lambda a, b: False)
    new = make_run_dir(tmp_path / "new")
    (new / "summary.json").write_text('{"status": "finished"}')
    target = tmp_path / "runs" / "r1"
    target.mkdir(parents=True)
    (target / "plan.json").write_text("{}")
    (target / "stale.txt").write_text("gone after the swap")

    replace_dir(target, pack_dir(new))
    assert tree(target) == tree(new)
    assert names(target.parent) == ["r1"]  # no staging dirs left behind

    with pytest.raises(ShippingError):
        replace_dir(target, archive(("../evil", b"x", "file")))
    assert tree(target) == tree(new)  # a refused archive changes nothing
    assert names(target.parent) == ["r1"]

    replace_dir(tmp_path / "runs" / "fresh", pack_dir(new))  # no old copy to swap with
    assert tree(tmp_path / "runs" / "fresh") == tree(new)


# --- without Ray, or without a cluster --------------------------------------------------------


def test_without_ray_the_error_is_one_line_and_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(UserError) as caught:
        RayExecutor(address=None, cpus_per_run=1, gpus_per_run=0)
    assert caught.value.message.startswith("the ray executor needs Ray")
    assert "\n" not in caught.value.message
    assert caught.value.hint == "pip install 'podium[ray]'"


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_nobody_listens_at_fails_fast_naming_it(scheme: str) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"{scheme}127.0.0.1:{port}"
    started = time.monotonic()
    with pytest.raises(UserError) as caught:
        RayExecutor(address=address, cpus_per_run=1, gpus_per_run=0)
    assert time.monotonic() - started < scaled(10)  # Ray alone would retry for minutes
    assert f"cannot connect to the Ray cluster at {address}" in caught.value.message
    assert "\n" not in caught.value.message


# --- a real local Ray -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def executor() -> Iterator[RayExecutor]:
    """A local Ray with 2 CPUs and 2 GPUs (make-believe ones: Ray only counts them), started by
    the executor itself and shut down at the end."""
    with pytest.MonkeyPatch.context() as mp:
        # Ray puts the driver's working directory on its workers' sys.path: from the repo root,
        # they can unpickle the tests' ScriptJob.
        mp.chdir(REPO)
        ray_executor = RayExecutor(
            address=None, cpus_per_run=1, gpus_per_run=0, num_cpus=2, num_gpus=2, grace_s=10
        )
    yield ray_executor
    asyncio.run(ray_executor.aclose())


def job(tmp_path: Path, name: str, worker: Path, **plan: object) -> ScriptJob:
    run_dir = tmp_path / name
    run_dir.mkdir()
    (run_dir / "plan.json").write_text(json.dumps(plan))
    return ScriptJob(run_id=name, run_dir=run_dir, script=worker, env={"PODIUM_TEST": "yes"})


WRITES_AND_EXITS = """
plan = json.loads((run_dir / "plan.json").read_text())
print("hello from", run_dir.name)
print("and from stderr", file=sys.stderr)
(run_dir / "nodes" / "1").mkdir(parents=True)
(run_dir / "nodes" / "1" / "output.txt").write_text("node output")
(run_dir / "summary.json").write_text(json.dumps({"status": "finished", "plan": plan}))
(run_dir / "where.json").write_text(json.dumps({
    "run_dir": str(run_dir.resolve()), "cwd": os.getcwd(),
    "env": os.environ.get("PODIUM_TEST"),
}))
if (run_dir / "earlier.txt").exists():
    (run_dir / "seen_earlier.txt").write_text((run_dir / "earlier.txt").read_text())
sys.exit(plan["exit"])
"""


@pytest.mark.slow
def test_a_run_dir_travels_to_a_worker_and_back(executor: RayExecutor, tmp_path: Path) -> None:
    resumed = job(tmp_path, "r1", script(tmp_path, WRITES_AND_EXITS), exit=3)
    (resumed.run_dir / "earlier.txt").write_text("from attempt 1")  # a resumed run's files
    (resumed.run_dir / LOG_NAME).write_text("attempt 1\n")

    assert asyncio.run(executor.execute(resumed)) == 3

    run_dir = resumed.run_dir
    assert (run_dir / "nodes" / "1" / "output.txt").read_text() == "node output"
    assert json.loads((run_dir / "summary.json").read_text())["plan"] == {"exit": 3}
    where = json.loads((run_dir / "where.json").read_text())
    # The earlier attempt's files were shipped to the worker:
    assert (run_dir / "seen_earlier.txt").read_text() == "from attempt 1"
    assert where["env"] == "yes"
    assert Path(where["run_dir"]) != run_dir.resolve()  # it ran on the worker's own copy
    assert not where["run_dir"].startswith(str(tmp_path))
    assert Path(where["run_dir"]).name == "r1"
    assert not Path(where["run_dir"]).exists()  # and that copy was cleaned up
    log = (run_dir / LOG_NAME).read_text()
    assert log.startswith("attempt 1\n")
    assert "hello from r1\n" in log and "and from stderr\n" in log
    assert (run_dir / "earlier.txt").read_text() == "from attempt 1"
    assert names(tmp_path) == ["r1", "worker.py"]  # no staging dirs left behind


@pytest.mark.slow
def test_jobs_run_side_by_side_up_to_the_cluster_size(
    executor: RayExecutor, tmp_path: Path
) -> None:
    assert executor.capacity() == 2  # 2 CPUs, 1 per run
    worker = script(tmp_path, WRITES_AND_EXITS)

    async def two() -> list[int]:
        jobs = [job(tmp_path, f"r{i}", worker, exit=i) for i in range(2)]
        return await asyncio.gather(*(executor.execute(j) for j in jobs))

    assert asyncio.run(two()) == [0, 1]
    assert (tmp_path / "r1" / "summary.json").exists()


@pytest.mark.slow
def test_a_gpu_run_sees_the_gpus_ray_gave_it(executor: RayExecutor, tmp_path: Path) -> None:
    worker = script(tmp_path, """
(run_dir / "gpus").write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
time.sleep(0.5)
""")  # fmt: skip

    async def two() -> list[int]:
        jobs = [job(tmp_path, f"r{i}", worker) for i in range(2)]
        # The driver's own pinning (what the local executor does) must not win over Ray's.
        gpu_jobs = [replace(j, gpus=1, env={"CUDA_VISIBLE_DEVICES": "7"}) for j in jobs]
        return await asyncio.gather(*(executor.execute(j) for j in gpu_jobs))

    assert asyncio.run(two()) == [0, 0]
    seen = sorted((tmp_path / f"r{i}" / "gpus").read_text() for i in range(2))
    assert seen == ["0", "1"]  # one GPU each, never the same one at once


@pytest.mark.slow
def test_capacity_and_description_follow_the_cluster(executor: RayExecutor) -> None:
    described = executor.describe()
    assert described == {
        "name": "ray",
        "address": None,
        "cpus_per_run": 1,
        "gpus_per_run": 0,
        "parallel": 2,
        "cluster": {"cpus": 2.0, "gpus": 2.0, "nodes": 1},
    }
    # Further executors in this process reuse its Ray (and leave it running when closed).
    assert RayExecutor(None, cpus_per_run=0.5, gpus_per_run=0).capacity() == 4
    assert RayExecutor(None, cpus_per_run=1, gpus_per_run=0, max_parallel=7).capacity() == 7
    assert RayExecutor(None, cpus_per_run=0.5, gpus_per_run=1).capacity() == 2  # GPUs bound it
    with pytest.raises(UserError, match="each run asks for 3 GPU"):
        RayExecutor(None, cpus_per_run=1, gpus_per_run=3)
    asyncio.run(RayExecutor(None, cpus_per_run=1, gpus_per_run=0).aclose())
    assert executor.capacity() == 2  # still connected


WAITS_FOR_SIGTERM = """
outside = pathlib.Path(sys.argv[0]).parent  # the test's tmp_path, outside the run dir
def stop(signum, frame):
    (outside / "sigterm").write_text("SIGTERM")
    (run_dir / "interrupted.json").write_text('{"status": "interrupted"}')
    sys.exit(130)
signal.signal(signal.SIGTERM, stop)
print("working", flush=True)
(outside / "started").write_text(str(os.getpid()))
time.sleep(60)
"""

IGNORES_SIGTERM = """
outside = pathlib.Path(sys.argv[0]).parent
signal.signal(signal.SIGTERM, signal.SIG_IGN)
(outside / "started").write_text(str(os.getpid()))
time.sleep(60)
"""


async def cancel_when_started(executor: RayExecutor, sleeper: Job, started: Path) -> float:
    """Start the job, cancel it once its worker is up; the seconds the cancellation took."""
    task = asyncio.create_task(executor.execute(sleeper))
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert started.exists(), "the worker never started"
    begun = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - begun


@pytest.mark.slow
def test_cancelling_stops_the_worker_with_sigterm_and_brings_its_files_back(
    executor: RayExecutor, tmp_path: Path
) -> None:
    sleeper = job(tmp_path, "r1", script(tmp_path, WAITS_FOR_SIGTERM))

    took = asyncio.run(cancel_when_started(executor, sleeper, tmp_path / "started"))

    assert took < scaled(20)
    assert (tmp_path / "sigterm").read_text() == "SIGTERM"
    # What the run wrote while stopping came back to the driver: it resumes from there.
    assert (sleeper.run_dir / "interrupted.json").exists()
    assert "working\n" in (sleeper.run_dir / LOG_NAME).read_text()


@pytest.mark.slow
def test_a_worker_deaf_to_sigterm_is_killed_after_the_grace_period(
    executor: RayExecutor, tmp_path: Path
) -> None:
    impatient = RayExecutor(None, cpus_per_run=1, gpus_per_run=0, grace_s=1.0)
    deaf = job(tmp_path, "r1", script(tmp_path, IGNORES_SIGTERM))

    took = asyncio.run(cancel_when_started(impatient, deaf, tmp_path / "started"))

    assert took < scaled(20)
    assert wait_gone(int((tmp_path / "started").read_text()), within_s=60)
    assert (deaf.run_dir / "plan.json").exists()


@dataclass(frozen=True)
class BrokenJob(Job):
    """A job whose command line cannot even be built on the worker."""

    def argv(self, python: str, run_dir: Path | None = None) -> list[str]:
        raise RuntimeError("no worker command here")


@pytest.mark.slow
def test_a_task_that_fails_inside_ray_is_a_failed_run_with_the_reason_logged(
    executor: RayExecutor, tmp_path: Path
) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "plan.json").write_text("{}")
    broken = BrokenJob(run_id="r1", run_dir=tmp_path / "r1", worker="unused")

    assert asyncio.run(executor.execute(broken)) == EXIT_FAILED

    log = (broken.run_dir / LOG_NAME).read_text()
    assert log.startswith("[podium] the Ray task failed: ")
    assert "no worker command here" in log
    assert "\x1b[" not in log  # Ray's terminal colours are stripped
