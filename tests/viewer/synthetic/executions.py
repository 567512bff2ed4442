"""Running a solution (:func:`execute`): what it printed (``output.py``), ended the way its
bug ends it: an IPython traceback (``tracebacks.py``), at the end of the output too, a timeout,
a kernel killed at the memory limit, a missing submission, a review that calls the score
leaked, or a clean end; with the result the sandbox records and the review's verdict.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from podium.records import ExecResult, ExecStatus
from podium.scaffolds.operators import format_duration
from tests.viewer.synthetic.changes import Proposal, metric_value
from tests.viewer.synthetic.output import Printed, printed_by
from tests.viewer.synthetic.programs import BASE_FEATURES, FAMILIES, FEATURES, Code, Program
from tests.viewer.synthetic.task import (
    EXEC_TIMEOUT_S,
    MEMORY_LIMIT,
    TEST_ROWS,
    TRAIN_ROWS,
    TaskText,
)
from tests.viewer.synthetic.tracebacks import (
    GB_INTERRUPT,
    HGB_INTERRUPT,
    NAN_MESSAGE,
    RAISERS,
    cell_frame,
    traceback_text,
)


@dataclass(frozen=True)
class Execution:
    """What running a program gave: the result, and what the review makes of it."""

    result: ExecResult
    metric: float | None  # what its VALIDATION_METRIC line says, if it printed one
    has_submission: bool
    bug_reason: str | None
    summary: str


def execute(proposal: Proposal, code: Code, rng: random.Random, task: TaskText) -> Execution:
    """Run ``code`` the way the sandbox would have: its output, its failure, its timings."""
    program = proposal.program
    kind = program.bug.kind if program.bug else None
    value = metric_value(0.97 + 0.02 * rng.random(), task) if kind == "leak" else None
    value = value if value is not None else metric_value(proposal.quality, task)
    printed = printed_by(program, code, value, rng, task)
    ends = _ENDINGS.get(kind or "", _ok)
    run = ends(program, code, printed, value, rng, task)
    if kind is None:  # the review says what was tried, then what came of it
        run = replace(run, summary=f"{_first_sentence(proposal.plan)} {run.summary}")
    return run


def _first_sentence(text: str) -> str:
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


Ending = Callable[[Program, Code, Printed, float, random.Random, TaskText], Execution]


def _ok(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    family = FAMILIES[p.family]
    summary = (
        f"With {family.label}, {p.folds}-fold stratified CV on "
        f"{len(BASE_FEATURES) + len(p.extras)} features gives a CV {task.metric_name} of "
        f"{value:.5f}; the submission was written and passes validate()."
    )
    result = _result(ExecStatus.OK, printed.text, printed.seconds, rng)
    return Execution(result, value, True, None, summary)


def _reviewed_bug(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    """Ran to the end, yet buggy: no submission where it belongs, or a leaked score."""
    assert p.bug is not None
    result = _result(ExecStatus.OK, printed.text, printed.seconds, rng)
    if p.bug.kind == "no_submission":
        summary = (
            f"The CV {task.metric_name} is {value:.5f}, but the submission was written to "
            "./submission.csv instead of ./submission/submission.csv, and validate() reports "
            "it missing."
        )
        return Execution(result, value, False, "no submission/submission.csv was written", summary)
    summary = (
        "The model is fit on the whole training set inside the CV loop (model.fit(X, y)), so "
        f"every validation fold was seen in training: the CV {task.metric_name} of {value:.5f} "
        "is leaked and not a trustworthy estimate."
    )
    return Execution(result, value, True, f"review: {summary}", summary)


def _memory(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    reason = f"memory limit ({MEMORY_LIMIT}) exceeded"
    output = (
        f"{printed.text}\nKernelDied: kernel died (signal SIGKILL) during execution\n"
        f"MemoryLimitExceeded: {reason}\n"
    )
    result = _result(ExecStatus.DIED, output, rng.uniform(20, 90), rng).model_copy(
        update={
            "error_name": "MemoryLimitExceeded",
            "error_value": reason,
            "killed_reason": reason,
            "peak_memory_bytes": 8 * 1024**3,
        }
    )
    summary = (
        "The kernel was killed at the memory limit while building the pairwise-distance "
        f"feature: an N x N x F array for {TRAIN_ROWS:,} rows does not fit in {MEMORY_LIMIT}. "
        "Nothing was trained."
    )
    return Execution(result, None, False, f"the kernel died ({reason})", summary)


def _timeout(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    frames = HGB_INTERRUPT if p.family == "HistGradientBoostingClassifier" else GB_INTERRUPT
    tb = traceback_text("KeyboardInterrupt", "", [cell_frame(code, code.marks["fit"])], frames)
    output = (
        f"{printed.text}{tb}\n\nTimeoutError: execution exceeded "
        f"{EXEC_TIMEOUT_S:g} s and was stopped\n"
    )
    result = _result(ExecStatus.TIMEOUT, output, EXEC_TIMEOUT_S + 3.0, rng).model_copy(
        update={
            "error_name": "TimeoutError",
            "error_value": "timeout",
            "traceback": tb,
            "killed_reason": "timeout",
            "timed_out": True,
        }
    )
    slow = ", ".join(f"{k}={p.param(k)}" for k, _ in FAMILIES[p.family].slow)
    summary = (
        f"The run did not finish: {FAMILIES[p.family].label} with {slow} was still training "
        f"fold {printed.fold} of {p.folds} when the {format_duration(EXEC_TIMEOUT_S)} limit "
        "stopped it. No score, no submission."
    )
    return Execution(result, None, False, "timed out (timeout)", summary)


def _raised(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    """The solution raised: the kernel's traceback, at the end of the output too."""
    assert p.bug is not None
    name, message, summary = _error(p, value, task)
    tb = RAISERS[p.bug.kind](p, code, name, message)
    result = _result(ExecStatus.ERROR, f"{printed.text}{tb}\n", printed.seconds, rng)
    result = result.model_copy(update={"error_name": name, "error_value": message, "traceback": tb})
    metric = value if p.bug.kind in ("name", "length") else None
    return Execution(result, metric, False, f"{name}: {message}", summary)


