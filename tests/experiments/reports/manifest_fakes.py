"""Edits to the fake sweeps and runs of fakes.py, for what they do not write: a run's attempts
and errors in sweep.json, and summary.json fields a newer Podium records (the operator set
that ran, the code's commits)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def set_attempts(
    sweep: Path,
    run_id: str,
    attempts: int,
    error: str | None = None,
    attempt_errors: list[str] | None = None,
) -> None:
    """Give the run ``run_id`` of the sweep at ``sweep`` these attempts and errors in sweep.json
    (``attempt_errors`` None: leave the key out, as an older manifest does)."""
    path = sweep / "sweep.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    entry = next(e for e in manifest["runs"] if e["id"] == run_id)
    entry.update(attempts=attempts, error=error)
    if attempt_errors is not None:
        entry["attempt_errors"] = attempt_errors
    path.write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def patch_summary(run_dir: Path, **fields: Any) -> None:
    """Set top-level fields of the run's summary.json (``versions`` is merged, not replaced)."""
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    versions = fields.pop("versions", None)
    summary.update(fields)
    if versions is not None:
        summary["versions"] = {**summary.get("versions", {}), **versions}
    path.write_text(json.dumps(summary, indent=1), encoding="utf-8")
