"""One file format for model answers: what ``scripted:`` reads, ``--replay`` matches against,
and ``podium calls export`` writes from a run's journal.

Each JSONL line is one answer. Only ``role`` and ``text`` or ``tool_call`` are needed to write
one by hand; an exported line also carries the request it answered (which ``--replay`` matches
on) and where it came from. A line with ``error`` replays a failed call (``fatal``: one that
stopped the run).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from podium.errors import ModelError, ModelFatalError, UserError
from podium.records import (
    CODE,
    Finish,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Role,
    ToolCall,
    Usage,
)


class RecordedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role = CODE
    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None
    finish: Finish = "stop"
    delay_s: float = 0.0
    error: str | None = None
    fatal: bool = False
    # Provenance, written by `podium calls export`; optional in hand-written files.
    request: ModelRequest | None = None
    model: str | None = None
    node_id: int | None = None
    seq: int | None = None
    latency_s: float | None = None
    attempts: int | None = None

    def response(self, model: str, latency_s: float, replayed: bool = False) -> ModelResponse:
        """The answer as a backend's response; raises the recorded failure, if it is one."""
        if self.error:
            kind = ModelFatalError if self.fatal else ModelError
            raise kind(self.error, provider=model.split("/", 1)[0].split(":", 1)[0])
        return ModelResponse(
            text=self.text,
            tool_call=self.tool_call,
            usage=(self.usage or Usage()).model_copy(update={"calls": 1}),
            latency_s=latency_s,
            model=model,
            finish=self.finish,
            replayed=replayed,
        )


def from_call(call: ModelCall, with_request: bool = True) -> RecordedAnswer:
    """A journal's call record as an answer line."""
    response = call.response
    return RecordedAnswer(
        role=call.role,
        text=response.text if response else "",
        tool_call=response.tool_call if response else None,
        usage=response.usage if response else None,
        finish=response.finish if response else "stop",
        error=None if response else (call.error or "the call failed"),
        fatal=call.fatal,
        request=call.request if with_request else None,
        model=call.model or (response.model if response else None),
        node_id=call.node_id,
        seq=call.seq,
        latency_s=response.latency_s if response else None,
        attempts=call.attempts,
    )


def to_jsonl(answers: list[RecordedAnswer]) -> str:
    return "".join(a.model_dump_json(exclude_defaults=True) + "\n" for a in answers)


def load(path: Path, what: str = "scripted model file") -> list[RecordedAnswer]:
    """Parse a JSONL answer file; a bad line is one clear error naming the file and line."""
    if not path.is_file():
        raise UserError(
            f"{what} not found: {path}",
            hint="one JSON answer per line, e.g. from: podium calls export RUN_DIR > FILE",
        )
    answers: list[RecordedAnswer] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            answers.append(RecordedAnswer.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{lineno}: not JSON: {exc.msg}") from None
        except ValidationError as exc:
            reason = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            raise UserError(f"{path}:{lineno}: not a valid answer: {reason}") from None
    return answers
