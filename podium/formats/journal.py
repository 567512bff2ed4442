"""The journal: every node and model call of a run, in SQLite (WAL), written as it happens.

It is the source of truth for resume, the viewer and reports. Each change is one transaction,
so a SIGKILL at any instant leaves either the old or the new state, never half of one. Next to
each write goes the run's bookkeeping (elapsed running time, the RNG state), so a resumed run
continues from exactly the last committed decision.

Tables: ``meta`` (schema and Podium versions, task...), ``nodes`` (one row per node, the full
record as JSON plus indexed columns), ``calls`` (model calls), ``state`` (run bookkeeping) and
``discarded`` (what interrupted attempts at a node had done, kept for inspection and
accounting when a resume re-runs the node under its id).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from podium.errors import RunDirError
from podium.failpoints import failpoint
from podium.records import ModelCall, Node, NodeState, Usage

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    id INTEGER PRIMARY KEY,
    state TEXT NOT NULL,
    step INTEGER UNIQUE,
    operator TEXT NOT NULL,
    parent_ids TEXT NOT NULL,
    is_buggy INTEGER NOT NULL DEFAULT 0,
    metric REAL,
    rng_before TEXT,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id INTEGER NOT NULL,
    role TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_by_node ON calls (node_id);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS discarded (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id INTEGER NOT NULL,
    node TEXT NOT NULL,
    calls TEXT NOT NULL,
    discarded_at TEXT NOT NULL
);
"""

# What ``nodes(light=True)`` leaves out (JSON paths into a node's data).
LIGHT_FIELDS = "'$.plan', '$.code', '$.exec.output', '$.exec.traceback'"

RngState = Any  # what random.Random.getstate() returns, JSON-encoded as nested lists


def _rng_to_json(state: RngState) -> str:
    return json.dumps(state)


def _rng_from_json(text: str) -> RngState:
    version, internal, gauss = json.loads(text)
    return (version, tuple(internal), gauss)


# The usage fields summed by ``spent`` (a call's cache tokens are parts of its input tokens).
USAGE_SUMS = (
    "input_tokens", "output_tokens", "cost_usd", "cache_read_tokens", "cache_write_tokens"
)  # fmt: skip


