"""One way to run a solution: the loop (each node, and the top-k re-runs), ``podium rerun`` and
``podium sandbox run`` all execute through :func:`podium.scaffolds.execute_solution`, so each
reports what the loop records: the same output cap, the same masking of secrets, the same failed
result when the sandbox itself fails. The paths are driven for real (kernels, the CLI); the
function under test is never replaced."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

import podium
from podium.api.rerun import rerun_node
from podium.benchmarks.folder import FolderTask
from podium.errors import SandboxError
from podium.formats import Journal
from podium.interfaces import Limits, Sandbox, Workspace
from podium.records import EnvironmentInfo, ExecResult, ExecStatus
from podium.scaffolds import execute_solution
from tests.support import cli_env, node_answers, podium_cli, run_config, solution, write_script

# Known to Podium by its variable's secret-looking name, so masked wherever Podium prints it.
SECRET_ENV = "EXECUTION_TEST_TOKEN"
SECRET = "sk-execution-PLANTED-3c9e1a7f"
# Built at run time: the model's answer holds no secret for the gateway to mask on the way in.
PRINTS_SECRET = 'print("key:", "sk-execution-" + "PLANTED-3c9e1a7f")'
LOUD = f'{PRINTS_SECRET}\nprint("x" * 200_000)'  # past the default 64 KiB cap: head + tail kept
DEFAULT_CAP = 64 * 1024


@pytest.mark.slow
@pytest.mark.timeout(900)  # six kernels and a CLI process: slow on a loaded machine
def test_the_loop_rerun_and_sandbox_run_give_the_same_capped_masked_output(
    tmp_path: Path, data_dir: Path, toy_task: FolderTask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    code = solution(0.8, extra=LOUD)
    script = write_script(tmp_path / "s.jsonl", [node_answers(code), node_answers(code)])
    search = {"num_drafts": 2, "final_top_k": 2}  # both good nodes re-run before the choice
    result = podium.run(run_config(script, tmp_path / "run", data_dir, steps=2, search=search))
    run_dir = result.run_dir
    journal = Journal.open(run_dir / "journal.sqlite")
    recorded = journal.nodes()[0].exec
    journal.close()
    assert recorded is not None and recorded.output_truncated

    top_k = (run_dir / "nodes" / "1" / "rerun" / "output.txt").read_text()
    report = rerun_node(run_dir, 1)
    rerun = (Path(report.rerun_dir) / "output.txt").read_text()
    by_hand = podium_cli(
        "sandbox", "run", str(run_dir / "nodes" / "1" / "solution.py"), "--workspace",
        str(tmp_path / "ws"), "--input", str(toy_task.public_dir), "--json",
        env=cli_env(**{SECRET_ENV: SECRET}), timeout=600,
    )  # fmt: skip
    assert by_hand.returncode == 0, by_hand.stderr
    sandbox_run = json.loads(by_hand.stdout)["output"]

    outputs = {"loop": recorded.output, "top-k re-run": top_k, "podium rerun": rerun,
               "podium sandbox run": sandbox_run}  # fmt: skip
    for where, output in outputs.items():
        assert SECRET not in output, where
        assert output.startswith("key: ***\n"), where
        assert "bytes of output omitted ...]" in output, where
        assert len(output.encode()) < DEFAULT_CAP + 100, where
        assert "\nVALIDATION_METRIC: 0.8\n" in output[-100:], where  # the tail is kept
    assert len(set(outputs.values())) == 1  # one function: the very same text everywhere
    assert report.output_identical and report.reproduced


BROKEN_SANDBOX = '''\
from podium.errors import SandboxError
from podium.interfaces import Sandbox
from podium.plugins import SandboxSpec, hookimpl
from podium.records import EnvironmentInfo


class Broken(Sandbox):
    """Starts no kernel: every execution fails in the sandbox, its error naming a key."""

    name, isolated = "broken", False

    def __init__(self, options):
        pass

    async def environment(self):
        return EnvironmentInfo(python_version="3.12")

    async def execute(self, code, workspace, limits):
        raise SandboxError("no kernel for key " + "sk-execution-" + "PLANTED-3c9e1a7f")


@hookimpl
def podium_sandboxes():
    return [SandboxSpec(name="broken", create=Broken, isolated=False)]
'''


def test_a_failing_sandbox_gives_the_loop_and_rerun_the_same_failed_result(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop records a sandbox failure as a failed node (and stops the run after a few in a
    row); ``podium rerun`` on the same sandbox reports the very same result."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    plugin = tmp_path / "broken_sandbox.py"
    plugin.write_text(BROKEN_SANDBOX)
    script = write_script(tmp_path / "s.jsonl", [node_answers(solution(0.8))] * 4)
    config = run_config(script, tmp_path / "run", data_dir, steps=4, search={"num_drafts": 4},
                        sandbox={"name": "broken"}, plugins=[str(plugin)])  # fmt: skip
    result = podium.run(config)
    assert result.summary["stop_reason"] == "error"
    assert "the sandbox failed 3 times" in result.summary["error"]
    journal = Journal.open(result.run_dir / "journal.sqlite")
    recorded = journal.nodes()[0].exec
    journal.close()
    assert recorded is not None and recorded.status is ExecStatus.DIED
    assert recorded.output == "SandboxError: no kernel for key ***\n"  # masked, like any output

    report = rerun_node(result.run_dir, 1)
    assert (Path(report.rerun_dir) / "output.txt").read_text() == recorded.output
    assert report.status_now == "died" and report.error_now == recorded.error_line
    assert report.reproduced


class FailingSandbox(Sandbox):
    """A sandbox that cannot start a kernel; counts its closes."""

    name, isolated = "failing", False

    def __init__(self) -> None:
        self.closed = 0

    async def environment(self) -> EnvironmentInfo:
        return EnvironmentInfo(python_version="3.12")

    async def execute(self, code: str, workspace: Workspace, limits: Limits) -> ExecResult:
        raise SandboxError(f"no kernel for key {SECRET}")

    async def aclose(self) -> None:
        self.closed += 1


def run(
    box: Sandbox,
    tmp_path: Path,
    on_sandbox_error: Callable[[SandboxError], None] | None = None,
    close_sandbox: bool = False,
) -> ExecResult:
    return asyncio.run(
        execute_solution(
            box,
            "1",
            Workspace(tmp_path, tmp_path),
            timeout_s=5,
            max_output_bytes=1024,
            on_sandbox_error=on_sandbox_error,
            close_sandbox=close_sandbox,
        )
    )


def test_a_sandbox_failure_is_a_masked_failed_result_and_the_caller_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    box, told = FailingSandbox(), list[SandboxError]()
    result = run(box, tmp_path, on_sandbox_error=told.append)
    assert result.status is ExecStatus.DIED and result.error_name == "SandboxError"
    assert result.error_value == "no kernel for key ***"
    assert result.killed_reason == "sandbox error: no kernel for key ***"
    assert [str(e) for e in told] == [f"no kernel for key {SECRET}"]
    assert box.closed == 0  # a shared sandbox is its owner's to close


def test_the_caller_may_raise_instead_and_a_one_off_sandbox_is_closed_anyway(
    tmp_path: Path,
) -> None:
    def stop(exc: SandboxError) -> None:
        raise RuntimeError("stop the run") from exc

    box = FailingSandbox()
    with pytest.raises(RuntimeError, match="stop the run"):
        run(box, tmp_path, on_sandbox_error=stop, close_sandbox=True)
    assert box.closed == 1
