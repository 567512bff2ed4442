"""Reading what a sandbox wrote, and printing what it said: the one place both rules live."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from podium.records import ExecResult, ExecStatus, Node
from podium.untrusted import Refused, copy_untrusted, inert, open_untrusted, read_untrusted

ESCAPES = [
    "\x1b]52;c;cHduZWQ=\x07",  # OSC 52: write the clipboard
    "\x1b]52;c;cHduZWQ=\x1b\\",  # ... ended by ST
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b]0;title\x07",  # window title
    "\x1bP+q544e\x1b\\",  # DCS query
    "\x1b7\x1b8",  # save / restore cursor
    "\x9b2J",  # an 8-bit CSI
]


@pytest.mark.parametrize("sequence", ESCAPES)
def test_inert_text_has_no_escape_and_no_raw_control_character(sequence: str) -> None:
    text = inert(f"before{sequence}after\x07\x08\x00\u202e")
    assert not any(ord(c) < 0x20 and c not in "\t\n" for c in text), repr(text)
    assert not any(0x7F <= ord(c) <= 0x9F for c in text), repr(text)
    assert "\u202e" not in text
    assert text.startswith("before") and "after" in text


def test_inert_keeps_text_lines_and_tabs_and_shows_what_it_replaced() -> None:
    assert inert("a\tb\nc\r\nd\re") == "a\tb\nc\nd\ne"
    assert inert("bell\x07") == "bell\\x07"


def test_records_make_sandbox_text_inert_even_when_copied_with_an_update() -> None:
    result = ExecResult(status=ExecStatus.ERROR, output="x\x1b[2Jy", error_value="\x1b]52;c;a\x07")
    assert result.output == "xy" and result.error_value == ""
    updated = result.model_copy(update={"killed_reason": "z\x1b]0;t\x07", "output": "\x9b1m"})
    assert updated.killed_reason == "z" and "\x9b" not in updated.output
    node = Node(id=1, operator="draft").model_copy(update={"bug_reason": "bad\x1b[31m col"})
    assert node.bug_reason == "bad col"


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "f.csv").write_bytes(b"id\n1\n")
    assert read_untrusted(tmp_path / "f.csv") == b"id\n1\n"


def test_a_symlink_is_refused_at_the_last_and_at_any_inner_component(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("answers")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link.csv").symlink_to(secret)
    (tmp_path / "ws" / "dir").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(Refused, match="symlink"):
        read_untrusted(tmp_path / "ws" / "link.csv")
    with pytest.raises(Refused, match="symlink"):
        read_untrusted(tmp_path / "ws" / "dir" / "secret.csv", trusted=tmp_path / "ws")


@pytest.mark.timeout(30)
def test_a_fifo_a_directory_and_a_socket_are_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, kind in (("fifo", "a FIFO"), ("dir", "a directory")):
        with pytest.raises(Refused, match=kind):
            read_untrusted(tmp_path / name)


def test_a_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    with big.open("wb") as fh:
        fh.truncate(50 * 1024**3)  # sparse: nothing is really written
    with pytest.raises(Refused, match="over the 1,024-byte limit"):
        read_untrusted(big, max_bytes=1024)


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_untrusted(tmp_path / "absent.csv")


def test_a_copy_is_a_new_0644_file_of_the_host_whatever_the_source_mode(tmp_path: Path) -> None:
    src = tmp_path / "sh"
    src.write_bytes(b"#!/bin/sh\n")
    src.chmod(0o6777)
    dest = tmp_path / "copy"
    assert copy_untrusted(src, dest) == len(b"#!/bin/sh\n")
    mode = dest.stat().st_mode
    assert stat.S_IMODE(mode) == 0o644 and dest.stat().st_uid == os.getuid()
    assert dest.read_bytes() == b"#!/bin/sh\n"


def test_a_refused_copy_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc/hostname")
    with pytest.raises(Refused):
        copy_untrusted(tmp_path / "link", tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_reading_is_from_the_descriptor_opened_not_from_the_name(tmp_path: Path) -> None:
    good = tmp_path / "submission.csv"
    good.write_text("id\n1\n")
    with open_untrusted(good) as fh:
        good.unlink()
        good.symlink_to("/etc/hostname")  # swapped after the open: changes nothing
        assert fh.read() == b"id\n1\n"


def test_a_unix_socket_is_refused(tmp_path: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(Refused, match="socket"):
            read_untrusted(tmp_path / "sock")
