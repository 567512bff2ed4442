"""The agent: the search loop, its journal and run directory, operators, review, strategies."""

from podium.interfaces import SUBMISSION
from podium.scaffolds import run_files
from podium.scaffolds.data_preview import count_rows
from podium.scaffolds.execution import execute_solution, sandbox_failure
from podium.scaffolds.journal import SCHEMA_VERSION, Journal
from podium.scaffolds.loop import (
    LoopSettings,
    Outcome,
    RunEvents,
    Search,
    SearchParts,
    submission_problem,
)
from podium.scaffolds.operators import LLMOperators
from podium.scaffolds.parsing import extract as extract_plan_and_code
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.prompts import validate_overrides as validate_prompt_overrides
from podium.scaffolds.recorded_calls import load_recorded, recorded_models
from podium.scaffolds.review import metric_from_output
from podium.scaffolds.run_files import (
    RunFileError,
    RunSummary,
    SummaryGrade,
    SummaryUsage,
    UsageTotals,
)
from podium.scaffolds.rundir import RunDir
from podium.scaffolds.strategies import Greedy, GreedyParams
from podium.scaffolds.summary import build_summary

__all__ = [
    "SCHEMA_VERSION",
    "SUBMISSION",
    "Greedy",
    "GreedyParams",
    "Journal",
    "LLMOperators",
    "LoopSettings",
    "Outcome",
    "Prompts",
    "RunDir",
    "RunEvents",
    "RunFileError",
    "RunSummary",
    "Search",
    "SearchParts",
    "SummaryGrade",
    "SummaryUsage",
    "UsageTotals",
    "build_summary",
    "count_rows",
    "execute_solution",
    "extract_plan_and_code",
    "load_recorded",
    "metric_from_output",
    "recorded_models",
    "run_files",
    "sandbox_failure",
    "submission_problem",
    "validate_prompt_overrides",
]
