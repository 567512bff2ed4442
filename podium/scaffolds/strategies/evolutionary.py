"""aira-dojo's evolutionary policy: a population bred by improve and crossover.

One of the builtin strategies compared in docs/strategies.md. The rules, in the order
``next_action`` applies them:

1. **Drafting (generation 1).** While fewer than ``population`` drafts exist, counting drafts
   handed to other workers, draft.
2. **Debugging.** Then, with probability ``debug_prob`` (1.0 by default: always), debug a
   uniformly chosen buggy leaf that has code, whose debug depth is at most ``max_debug_depth``
   and that no other worker is debugging, exactly as AIDE's greedy policy does. Buggy children
   (and buggy drafts) are thus fixed before breeding continues.
3. **Nothing to breed from.** With an empty population, draft again.
4. **Breeding.** Otherwise breed from the population. In generation 2 and later, when the
   population holds at least two members, the step is a ``crossover`` with probability
   ``crossover_prob``: two distinct parents are drawn by their selection weights (the second
   among the members other than the first, weights renormalised), the fitter parent first
   (the older member on a tie). Otherwise it is an ``improve`` of one parent drawn by its
   selection weight.

**Fitness and selection.** A member's fitness is its validation metric min–max normalised over
the population to [0, 1], 1 for the best member and 0 for the worst (when lower is better,
the lowest value scores 1); when all members have the same metric every fitness is 1. Selection
weights are ``softmax(fitness / temperature)``: ``w_i = exp(f_i / T) / sum_j exp(f_j / T)``.
A lower temperature makes the choice greedier; ``weights()`` shows them.

**Admission.** Every good node (a draft, a child, or a debug fix of either) is a candidate
when it finishes. While the population holds fewer than ``population`` members, candidates
are admitted unconditionally (so generation 1 is normally the good drafts). Once it is full, a
candidate is admitted if its metric is at least the average metric of the members (direction
aware, up to float rounding; the same as comparing fitness normalised as above), and then it
evicts the worst member (on a tie, the one admitted first). A candidate below the average
stays in the tree but never becomes a parent.

**Generations.** ``generation = 1 + max(0, admissions - population) // population``, where
``admissions`` counts every node ever admitted. Generation 1 is the founding population (the
first ``population`` admissions); each further ``population`` admissions — a population's worth
of children that earned their place — starts the next generation, so crossover begins once the
founders could have been replaced once. With ``population = 8``: admissions 1–15 are generation
1, the 16th admission starts generation 2, the 24th generation 3.

**Concurrency.** Actions handed to other workers (``tree.pending``) are avoided when an
alternative exists: a leaf being debugged is not debugged again; an improve draws its parent
among the members no other worker is improving (among all members when every one is); a
crossover draws among pairs no other worker is crossing (either order), and becomes an improve
when every pair is taken. Drafts are all alike and are not deduplicated.

**Final node.** The best good node by validation metric (``tree.best_node()``).

Crossover needs an operator set that offers it (the ``llm`` and ``baseline`` sets do); with
another set, use ``crossover_prob = 0``.

The state (the members, their metrics, the admission count) depends only on the finished nodes
given to ``observe``, in order, so replaying them on resume restores it exactly.
"""

from __future__ import annotations

import math
import random

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.records import Action, Metric, Node
from podium.scaffolds.strategies.greedy import draft_or_debug
from podium.tree import SearchTree


class EvolutionaryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    population: int = Field(
        8, ge=1, description="population size; generation 1 is this many drafts"
    )
    temperature: float = Field(
        1.0,
        gt=0.0,
        allow_inf_nan=False,
        description="softmax temperature over normalised fitness (lower: greedier selection)",
    )
    crossover_prob: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="chance that a breeding step is a crossover (from generation 2 on)",
    )
    debug_prob: float = Field(
        1.0, ge=0.0, le=1.0, description="chance to debug a buggy leaf before breeding"
    )
    max_debug_depth: int = Field(
        3, ge=0, description="debug a leaf only while its debug depth is <= this"
    )


