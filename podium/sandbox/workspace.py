"""Kernel slots: the directory a kernel works in, prepared before the node it will serve exists.

A pre-started kernel cannot know its node, so it works in a slot (``working/``,
``submission/``, the read-only ``input``, and ``validate_submission.py``, the format-only
check the solution may run on its submission) under the run's scratch directory, on the same
filesystem as the node directories. Once every process of the kernel is dead, ``hand_over``
gives the node what the ``Workspace`` contract promises (the submission copied by descriptor
into a file the host creates, refused before a byte is copied when it has holes; ``working/``
renamed over, only when kept, stripped of setuid/setgid bits, special files and files with
holes) and the rest of the slot is thrown away. Nothing in the slot is ever followed as a link.

So nothing leaves a slot that costs the host more than it cost the solution: a file with holes
(``truncate -s 1G``: 4 KiB written) would be written out whole by a copy, 1 GiB of the run
dir per node, kept even for a refused node. What a node's directory holds on the disk is at
most what its slot held, which the workspace limit bounds.
"""

from __future__ import annotations

import itertools
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from podium.interfaces import SUBMISSION, SUBMISSION_WRITTEN, Workspace
from podium.sandbox.trees import TooDeep, make_safe
from podium.submission_check import install_script
from podium.untrusted import MAX_UNTRUSTED_BYTES, Refused, copy_untrusted, remove_tree

OUTPUT_DIRS = ("working", "submission")
_slots = itertools.count()


@dataclass(frozen=True)
class Slot:
    root: Path
    input_dir: Path

    @classmethod
    def create(cls, scratch: Path, input_dir: Path) -> Slot:
        # Absolute: bwrap resolves bind sources against its own cwd, which is the slot.
        root = scratch.resolve() / f"slot-{os.getpid()}-{next(_slots)}"
        for sub in OUTPUT_DIRS:
            (root / sub).mkdir(parents=True)
        install_script(root)
        return cls(root, input_dir)

    @property
    def writable(self) -> list[Path]:
        """The directories the kernel may write (a sandbox may give them to its uid)."""
        return [self.root, *(self.root / sub for sub in OUTPUT_DIRS)]

    def link_input(self) -> None:
        """For sandboxes that cannot bind-mount: ``input`` is a symlink to the public data."""
        (self.root / "input").symlink_to(self.input_dir.resolve(), target_is_directory=True)

    def hand_over(self, workspace: Workspace) -> str | None:
        """Give ``workspace`` its outputs; call only once every process of the kernel is dead.

        Returns why the submission was refused (a symlink, a FIFO, too large, sparse), or None.
        """
        workspace.root.mkdir(parents=True, exist_ok=True)
        target = workspace.root / SUBMISSION
        target.unlink(missing_ok=True)
        refused = None
        try:
            copy_untrusted(self.root / SUBMISSION_WRITTEN, target, trusted=self.root,
                           shown=SUBMISSION_WRITTEN, **_cap(workspace))  # fmt: skip
        except FileNotFoundError:
            pass
        except Refused as exc:
            refused = str(exc)
        if workspace.keep_working:
            _keep_working(self.root / "working", workspace.root / "working")
        return refused

    def discard(self) -> None:
        remove_tree(self.root)


def _keep_working(source: Path, target: Path) -> None:
    """Keep ``working/`` made safe; nothing (an empty directory) where the solution replaced
    it or made it too deep to keep: what is left goes with the slot."""
    remove_tree(target)
    try:
        kept = stat.S_ISDIR(source.lstat().st_mode)
        if kept:
            make_safe(source)
    except (FileNotFoundError, TooDeep):
        kept = False
    if kept:
        source.rename(target)
    else:
        target.mkdir()


def _cap(workspace: Workspace) -> dict[str, int]:
    """The submission's size cap: the task's where it gave one and it is lower than the
    sandbox's own (``copy_untrusted``'s default)."""
    cap = workspace.max_submission_bytes
    return {"max_bytes": cap} if cap is not None and cap < MAX_UNTRUSTED_BYTES else {}
