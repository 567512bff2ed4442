"""Failures of the run dir and the disk as users meet them: one ``error:`` line and a ``hint:``,
a non-zero exit, no traceback, no temp file left, and a journal that still opens and resumes.

On real file systems, not mocks: a small tmpfs filled to its last byte, remounted read-only,
or bind-mounted read-only over ``nodes/`` (``chmod`` does not stop root, and CI runs as root).
Mounting needs root with CAP_SYS_ADMIN; without it these tests skip, saying so. The run whose
disk fills up goes through the command line in a subprocess, exactly as a user starts it; the
cases that stop before any node runs call the CLI's ``main`` in this process (same code, a
second faster).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from podium.cli.app import main
from podium.errors import RunDirError
from podium.formats.journal import Journal
from podium.formats.rundir import RunDir
from podium.records import Node, NodeState
from podium.testing import node_answers, write_script
from tests.support import TOY_TASK, podium_cli, podium_popen, solution, wait_until

pytestmark = pytest.mark.slow

# Node 2 waits for a ``go`` file in its kernel's slot: the test fills the disk while it runs.
GATED = solution(0.8, extra="import os\nwhile not os.path.exists('go'):\n    time.sleep(0.02)")
FAST = ("-o", "sandbox.preimports=[]", "--timeout", "2m")  # toy solutions need no pre-imports

CliCall = Callable[..., tuple[int, list[str]]]


# --- file systems that fail -----------------------------------------------------------------


@contextlib.contextmanager
def small_fs(path: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path``: a disk that can fill up or turn read-only."""
    if os.geteuid() != 0:
        pytest.skip("a full or read-only disk is made by mounting a tmpfs, which needs root")
    path.mkdir(parents=True, exist_ok=True)
    made = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs CAP_SYS_ADMIN): {made.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "--recursive", "--lazy", str(path)], check=False)


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


def read_only(path: Path) -> None:
    """Make the mount at ``path`` read-only, or bind ``path`` read-only over itself."""
    if not os.path.ismount(path):
        assert _mount("--bind", str(path), str(path)).returncode == 0
        assert _mount("-o", "remount,bind,ro", str(path)).returncode == 0
        return
    assert _mount("-o", "remount,ro", str(path)).returncode == 0


def fill(fs: Path) -> Path:
    """Write one file until the file system has not a byte left."""
    filler = fs / "filler"
    with filler.open("ab", buffering=0) as fh:
        _write_until_full(fh.fileno())
    return filler


def _write_until_full(fd: int) -> None:
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC


@contextlib.contextmanager
def kept_full(fs: Path) -> Iterator[Path]:
    """The file system full, and kept full: what Podium frees meanwhile (a kernel slot thrown
    away) is taken again at once, so no write of the run can slip through."""
    filler = fill(fs)
    stop = threading.Event()

    def top_up() -> None:
        with filler.open("ab", buffering=0) as fh:
            while not stop.wait(0.01):
                _write_until_full(fh.fileno())

    keeper = threading.Thread(target=top_up, daemon=True)
    keeper.start()
    try:
        yield filler
    finally:
        stop.set()
        keeper.join()


@contextlib.contextmanager
def go_ahead(run: Path) -> Iterator[None]:
    """Let gated solutions go on: a ``go`` file in every kernel slot, as slots appear (a file
    with no bytes can be made on a full tmpfs)."""
    stop = threading.Event()

    def touch() -> None:
        while not stop.wait(0.02):
            for slot in [*run.glob(".sandbox/slot-*"), *run.glob("nodes/*/*/slot-*")]:
                with contextlib.suppress(OSError):
                    (slot / "go").touch()

    toucher = threading.Thread(target=touch, daemon=True)
    toucher.start()
    try:
        yield
    finally:
        stop.set()
        toucher.join()


# --- what every failure must look like --------------------------------------------------------


