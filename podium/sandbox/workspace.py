"""Kernel slots: the directory a kernel works in, prepared before the node it will serve exists.

A pre-started kernel cannot know its node, so it works in a slot (``working/``,
``submission/``, the read-only ``input``, and ``validate_submission.py``, the format-only
check the solution may run on its submission) under the run's scratch directory, on the same
filesystem as the node directories. Once the kernel is dead, ``hand_over`` renames the slot's
``working/`` and ``submission/`` into the node's directory (a rename: no copy, whatever the size)
and the rest of the slot is thrown away. Nothing is followed: a symlink the solution made stays
a symlink, for the host to refuse later.
"""

from __future__ import annotations

import itertools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from podium.interfaces import Workspace
from podium.submission_check import install_script

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

    def link_input(self) -> None:
        """For sandboxes that cannot bind-mount: ``input`` is a symlink to the public data."""
        (self.root / "input").symlink_to(self.input_dir.resolve(), target_is_directory=True)

    def hand_over(self, workspace: Workspace) -> None:
        """Move the outputs into the node's directory; call only once the kernel is dead."""
        workspace.root.mkdir(parents=True, exist_ok=True)
        for sub in OUTPUT_DIRS:
            source, target = self.root / sub, workspace.root / sub
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.exists():
                shutil.rmtree(target)
            if source.is_dir() and not source.is_symlink():
                source.rename(target)
            else:
                target.mkdir()

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def directory_size(root: Path, stop_above: int) -> int:
    """Bytes used under ``root`` (allocated blocks, so sparse files count as written).

    Stops counting once past ``stop_above``: a watchdog only needs to know that.
    """
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
            if total > stop_above:
                return total
    return total
