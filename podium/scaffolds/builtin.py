"""The scaffolds room's builtin plugin: the greedy strategy and the LLM operator set."""

from __future__ import annotations

from podium.plugins import OperatorSetSpec, StrategySpec, hookimpl
from podium.scaffolds import baseline, operators
from podium.scaffolds.strategies.greedy import Greedy, GreedyParams


@hookimpl
def podium_strategies() -> list[StrategySpec]:
    return [
        StrategySpec(
            name="greedy",
            create=Greedy,
            params=GreedyParams,
            description="AIDE: drafts, then debug buggy leaves or improve the best node",
        )
    ]


@hookimpl
def podium_operator_sets() -> list[OperatorSetSpec]:
    return [
        OperatorSetSpec(
            name="llm",
            create=operators.create,
            description="draft / improve / debug prompts to the code model",
        ),
        OperatorSetSpec(
            name="baseline",
            create=baseline.create,
            description="--model baseline: writes scikit-learn solutions itself (no key)",
            model=baseline.MODEL_NAME,
        ),
    ]
