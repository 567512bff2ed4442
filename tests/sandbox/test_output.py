"""CappedOutput keeps the head and the tail of a solution's output under a byte cap."""

from __future__ import annotations

import re
import tracemalloc

import pytest

from podium.exec_output import CappedOutput
from podium.untrusted import strip_ansi

MARKER = re.compile(r"\n\[\.\.\. (\d+) bytes of output omitted \.\.\.\]\n")


def numbered_lines(count: int) -> str:
    """``count`` distinct 10-byte lines, so any slice shows where it came from."""
    return "".join(f"line {i:04d}\n" for i in range(count))


def feed(out: CappedOutput, text: str, chunk: int) -> None:
    for start in range(0, len(text), chunk):
        out.write(text[start : start + chunk])


@pytest.mark.parametrize("chunk", [1, 7, 10, 333, 10_000])
def test_under_the_cap_everything_is_kept_verbatim(chunk: int) -> None:
    text = numbered_lines(100)  # 1000 bytes, exactly the cap
    out = CappedOutput(1000)
    feed(out, text, chunk)
    assert out.text() == text
    assert not out.truncated
    assert out.total_bytes == 1000


def test_empty_output() -> None:
    out = CappedOutput(1000)
    assert out.text() == ""
    assert out.total_bytes == 0
    assert not out.truncated


@pytest.mark.parametrize("chunk", [1, 7, 10, 333, 1000, 100_000])
def test_over_the_cap_head_and_tail_are_kept_with_the_omitted_count(chunk: int) -> None:
    text = numbered_lines(10_000)  # 100_000 bytes
    cap = 1000
    out = CappedOutput(cap)
    feed(out, text, chunk)

    kept = out.text()
    match = MARKER.search(kept)
    assert match, kept[:300]
    head, tail = kept[: match.start()], kept[match.end() :]
    # The start (what ran) and the end (where it failed) survive, the middle is counted.
    assert text.startswith(head)
    assert text.endswith(tail)
    assert head.startswith("line 0000\n")
    assert tail.endswith("line 9999\n")
    assert len(head) + len(tail) == cap
    assert int(match.group(1)) == len(text) - cap
    assert out.truncated
    assert out.total_bytes == len(text)


def test_one_byte_over_the_cap_omits_exactly_one_byte() -> None:
    out = CappedOutput(100)
    out.write("a" * 50)
    out.write("b" * 51)
    kept = out.text()
    match = MARKER.search(kept)
    assert match and match.group(1) == "1"
    assert out.truncated
    data = MARKER.sub("", kept)
    assert data.count("a") + data.count("b") == 100


@pytest.mark.parametrize("total", [99, 100, 101, 110, 175, 176, 250])
@pytest.mark.parametrize("chunk", [1, 30, 51])
def test_truncated_flag_agrees_with_the_marker(total: int, chunk: int) -> None:
    out = CappedOutput(100)
    feed(out, "q" * total, chunk)
    shows_marker = MARKER.search(out.text()) is not None
    assert shows_marker == (total > 100)
    assert out.truncated == (total > 100)


def test_tail_keeps_the_last_writes_after_a_huge_one() -> None:
    out = CappedOutput(1000)
    out.write("start\n")
    out.write("x" * 5_000_000)
    out.write("Traceback: the real error\n")
    kept = out.text()
    assert kept.startswith("start\n")
    assert kept.endswith("x" * 100 + "Traceback: the real error\n")
    assert out.total_bytes == 6 + 5_000_000 + 26
    match = MARKER.search(kept)
    assert match and int(match.group(1)) == out.total_bytes - 1000


def _marker_len(total: int) -> int:
    return len(f"\n[... {total} bytes of output omitted ...]\n")


def test_one_huge_write_stays_bounded() -> None:
    cap = 64 * 1024
    out = CappedOutput(cap)
    out.write("y" * 20_000_000)
    kept = out.text()
    assert len(kept.encode()) <= cap + _marker_len(out.total_bytes)
    assert out.total_bytes == 20_000_000
    assert out.truncated


def test_many_small_writes_stay_bounded_in_memory() -> None:
    cap = 64 * 1024
    chunk = "z" * 999 + "\n"
    tracemalloc.start()
    try:
        out = CappedOutput(cap)
        baseline = tracemalloc.get_traced_memory()[0]
        for _ in range(20_000):  # 20 MB in 1 kB writes
            out.write(chunk)
        retained = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    kept = out.text()
    assert out.total_bytes == 20_000_000
    assert len(kept.encode()) <= cap + _marker_len(out.total_bytes)
    # What the object holds is a few caps' worth, not the 20 MB that went through it.
    assert retained < 8 * cap, retained


def test_total_bytes_counts_utf8_bytes() -> None:
    out = CappedOutput(1000)
    out.write("é")  # 2 bytes
    out.write("€")  # 3 bytes
    out.write("🙂")  # 4 bytes
    assert out.total_bytes == 9
    assert out.text() == "é€🙂"


@pytest.mark.parametrize("cap", [10, 11, 13, 64, 1001])
@pytest.mark.parametrize("char", ["é", "€", "🙂"])
def test_multibyte_text_cut_anywhere_does_not_crash(cap: int, char: str) -> None:
    out = CappedOutput(cap)
    for _ in range(500):
        out.write(char)
    out.write("END")
    kept = out.text()
    assert isinstance(kept, str)
    assert kept.endswith("END")
    match = MARKER.search(kept)
    assert match
    assert int(match.group(1)) == out.total_bytes - cap
    assert out.total_bytes == 500 * len(char.encode()) + 3


def test_lone_surrogates_do_not_crash() -> None:
    out = CappedOutput(100)
    out.write("bad \ud800 surrogate")
    assert "surrogate" in out.text()


def test_strip_ansi_removes_colour_and_cursor_codes() -> None:
    coloured = "\x1b[0;31mValueError\x1b[0m: boom\x1b[?25l \x1b[1;32mok\x1b[39;49m"
    assert strip_ansi(coloured) == "ValueError: boom ok"


def test_strip_ansi_leaves_plain_text_alone() -> None:
    plain = "Traceback (most recent call last):\n  [1, 2] and a;b\n"
    assert strip_ansi(plain) == plain
