"""Builtin search strategies: policies only; the loop, operators and journal are shared."""

from podium.scaffolds.strategies.evolutionary import Evolutionary, EvolutionaryParams
from podium.scaffolds.strategies.greedy import Greedy, GreedyParams
from podium.scaffolds.strategies.mcgs import MCGS, MCGSParams
from podium.scaffolds.strategies.mcts import MCTS, MCTSParams
from podium.scaffolds.strategies.one_draft import OneDraft
from podium.scaffolds.strategies.random_search import RandomSearch
from podium.scaffolds.strategies.refine import Refine, RefineParams

__all__ = [
    "MCGS",
    "MCTS",
    "Evolutionary",
    "EvolutionaryParams",
    "Greedy",
    "GreedyParams",
    "MCGSParams",
    "MCTSParams",
    "OneDraft",
    "RandomSearch",
    "Refine",
    "RefineParams",
]
