"""Recorded runs of 12 to 2,000 nodes, written in seconds and shaped like real ones, for the
viewer's browser tests and ``perf/viewer_load.py``: :func:`write_synthetic_run`.

No model and no kernel, but nothing else is made up:

* **The tree is the strategy's.** The builtin strategy classes (greedy is AIDE's policy, mcts,
  evolutionary with its crossovers, random) choose every action, driven as the loop drives them
  under its reproducible schedule (``podium/scaffolds/loop.py``): node ``n`` is decided on a
  ``SearchTree`` holding nodes ``1 .. n - workers``, admitted in id order and each shown to
  ``observe``, with nodes ``n - workers + 1 .. n - 1`` in ``tree.pending``, from the run's one
  ``random.Random(seed)``. Only the outcomes are synthetic: a node's metric is drawn around its
  parent's (improving now and then), some nodes are buggy, a debug usually fixes its parent.
  The final node is ``strategy.final_node(tree)``, published to ``best/`` by ``RunDir``, and
  ``summary.json`` is ``build_summary``'s record, so the viewer's best path and header are what
  a real run of that strategy would show. (The tree is an ``IndexedTree``, which answers
  exactly as the plain one but keeps its lists of good, buggy and draft nodes as it grows;
  ``test_synthetic.py`` replays every decision on a plain ``SearchTree``.)
* **The content is a long LLM run's.** Each node's code (~4 KB) is a scikit-learn solution
  derived from its parent's by a few lines (an improve changes a hyperparameter or a feature, a
  debug fixes the failing line, a crossover takes one parent's features and the other's
  model), its output (~16 KB) the training log such code prints, ending in its
  ``VALIDATION_METRIC`` line, and a buggy node fails the way such code fails: an IPython
  traceback laid out exactly as the sandbox's kernel reports one (the cell frame with its
  context and arrow, then the library frames, copied from real failures of pandas and
  scikit-learn), a timeout, a kernel killed at the memory limit, a missing submission, a review
  that calls the score leaked. Two model calls per node, rendered from the real prompt
  templates (``podium.scaffolds.prompts``) with the real memory of earlier nodes
  (``memory.good_nodes`` on the tree's best 40 good nodes, more than its 4,000 characters
  hold), so every prompt repeats the task description and data preview and carries the
  parent's code and output. Tokens, cost, latency, per-phase timings, workers and timestamps
  follow a simulated clock: nodes take minutes, a run takes hours to days.
* **Written as a run writes it**, through ``Journal`` and ``RunDir``: each node begun when it
  is decided (with the RNG before and after), its code call, and, when its execution and review
  are over, its review call and the finished record, in the order of the simulated clock. The
  last ``running`` nodes are left executing (with their output so far in ``output.txt``).

Deterministic for a seed. 2,000 nodes: 10-13 s on a 2-core VM shared with other work (7-10 s
of CPU; a ~150 MB journal); 12 nodes: 0.1 s.

The modules, each importing only those above it:

* ``task``: the task, its description, data preview and metric, and the sandbox's limits;
* ``programs``: a solution as a ``Program``, and ``render``, its code;
* ``changes``: drafts, improves, crossovers, debugs and bugs, from program to program;
* ``output``: what a solution prints, up to where its bug stops it;
* ``tracebacks``: the kernel's tracebacks for the bugs that raise;
* ``executions``: ``execute``, the output ended as the bug ends it, and the review's verdict;
* ``calls``: the prompts of a node's two model calls, and their answers;
* ``written``: ``SyntheticRun``, what a run holds, for the tests;
* ``run``: ``write_synthetic_run``, the loop that grows the tree and writes it all.
"""

from tests.viewer.synthetic.programs import Code
from tests.viewer.synthetic.run import STRATEGIES, write_synthetic_run
from tests.viewer.synthetic.tracebacks import cell_frame, traceback_text
from tests.viewer.synthetic.written import SyntheticRun

__all__ = [
    "STRATEGIES",
    "Code",
    "SyntheticRun",
    "cell_frame",
    "traceback_text",
    "write_synthetic_run",
]
