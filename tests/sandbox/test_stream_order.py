"""What a solution prints reaches its output in the order it wrote it, stdout and stderr
mixed, in every sandbox and whatever the timing (``podium.sandbox.kernel_args``); and the code
that orders the streams leaves no name in the solution's namespace."""

from __future__ import annotations

from tests.sandbox.test_attacks import Host, host, kind, run_all

__all__ = ["host", "kind"]  # the fixtures, used by name

INTERLEAVED = """
import sys, time
print("one", file=sys.stderr)
print("two")
time.sleep(0.3)  # past ipykernel's flush interval: a timer flush may fall here
print("three", file=sys.stderr)
print("four")
_ = sys.stderr.write("five\\n")
"""


def test_output_keeps_the_order_the_solution_wrote_it(kind: str, host: Host) -> None:
    first, second = run_all(kind, host.ws, INTERLEAVED, "print(sorted(k for k in globals() "
                            "if 'podium' in k or k in ('sys', '__file__')))")  # fmt: skip
    assert first.output.splitlines() == ["one", "two", "three", "four", "five"]
    assert second.output.strip() == "[]"
