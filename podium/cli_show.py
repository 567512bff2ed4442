"""``podium show`` and ``podium rerun``: placeholder (helper D writes them)."""

from __future__ import annotations


def show() -> None:
    """Show a run's tree, or one node, in the terminal."""


def rerun() -> None:
    """Re-execute a node's code in a fresh sandbox and compare."""
