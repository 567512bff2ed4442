"""A short, deterministic description of the public data, for the prompts.

Lists the files under ``input/`` with sizes, and for tables their shape, columns and types. No
absolute paths and nothing that changes between identical runs, so prompts stay comparable.
"""

from __future__ import annotations

import csv
from pathlib import Path

MAX_FILES = 30
MAX_COLUMNS = 40
ROW_COUNT_LIMIT_BYTES = 512 * 1024 * 1024  # counting rows of bigger files takes too long


def human_size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def count_rows(path: Path) -> int | None:
    """Data rows of a CSV (its header excluded); None for a file too big to count quickly.

    Counting newlines is fast but overcounts a file whose quoted fields hold line breaks (text
    competitions), so a file with a quote character in it is counted record by record.
    """
    if path.stat().st_size > ROW_COUNT_LIMIT_BYTES:
        return None
    newlines, last, quoted = 0, b"\n", False
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            newlines += chunk.count(b"\n")
            quoted = quoted or b'"' in chunk
            last = chunk[-1:]
    if quoted:
        with path.open(newline="", encoding="utf-8", errors="replace") as text:
            return max(sum(1 for row in csv.reader(text) if row) - 1, 0)
    lines = newlines + (last != b"\n")
    return max(lines - 1, 0)  # minus the header


def describe_table(path: Path) -> list[str]:
    import pandas as pd  # imported here: pandas costs ~0.5 s, most CLI commands never need it

    try:
        head = pd.read_csv(path, nrows=50)
    except Exception as exc:
        return [f"  (could not read as CSV: {type(exc).__name__})"]
    rows = count_rows(path)
    cols = [f"{c} ({head[c].dtype})" for c in head.columns[:MAX_COLUMNS]]
    more = len(head.columns) - MAX_COLUMNS
    lines = [
        f"  {rows if rows is not None else 'many'} rows x {len(head.columns)} columns",
        "  columns: " + ", ".join(cols) + (f", ... {more} more" if more > 0 else ""),
    ]
    sample = head.head(2).to_csv(index=False).strip().splitlines()
    lines += ["  first rows:", *("    " + line[:200] for line in sample)]
    return lines


def preview(public_dir: Path, max_chars: int = 6000) -> str:
    entries = sorted(public_dir.iterdir(), key=lambda p: p.name)
    lines = ["Files in ./input/:"]
    for path in entries[:MAX_FILES]:
        if path.is_dir():
            children = sorted(c.name for c in path.iterdir())
            example = f", e.g. {', '.join(children[:3])}" if children else ""
            lines.append(f"- {path.name}/ ({len(children)} entries{example})")
            continue
        lines.append(f"- {path.name} ({human_size(path.stat().st_size)})")
        if path.suffix.lower() in (".csv", ".tsv") or path.name.endswith(".csv.gz"):
            lines += describe_table(path)
    if len(entries) > MAX_FILES:
        lines.append(f"- ... {len(entries) - MAX_FILES} more entries")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[:max_chars] + "\n[... preview truncated]"
