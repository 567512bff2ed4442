"""Running a solution's code: the one way Podium executes code in a directory.

The search loop runs each node (and, with ``search.final_top_k`` > 1, re-runs the best ones);
``podium rerun`` runs a recorded node again; ``podium sandbox run`` runs a file by hand. All of
them call :func:`execute_solution`, so what a rerun or a hand run reports is what the loop would
have recorded *by construction*: the same output cap, the same masking of secrets, the same
failed result when the sandbox itself fails. What differs between them is an explicit argument:
the workspace (where, and whether ``working/`` is kept), the timeout (the loop's shrinks with
its time budget), what a sandbox failure means to the caller (``on_sandbox_error``), and who
owns the sandbox (``close_sandbox``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from podium.errors import SandboxError
from podium.interfaces import KernelSession, Limits, Sandbox, Workspace
from podium.records import ExecResult, ExecStatus
from podium.redact import redact, redact_output


async def execute_solution(
    sandbox: Sandbox,
    code: str,
    workspace: Workspace,
    *,
    timeout_s: float,
    max_output_bytes: int,
    on_sandbox_error: Callable[[SandboxError], None] | None = None,
    close_sandbox: bool = False,
) -> ExecResult:
    """Run ``code`` on a fresh kernel of ``sandbox`` in ``workspace``; never raises for the
    solution's failures, nor for the sandbox's.

    The result is what a run records: ``output`` capped at ``max_output_bytes`` (head and tail,
    by the sandbox), and every text field with the secrets Podium knows masked (:func:`masked`).
    Both limits are required, never defaulted: the cap is the run's ``exec.max_output_bytes``,
    not :class:`~podium.interfaces.Limits`' own default.

    A :class:`SandboxError` (no kernel could start, one was lost) becomes a failed result
    (:func:`sandbox_failure`, masked too). ``on_sandbox_error`` is told of it first and may
    raise instead: the loop counts them and stops the run after a few in a row, since a
    sandbox that cannot start kernels would fail every node.

    ``close_sandbox``: the sandbox was made for this one execution (``podium rerun``,
    ``podium sandbox run``) and is closed after it, whatever happened; the loop's sandbox is
    shared by every node and closed by its owner at the end of the run.

    ``workspace.on_output`` (the output so far, while the solution runs) is told the text
    masked as the result will be (:func:`masked_listener`): what a reader sees live is what
    the run records, secrets included.
    """
    limits = Limits(timeout_s=timeout_s, max_output_bytes=max_output_bytes)
    if workspace.on_output is not None:
        workspace = dataclasses.replace(workspace, on_output=masked_listener(workspace.on_output))
    try:
        result = await sandbox.execute(code, workspace, limits)
    except SandboxError as exc:
        if on_sandbox_error is not None:
            on_sandbox_error(exc)
        result = sandbox_failure(exc)
    finally:
        if close_sandbox:
            await sandbox.aclose()
    return masked(result)


async def open_kernel_session(
    sandbox: Sandbox, workspace: Workspace, *, timeout_s: float, max_output_bytes: int
) -> KernelSession:
    """A kernel of ``sandbox`` in ``workspace`` kept across cells (an agentic node's), with
    what :func:`execute_solution` guarantees for each cell: the same output cap, every
    result and the live output masked. ``timeout_s`` is the most one cell may run. A
    :class:`SandboxError` (no kernel could start) is raised: the caller counts it."""
    limits = Limits(timeout_s=timeout_s, max_output_bytes=max_output_bytes)
    if workspace.on_output is not None:
        workspace = dataclasses.replace(workspace, on_output=masked_listener(workspace.on_output))
    return _MaskedSession(await sandbox.open_session(workspace, limits))


class _MaskedSession(KernelSession):
    def __init__(self, inner: KernelSession) -> None:
        self.inner, self.limits = inner, inner.limits

    @property
    def alive(self) -> bool:
        return self.inner.alive

    @property
    def stopped_between_cells(self) -> ExecResult | None:
        stopped = self.inner.stopped_between_cells
        return masked(stopped) if stopped is not None else None

    async def run_cell(self, code: str, timeout_s: float) -> ExecResult:
        return masked(await self.inner.run_cell(code, timeout_s))

    async def close(self) -> str | None:
        refused = await self.inner.close()
        return redact(refused) if refused else refused


def masked(result: ExecResult) -> ExecResult:
    """The result with every secret Podium knows replaced by ``***``: a solution under a weak
    sandbox (``local``) can read the host's environment and print a key."""
    fields = ("error_value", "traceback", "killed_reason", "submission_refused")
    update = {f: redact(v) for f in fields if isinstance(v := getattr(result, f), str)}
    return result.model_copy(update={**update, "output": redact_output(result.output)})


def masked_listener(listener: Callable[[str], None]) -> Callable[[str], None]:
    """``listener``, told the output so far with secrets masked as :func:`masked` masks the
    result's ``output`` (the text a sandbox tells is the result's, inert already)."""

    def tell(text: str) -> None:
        listener(redact_output(text))

    return tell


def sandbox_failure(exc: SandboxError) -> ExecResult:
    """The result of an execution the sandbox could not carry out (no kernel, a lost one)."""
    return ExecResult(
        status=ExecStatus.DIED, error_name="SandboxError", error_value=str(exc),
        output=f"SandboxError: {exc}\n", killed_reason=f"sandbox error: {exc}",
    )  # fmt: skip
