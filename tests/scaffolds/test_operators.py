"""What the LLM operators send again after a context-length error."""

from __future__ import annotations

from podium.scaffolds.operators import SHORT_OUTPUT_CHARS, SHORT_PREVIEW_CHARS, shortened


def test_shortened_drops_memory_and_cuts_preview_and_output_but_keeps_task_and_code() -> None:
    values = {
        "task_description": "d" * 20_000,
        "parent_code": "c" * 20_000,
        "data_preview": "p" * 20_000,
        "parent_output": "o" * 20_000,
        "memory": "m" * 4000,
        "debug_history": "h" * 4000,
    }
    short = shortened(values)
    assert short["task_description"] == values["task_description"]
    assert short["parent_code"] == values["parent_code"]
    assert short["memory"].startswith("(left out") and short["debug_history"].startswith("(left")
    assert len(short["data_preview"]) < SHORT_PREVIEW_CHARS + 50
    assert len(short["parent_output"]) < SHORT_OUTPUT_CHARS + 50
    assert short["parent_output"].endswith("o" * 100)  # the end of the output is what matters
    assert shortened({"data_preview": "small", "memory": ""})["data_preview"] == "small"
