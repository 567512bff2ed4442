"""Lays out a node's workspace for sandboxes that cannot bind-mount (the ``local`` one)."""

from __future__ import annotations

from pathlib import Path

from podium.interfaces import Workspace

SUBDIRS = ("working", "submission")


def prepare_linked_workspace(ws: Workspace) -> None:
    """Create ``working/`` and ``submission/``; make ``input`` a symlink to the public data.

    The data is linked, never copied: competitions can be tens of gigabytes.
    """
    for sub in SUBDIRS:
        (ws.root / sub).mkdir(parents=True, exist_ok=True)
    link = ws.root / "input"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path(ws.input_dir).resolve(), target_is_directory=True)
