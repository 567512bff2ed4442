"""What a kernel's message becomes on the host: bounded by its bytes, whatever its JSON holds.

The relay caps a message's bytes; these attacks send messages under that cap whose JSON the
host's session would have made into gigabytes of Python objects (``[[],[],...]``), or whose
header the session would have run a date parser over, string by string, for seconds on the
event loop (``extract_dates``), while no watchdog looked. Each is signed with the kernel's own
key, as a real kernel's are. Judged on the host: the test process's peak memory and how long
the execution held it; the kernel is killed as a protocol violation.
"""

from __future__ import annotations

import resource
import time

import pytest

from podium.sandbox.messages import MAX_HEADER_BYTES, MAX_JSON_VALUES
from tests.sandbox.test_attacks import Host, host, isolated, reset_peak_rss, run_all, with_limits
from tests.support import scaled

__all__ = ["host", "isolated"]  # the fixtures, used by name

MiB = 1024 * 1024
MESSAGE_CAP = 32 * MiB  # the default sandbox.max_message_size
# Each sends two messages of about 28 MiB (under the cap) on iopub, as a reply to the cell.
_SEND = """
from ipykernel.kernelbase import Kernel
kernel = Kernel.instance()
parent = kernel.get_parent("shell")
for _ in range(2):
    {send}
print("sent", flush=True)
"""
_SENDS = "kernel.session.send(kernel.iopub_socket, {kind!r}, {content}, parent=parent)"
TOO_MANY = f"more than {MAX_JSON_VALUES:,} JSON values"
ATTACKS = {  # name: (what is sent, what the kernel is killed for)
    # 4 bytes each ("[], "): a 56-byte list each on the host (~450 MiB per message).
    "nested lists": (_SENDS.format(kind="display_data", content="{'data': {'text/plain': "
                     "'x'}, 'metadata': {}, 'x': [[]] * 7_000_000}"), TOO_MANY),
    # 4 bytes each: a 64-byte dict each.
    "empty objects": (_SENDS.format(kind="stream", content="{'name': 'stdout', 'text': 'x', "
                      "'y': [{}] * 7_000_000}"), TOO_MANY),
    # Python's json reads NaN (a float each), which a kernel's packer never writes: packed here.
    "NaNs": ("kernel.session.send(kernel.iopub_socket, 'stream', b'{\"name\": \"stdout\", "
             "\"text\": \"x\", \"y\": [' + b'NaN,' * 6_000_000 + b'NaN]}', parent=parent)",
             TOO_MANY),
    # A parent header of date strings: ~12 us of dateutil each on the host's event loop.
    "dates in a header": (
        "kernel.session.send(kernel.iopub_socket, 'stream', {'name': 'stdout', 'text': 'x'}, "
        "parent=dict(parent['header'], d=['2020-01-01T00:00:00'] * 1_200_000))",
        f"at most {MAX_HEADER_BYTES:,}",
    ),
    # One value, whose repr is 4 characters a byte: 1.2 GiB on the host before.
    "text that is a list": (_SENDS.format(kind="stream", content="{'name': 'stdout', "
                            "'text': ['\\x7f' * 27_000_000]}"),
                            "a stream's text is list, not text"),
}  # fmt: skip


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_message_under_the_cap_costs_the_host_a_bounded_multiple_of_its_bytes(
    isolated: str, host: Host, attack: str
) -> None:
    options = with_limits(max_message_bytes=MESSAGE_CAP, memory_bytes=2 * 1024**3)
    send, killed_for = ATTACKS[attack]
    code = _SEND.format(send=send)
    reset_peak_rss()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.perf_counter()
    result = run_all(isolated, host.ws, code, options=options)[0]
    took = time.perf_counter() - started
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert result.killed_reason is not None, result.output
    assert result.killed_reason.startswith("protocol violation: an unreadable message"), (
        result.killed_reason
    )
    assert killed_for in result.killed_reason, result.killed_reason
    # Two messages in flight at most (~56 MiB of bytes), parsed into nothing past the bound:
    # it grew by 0.6-1.9 GiB before, and took 10-17 s per message of dates.
    assert grown < 200 * MiB, f"the host grew by {grown / MiB:.0f} MiB"
    assert took < scaled(30.0), f"the execution held the host for {took:.1f} s"


# An error whose value and traceback are as large as a message: text, of the right type.
_HUGE_ERROR = _SEND.format(send=_SENDS.format(kind="error", content=(
    "{'ename': 'E' * 5_000, 'evalue': 'v' * 13_000_000, 'traceback': ['t' * 13_000_000]}"
)))  # fmt: skip


def test_an_error_as_large_as_a_message_is_kept_as_large_as_an_output(
    isolated: str, host: Host
) -> None:
    """A kernel's error message goes into the node's record, the journal and every later
    prompt: its name, value and traceback are capped as its output is (the 28 MiB each
    went into the journal whole, 281 MiB for one node)."""
    options = with_limits(max_message_bytes=MESSAGE_CAP, memory_bytes=2 * 1024**3)
    cap = 64 * 1024
    result = run_all(isolated, host.ws, _HUGE_ERROR, options=options, max_output_bytes=cap)[0]
    assert "sent" in result.output, result.output
    assert result.error_name is not None and len(result.error_name) <= 1024 + 200
    assert result.error_value is not None and len(result.error_value.encode()) <= cap + 200
    assert result.traceback is not None and len(result.traceback.encode()) <= cap + 200
    assert len(result.output.encode()) <= cap + 200
