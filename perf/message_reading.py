"""What reading a kernel's message costs the host: jupyter_client's plain ``json.loads`` against
Podium's bounded reader (``podium.sandbox.messages.bounded_loads``: one scan counting JSON
values, stopped at the bound, then the same ``json.loads``), side by side on the same frames.

```
.venv/bin/python perf/message_reading.py [--repeats 5] [--json F]
```

Frames (about 30 MiB each, under the default 32 MiB message cap, except ``execute_reply``):

* ``stream``: a stream message's content, lines of 80 characters (a solution printing);
* ``picture``: a display_data's content, one base64 PNG of 30 MiB;
* ``execute_reply``: a small reply, as most messages are (the per-message overhead);
* ``nested lists`` and ``dates``: the attacks, ``[[],[],...]`` and a list of date strings.

Figures: the median seconds to read each frame each way, and the peak memory (tracemalloc) the
reading allocated; "refused" where the bounded reader refuses the frame.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podium.sandbox.messages import bounded_loads

MiB = 1024 * 1024


def frames() -> dict[str, bytes]:
    line = "y" * 79 + "\n"
    csv = "0.125,1.5,2.25,3\n"  # a solution printing a table: commas inside the string
    return {
        "stream": json.dumps({"name": "stdout", "text": line * (30 * MiB // 80)}).encode(),
        "csv printed": json.dumps({"name": "stdout", "text": csv * (30 * MiB // 17)}).encode(),
        "picture": json.dumps(
            {
                "data": {
                    "image/png": base64.b64encode(b"\x89PNG" * (22 * MiB // 4)).decode(),
                    "text/plain": "<Figure>",
                },
                "metadata": {},
            }
        ).encode(),
        "execute_reply": json.dumps(
            {"status": "ok", "execution_count": 3, "user_expressions": {}, "payload": []}
        ).encode(),
        "nested lists": ("[" + "[], " * (7 * MiB) + "[]]").encode(),
        "dates": json.dumps(["2020-01-01T00:00:00"] * 1_300_000).encode(),
    }


def measure(read: Callable[[bytes], Any], frame: bytes, repeats: int) -> dict[str, Any]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            read(frame)
        except ValueError:
            return {"s": round(time.perf_counter() - start, 4), "refused": True}
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    read(frame)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"s": round(statistics.median(times), 4), "peak_mib": round(peak / MiB, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found: dict[str, Any] = {}
    for name, frame in frames().items():
        found[name] = {
            "mib": round(len(frame) / MiB, 1),
            "json.loads": measure(json.loads, frame, args.repeats if len(frame) > MiB else 1000),
            "bounded": measure(bounded_loads, frame, args.repeats if len(frame) > MiB else 1000),
        }
        print(name, json.dumps(found[name]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
