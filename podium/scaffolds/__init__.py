"""The agent: the search loop, its journal and run directory, operators, review, strategies."""

from podium.interfaces import SUBMISSION
from podium.scaffolds.data_preview import count_rows
from podium.scaffolds.journal import SCHEMA_VERSION, Journal
from podium.scaffolds.loop import (
    LoopSettings,
    Outcome,
    RunEvents,
    Search,
    SearchParts,
    sandbox_failure,
    submission_problem,
)
from podium.scaffolds.operators import LLMOperators
from podium.scaffolds.parsing import extract as extract_plan_and_code
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.prompts import validate_overrides as validate_prompt_overrides
from podium.scaffolds.review import metric_from_output
from podium.scaffolds.rundir import RunDir
from podium.scaffolds.strategies import Greedy, GreedyParams

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
    "Search",
    "SearchParts",
    "count_rows",
    "extract_plan_and_code",
    "metric_from_output",
    "sandbox_failure",
    "submission_problem",
    "validate_prompt_overrides",
]
