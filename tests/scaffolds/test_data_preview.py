"""Row counts of public tables (listings and the prompts' data preview)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.scaffolds import count_rows


@pytest.mark.parametrize(
    ("content", "rows"),
    [
        ("id,y\n1,0\n2,1\n", 2),
        ("id,y\n1,0\n2,1", 2),  # no newline at the end
        ("id,y\n", 0),
        ('id,review\n1,"good,\nvery good"\n2,"bad"\n3,plain\n', 3),  # quoted line break
        ('id,review\r\n1,"a\r\nb"\r\n', 1),
    ],
    ids=["plain", "no final newline", "header only", "quoted newline", "crlf quoted"],
)
def test_rows_are_records_not_lines(tmp_path: Path, content: str, rows: int) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content.encode())
    assert count_rows(path) == rows