class Evolutionary(Strategy):
    """aira-dojo's evolutionary search: fitness-softmax selection, improve and crossover."""

    name = "evolutionary"
    Params = EvolutionaryParams

    def __init__(self, params: EvolutionaryParams | None = None) -> None:
        self.params = params or EvolutionaryParams()
        self._members: list[int] = []  # node ids, in admission order (oldest first)
        self._score: dict[int, float] = {}  # member id → its metric's Direction.score
        self._admissions = 0

    # --- inspection -----------------------------------------------------------------------

    @property
    def members(self) -> tuple[int, ...]:
        """The population's node ids, oldest admission first."""
        return tuple(self._members)

    @property
    def admissions(self) -> int:
        """How many nodes have ever been admitted to the population."""
        return self._admissions

    @property
    def generation(self) -> int:
        size = self.params.population
        return 1 + max(0, self._admissions - size) // size

    def fitness(self) -> dict[int, float]:
        """Each member's metric min–max normalised over the population: 1 best, 0 worst."""
        if not self._members:
            return {}
        scores = [self._score[m] for m in self._members]
        low, high = min(scores), max(scores)
        if high == low:
            return dict.fromkeys(self._members, 1.0)
        return {m: (self._score[m] - low) / (high - low) for m in self._members}

    def weights(self) -> dict[int, float]:
        """Each member's selection probability: softmax(fitness / temperature)."""
        return _softmax(self.fitness(), self._members, self.params.temperature)

    # --- learning -------------------------------------------------------------------------

    def observe(self, node: Node, tree: SearchTree) -> None:
        metric = node.metric
        if not node.is_good or metric is None or not Metric.usable(metric.value):
            return
        if node.id in self._score:
            return
        score = tree.direction.score(metric.value)
        if len(self._members) >= self.params.population:
            scores = [self._score[m] for m in self._members]
            average = math.fsum(scores) / len(scores)
            if score < average and not math.isclose(score, average, rel_tol=1e-9, abs_tol=1e-12):
                return
            worst = min(self._members, key=lambda m: self._score[m])  # the oldest on a tie
            self._members.remove(worst)
            del self._score[worst]
        self._members.append(node.id)
        self._score[node.id] = score
        self._admissions += 1

    # --- deciding -------------------------------------------------------------------------

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action:
        p = self.params
        opening = draft_or_debug(tree, rng, p.population, p.debug_prob, p.max_debug_depth)
        if opening is not None:
            return opening
        if not self._members:
            return Action(operator="draft")
        return self._breed(tree, rng)

    def _breed(self, tree: SearchTree, rng: random.Random) -> Action:
        p = self.params
        fitness = self.fitness()
        members = self._members
        if self.generation >= 2 and len(members) >= 2 and rng.random() < p.crossover_prob:
            taken = {frozenset(a.parent_ids) for a in tree.pending if a.operator == "crossover"}

            def partners(m: int) -> list[int]:
                return [o for o in members if o != m and frozenset((m, o)) not in taken]

            firsts = [m for m in members if partners(m)]
            if firsts:
                first = self._draw(firsts, fitness, rng)
                second = self._draw(partners(first), fitness, rng)
                pair = sorted((first, second), key=lambda m: (-fitness[m], members.index(m)))
                return Action(operator="crossover", parent_ids=tuple(pair))
        improving = {a.parent_ids for a in tree.pending if a.operator == "improve"}
        free = [m for m in members if (m,) not in improving] or members
        return Action(operator="improve", parent_ids=(self._draw(free, fitness, rng),))

    def _draw(self, ids: list[int], fitness: dict[int, float], rng: random.Random) -> int:
        """One of ``ids`` by softmax weight, renormalised over ``ids``."""
        weights = _softmax(fitness, ids, self.params.temperature)
        return rng.choices(ids, weights=[weights[i] for i in ids])[0]


def _softmax(fitness: dict[int, float], ids: list[int], temperature: float) -> dict[int, float]:
    if not ids:
        return {}
    top = max(fitness[i] for i in ids)  # shifted so the largest term is exp(0): no overflow
    terms = {i: math.exp((fitness[i] - top) / temperature) for i in ids}
    total = math.fsum(terms.values())
    return {i: t / total for i, t in terms.items()}
