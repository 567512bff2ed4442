"""``podium sandbox check`` and ``podium sandbox run`` as a user types them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import TOY_SESSION, TOY_TASK, cli_env, podium_cli

pytestmark = pytest.mark.slow


@pytest.fixture
def public(tmp_path: Path) -> Path:
    data = tmp_path / "public"
    data.mkdir()
    (data / "train.csv").write_text("id,y\n1,0\n")
    return data


def sandbox_run(
    tmp_path: Path, public: Path, code: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``podium sandbox run`` on ``code`` with workspace ``tmp_path/ws``."""
    path = tmp_path / "solution.py"
    path.write_text(code)
    ws = str(tmp_path / "ws")
    return podium_cli("sandbox", "run", str(path), "--workspace", ws, "--input", str(public), *args)


def toy_run(
    out: Path, data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``podium run`` on the toy task with the scripted model, one step unless told."""
    return podium_cli("run", str(TOY_TASK), "--model", f"scripted:{TOY_SESSION}", "--steps", "1",
                      "--out", str(out), "--data-dir", str(data_dir), *args, env=env)  # fmt: skip


def test_check_names_each_mechanism_and_picks_bwrap() -> None:
    result = podium_cli("sandbox", "check")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok  python") and "ipykernel" in line for line in lines)
    assert any(line.startswith("ok  bubblewrap") for line in lines)
    assert any(line.startswith("ok  kernel") and "loopback only" in line for line in lines)
    assert any("memory" in line and "cgroup" in line for line in lines)
    for protection in PROTECTIONS:  # each configured and seen holding by the probe kernel
        assert any(line.startswith(f"ok  {protection} ") for line in lines), result.stdout
    forked = next(line for line in lines if "forked kernels" in line)
    assert forked.startswith("ok  ") and "loopback only" in forked, forked  # probed, too
    assert lines[-1] == "sandbox auto -> bwrap"


PROTECTIONS = ("unprivileged uid", "seccomp", "read-only /proc", "keyring", "message cap")


def test_without_seccomp_the_check_says_why_and_runs_are_stamped_less_isolated(
    tmp_path: Path, data_dir: Path
) -> None:
    # libseccomp's bindings missing: an import that fails, as on a machine without them.
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in ("seccomp", "pyseccomp"):
        (stubs / f"{name}.py").write_text("raise ImportError('not installed here')\n")
    env = cli_env(PYTHONPATH=str(stubs))
    check = podium_cli("sandbox", "check", env=env)
    assert check.returncode == 0, check.stderr
    assert "--  seccomp          no libseccomp Python bindings (pip install pyseccomp)" in (
        check.stdout
    )
    out = tmp_path / "run"
    result = toy_run(out, data_dir, env=env)
    assert result.returncode == 0, result.stderr
    assert "warning: LESS ISOLATED: seccomp: no libseccomp Python bindings" in result.stderr
    gaps = ["seccomp: no libseccomp Python bindings (pip install pyseccomp)"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["isolation_gaps"] == gaps and summary["sandboxed"] is True
    assert json.loads((out / "grade.json").read_text())["isolation_gaps"] == gaps
    assert "less isolated: seccomp" in result.stdout


def test_check_explains_a_missing_bwrap_in_one_line(tmp_path: Path) -> None:
    result = podium_cli("sandbox", "check", env=cli_env(PATH=str(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert (
        "--  bubblewrap       bubblewrap is not installed (apt install bubblewrap)" in result.stdout
    )
    assert result.stdout.splitlines()[-1] == "sandbox auto -> local (NOT isolated)"


def test_run_prints_the_result_as_json(tmp_path: Path, public: Path) -> None:
    code = "import os\nprint(sorted(os.listdir('input')))\nopen('submission/submission.csv', 'w')"
    ws = tmp_path / "ws"
    result = sandbox_run(tmp_path, public, code, "--memory", "1G", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "ok" and data["sandbox"] == "bwrap" and data["sandboxed"] is True
    assert "['train.csv']" in data["output"]
    assert data["peak_memory_bytes"] > 10 * 2**20
    assert (ws / "submission.csv").is_file()  # handed over as the host's own file


THREADS = "import os\nprint('omp', os.environ.get('OMP_NUM_THREADS'))"


def test_run_sizes_the_kernels_thread_pools_as_a_run_does(tmp_path: Path, public: Path) -> None:
    """A kernel without a size would start one native thread per host core, whatever the share
    the user's process was given; ``--threads`` sets it, and by default it is the cores that
    this process may use (as a one-worker run's)."""
    given = sandbox_run(tmp_path, public, THREADS, "--threads", "1")
    assert given.returncode == 0, given.stderr
    assert "omp 1" in given.stdout, given.stdout
    default = sandbox_run(tmp_path, public, THREADS)
    assert default.returncode == 0, default.stderr
    cores = len(os.sched_getaffinity(0))
    assert f"omp {cores}" in default.stdout, default.stdout


def test_run_reports_a_killed_kernel_and_exits_non_zero(tmp_path: Path, public: Path) -> None:
    code = "x = bytearray(800 * 2**20)\nprint('unreachable')"
    result = sandbox_run(tmp_path, public, code, "--memory", "256M")
    assert result.returncode == 1
    assert "status died" in result.stdout
    assert "killed memory limit (256 MiB) exceeded" in result.stdout
    assert "Traceback" not in result.stderr


def test_run_says_why_a_submission_was_refused(tmp_path: Path, public: Path) -> None:
    code = "import os\nos.symlink('/etc/passwd', 'submission/submission.csv')\nprint('linked')"
    result = sandbox_run(tmp_path, public, code)
    assert result.returncode == 0, result.stderr  # the code ran; its submission is not kept
    assert "status ok" in result.stdout
    assert "submission refused:" in result.stdout and "link" in result.stdout, result.stdout
    assert not (tmp_path / "ws" / "submission.csv").exists()


def test_run_local_warns_that_nothing_is_isolated(tmp_path: Path, public: Path) -> None:
    result = sandbox_run(tmp_path, public, "print(2 + 2)", "--sandbox", "local")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("4\n")
    assert "--- local: NO isolation" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--memory", "lots"], "error: sandbox.memory: not a size; write e.g. 4G, 512M or none"),
        (["--sandbox", "docker"], "error: unknown sandbox 'docker'"),
    ],
)
def test_bad_options_are_one_line_errors(
    tmp_path: Path, public: Path, args: list[str], message: str
) -> None:
    result = sandbox_run(tmp_path, public, "1", *args)
    assert result.returncode == 2
    assert result.stderr.startswith(message), result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_file_is_a_one_line_error(tmp_path: Path, public: Path) -> None:
    result = podium_cli("sandbox", "run", str(tmp_path / "nope.py"), "--workspace",
                        str(tmp_path / "ws"), "--input", str(public))  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("error: file not found:")


