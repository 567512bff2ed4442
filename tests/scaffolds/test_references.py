"""Reference edges: a node citing nodes beyond its parents, from the strategy's action to the
journal, the operator's prompt and a replay. Each run is small (toy task, scripted model)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import podium
from podium.errors import PluginError
from podium.formats import Journal
from podium.interfaces import Strategy
from podium.records import Action, Node, NodeState
from podium.scaffolds.prompts import Prompts
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import in_order, node, tree_of
from tests.support import code_answer, node_answers, run_config, solution, write_script

pytestmark = pytest.mark.slow

CITING = f"{__name__}:Citing"


# Two drafts, then an improvement of the first that cites the second.
Citing = in_order(
    Action(operator="draft"),
    Action(operator="draft"),
    Action(operator="improve", parent_ids=(1,), ref_ids=(2,)),
)


class CitesNothingReal(Strategy):
    name = "cites-nothing-real"

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        return Action(operator="draft", ref_ids=(99,))


def test_a_reference_is_not_a_child() -> None:
    tree = tree_of(
        node(1, metric=0.5),
        node(2, metric=0.7),
        Node(id=3, parent_ids=(1,), ref_ids=(2,), operator="improve", state=NodeState.DONE),
    )
    assert [n.id for n in tree.children(1)] == [3]
    assert tree.children(2) == [] and tree.is_leaf(2)
    assert [n.id for n in tree.refs(3)] == [2]
    assert [n.id for n in tree.cited_by(2)] == [3]
    assert [n.id for n in tree.upto(2).cited_by(2)] == []


def test_a_journal_written_before_references_loads() -> None:
    old = Node(id=1, operator="draft").model_dump(mode="json")
    del old["ref_ids"]
    assert Node.model_validate(old).ref_ids == ()


def test_a_prompt_without_references_is_what_it_was() -> None:
    """Old records replay: the empty value leaves every template's text unchanged."""
    prompts = Prompts()
    for name, before in [
        ("draft", "# Data\nrows\n\n# Earlier solutions"),
        ("improve", "Validation metric: 0.5 (higher is better)\n\n# Earlier solutions"),
        ("debug", "Why it failed: boom\n\n# Earlier attempts to fix it"),
        ("crossover", "Validation metric: 0.7 (higher is better)\n\n# Earlier solutions"),
    ]:
        values = {
            "data_preview": "rows",
            "parent_metric": "0.5",
            "other_metric": "0.7",
            "direction": "higher is better",
            "bug_reason": "boom",
            "references": "",
        }
        assert before in prompts.render(name, values)


def test_the_cited_node_reaches_the_prompt_and_the_journal_and_replays(
    tmp_path: Path, data_dir: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            node_answers(solution(0.60), plan="Draft with a linear model."),
            node_answers(
                solution(0.70, extra="# the cited trick: target encoding"),
                plan="Draft with target encoding.",
            ),
            node_answers(solution(0.75), plan="Take target encoding from node 2."),
        ],
    )
    search = {"strategy": CITING}
    result = podium.run(run_config(script, tmp_path / "run", data_dir, steps=3, search=search))
    journal = Journal.open(result.run_dir / "journal.sqlite")
    nodes = {n.id: n for n in journal.nodes(NodeState.DONE)}
    prompts = {
        c.node_id: c.request.messages[-1].content for c in journal.calls() if c.role == "code"
    }
    journal.close()
    assert (nodes[3].parent_ids, nodes[3].ref_ids) == ((1,), (2,))
    assert "# Solutions from elsewhere in the search to draw on" in prompts[3]
    assert "# the cited trick: target encoding" in prompts[3]  # one reference: its code shown
    assert "- node 2 (draft, validation metric 0.7)" in prompts[3]
    memory = prompts[3].split("# Earlier solutions\n")[1]
    assert memory.startswith("(none yet)")  # the parent and the cited node are shown already
    assert "elsewhere in the search" not in prompts[1] + prompts[2]

    again = podium.run(
        run_config(
            script,
            tmp_path / "again",
            data_dir,
            steps=3,
            search=search,
            model={"name": "baseline", "replay": str(result.run_dir)},
        )
    )
    replayed = Journal.open(again.run_dir / "journal.sqlite")
    assert [(n.id, n.parent_ids, n.ref_ids, n.code) for n in replayed.nodes(NodeState.DONE)] == [
        (n.id, n.parent_ids, n.ref_ids, n.code) for n in nodes.values()
    ]
    assert all(c.response and c.response.replayed for c in replayed.calls())
    replayed.close()


def test_a_reference_to_no_finished_node_stops_the_run_naming_the_strategy(
    tmp_path: Path, data_dir: Path
) -> None:
    script = write_script(tmp_path / "s.jsonl", [code_answer(solution(0.5))])
    config = run_config(
        script,
        tmp_path / "run",
        data_dir,
        steps=2,
        search={"strategy": f"{__name__}:CitesNothingReal"},
    )
    with pytest.raises(PluginError, match="named reference node 99, which is not a finished"):
        podium.run(config)