def _error(p: Program, value: float, task: TaskText) -> tuple[str, str, str]:
    """The exception a bug raises (name, message) and the review's summary of it."""
    assert p.bug is not None
    kind, score = p.bug.kind, f"CV {task.metric_name} {value:.5f}"
    if kind == "key_error":
        user = next(n for n in p.extras if FEATURES[n].needs == p.bug.key)
        return (
            "KeyError",
            f"'{p.bug.key}'",
            (
                f"The run stopped in add_features with KeyError: '{p.bug.key}': the {user} feature "
                "reads a column that is never created. No validation score or submission."
            ),
        )
    if kind == "strings":
        return (
            "ValueError",
            "could not convert string to float: 'male'",
            (
                "model.fit failed at once: Sex is not in CATEGORICAL, so the column reaches the "
                "model as text. Nothing was trained or scored."
            ),
        )
    if kind == "nan":
        return (
            "ValueError",
            NAN_MESSAGE,
            (
                "LogisticRegression refused the training data: Age still holds NaN because the "
                "imputation line is missing. No score, no submission."
            ),
        )
    if kind == "name":
        return (
            "NameError",
            "name 'test_preds' is not defined",
            (
                f"Training and validation ran ({score}), then the submission step failed with "
                "NameError: the predictions are in test_pred, not test_preds. No submission."
            ),
        )
    return (
        "ValueError",
        f"Length of values ({TRAIN_ROWS}) does not match length of index ({TEST_ROWS})",
        (
            f"Training and validation ran ({score}), but the submission took the out-of-fold "
            f"predictions ({TRAIN_ROWS} rows) instead of the test predictions ({TEST_ROWS}). "
            "No submission."
        ),
    )


def _result(status: ExecStatus, output: str, seconds: float, rng: random.Random) -> ExecResult:
    return ExecResult(
        status=status,
        output=output,
        output_bytes=len(output.encode()),
        duration_s=round(seconds, 3),
        kernel_start_s=round(rng.uniform(0.01, 0.3), 3),
        peak_memory_bytes=int(rng.uniform(0.4, 2.5) * 1024**3),
    )


_ENDINGS: dict[str, Ending] = {
    "no_submission": _reviewed_bug,
    "leak": _reviewed_bug,
    "memory": _memory,
    "timeout": _timeout,
    **dict.fromkeys(("key_error", "strings", "nan", "name", "length"), _raised),
}
