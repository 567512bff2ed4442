"""The run directory contract (later tools and checks rely on it):

```
DIR/config.toml        the resolved config           DIR/summary.json   the run's outcome
DIR/journal.sqlite     every node and model call      DIR/grade.json     once graded
DIR/nodes/<id>/        solution.py, output.txt, submission.csv (if any), working/ (if kept)
DIR/best/              solution.py, submission.csv, node.json: the chosen final node
```

Files a solution wrote never reach the run directory as they are: the sandbox hands a node
its submission as a copy the host made (``podium.interfaces.Workspace``), and anything read
from a node's directory is read through ``podium.untrusted`` all the same.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any, TextIO

from podium.errors import RunDirError
from podium.failpoints import failpoint
from podium.interfaces import SUBMISSION
from podium.records import Node
from podium.untrusted import Refused, copy_untrusted, remove_tree


class RunDir:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "config.toml"
        self.journal = root / "journal.sqlite"
        self.nodes = root / "nodes"
        self.best = root / "best"
        self.summary = root / "summary.json"
        self.grade = root / "grade.json"
        self._lock: TextIO | None = None

    def node_dir(self, node_id: int) -> Path:
        return self.nodes / str(node_id)

    # --- exclusive use --------------------------------------------------------------------

    def lock(self) -> None:
        """Hold an exclusive lock for this process's lifetime: one writer per run dir."""
        fh = (self.root / ".lock").open("a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise RunDirError(
                f"{self.root} is in use by another Podium process",
                hint="wait for it to finish, or stop it first",
            ) from None
        self._lock = fh

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # --- per node -------------------------------------------------------------------------

    def reset_node(self, node_id: int) -> Path:
        """An empty directory for the node (leftovers of an interrupted attempt are removed)."""
        path = self.node_dir(node_id)
        remove_tree(path)  # a crashed node's slot may be any tree a solution made
        path.mkdir(parents=True)
        return path

    def write_text(self, node_id: int, name: str, text: str) -> None:
        (self.node_dir(node_id) / name).write_text(text, encoding="utf-8")

    # --- the final node -------------------------------------------------------------------

    def publish_best(self, node: Node | None) -> None:
        """Make ``best/`` hold ``node``'s files, atomically: a crash leaves the old or the new."""
        staging, old = self.root / "best.new", self.root / "best.old"
        for leftover in (staging, old):
            shutil.rmtree(leftover, ignore_errors=True)
        if node is None:
            return
        staging.mkdir()
        src = self.node_dir(node.id)
        for name in ("solution.py", SUBMISSION):
            try:
                copy_untrusted(src / name, staging / name, trusted=src)
            except (FileNotFoundError, Refused):
                continue
            failpoint("best.copy")
        info = {"node_id": node.id, "operator": node.operator, "step": node.step,
                "metric": node.metric.value if node.metric else None}  # fmt: skip
        (staging / "node.json").write_text(json.dumps(info, indent=2) + "\n")
        if self.best.exists():
            os.replace(self.best, old)
        os.replace(staging, self.best)
        shutil.rmtree(old, ignore_errors=True)

    def best_node_id(self) -> int | None:
        try:
            return int(json.loads((self.best / "node.json").read_text())["node_id"])
        except (OSError, ValueError, KeyError):
            return None

    # --- summary --------------------------------------------------------------------------

    def write_json(self, path: Path, data: dict[str, Any]) -> None:
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, path)
