"""``podium view``: placeholder (helper A writes it)."""

from __future__ import annotations


def view() -> None:
    """Open a run in the browser viewer."""
