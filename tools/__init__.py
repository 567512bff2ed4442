"""Build tools of the repository (not shipped in the wheel)."""
