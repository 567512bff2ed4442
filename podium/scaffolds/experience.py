"""The retrospective memory (after MLEvolve's): what earlier attempts tried and how it went,
retrieved by similarity before each node and shown in its prompt.

Scope, stated: a node recalls (1) the finished nodes of its own run that it may see (the tree
its operators are given, so the recall is the same on a resume or replay), and (2) with
``memory.dir``, the records earlier runs wrote there, read once as the run started and kept in
the run dir (``RunDir.memory_copy``), so a resume and a replay recall exactly what the run
recalled, whatever the directory holds since. A record holds only what the agent saw (see
:class:`podium.records.MemoryRecord`); no grade, held-out score or test label can reach one.

Retrieval is lexical and deterministic: TF-IDF vectors (scikit-learn) of each record's plan,
summary, operator and error against the query, cosine similarity, ties to the newest; no
embedding model, no GPU, no network. MLEvolve fuses BM25 with dense embeddings; this keeps its
lexical half, which a replay can reproduce bit for bit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from podium.records import MemoryRecord, Node, Outcome
from podium.scaffolds.memory import first_sentences
from podium.tree import SearchTree

PLAN_CHARS = 1500
SUMMARY_CHARS = 600
CODE_CHARS = 4000
ERROR_CHARS = 400
LINE_CHARS = 300  # one record's line in a prompt


def record_of(
    node: Node, parent: Node | None, task: str, task_type: str | None, run: str
) -> MemoryRecord:
    """The memory of one finished node (``parent``: its first parent, for the outcome)."""
    return MemoryRecord(
        task=task,
        task_type=task_type,
        run=run,
        node_id=node.id,
        operator=node.operator,
        outcome=_outcome(node, parent),
        plan=node.plan[:PLAN_CHARS],
        summary=node.summary[:SUMMARY_CHARS],
        code=node.code[:CODE_CHARS],
        metric=node.metric.value if node.metric and not node.is_buggy else None,
        lower_is_better=node.metric.lower_is_better if node.metric else False,
        error=(node.bug_reason or "")[:ERROR_CHARS] or None,
    )


def _outcome(node: Node, parent: Node | None) -> Outcome:
    if node.kind == "analysis":
        return "analysis"
    if node.is_buggy or node.metric is None:
        return "failed"
    if parent is None or not parent.is_good or parent.metric is None:
        return "draft"
    if node.metric.better_than(parent.metric):
        return "better"
    return "worse" if parent.metric.better_than(node.metric) else "same"


class Experience:
    """A node's memory: :meth:`recall` the ``k`` records most like a query (the
    :class:`podium.interfaces.Memory` an operator is given)."""

    def __init__(
        self,
        earlier: Sequence[MemoryRecord],
        tree: SearchTree,
        k: int,
        task: str,
        task_type: str | None,
        run: str,
    ) -> None:
        self.earlier, self.tree, self.k = earlier, tree, k
        self.task, self.task_type, self.run = task, task_type, run

    def recall(self, query: str, exclude: Collection[int] = ()) -> list[MemoryRecord]:
        """Up to ``k`` records, most similar first; ``exclude``: this run's node ids not to
        recall (the parents a prompt already shows)."""
        own = [self._record(n) for n in self.tree if n.id not in exclude]
        candidates = [*self.earlier, *own]
        if not candidates or self.k == 0:
            return []
        scores = _similarity(query, [_text(r) for r in candidates])
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], -i))
        return [candidates[i] for i in order[: self.k] if scores[i] > 0]

    def _record(self, node: Node) -> MemoryRecord:
        parent = self.tree.get(node.parent_ids[0]) if node.parent_ids else None
        return record_of(node, parent, self.task, self.task_type, self.run)


def _text(record: MemoryRecord) -> str:
    return " ".join((record.operator, record.plan, record.summary, record.error or ""))


def _similarity(query: str, texts: list[str]) -> list[float]:
    """Cosine similarity of TF-IDF vectors of ``query`` and each text (0 when the vocabulary
    is empty)."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # only when memory is on

    try:
        matrix = TfidfVectorizer(sublinear_tf=True).fit_transform([query, *texts])
    except ValueError:  # no word in any text
        return [0.0] * len(texts)
    return [float(v) for v in (matrix[1:] @ matrix[0].T).toarray().ravel()]


def section(records: Sequence[MemoryRecord], task: str) -> str:
    """``records`` as a prompt section, or "" for none (the prompt is then as it was)."""
    if not records:
        return ""
    worked = [r for r in records if r.outcome in ("better", "draft", "same")]
    failed = [r for r in records if r.outcome in ("worse", "failed")]
    studied = [r for r in records if r.outcome == "analysis"]
    parts = ["\n# What similar earlier attempts taught (memory)"]
    for title, group in (("Worked:", worked), ("Did not work:", failed), ("Found:", studied)):
        if group:
            parts.append(title)
            parts.extend(_line(r, task) for r in group)
    return "\n".join(parts) + "\n"


def _line(record: MemoryRecord, task: str) -> str:
    where = "this task" if record.task == task else f"task {record.task}"
    result = {
        "better": "better than its parent",
        "worse": "worse than its parent",
        "same": "no better than its parent",
        "draft": "a first solution",
        "failed": f"failed: {first_sentences(record.error or '', 150)}",
        "analysis": "an analysis",
    }[record.outcome]
    metric = f", validation {record.metric:.6g}" if record.metric is not None else ""
    about = first_sentences(record.summary or record.plan, LINE_CHARS)
    return f"- [{where}, {record.operator}{metric}; {result}] {about}"
