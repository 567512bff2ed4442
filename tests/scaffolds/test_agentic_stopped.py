"""An agentic node whose kernel was killed between cells (a limit passed while the model took its
turn) and that then finished without another cell: the node's result is that death, not the
``ok`` of its last cell (``tests/sandbox/test_attacks_session.py`` kills such kernels)."""

from __future__ import annotations

from podium.formats.notebook import Notebook
from podium.interfaces import KernelSession, Limits
from podium.records import ExecResult, ExecStatus
from podium.sandbox.kernel import limit_result
from podium.scaffolds.agentic import _Conversation, _result

REASON = "workspace size limit (100 MiB)"


class _Stopped(KernelSession):
    """A session whose kernel was killed between cells (or not, with ``stop`` None)."""

    def __init__(self, stop: ExecResult | None) -> None:
        self.limits, self.stop = Limits(60.0, 65536), stop

    @property
    def alive(self) -> bool:
        return self.stop is None

    @property
    def stopped_between_cells(self) -> ExecResult | None:
        return self.stop

    async def run_cell(self, code: str, timeout_s: float) -> ExecResult:
        raise AssertionError("no cell runs here")

    async def close(self) -> str | None:
        return None


def _talk(*statuses: ExecStatus) -> _Conversation:
    notebook = Notebook()
    for turn, status in enumerate(statuses):
        notebook.add_cell("print(1)", ExecResult(status=status, output="1\n"), turn)
    return _Conversation([], notebook, [])


def test_a_node_that_finished_after_its_kernel_was_stopped_between_cells_died_of_it() -> None:
    talk = _talk(ExecStatus.OK, ExecStatus.OK)
    stop = limit_result(REASON, "(this cell did not run)\n", 0.5)
    result = _result(talk, _Stopped(stop), None)
    assert result.status is ExecStatus.DIED and result.killed_reason == REASON
    assert result.error_line == f"ResourceLimitExceeded: {REASON}"
    assert f"[the node ended: the kernel was stopped between cells ({REASON})]" in result.output
    assert talk.ending is not None and REASON in talk.ending  # the notebook's metadata says so


def test_a_stop_a_cell_already_reported_and_a_session_never_stopped_change_nothing() -> None:
    stop = limit_result(REASON, "", 0.5)
    told = _talk(ExecStatus.OK, ExecStatus.DIED)  # the next cell's result said it
    assert _result(told, _Stopped(stop), None) == told.notebook.result(None, None, 65536)
    assert told.ending is None
    calm = _talk(ExecStatus.OK)
    assert _result(calm, _Stopped(None), None).status is ExecStatus.OK
