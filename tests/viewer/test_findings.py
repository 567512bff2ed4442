"""An analysis's findings as the viewer and ``podium show`` print them: one line of its summary,
and its ``ABLATION`` lines as a table against the baseline (the recorded run's analysis is
checked end to end in test_snapshot, test_show and the browser tests)."""

from __future__ import annotations

import pytest

from podium.viewer.findings import FINDINGS_LINE_CHARS, AblationRow, ablation_table, findings_line


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        ("Scaling matters: 0.81 -> 0.74.\nThe rest does not.", "Scaling matters: 0.81 -> 0.74."),
        ("  Is it the model?  Yes.", "Is it the model?"),
        (
            "ABLATION baseline: 0.81\nABLATION no text: 0.7\n",
            "ABLATION baseline: 0.81 ABLATION no text: 0.7",
        ),
        ("", ""),
    ],
)
def test_the_findings_line_is_the_first_sentence(summary: str, line: str) -> None:
    assert findings_line(summary) == line


def test_a_long_finding_is_cut_to_one_bounded_line() -> None:
    line = findings_line("word " * 1_000_000)  # megabytes, no sentence end
    assert len(line) == FINDINGS_LINE_CHARS and line.endswith("…") and "\n" not in line


def test_each_part_is_measured_against_the_baseline_wherever_it_is() -> None:
    output = (
        "fold 1 done\n"
        "ABLATION without text: 0.70\n"
        "  ABLATION   Baseline :  0.80\n"
        "ABLATION broken: nan\n"  # not a finite score: left out
        "ABLATION without  scaling: 0.85\n"
    )
    assert ablation_table(output) == [
        AblationRow("without text", 0.70, pytest.approx(-0.10)),
        AblationRow("Baseline", 0.80, None),
        AblationRow("without scaling", 0.85, pytest.approx(0.05)),
    ]


def test_without_a_baseline_the_first_line_is_it_and_no_lines_no_table() -> None:
    rows = ablation_table("ABLATION full: 0.9\nABLATION no model: 0.5\n")
    assert [(r.part, r.change) for r in rows] == [("full", None), ("no model", pytest.approx(-0.4))]
    assert ablation_table("VALIDATION_METRIC: 0.9\n") == []