class Journal:
    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._db = conn
        self.elapsed_s = float(self.get_state("elapsed_s") or 0.0)

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def create(cls, path: Path, meta: Mapping[str, str]) -> Journal:
        conn = _connect(path)
        with conn:
            conn.executescript(_SCHEMA)
            rows = {"schema_version": str(SCHEMA_VERSION), **meta}
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows.items())
        return cls(path, conn)

    @classmethod
    def open(cls, path: Path) -> Journal:
        if not path.is_file():
            raise RunDirError(f"no journal at {path}", hint="is this a Podium run directory?")
        try:
            conn = _connect(path)
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            if _disk_failure(exc):  # the disk's fault, not the file's: said by who owns the disk
                raise
            raise RunDirError(f"{path} is not a readable journal: {exc}") from None
        version = int(row[0]) if row else 0
        if version != SCHEMA_VERSION:
            raise RunDirError(
                f"{path} has journal schema {version}; this Podium reads schema {SCHEMA_VERSION}",
                hint="open it with the Podium version that wrote it (see meta podium_version)",
            )
        return cls(path, conn)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self, elapsed_s: float | None) -> Iterator[sqlite3.Connection]:
        """One transaction; ``elapsed_s`` (running time so far) is committed with it."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
            if elapsed_s is not None:
                self._set(self._db, "elapsed_s", str(elapsed_s))
                self.elapsed_s = elapsed_s
            failpoint("journal.write")  # crash with the transaction written but not committed
            self._db.execute("COMMIT")
        except BaseException:
            # SQLite may already have rolled back (a full disk does): a second ROLLBACK would
            # replace the real error with "no transaction is active".
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    # --- meta and bookkeeping -------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def get_state(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM state WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_state(self, key: str, value: str, elapsed_s: float | None = None) -> None:
        with self._write(elapsed_s) as db:
            self._set(db, key, value)

    @staticmethod
    def _set(db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, value))

    # --- nodes ----------------------------------------------------------------------------

    def begin(
        self, node: Node, rng_before: RngState, rng_after: RngState, elapsed_s: float
    ) -> None:
        """Record a node the moment its action is chosen, with the RNG before and after."""
        with self._write(elapsed_s) as db:
            db.execute(
                "INSERT INTO nodes (id, state, step, operator, parent_ids, rng_before, data) "
                "VALUES (?, ?, NULL, ?, ?, ?, ?)",
                (node.id, node.state.value, node.operator, json.dumps(node.parent_ids),
                 _rng_to_json(rng_before), node.model_dump_json()),
            )  # fmt: skip
            self._set(db, "rng", _rng_to_json(rng_after))

    def update(self, node: Node, elapsed_s: float) -> None:
        """Write a node's new state (code proposed, executed, reviewed, finished...)."""
        with self._write(elapsed_s) as db:
            db.execute(
                "UPDATE nodes SET state=?, step=?, is_buggy=?, metric=?, data=? WHERE id=?",
                (node.state.value, node.step, int(node.is_buggy),
                 node.metric.value if node.metric else None, node.model_dump_json(), node.id),
            )  # fmt: skip

    def record_call(self, call: ModelCall) -> None:
        with self._write(None) as db:
            db.execute(
                "INSERT INTO calls (node_id, role, seq, data) VALUES (?, ?, ?, ?)",
                (call.node_id, call.role, call.seq, call.model_dump_json()),
            )

    def nodes(self, state: NodeState | None = None, *, light: bool = False) -> list[Node]:
        """Nodes in id order (finished ones: in step order), optionally of one state.

        ``light``: without their plan, code, output and traceback (empty), which are most of a
        node's bytes and of the time reading it takes: for a reader that draws the tree (the
        viewer's graph, at thousands of nodes, every time the run changes).
        """
        data = f"json_remove(data, {LIGHT_FIELDS})" if light else "data"
        if state is NodeState.DONE:  # admitted ones in step order, then those not yet admitted
            sql = f"SELECT {data} FROM nodes WHERE state='done' ORDER BY step IS NULL, step, id"
            rows = self._db.execute(sql).fetchall()
        elif state is not None:
            rows = self._db.execute(
                f"SELECT {data} FROM nodes WHERE state=? ORDER BY id", (state.value,)
            ).fetchall()
        else:
            rows = self._db.execute(f"SELECT {data} FROM nodes ORDER BY id").fetchall()
        return [Node.model_validate_json(r[0]) for r in rows]

    def nodes_by_id(self, ids: Iterable[int]) -> dict[int, Node]:
        """The nodes with these ids, in full (an id the journal lacks is left out)."""
        wanted = sorted(set(ids))
        marks = ",".join("?" * len(wanted))
        rows = self._db.execute(f"SELECT id, data FROM nodes WHERE id IN ({marks})", wanted)
        return {int(r[0]): Node.model_validate_json(r[1]) for r in rows.fetchall()}

    def unfinished(self) -> list[Node]:
        rows = self._db.execute("SELECT data FROM nodes WHERE state!='done' ORDER BY id")
        return [Node.model_validate_json(r[0]) for r in rows.fetchall()]

    def calls(self, node_id: int | None = None) -> list[ModelCall]:
        if node_id is None:
            rows = self._db.execute("SELECT data FROM calls ORDER BY id").fetchall()
        else:
            rows = self._db.execute(
                "SELECT data FROM calls WHERE node_id=? ORDER BY id", (node_id,)
            ).fetchall()
        return [ModelCall.model_validate_json(r[0]) for r in rows]

    def next_seqs(self) -> dict[str, int]:
        """Per role, the next unused call number: past every call ever made, discarded ones too,
        so a new call never takes a number (and a scripted answer) another call had."""
        rows = self._db.execute(
            "SELECT role, MAX(seq) FROM ("
            "  SELECT role, seq FROM calls"
            "  UNION ALL"
            "  SELECT json_extract(value, '$.role'), json_extract(value, '$.seq')"
            "  FROM discarded, json_each(discarded.calls)"
            ") GROUP BY role"
        ).fetchall()
        return {role: int(top) + 1 for role, top in rows if role is not None}

    def earlier_seqs(self, node_id: int) -> dict[str, list[int]]:
        """Per role, the call numbers earlier attempts at this node used, in order: a re-run
        node asks its calls under them again, so it gets the answers it got before."""
        rows = self._db.execute(
            "SELECT DISTINCT json_extract(value, '$.role'), json_extract(value, '$.seq') "
            "FROM discarded, json_each(discarded.calls) WHERE discarded.node_id=?",
            (node_id,),
        ).fetchall()
        seqs: dict[str, list[int]] = {}
        for role, seq in sorted(rows, key=lambda r: (str(r[0]), int(r[1]))):
            seqs.setdefault(str(role), []).append(int(seq))
        return seqs

    def spent(self) -> list[tuple[str, str, bool, Usage]]:
        """(role, model, replayed, usage) of every answered call, discarded nodes' included: all
        of it was paid for (or, when replayed, recorded). Summed in SQL so the prompts stored
        beside are never decoded."""
        fields = ", ".join(
            f"SUM(COALESCE(json_extract(d, '$.response.usage.{f}'), 0))" for f in USAGE_SUMS
        )
        rows = self._db.execute(
            f"SELECT role, model, replayed, {fields}, COUNT(*) FROM ("
            "  SELECT json_extract(data, '$.role') AS role, json_extract(data, '$.model') AS model,"
            "    COALESCE(json_extract(data, '$.response.replayed'), 0) AS replayed, data AS d"
            "  FROM calls"
            "  UNION ALL"
            "  SELECT json_extract(value, '$.role'), json_extract(value, '$.model'),"
            "    COALESCE(json_extract(value, '$.response.replayed'), 0), value"
            "  FROM discarded, json_each(discarded.calls)"
            ") WHERE json_extract(d, '$.response') IS NOT NULL GROUP BY role, model, replayed"
        ).fetchall()
        return [
            (role, model or "", bool(replayed), Usage(
                input_tokens=int(i), output_tokens=int(o), cost_usd=float(c), calls=int(n),
                cache_read_tokens=int(r), cache_write_tokens=int(w)))
            for role, model, replayed, i, o, c, r, w, n in rows
        ]  # fmt: skip

    def next_node_id(self) -> int:
        row = self._db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM nodes").fetchone()
        return int(row[0])

    def rng_state(self) -> RngState | None:
        """The RNG state after the last decision (every decision is kept, so it continues)."""
        saved = self.get_state("rng")
        return _rng_from_json(saved) if saved else None

    def restart_unfinished(self) -> list[Node]:
        """Nodes a crash, an interrupt or a budget left unfinished, reset to run again.

        Their decisions (id, operator, parents) stay: the resumed run re-runs each under its id,
        exactly as the interrupted one would have finished it. What they had done so far (the
        record and its model calls) is archived in ``discarded`` — the calls were paid for.
        """
        nodes = self.unfinished()
        now = datetime.now(UTC).isoformat()
        fresh = [
            Node(id=n.id, parent_ids=n.parent_ids, operator=n.operator, worker=n.worker)
            for n in nodes
        ]
        with self._write(None) as db:
            for node, again in zip(nodes, fresh, strict=True):
                calls = [c.model_dump(mode="json") for c in self.calls(node.id)]
                db.execute(
                    "INSERT INTO discarded (node_id, node, calls, discarded_at) VALUES (?,?,?,?)",
                    (node.id, node.model_dump_json(), json.dumps(calls), now),
                )
                db.execute("DELETE FROM calls WHERE node_id=?", (node.id,))
                db.execute(
                    "UPDATE nodes SET state=?, step=NULL, is_buggy=0, metric=NULL, data=? "
                    "WHERE id=?",
                    (again.state.value, again.model_dump_json(), node.id),
                )
        return fresh

    def discarded_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM discarded").fetchone()[0])


# SQLite's primary result codes that mean the disk (or its permissions), not the file's content:
# PERM, READONLY, IOERR, FULL, CANTOPEN (https://sqlite.org/rescode.html).
_DISK_CODES = {3, 8, 10, 13, 14}


def _disk_failure(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _DISK_CODES


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # durable across process crashes, fast
    return conn
