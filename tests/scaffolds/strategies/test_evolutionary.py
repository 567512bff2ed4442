"""aira-dojo's evolutionary policy on crafted trees (``podium.scaffolds.strategies.evolutionary``):
fitness and softmax weights, admission and eviction, generations, when crossover happens, debug
of buggy children, concurrency, and that replaying ``observe`` restores the state (resume)."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from pydantic import ValidationError

from podium.records import Action, Node
from podium.scaffolds.strategies.evolutionary import Evolutionary, EvolutionaryParams
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import act, debug_chain, grown, node

DRAFT = act("draft")


def evo(
    population: int = 3,
    temperature: float = 1.0,
    crossover_prob: float = 0.5,
    debug_prob: float = 1.0,
    max_debug_depth: int = 3,
) -> Evolutionary:
    return Evolutionary(
        EvolutionaryParams(
            population=population,
            temperature=temperature,
            crossover_prob=crossover_prob,
            debug_prob=debug_prob,
            max_debug_depth=max_debug_depth,
        )
    )


def founders(*metrics: float, lower_is_better: bool = False) -> list[Node]:
    """Good drafts 1, 2, ... with these metrics."""
    return [node(i, metric=m, lower_is_better=lower_is_better) for i, m in enumerate(metrics, 1)]


def children(start: int, *metrics: float, parent: int = 1) -> list[Node]:
    """Good improve children ``start``, ``start + 1``, ... of ``parent``."""
    return [node(start + i, "improve", (parent,), metric=m) for i, m in enumerate(metrics)]


def ops(strategy: Evolutionary, tree: SearchTree, seeds: int = 200) -> list[Action]:
    return [strategy.next_action(tree, random.Random(seed)) for seed in range(seeds)]


# --- parameters --------------------------------------------------------------------------


def test_defaults_are_aira_dojos() -> None:
    p = Evolutionary().params
    assert (p.population, p.temperature, p.crossover_prob) == (8, 1.0, 0.5)
    assert (p.debug_prob, p.max_debug_depth) == (1.0, 3)
    assert Evolutionary().name == "evolutionary"


def test_every_parameter_is_described() -> None:
    for name, field in EvolutionaryParams.model_fields.items():
        assert field.description, name


@pytest.mark.parametrize(
    "bad",
    [
        {"population": 0},
        {"temperature": 0.0},
        {"temperature": -1.0},
        {"temperature": math.inf},
        {"crossover_prob": 1.5},
        {"crossover_prob": -0.1},
        {"debug_prob": 2.0},
        {"max_debug_depth": -1},
        {"populaton": 4},  # a typo is an error, not a silent default
    ],
)
def test_bad_params_are_rejected(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        EvolutionaryParams.model_validate(bad)


# --- fitness and softmax weights ---------------------------------------------------------


def test_softmax_weights_by_hand() -> None:
    # metrics 0.2, 0.6, 1.0 → min–max fitness f = 0, 0.5, 1
    # T = 1: w = exp(f) / Z, Z = 1 + e^0.5 + e = 1 + 1.648721 + 2.718282 = 5.367003
    #        → 1/Z = 0.186324, 1.648721/Z = 0.307196, 2.718282/Z = 0.506480
    strategy = evo(population=3)
    grown(strategy, *founders(0.2, 0.6, 1.0))
    assert strategy.fitness() == pytest.approx({1: 0.0, 2: 0.5, 3: 1.0})
    weights = strategy.weights()
    assert [weights[i] for i in (1, 2, 3)] == pytest.approx(
        [0.186324, 0.307196, 0.506480], abs=1e-6
    )
    # T = 0.5: w = exp(2f) / Z, Z = 1 + e + e^2 = 1 + 2.718282 + 7.389056 = 11.107338
    #          → 0.090031, 0.244728, 0.665241 (greedier)
    strategy = evo(population=3, temperature=0.5)
    grown(strategy, *founders(0.2, 0.6, 1.0))
    weights = strategy.weights()
    assert [weights[i] for i in (1, 2, 3)] == pytest.approx(
        [0.090031, 0.244728, 0.665241], abs=1e-6
    )


def test_lower_is_better_reverses_fitness() -> None:
    strategy = evo(population=3)
    grown(strategy, *founders(0.2, 0.6, 1.0, lower_is_better=True), lower_is_better=True)
    assert strategy.fitness() == pytest.approx({1: 1.0, 2: 0.5, 3: 0.0})
    weights = strategy.weights()
    assert [weights[i] for i in (1, 2, 3)] == pytest.approx(
        [0.506480, 0.307196, 0.186324], abs=1e-6
    )


def test_equal_metrics_give_equal_weights() -> None:
    strategy = evo(population=3)
    grown(strategy, *founders(0.7, 0.7, 0.7))
    assert strategy.fitness() == {1: 1.0, 2: 1.0, 3: 1.0}
    assert list(strategy.weights().values()) == pytest.approx([1 / 3] * 3)


def test_a_tiny_temperature_does_not_overflow() -> None:
    strategy = evo(population=3, temperature=1e-6)
    tree = grown(strategy, *founders(0.2, 0.6, 1.0))
    assert strategy.weights() == pytest.approx({1: 0.0, 2: 0.0, 3: 1.0})
    assert {a.parent_ids for a in ops(strategy, tree, 20)} == {(3,)}


def test_improve_parents_follow_the_weights() -> None:
    strategy = evo(population=3)
    tree = grown(strategy, *founders(0.2, 0.6, 1.0))
    rng = random.Random(0)
    picks = Counter(strategy.next_action(tree, rng).parent_ids[0] for _ in range(4000))
    for member, weight in strategy.weights().items():
        assert picks[member] / 4000 == pytest.approx(weight, abs=0.03)


# --- generation 1: drafting --------------------------------------------------------------


@pytest.mark.parametrize("done", [0, 1, 3])
def test_drafts_until_the_population_size(done: int) -> None:
    strategy = evo(population=4)
    tree = grown(strategy, *founders(*[0.5] * done))
    assert strategy.next_action(tree, random.Random(0)) == DRAFT


def test_pending_drafts_count() -> None:
    strategy = evo(population=4)
    tree = grown(strategy, *founders(0.5, 0.6))
    tree.pending = [DRAFT]
    assert strategy.next_action(tree, random.Random(0)) == DRAFT  # 2 done + 1 pending < 4
    tree.pending = [DRAFT, DRAFT]
    assert strategy.next_action(tree, random.Random(0)).operator == "improve"


def test_pending_improves_are_not_drafts() -> None:
    strategy = evo(population=2)
    tree = grown(strategy, node(1, metric=0.5))
    tree.pending = [act("improve", (1,))] * 3
    assert strategy.next_action(tree, random.Random(0)) == DRAFT


def test_buggy_drafts_count_as_drafts_and_are_debugged_after_drafting() -> None:
    strategy = evo(population=3)
    tree = grown(strategy, node(1, buggy=True), node(2, metric=0.5))
    assert strategy.next_action(tree, random.Random(0)) == DRAFT  # drafting comes first
    tree.add(node(3, metric=0.6))
    strategy.observe(tree.get(3), tree)
    assert strategy.next_action(tree, random.Random(0)) == act("debug", (1,))


def test_no_member_and_nothing_to_debug_means_draft_again() -> None:
    strategy = evo(population=2)
    tree = grown(strategy, node(1, buggy=True, code=""), node(2, buggy=True, code=""))
    assert strategy.next_action(tree, random.Random(0)) == DRAFT


def test_good_nodes_are_admitted_unconditionally_until_the_population_is_full() -> None:
    strategy = evo(population=3)
    grown(strategy, node(1, metric=0.9), node(2, buggy=True), node(3, metric=0.1))
    assert strategy.members == (1, 3)  # 0.1 is below the average, but there is room
    assert strategy.generation == 1


# --- admission and eviction --------------------------------------------------------------


def test_a_child_below_the_average_is_not_admitted() -> None:
    strategy = evo(population=3)
    grown(strategy, *founders(0.2, 0.6, 1.0), *children(4, 0.59))  # average 0.6
    assert strategy.members == (1, 2, 3)
    assert strategy.admissions == 3


def test_a_child_at_or_above_the_average_evicts_the_worst() -> None:
    strategy = evo(population=3)
    grown(strategy, *founders(0.2, 0.6, 1.0), *children(4, 0.6))  # exactly the average
    assert strategy.members == (2, 3, 4)  # 0.2 went
    grown(strategy := evo(population=3), *founders(0.2, 0.6, 1.0), *children(4, 0.9, 0.95))
    # 0.9 ≥ 0.6 evicts 0.2; then the average is (0.6 + 1.0 + 0.9) / 3 = 0.833 and 0.95 evicts 0.6
    assert strategy.members == (3, 4, 5)
    assert strategy.admissions == 5


def test_ties_evict_the_oldest_member() -> None:
    strategy = evo(population=3)
    grown(strategy, *founders(0.5, 0.5, 0.5), *children(4, 0.5, 0.5))
    assert strategy.members == (3, 4, 5)


def test_admission_respects_lower_is_better() -> None:
    strategy = evo(population=3)
    lower = [node(i, metric=m, lower_is_better=True) for i, m in ((1, 0.2), (2, 0.6), (3, 1.0))]
    grown(
        strategy,
        *lower,
        node(4, "improve", (1,), metric=0.7, lower_is_better=True),  # worse than the average
        node(5, "improve", (1,), metric=0.3, lower_is_better=True),  # better: evicts 1.0
        lower_is_better=True,
    )
    assert strategy.members == (1, 2, 5)
    assert strategy.fitness() == pytest.approx({1: 1.0, 2: 0.0, 5: 0.75})


def test_buggy_nodes_are_never_admitted() -> None:
    strategy = evo(population=3)
    grown(strategy, node(1, metric=0.5), node(2, metric=0.99, buggy=True), node(3, buggy=True))
    assert strategy.members == (1,)


def test_a_debug_fix_is_a_candidate_like_any_child() -> None:
    strategy = evo(population=2)
    grown(
        strategy,
        *founders(0.4, 0.6),
        node(3, "improve", (2,), buggy=True),
        node(4, "debug", (3,), metric=0.8),
    )
    assert strategy.members == (2, 4)


def test_generations_count_admissions_beyond_the_founders() -> None:
    strategy = evo(population=2)
    tree = grown(strategy, *founders(0.5, 0.6))
    seen = [strategy.generation]
    for i in range(3, 9):  # each child the best so far: always admitted
        tree.add(node(i, "improve", (i - 1,), metric=0.6 + i / 100))
        strategy.observe(tree.get(i), tree)
        seen.append(strategy.generation)
    # admissions 2, 3, ..., 8 → 1 + max(0, a - 2) // 2
    assert seen == [1, 1, 2, 2, 3, 3, 4]


# --- breeding: improve and crossover -----------------------------------------------------


def second_generation(
    crossover_prob: float, population: int = 3
) -> tuple[Evolutionary, SearchTree]:
    """A full population that has reached generation 2: founders 1..3 (0.2, 0.6, 1.0), then
    children 4..6 (0.7, 0.8, 0.9) each at least the average, evicting 1, 2, then 4."""
    strategy = evo(population=population, crossover_prob=crossover_prob)
    tree = grown(strategy, *founders(0.2, 0.6, 1.0), *children(4, 0.7, 0.8, 0.9, parent=3))
    assert strategy.generation == 2 and strategy.members == (3, 5, 6)
    return strategy, tree


def test_no_crossover_in_generation_one_even_with_probability_one() -> None:
    strategy = evo(population=3, crossover_prob=1.0)
    tree = grown(strategy, *founders(0.2, 0.6, 1.0), *children(4, 0.7, 0.8))
    assert strategy.generation == 1
    assert {a.operator for a in ops(strategy, tree)} == {"improve"}


def test_no_crossover_with_fewer_than_two_members() -> None:
    strategy = evo(population=1, crossover_prob=1.0)
    tree = grown(strategy, node(1, metric=0.5), *children(2, 0.6, 0.7, 0.8, parent=1))
    assert strategy.generation == 4 and strategy.members == (4,)
    assert set(ops(strategy, tree)) == {act("improve", (4,))}


def test_crossover_from_generation_two_with_distinct_members_fitter_first() -> None:
    strategy, tree = second_generation(crossover_prob=1.0)
    actions = ops(strategy, tree)
    assert {a.operator for a in actions} == {"crossover"}
    fitness = strategy.fitness()
    for a in actions:
        first, second = a.parent_ids
        assert first != second and {first, second} <= set(strategy.members)
        assert fitness[first] >= fitness[second]
    assert {a.parent_ids for a in actions} == {(3, 6), (3, 5), (6, 5)}  # fitness 1, 0.5, 0


@pytest.mark.parametrize("prob", [0.5, 0.2])
def test_crossover_probability_over_seeds(prob: float) -> None:
    strategy, tree = second_generation(crossover_prob=prob)
    share = sum(a.operator == "crossover" for a in ops(strategy, tree, 1000)) / 1000
    assert share == pytest.approx(prob, abs=0.05)  # binomial sd ≤ 0.016


def test_crossover_probability_zero_only_improves() -> None:
    strategy, tree = second_generation(crossover_prob=0.0)
    assert {a.operator for a in ops(strategy, tree)} == {"improve"}


# --- debugging buggy children ------------------------------------------------------------


def test_a_buggy_child_is_debugged_before_breeding_continues() -> None:
    strategy = evo(population=2)
    tree = grown(strategy, *founders(0.4, 0.6), node(3, "improve", (2,), buggy=True))
    assert set(ops(strategy, tree, 20)) == {act("debug", (3,))}


def test_debug_prob_zero_breeds_instead() -> None:
    strategy = evo(population=2, debug_prob=0.0)
    tree = grown(strategy, *founders(0.4, 0.6), node(3, "improve", (2,), buggy=True))
    assert {a.operator for a in ops(strategy, tree, 20)} == {"improve"}


@pytest.mark.parametrize(("chain_length", "debugged"), [(3, True), (4, False)])
def test_max_debug_depth_is_inclusive(chain_length: int, debugged: bool) -> None:
    strategy = evo(population=1, max_debug_depth=3)
    chain = debug_chain(chain_length, start=2)
    tree = grown(strategy, node(1, metric=0.5), *chain)
    action = strategy.next_action(tree, random.Random(0))
    assert action == (act("debug", (chain[-1].id,)) if debugged else act("improve", (1,)))


def test_buggy_node_without_code_is_not_debugged() -> None:
    strategy = evo(population=1)
    tree = grown(strategy, node(1, metric=0.5), node(2, "improve", (1,), buggy=True, code=""))
    assert strategy.next_action(tree, random.Random(0)) == act("improve", (1,))


# --- concurrency -------------------------------------------------------------------------


def test_a_leaf_being_debugged_is_not_picked_again() -> None:
    strategy = evo(population=1)
    tree = grown(strategy, node(1, metric=0.5), node(2, "improve", (1,), buggy=True))
    tree.pending = [act("debug", (2,))]
    assert strategy.next_action(tree, random.Random(0)) == act("improve", (1,))


def test_an_improve_avoids_members_being_improved() -> None:
    strategy = evo(population=3)
    tree = grown(strategy, *founders(0.2, 0.6, 1.0))
    tree.pending = [act("improve", (3,))]
    assert {a.parent_ids for a in ops(strategy, tree)} == {(1,), (2,)}
    tree.pending = [act("improve", (m,)) for m in (1, 2, 3)]  # every member busy: any one
    assert {a.parent_ids for a in ops(strategy, tree)} == {(1,), (2,), (3,)}


def test_a_crossover_avoids_pairs_being_crossed() -> None:
    strategy, tree = second_generation(crossover_prob=1.0)
    tree.pending = [act("crossover", (6, 5)), act("crossover", (6, 3))]  # either order
    assert set(ops(strategy, tree)) == {act("crossover", (3, 5))}
    tree.pending.append(act("crossover", (5, 3)))  # every pair taken: improve instead
    assert {a.operator for a in ops(strategy, tree)} == {"improve"}


# --- final node --------------------------------------------------------------------------


@pytest.mark.parametrize(("lower_is_better", "best"), [(False, 3), (True, 1)])
def test_final_node_is_the_best_good_node(lower_is_better: bool, best: int) -> None:
    strategy = evo(population=3)
    tree = grown(
        strategy,
        *founders(0.2, 0.6, 1.0, lower_is_better=lower_is_better),
        node(4, metric=-9.0 if lower_is_better else 9.0, buggy=True),
        lower_is_better=lower_is_better,
    )
    final = strategy.final_node(tree)
    assert final is not None and final.id == best


# --- a whole simulated run, and resume ---------------------------------------------------


def simulate(
    params: EvolutionaryParams, seed: int, steps: int = 60
) -> tuple[Evolutionary, SearchTree, list[Action]]:
    """One worker's run: each action becomes a node whose outcome is drawn from its own RNG
    (a quarter buggy, a metric otherwise), added to the tree and observed, as the loop does."""
    strategy, tree = Evolutionary(params), SearchTree(lower_is_better=False)
    rng, outcomes = random.Random(seed), random.Random(f"outcomes:{seed}")
    actions = []
    for node_id in range(1, steps + 1):
        action = strategy.next_action(tree, rng)
        for parent in action.parent_ids:
            assert parent in tree
        if action.operator == "crossover":
            assert strategy.generation >= 2 and len(set(action.parent_ids)) == 2
            assert set(action.parent_ids) <= set(strategy.members)
        actions.append(action)
        buggy = outcomes.random() < 0.25
        metric = None if buggy else round(outcomes.random(), 3)
        tree.add(node(node_id, action.operator, action.parent_ids, metric=metric, buggy=buggy))
        strategy.observe(tree.get(node_id), tree)
        assert len(strategy.members) <= params.population
    return strategy, tree, actions


def replayed(params: EvolutionaryParams, tree: SearchTree) -> Evolutionary:
    """A fresh instance told the finished nodes in order, as a resumed run does."""
    fresh, rebuilt = Evolutionary(params), SearchTree(lower_is_better=tree.lower_is_better)
    for n in tree.nodes:
        rebuilt.add(n)
        fresh.observe(n, rebuilt)
    return fresh


def test_a_simulated_run_uses_every_operator() -> None:
    _, _, actions = simulate(EvolutionaryParams(population=4), seed=1)
    assert {a.operator for a in actions} == {"draft", "improve", "debug", "crossover"}
    assert [a.operator for a in actions[:4]] == ["draft"] * 4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_replaying_observe_restores_the_state_and_the_next_action(seed: int) -> None:
    params = EvolutionaryParams(population=4, crossover_prob=0.5, debug_prob=0.7)
    original, tree, _ = simulate(params, seed)
    fresh = replayed(params, tree)
    assert original.admissions > params.population  # evictions happened
    assert (fresh.members, fresh.admissions, fresh.generation) == (
        original.members,
        original.admissions,
        original.generation,
    )
    assert fresh.weights() == original.weights()
    for s in range(20):
        expected = original.next_action(tree, random.Random(s))
        assert fresh.next_action(tree, random.Random(s)) == expected


def test_same_seed_same_run() -> None:
    params = EvolutionaryParams(population=4)
    assert simulate(params, seed=5)[2] == simulate(params, seed=5)[2]
    assert len({tuple(simulate(params, seed=s)[2]) for s in range(4)}) > 1
