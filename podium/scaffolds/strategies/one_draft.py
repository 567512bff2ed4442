"""One draft and nothing else: the control arm that asks "does the search pay at all?".

A comparison of strategies needs a floor that spends the same budget settings but searches not
at all: ``one-draft`` hands out a single draft and then stops the run (``next_action`` returns
None), so its submission is the model's first answer as it stands, buggy or not. Greedy's or
MCTS's advantage over it is what their search adds; their advantage over ``random`` is what
their policy adds over searching blindly.
"""

from __future__ import annotations

import random

from podium.interfaces import Strategy
from podium.records import Action
from podium.tree import SearchTree


class OneDraft(Strategy):
    name = "one-draft"

    def __init__(self, params: None = None) -> None:
        self.params = params

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        if len(tree) or tree.pending:
            return None
        return Action(operator="draft")
