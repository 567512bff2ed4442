"""The scaffolds room's builtin plugin: the search strategies and the operator sets."""

from __future__ import annotations

from podium.plugins import OperatorSetSpec, StrategySpec, hookimpl
from podium.scaffolds import agentic, baseline, operators
from podium.scaffolds.strategies.evolutionary import Evolutionary, EvolutionaryParams
from podium.scaffolds.strategies.greedy import Greedy, GreedyParams
from podium.scaffolds.strategies.mcgs import MCGS, MCGSParams
from podium.scaffolds.strategies.mcts import MCTS, MCTSParams
from podium.scaffolds.strategies.one_draft import OneDraft
from podium.scaffolds.strategies.random_search import RandomSearch
from podium.scaffolds.strategies.refine import Refine, RefineParams


@hookimpl
def podium_strategies() -> list[StrategySpec]:
    return [
        StrategySpec(
            name="greedy",
            create=Greedy,
            params=GreedyParams,
            description="AIDE: drafts, then debug buggy leaves or improve the best node",
        ),
        StrategySpec(
            name="mcts",
            create=MCTS,
            params=MCTSParams,
            description="UCT over normalised metrics; buggy children get a debug cycle",
        ),
        StrategySpec(
            name="evolutionary",
            create=Evolutionary,
            params=EvolutionaryParams,
            description="a population bred by fitness-softmax selection, crossover and improve",
        ),
        StrategySpec(
            name="refine",
            create=Refine,
            params=RefineParams,
            description="MLE-STAR: ablate each solution, refine the block that matters, ensemble",
        ),
        StrategySpec(
            name="mcgs",
            create=MCGS,
            params=MCGSParams,
            description="MLEvolve: graph search over branches, fusion and aggregation by refs",
        ),
        StrategySpec(
            name="random",
            create=lambda _: RandomSearch(),
            description="uniformly random valid actions (the control in comparisons)",
        ),
        StrategySpec(
            name="one-draft",
            create=lambda _: OneDraft(),
            description="one draft, no search (the floor in comparisons: what search adds)",
        ),
    ]


@hookimpl
def podium_operator_sets() -> list[OperatorSetSpec]:
    return [
        OperatorSetSpec(
            name="llm",
            create=operators.create,
            description="draft / improve / debug / crossover / ensemble / ablate / refine prompts "
            "to the code model",
        ),
        OperatorSetSpec(
            name="agentic",
            create=agentic.create,
            description="the code model works in the node's own kernel, cell by cell (tools)",
        ),
        OperatorSetSpec(
            name="baseline",
            create=baseline.create,
            description="--model baseline: writes scikit-learn solutions itself (no key)",
            model=baseline.MODEL_NAME,
        ),
    ]
