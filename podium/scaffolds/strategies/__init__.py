"""Builtin search strategies."""

from podium.scaffolds.strategies.greedy import Greedy, GreedyParams

__all__ = ["Greedy", "GreedyParams"]