def one_error_line(code: int, stderr: str) -> list[str]:
    """The error and hint lines of a failed command, checked to be just that."""
    assert code != 0, stderr
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: "), stderr
    assert lines[1].startswith("hint: "), stderr
    return lines


def leftovers(run: Path) -> list[Path]:
    """Half-done writes: temp files and a staged ``best/``."""
    return [*run.rglob("*.tmp"), *run.glob("best.*")]


def finished_nodes(run: Path) -> list[Node]:
    journal = Journal.open(run / "journal.sqlite")
    try:
        return journal.nodes(NodeState.DONE)
    finally:
        journal.close()


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Iterator[CliCall]:
    """``podium ARGS...`` in this process: (exit code, stderr lines)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level

    def call(*args: str) -> tuple[int, list[str]]:
        monkeypatch.setattr(sys, "argv", ["podium", *args])
        with pytest.raises(SystemExit) as exited:
            main()
        code = exited.value.code  # None or an int; a string is printed, exit status 1
        status = code if isinstance(code, int) else 0 if code is None else 1
        return status, capsys.readouterr().err.splitlines()

    yield call
    root.handlers[:], root.level = handlers, level  # the CLI sets up logging for a process


# --- a disk that fills up in the middle of a run ------------------------------------------------


@dataclass
class FullDiskStory:
    run: Path
    failed: subprocess.CompletedProcess[str]  # the run whose disk filled up during node 2
    after_failure: list[Node]  # the journal's finished nodes then
    leftovers: list[Path]
    resumed: subprocess.CompletedProcess[str]  # `podium resume` once space was freed
    after_resume: list[Node]


@pytest.fixture(scope="module")
def full_disk(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[FullDiskStory]:
    """Node 1 finishes; while node 2 runs the disk fills up; space is freed; the run resumed."""
    root = tmp_path_factory.mktemp("full-disk")
    script = write_script(
        root / "script.jsonl", [node_answers(solution(0.9), metric=0.9), node_answers(GATED)]
    )
    with small_fs(root / "fs") as fs:
        run = fs / "run"
        process = podium_popen("run", str(TOY_TASK), "--model", f"scripted:{script}",
                               "--steps", "2", "--out", str(run), "--data-dir", str(data_dir),
                               *FAST)  # fmt: skip
        try:
            wait_until(lambda: (run / "nodes/2/solution.py").exists() or process.poll() is not None)
            with kept_full(fs) as filler, go_ahead(run):
                stdout, stderr = process.communicate(timeout=300)
        finally:
            process.kill()
        failed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        filler.unlink()  # space freed (WAL mode cannot even open the journal on a full disk)
        after_failure, left = finished_nodes(run), leftovers(run)
        with go_ahead(run):
            resumed = podium_cli("resume", str(run), timeout=300)
        yield FullDiskStory(run, failed, after_failure, left, resumed, finished_nodes(run))


def test_a_disk_full_mid_run_is_one_line_and_loses_no_finished_node(
    full_disk: FullDiskStory,
) -> None:
    error, hint = one_error_line(full_disk.failed.returncode, full_disk.failed.stderr)
    assert "no space left on device" in error or "database or disk is full" in error
    assert hint.startswith(f"hint: free space on {full_disk.run.parent} ")
    assert f"podium resume {full_disk.run} (no finished node is lost)" in hint
    assert full_disk.leftovers == []
    assert [n.id for n in full_disk.after_failure] == [1]  # the journal opens, node 1 in it


def test_resume_after_freeing_space_finishes_the_run(full_disk: FullDiskStory) -> None:
    assert full_disk.resumed.returncode == 0, full_disk.resumed.stderr
    assert "Traceback" not in full_disk.resumed.stderr
    assert [n.id for n in full_disk.after_resume] == [1, 2]
    assert full_disk.after_resume[0] == full_disk.after_failure[0]  # node 1 as it was
    assert (full_disk.run / "nodes/2/submission.csv").is_file()
    assert '"status": "finished"' in (full_disk.run / "summary.json").read_text()
    assert leftovers(full_disk.run) == []


@pytest.fixture
def finished_run(full_disk: FullDiskStory, tmp_path: Path) -> Iterator[Path]:
    """A copy of the finished 2-node run, alone on a small tmpfs of its own."""
    with small_fs(tmp_path / "fs") as fs:
        shutil.copytree(full_disk.run, fs / "run", symlinks=True)
        yield fs / "run"


# --- a run that cannot start or go on --------------------------------------------------------


def test_a_full_disk_at_start_is_one_line_and_leaves_no_run_behind(
    cli: CliCall, tmp_path: Path, data_dir: Path
) -> None:
    with small_fs(tmp_path / "fs") as fs:
        fill(fs)
        code, lines = cli("run", str(TOY_TASK), "--model", "baseline", "--out", str(fs / "run"),
                          "--data-dir", str(data_dir), "--steps", "1")  # fmt: skip
        error, hint = one_error_line(code, "\n".join(lines))
        assert error.startswith(f"error: cannot write {fs / 'run'}/")
        assert hint == f"hint: free space on {fs} (df -h {fs}), then run the same command again"
        assert not (fs / "run").exists()  # nothing half-made that would stop the same command


def test_resume_on_a_full_disk_changes_nothing(cli: CliCall, finished_run: Path) -> None:
    config = (finished_run / "config.toml").read_bytes()
    filler = fill(finished_run.parent)
    code, lines = cli("resume", str(finished_run), "--steps", "3")
    error, hint = one_error_line(code, "\n".join(lines))
    assert "no space left on device" in error or "disk is full" in error
    assert f"podium resume {finished_run} (no finished node is lost)" in hint
    assert (finished_run / "config.toml").read_bytes() == config
    assert leftovers(finished_run) == []
    filler.unlink()  # WAL mode cannot even open the journal on a full disk
    assert [n.id for n in finished_nodes(finished_run)] == [1, 2]


def test_a_read_only_out_is_one_line(cli: CliCall, tmp_path: Path, data_dir: Path) -> None:
    with small_fs(tmp_path / "fs") as fs:
        read_only(fs)
        code, lines = cli("run", str(TOY_TASK), "--model", "baseline", "--out", str(fs / "run"),
                          "--data-dir", str(data_dir))  # fmt: skip
        error, hint = one_error_line(code, "\n".join(lines))
        assert (
            error == f"error: cannot create the run directory {fs / 'run'}: read-only file system"
        )
        assert hint == f"hint: {fs} is read-only: give --out a directory on a writable file system"


def test_resuming_a_read_only_run_is_one_line(cli: CliCall, finished_run: Path) -> None:
    read_only(finished_run.parent)
    code, lines = cli("resume", str(finished_run), "--steps", "3")
    error, hint = one_error_line(code, "\n".join(lines))
    assert (
        error == f"error: cannot write in the run directory {finished_run}: read-only file system"
    )
    assert f"cp -a {finished_run} NEW && podium resume NEW" in hint


def test_a_read_only_nodes_dir_is_one_line_and_keeps_the_run(
    cli: CliCall, finished_run: Path
) -> None:
    read_only(finished_run / "nodes")
    code, lines = cli("resume", str(finished_run), "--steps", "3")
    error, hint = one_error_line(code, "\n".join(lines))
    assert error == f"error: cannot create {finished_run / 'nodes/3'}: read-only file system"
    assert hint.startswith(f"hint: {finished_run / 'nodes'} is read-only: ")
    assert [n.id for n in finished_nodes(finished_run)] == [1, 2]
    assert '"status": "failed"' in (finished_run / "summary.json").read_text()
    assert leftovers(finished_run) == []


def test_resume_without_the_node_files_names_what_is_missing(
    cli: CliCall, finished_run: Path
) -> None:
    shutil.rmtree(finished_run / "nodes")
    best = sorted((finished_run / "best").iterdir())
    code, lines = cli("resume", str(finished_run), "--steps", "3")
    error, hint = one_error_line(code, "\n".join(lines))
    assert error == (
        f"error: cannot resume {finished_run}: the submission.csv of 2 good finished node(s) "
        f"is missing from {finished_run / 'nodes'} (nodes 1, 2)"
    )
    assert hint.startswith(f"hint: restore {finished_run / 'nodes'} ")
    assert sorted((finished_run / "best").iterdir()) == best  # best/ as it was


# --- the writes themselves ------------------------------------------------------------------


def test_a_write_that_fails_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    with small_fs(tmp_path / "fs", size="1m") as fs:
        rd = RunDir(fs / "run")
        rd.create()
        rd.write_config("old = 1\n")
        rd.reset_node(1)
        (rd.node_dir(1) / "submission.csv").write_text("id,y\n1,0\n")
        node = Node(id=1, operator="draft", state=NodeState.DONE, code="print(1)\n")
        rd.publish_best(node)
        fill(fs)
        with pytest.raises(RunDirError, match="no space left on device") as failed:
            rd.write_config("new = 2\n" * 100_000)
        assert failed.value.hint is not None and failed.value.hint.startswith(
            f"free space on {fs} "
        )
        assert rd.config.read_text() == "old = 1\n"
        with pytest.raises(RunDirError, match=f"cannot write {rd.best}: no space left"):
            rd.publish_best(node.model_copy(update={"code": "x" * 2_000_000}))
        assert (rd.best / "submission.csv").read_text() == "id,y\n1,0\n"  # the old best/
        assert leftovers(rd.root) == []


def test_a_write_never_follows_a_link_left_where_its_temp_goes(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "run")
    rd.create()
    rd.reset_node(1)
    target = tmp_path / "host-file"
    target.write_text("precious\n")
    (rd.node_dir(1) / "output.txt.tmp").symlink_to(target)  # as a hostile solution might
    rd.write_text(1, "output.txt", "what the node printed\n")
    assert target.read_text() == "precious\n"
    assert (rd.node_dir(1) / "output.txt").read_text() == "what the node printed\n"
    assert not (rd.node_dir(1) / "output.txt").is_symlink()


@pytest.mark.parametrize(
    ("failure", "message", "hint"),
    [
        (OSError(errno.EIO, "Input/output error", "/r/summary.json"),
         "cannot write /r/summary.json: input/output error", "check the disk holding "),
        (OSError(errno.EDQUOT, "Disk quota exceeded", "/r/x"),
         "cannot write /r/x: disk quota exceeded", "free space on "),
        (OSError(errno.EACCES, "Permission denied", "/r/nodes/3"),
         "cannot write /r/nodes/3: permission denied", "or make /r/nodes writable"),
        (sqlite3.OperationalError("database or disk is full"),
         "cannot write the journal /r/journal.sqlite: database or disk is full", "free space on "),
        (sqlite3.OperationalError("attempt to write a readonly database"),
         "cannot write the journal /r/journal.sqlite: attempt to write a readonly database",
         " is read-only: "),
    ],
)  # fmt: skip
def test_failures_of_the_disk_say_what_failed_and_what_to_do(
    failure: BaseException, message: str, hint: str
) -> None:
    rd = RunDir(Path("/r"))
    error = rd.failure(failure)
    assert error is not None and error.message == message
    assert error.hint is not None and hint in error.hint


@pytest.mark.parametrize(
    "failure",
    [
        ValueError("a bug"),
        sqlite3.OperationalError("no such table: nodes"),
        FileNotFoundError(errno.ENOENT, "No such file or directory", "/elsewhere/x"),
        PermissionError(errno.EPERM, "Operation not permitted"),  # e.g. a signal to a process
    ],
)
def test_other_errors_stay_bugs(failure: BaseException) -> None:
    assert RunDir(Path("/r")).failure(failure) is None  # they keep their traceback