def test_a_run_with_the_local_sandbox_is_stamped_unsandboxed(
    tmp_path: Path, data_dir: Path
) -> None:

    out = tmp_path / "run"
    result = toy_run(out, data_dir, "--sandbox", "local")
    assert result.returncode == 0, result.stderr
    assert "isolates nothing; this run is stamped sandboxed: false" in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sandboxed"] is False and summary["sandbox"] == "local"
    assert json.loads((out / "grade.json").read_text())["sandboxed"] is False


def test_solutions_run_in_the_interpreter_sandbox_python_names(
    tmp_path: Path, public: Path, user_venv: Path
) -> None:
    code = "import sys, platform\nprint(sys.prefix, platform.python_version())"
    python = str(user_venv / "bin" / "python")
    result = sandbox_run(tmp_path, public, code, "--python", python, "--json")
    assert result.returncode == 0, result.stderr
    expected = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout
    assert json.loads(result.stdout)["output"] == expected


def test_an_interpreter_without_ipykernel_stops_the_run_before_it_starts(
    tmp_path: Path, data_dir: Path
) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")],
                   check=True)  # fmt: skip
    python = tmp_path / "bare" / "bin" / "python"
    out = tmp_path / "run"
    result = toy_run(out, data_dir, "-o", f"sandbox.python={python}")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: the solutions' interpreter {python} cannot import ipykernel",
        f"hint: {python} -m pip install ipykernel",
    ]
    assert not out.exists()


def test_auto_falls_back_to_local_loudly_when_bwrap_is_missing(
    tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "run"
    env = cli_env(PATH=f"{Path(sys.executable).parent}:/nonexistent")
    result = toy_run(out, data_dir, env=env)
    assert result.returncode == 0, result.stderr
    assert "warning: no isolation: bubblewrap is not installed" in result.stderr
    assert json.loads((out / "summary.json").read_text())["sandboxed"] is False
