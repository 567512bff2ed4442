"""One consistent read of a run directory, for the viewer, ``podium show`` and ``podium rerun``.

The journal is read while the run may still be writing it (SQLite WAL lets a reader see the last
committed state), so everything here tolerates a run that is half-way: a missing summary, nodes
still proposing or executing, no best node yet.

Whether the run is *live* is read from the kernel's lock table, not by taking the run's lock:
a viewer must never make a ``podium resume`` starting at that moment fail with "in use".
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import ValidationError

from podium.errors import RunDirError, UserError
from podium.formats import Journal, RunDir, RunSummary, run_files
from podium.formats.sweep_dir import RUNS
from podium.records import ModelCall, Node, NodeState
from podium.untrusted import Refused, inert, read_untrusted

NodeKind = Literal["good", "buggy", "running", "interrupted", "analysis"]
"""How a reader draws a node (:meth:`RunView.kind`); not ``podium.records.NodeKind``, what its
code is, which this refines: a finished analysis that ran through is ``analysis``."""
LIVE_OUTPUT_READ_CAP = 4 * 1024 * 1024
RUNNING_STATES = (NodeState.PROPOSING, NodeState.EXECUTING, NodeState.REVIEWING)


@dataclass(frozen=True)
class RunView:
    """A run as it stood when read. ``nodes`` holds every node in the journal (id order),
    unfinished ones included; ``best_path`` is the final node and all its ancestors.

    ``summary`` is summary.json as read ({} when there is none yet or it was caught mid-write);
    read it through :attr:`run_summary`, its typed record. (The dict stays for ``podium show``
    until it reads the record too.)
    """

    root: Path
    summary: dict[str, Any]
    config: dict[str, Any]
    meta: dict[str, str]
    nodes: list[Node]
    best_id: int | None
    live: bool | None  # a process holds the run's lock now; None: cannot tell on this system
    discarded: int = 0
    best_path: frozenset[int] = field(default=frozenset())
    light: bool = False  # nodes read without plan, code, output, traceback (open_run)

    @cached_property
    def run_summary(self) -> RunSummary:
        """summary.json as the typed record (a field that does not fit its type: missing)."""
        return RunSummary.lenient(self.summary)

    @property
    def status(self) -> str:
        """running | finished | interrupted | failed | stopped (a killed run: resumable)."""
        status = self.run_summary.status or "running"
        if status == "running" and self.live is False:
            return "stopped"
        return status

    @property
    def lower_is_better(self) -> bool | None:
        return self.run_summary.lower_is_better

    def node(self, node_id: int) -> Node:
        """The node with this id, or a one-line error naming the ids the run has."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        have = f"nodes {self.nodes[0].id}–{self.nodes[-1].id}" if self.nodes else "no nodes yet"
        raise UserError(f"{self.root} has no node {node_id}", hint=f"this run has {have}")

    def find(self, node_id: int) -> Node | None:
        """The node with this id, or None (light when the view is)."""
        return self._by_id.get(node_id)

    def full(self, ids: Iterable[int]) -> dict[int, Node]:
        """These nodes in full, whether the view is light or not: a light view reads just them
        from the journal (a node's panel needs its code and its parents', not every node's)."""
        if not self.light:
            return {i: n for i in ids if (n := self._by_id.get(i)) is not None}
        with _reading(RunDir(self.root).journal) as journal:
            return journal.nodes_by_id(ids)

    @cached_property
    def _by_id(self) -> dict[int, Node]:
        return {n.id: n for n in self.nodes}

    def children(self, node_id: int) -> list[int]:
        return self._children.get(node_id, [])

    @cached_property
    def _children(self) -> dict[int, list[int]]:
        """Each node's children, in id order (one pass: an export asks for every node's)."""
        out: dict[int, list[int]] = {}
        for n in self.nodes:
            for parent in dict.fromkeys(n.parent_ids):
                out.setdefault(parent, []).append(n.id)
        return out

    def refs(self, node: Node) -> list[int]:
        """The nodes ``node`` cites beyond its parents (``Node.ref_ids``, its reference
        edges) that a reader draws: each once, in the journal's order, only an earlier node
        the run holds and not a parent too. A damaged journal may name any id, but a
        reference is to a node already finished when the action was chosen, so a later one
        (or the node itself) is no reference."""
        parents = set(node.parent_ids)
        return [
            r
            for r in dict.fromkeys(node.ref_ids)
            if r < node.id and r in self._by_id and r not in parents
        ]

    def cited_by(self, node_id: int) -> list[int]:
        """The nodes whose :meth:`refs` hold ``node_id``, in id order (none is its child)."""
        return self._cited_by.get(node_id, [])

    @cached_property
    def _cited_by(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for n in self.nodes:
            for ref in self.refs(n):
                out.setdefault(ref, []).append(n.id)
        return out

    def live_output(self, node_id: int) -> str:
        """What a node still executing has printed so far (:meth:`read_output`)."""
        return self.read_output(self.root, node_id)

    @staticmethod
    def read_output(root: Path, node_id: int) -> str:
        """A node's output file as the page shows it: for a node still executing, what it has
        printed so far (the loop rewrites the file while it runs; empty before its first
        write). Read as a file of unknown origin (a run dir may come from anyone): no link
        followed below the run dir, a regular file only, at most ``LIVE_OUTPUT_READ_CAP``
        bytes; anything else is said in one line instead of its content."""
        path = RunDir(root).node_output(node_id)
        try:
            data = read_untrusted(path, trusted=root, max_bytes=LIVE_OUTPUT_READ_CAP)
        except FileNotFoundError:
            return ""
        except (Refused, OSError) as exc:
            return f"[the output file was not read: {exc}]"
        return inert(data.decode("utf-8", errors="replace"))

    def kind(self, node: Node) -> NodeKind:
        """The colour a node is drawn in. A node left mid-way by a dead run is interrupted; a
        finished analysis (``Node.kind``) is ``analysis``, no metric and never good, unless it
        failed: then it is buggy like any node."""
        if node.state in RUNNING_STATES:
            return "running" if self.live is not False else "interrupted"
        if node.state is NodeState.INTERRUPTED:
            return "interrupted"
        if node.kind == "analysis" and not node.is_buggy:
            return "analysis"
        return "good" if node.is_good else "buggy"

    def calls(self, node_id: int | None = None) -> list[ModelCall]:
        """The model calls a node made (None: every node's), in order, prompts and answers in
        full. Read on demand: they are most of a journal's bytes."""
        with _reading(RunDir(self.root).journal) as journal:
            return journal.calls(node_id)


@overload
def clip(text: str, limit: int) -> str: ...
@overload
def clip(text: None, limit: int) -> None: ...
def clip(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, saying how much was left out (None stays None):
    what one text of a node may weigh where a reader shows it (a run dir may come from anyone,
    and a solution can print or raise megabytes)."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters not shown]"


def open_run(path: Path, *, light: bool = False) -> RunView:
    """Read a run directory; a path that is not one is a one-line error with a hint.

    ``light``: the nodes without their plan, code, output and traceback (``Journal.nodes``),
    for what draws only the tree (the RunJSON)."""
    rd = RunDir(Path(path))
    if not rd.root.is_dir():
        raise RunDirError(f"{rd.root} does not exist", hint="give a run directory, e.g. runs/…")
    if not rd.journal.is_file():
        hint = f"a run directory holds {run_files.JOURNAL}"
        if (rd.root / RUNS).is_dir():  # a sweep dir's runs
            hint = f"{rd.root} looks like a sweep: give one of its runs, e.g. {rd.root}/runs/…"
        raise RunDirError(f"{rd.root} is not a Podium run directory (no journal)", hint=hint)
    with _reading(rd.journal) as journal:
        nodes = journal.nodes(light=light)
        meta = journal.meta()
        discarded = journal.discarded_count()
    summary = run_files.read_json(rd.summary, damaged_ok=True) or {}
    best_id = rd.best_node_id()
    if best_id is None:
        best_id = RunSummary.lenient(summary).best_node
    return RunView(
        root=rd.root,
        summary=summary,
        config=run_files.read_toml(rd.config, damaged_ok=True) or {},
        meta=meta,
        nodes=nodes,
        best_id=best_id,
        live=run_is_live(rd.root),
        discarded=discarded,
        best_path=_ancestors(nodes, best_id),
        light=light,
    )


@contextmanager
def _reading(path: Path) -> Iterator[Journal]:
    """The journal, open for reading; a damaged one (a row that is not a node, a missing
    table: a run dir may come from anyone) is a one-line error, not a traceback."""
    journal = None
    try:
        journal = Journal.open(path)
        yield journal
    except (sqlite3.Error, ValidationError, ValueError, KeyError, TypeError) as exc:
        why = " ".join(str(exc).split())[:200]
        raise RunDirError(
            f"{path} is damaged: {why}",
            hint="a journal is written by Podium only; restore it from a copy of the run",
        ) from None
    finally:
        if journal is not None:
            journal.close()


def _ancestors(nodes: list[Node], node_id: int | None) -> frozenset[int]:
    by_id = {n.id: n for n in nodes}
    seen: set[int] = set()
    todo = [node_id] if node_id in by_id else []
    while todo:
        current = todo.pop()
        if current in seen or current not in by_id:
            continue
        seen.add(current)
        todo.extend(by_id[current].parent_ids)
    return frozenset(seen)


def run_is_live(root: Path) -> bool | None:
    """True when some process holds ``root/.lock`` (a run or resume is writing this run dir).

    Read from ``/proc/locks`` (Linux) so the lock is never touched; None elsewhere.
    """
    try:
        st = RunDir(root).lock_file.stat()
    except FileNotFoundError:
        return False
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    wanted = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in table.splitlines():
        fields = line.split()
        if "FLOCK" not in fields or "->" in fields:  # "->": a waiter, not a holder
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == wanted:
                return True
        except (IndexError, ValueError):
            continue
    return False
