"""Reading a solution's traceback back: real kernels' tracebacks (tests/fixtures/tracebacks/,
recorded from both sandboxes; one test runs a kernel now, so a new IPython's layout is caught),
hostile text a solution controls, and the bounds that keep any input cheap."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from podium import tracebacks
from podium.exec_output import CappedOutput
from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import LocalSandbox, SandboxOptions
from podium.tracebacks import (
    Frame,
    ParsedTraceback,
    as_json,
    output_without_traceback,
    parse_traceback,
    render_text,
)
from tests.support import REPO, scaled

FIXTURES = REPO / "tests" / "fixtures" / "tracebacks"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def parsed(name: str) -> ParsedTraceback:
    return parse_traceback(fixture(name)["traceback"])


def where(frames: tuple[Frame, ...]) -> list[tuple[str, int | None, str | None, bool]]:
    return [(f.file, f.line, f.function, f.in_solution) for f in frames]


def texts(name: str) -> list[str]:
    data = fixture(name)
    return [line.text for line in render_text(parsed(name), solution_code=data["code"])]


# --- real tracebacks -------------------------------------------------------------------------


def test_a_pandas_key_error_separates_the_solution_from_the_library() -> None:
    tb = parsed("pandas_keyerror")
    assert tb.error == "KeyError: 'target'"
    base = "/work/main/.venv/lib/python3.11/site-packages/pandas/core"
    assert where(tb.frames) == [
        ("solution.py", 5, None, True),
        (f"{base}/frame.py", 4330, "DataFrame.__getitem__", False),
        (f"{base}/indexes/base.py", 3823, "Index.get_loc", False),
    ]
    cell = tb.frames[0]
    assert cell.code_line == 'y = df["target"]'
    assert cell.context[-1] == '----> 5 y = df["target"]'
    assert cell.context[0] == "      1 import pandas as pd"
    assert tb.frames[2].code_line == "raise KeyError(key) from err"
    # the KeyError pandas raised first, then re-raised "from" it
    (cause,) = tb.causes
    assert cause.link == "cause" and cause.error == "KeyError: 'target'"
    assert [f.file for f in cause.frames][1:3] == ["pandas/_libs/index.pyx"] * 2
    assert not any(f.in_solution for f in cause.frames)
    assert cause.frames[1].code_line is None  # "Could not get source": no code, said as None


def test_several_functions_of_the_solution_are_its_frames_outermost_first() -> None:
    tb = parsed("nested_functions")
    assert where(tb.frames) == [
        ("solution.py", 17, None, True),
        ("solution.py", 8, "features", True),
        ("solution.py", 13, "parse", True),
    ]
    assert [f.code_line for f in tb.frames] == [
        'features(["1", "2", "x"])',
        "total += parse(r)",
        "return int(r)",
    ]
    assert tb.error == "ValueError: invalid literal for int() with base 10: 'x'"


@pytest.mark.parametrize("sandbox", ["bwrap", "local"])
def test_a_module_the_solution_wrote_is_the_solutions_in_either_sandbox(sandbox: str) -> None:
    data = fixture(f"working_module_{sandbox}")
    assert data["sandbox"] == sandbox
    tb = parse_traceback(data["traceback"])
    assert where(tb.frames) == [
        ("solution.py", 13, None, True),
        ("working/helpers.py", 3, "scale", True),
        ("working/helpers.py", 3, "<listcomp>", True),
    ]
    assert tb.frames[1].code_line == "return [x / m for x in xs]"


def test_a_syntax_error_in_the_cell_and_in_a_module() -> None:
    tb = parsed("syntax_error")
    assert tb.error == "SyntaxError: invalid syntax"
    assert where(tb.frames) == [("solution.py", 4, None, True)]
    assert tb.frames[0].code_line == "return x +"
    assert tb.frames[0].context == ("    return x +", "              ^")

    tb = parsed("working_module_syntax")  # Python's own layout, IPython's frame first
    assert where(tb.frames)[1:] == [
        ("solution.py", 7, None, True),
        ("working/feats.py", 2, None, True),
    ]
    assert tb.frames[0].function == "run_code" and not tb.frames[0].in_solution
    assert [f.code_line for f in tb.frames][1:] == ["import feats", "return x +"]
    assert tb.error == "SyntaxError: invalid syntax"


def test_a_chain_keeps_each_exception_and_how_it_led_to_the_next() -> None:
    tb = parsed("chained")
    assert tb.error == "KeyError: 'other'"
    assert [(c.error, c.link) for c in tb.causes] == [
        ("KeyError: 'k'", "cause"),
        ("ValueError: no key k in the config", "context"),
    ]
    assert where(tb.causes[1].frames) == [
        ("solution.py", 11, None, True),
        ("solution.py", 5, "read", True),
    ]
    assert texts("chained") == [
        "KeyError: 'other'",
        '  solution.py, line 11: {}["other"]',
        "raised while handling:",
        "  ValueError: no key k in the config",
        '    solution.py, line 11: {}["other"]',
        '    solution.py, line 5, in read: raise ValueError("no key k in the config") from e',
        "caused by:",
        "  KeyError: 'k'",
        '    solution.py, line 5, in read: raise ValueError("no key k in the config") from e',
    ]


def test_messages_of_several_lines_stay_whole() -> None:
    assert parsed("multiline_message").error == (
        "ValueError: shapes do not match:\n  a: (3, 4)\n  b: (5, 6)\nfix the features"
    )
    assert parsed("note").error == "DataError: \nthe train file has no rows"
    assert parsed("assertion").error == "AssertionError: 3 predictions for 2 labels"
    assert parsed("sklearn_nan").error.startswith("ValueError: Input X contains NaN.\n")


def test_frames_printed_inside_a_message_stay_in_the_message() -> None:
    tb = parsed("fake_frames")
    assert where(tb.frames) == [("solution.py", 1, None, True)]
    assert tb.error.splitlines() == [
        "RuntimeError: oops",
        "Traceback (most recent call last):",
        "  File /evil/x.py:1, in <module>",
        "Cell In[9], line 99",
        "----> 99 fake()",
        "KeyError: 'fake'",
    ]


def test_a_recursion_keeps_both_ends_and_counts_the_middle() -> None:
    tb = parsed("recursion")
    assert len(tb.frames) == tracebacks.MAX_FRAMES
    assert tb.dropped == 122 - tracebacks.MAX_FRAMES  # IPython printed 122 frames
    assert tb.frames[0].line == 10 and tb.frames[-1].function == "walk"
    assert texts("recursion") == [
        "RecursionError: maximum recursion depth exceeded",
        "  solution.py, line 10: walk(0)",
        f"  solution.py, line 7, in walk: return walk(n + 1)  [× {tracebacks.MAX_FRAMES - 1}]",
        "  [… 72 more frames left out]",
    ]


def test_no_frames_without_a_traceback() -> None:
    exit_ = parsed("system_exit")  # IPython's notice, then the error
    assert exit_.frames == () and exit_.error == "SystemExit: 3"
    assert parse_traceback("") == ParsedTraceback(error="")
    text = "not a traceback\n  at all\n----> 3 nor this"
    assert parse_traceback(text) == ParsedTraceback(error=text)


def test_the_terminal_lines_put_the_error_first_and_fold_the_library() -> None:
    assert texts("pandas_keyerror") == [
        "KeyError: 'target'",
        '  solution.py, line 5: y = df["target"]',
        "  … 2 library frames (pandas)",
        "caused by:",
        "  KeyError: 'target'",
        "    … 5 library frames (pandas)",
    ]
    assert texts("sklearn_nan")[-2:] == [
        "  solution.py, line 6: LogisticRegression().fit(X, y)",
        "  … 7 library frames (sklearn)",
    ]
    assert texts("working_module_syntax")[-1] == "  … 1 library frame (IPython)"
    kinds = [line.kind for line in render_text(parsed("pandas_keyerror"))]
    assert kinds == ["error", "frame", "library", "link", "error", "library"]


def test_a_frame_without_context_takes_its_line_from_the_code() -> None:
    text = "Traceback (most recent call last):\n  Cell In[1], line 2\nValueError: x\n"
    frame = parse_traceback(text).frames[0]
    assert frame.code_line is None and frame.line == 2
    lines = render_text(parse_traceback(text), solution_code="a = 1\n    b = f(a)\n")
    assert lines[1].text == "  solution.py, line 2: b = f(a)"
    assert render_text(parse_traceback(text))[1].text == "  solution.py, line 2"


def test_older_ipython_and_python_layouts() -> None:
    ipython7 = (
        "---------------------------------------------------------------------------\n"
        "KeyError                                  Traceback (most recent call last)\n"
        "<ipython-input-3-5b1a3c0f> in <module>\n"
        "      3 \n"
        '----> 4 y = df["target"]\n'
        "\n"
        "~/venv/lib/python3.8/site-packages/pandas/core/frame.py in __getitem__(self, key)\n"
        "   2905             indexer = self.columns.get_loc(key)\n"
        "\n"
        "KeyError: 'target'\n"
    )
    tb = parse_traceback(ipython7)
    assert where(tb.frames) == [
        ("solution.py", 4, None, True),
        ("~/venv/lib/python3.8/site-packages/pandas/core/frame.py", None, "__getitem__", False),
    ]
    ipython8 = (
        "Input In [1], in <cell line: 3>()\n      2 x = 0\n----> 3 1 / x\n\nZeroDivisionError: -"
    )
    assert where(parse_traceback(ipython8).frames) == [("solution.py", 3, None, True)]
    python = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/ipykernel_7/3849072353.py", line 2, in fit\n'
        "    return model.fit(X)\n"
        "           ^^^^^^^^^^^^\n"
        '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode\n'
        "    obj, end = self.raw_decode(s)\n"
        "json.decoder.JSONDecodeError: Expecting value\n"
    )
    tb = parse_traceback(python)
    assert where(tb.frames) == [
        ("solution.py", 2, "fit", True),
        ("/usr/lib/python3.11/json/decoder.py", 337, "decode", False),
    ]
    assert tb.frames[0].code_line == "return model.fit(X)"
    assert tb.frames[1].package == "json"
    assert tb.error == "json.decoder.JSONDecodeError: Expecting value"


def test_the_pages_shape() -> None:
    data = as_json(parsed("pandas_keyerror"))
    assert set(data) == {"error", "frames", "causes", "dropped", "dropped_causes", "link"}
    assert data["frames"][0] == {
        "file": "solution.py",
        "line": 5,
        "function": None,
        "code_line": 'y = df["target"]',
        "context": [
            "      1 import pandas as pd",
            "      2 ",
            '      3 df = pd.read_csv("input/train.csv")',
            '      4 print("rows", len(df))',
            '----> 5 y = df["target"]',
        ],
        "in_solution": True,
    }
    assert data["causes"][0]["link"] == "cause" and data["causes"][0]["causes"] == []
    assert json.loads(json.dumps(data)) == data


# --- the output without its copy ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_the_output_loses_exactly_its_copy_of_the_traceback(name: str) -> None:
    data = fixture(name)
    output, traceback = data["output"], data["traceback"]
    kept = output_without_traceback(output, traceback)
    if name == "system_exit":  # IPython printed a warning after it: the output is left alone
        assert kept == output
    elif name == "timeout":  # the kernel's note after the copy is kept
        assert kept == "sleeping\nTimeoutError: execution exceeded 3 s and was stopped\n"
    else:
        assert kept + traceback.rstrip("\n") == output.rstrip("\n")
        assert traceback.rstrip("\n") not in kept


def recorded(printed: str, traceback: str, cap: int) -> ExecResult:
    """What a run records: the output capped as the kernel caps it, both fields made inert."""
    output = CappedOutput(cap)
    output.write(printed)
    output.write(traceback + "\n")  # as the kernel writes its copy
    return ExecResult(status=ExecStatus.ERROR, output=output.text(), traceback=traceback)


def test_an_output_cut_around_or_inside_the_copy() -> None:
    traceback = fixture("recursion")["traceback"]  # 10 KB
    # the cut before the traceback: all of it in the kept tail
    result = recorded("p" * 100_000, traceback, cap=40_000)
    kept = output_without_traceback(result.output, result.traceback)
    assert kept.startswith("p" * 10_000) and "bytes of output omitted" in kept
    assert kept.endswith("p") and "Cell In" not in kept
    # the cut inside it, the traceback begun in the head: nothing else was omitted
    result = recorded("before\n", traceback, cap=4_000)
    assert "bytes of output omitted" in result.output
    assert output_without_traceback(result.output, result.traceback) == "before\n"
    # the cut inside it, the traceback begun in the part omitted: the marker counts the rest
    result = recorded("p" * 5_000, traceback, cap=4_000)
    kept = output_without_traceback(result.output, result.traceback)
    assert kept == "p" * 1_000 + "\n[... 4000 bytes of output omitted ...]\n"


def test_an_output_that_does_not_end_with_the_copy_is_left_alone() -> None:
    traceback = fixture("assertion")["traceback"]
    assert output_without_traceback("x\n", None) == "x\n"
    assert output_without_traceback("x\n", "") == "x\n"
    moved = traceback + "\nprinted after it\n"
    assert output_without_traceback(moved, traceback) == moved
    half = traceback[: len(traceback) // 2]
    assert output_without_traceback(half, traceback) == half


# --- hostile and huge text ---------------------------------------------------------------------


def assert_bounded(tb: ParsedTraceback) -> None:
    assert len(tb.frames) <= tracebacks.MAX_FRAMES
    assert len(tb.causes) <= tracebacks.MAX_CAUSES
    assert len(tb.error) <= tracebacks.MAX_ERROR_CHARS + 100
    for each in (tb, *tb.causes):
        for frame in each.frames:
            assert len(frame.context) <= tracebacks.MAX_CONTEXT_LINES
            assert all(len(line) <= tracebacks.MAX_LINE_CHARS for line in frame.context)
            assert len(frame.file) <= tracebacks.MAX_LINE_CHARS
    json.dumps(as_json(tb))


PIECES = [
    "Cell In[1], line 3", "Cell In[1], line 9, in f(x)", "File /a/site-packages/np/x.py:3, in g()",
    "  File \"/tmp/ipykernel_1/2.py\", line 4, in h", "----> 3 y = 1", "      2 x", "", " ", "-->",
    "KeyError: 'k'", "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:", "(", "File :9",
    "ValueError                                Traceback (most recent call last)", "\x00\u202e",
    "Traceback (most recent call last):", "-" * 75, "Cell In[99999999999999], line 1", "  ^",
    "File x:" + "9" * 5000, "Input In [2], in <cell line: 4>()", "<ipython-input-1-ab> in f",
]  # fmt: skip


def test_any_text_parses_and_stays_bounded() -> None:
    rng = random.Random(7)
    for _ in range(3_000):
        text = "\n".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 40)))
        tb = parse_traceback(text)
        assert_bounded(tb)
        render_text(tb, solution_code="x = 1\n")
        output_without_traceback(text + "\n" + text, text)


def test_a_forged_chain_needs_the_whole_separator_and_a_header() -> None:
    message = (
        "ValueError: a\n\nThe above exception was the direct cause of the following exception:\n"
        "not a header\n\nDuring handling of the above exception, another exception occurred:\n"
    )
    tb = parse_traceback("Cell In[1], line 1\n----> 1 f()\n\n" + message)
    assert tb.causes == () and tb.error == message.strip()


HUGE = [
    ("many frames", "Cell In[1], line 7, in walk(n)\n      1 def walk(n):\n----> 7 x\n\n" * 60_000),
    ("one long line", "Cell In[1], line 1\n----> 1 " + "x" * 4_000_000),
    ("a long message", "ValueError: " + "no\n" * 1_500_000),
    ("long context", "Cell In[1], line 1\n" + "      1 x\n" * 400_000 + "----> 2 y\n\nE: e"),
    ("chains", "E: e\n\nThe above exception was the direct cause of the following exception:\n\n"
               "E  Traceback (most recent call last)\nCell In[1], line 1\n----> 1 x\n\n" * 40_000),
    ("colons and digits", "File " + "a:1" * 1_300_000),
    ("blank lines", "\n" * 4_000_000),
]  # fmt: skip


@pytest.mark.parametrize(("shape", "text"), HUGE, ids=[shape for shape, _ in HUGE])
def test_a_huge_traceback_is_read_in_linear_time_into_a_bounded_result(
    shape: str, text: str
) -> None:
    started = time.perf_counter()
    tb = parse_traceback(text)
    lines = render_text(tb, solution_code=text)
    kept = output_without_traceback(text * 2, text)
    elapsed = time.perf_counter() - started
    assert elapsed < scaled(10.0), shape  # about a second on a quiet machine; quadratic: hours
    assert_bounded(tb)
    assert len(json.dumps(as_json(tb))) < 1_000_000
    assert sum(len(line.text) for line in lines) < 200_000
    assert kept == (text if text.strip() else text * 2)  # blank: no copy to remove


def test_what_is_left_out_is_counted() -> None:
    frames = "Cell In[1], line 7, in walk(n)\n----> 7 walk(n + 1)\n\n" * 1_000
    tb = parse_traceback(frames + "RecursionError: deep")
    assert len(tb.frames) + tb.dropped == 1_000
    message = parse_traceback("ValueError: " + "\n".join(map(str, range(1_000)))).error
    assert message.endswith(f"\n[… {1_000 - tracebacks.MAX_ERROR_LINES} more lines]")
    link = "\n\nThe above exception was the direct cause of the following exception:\n\n"
    head = "E  Traceback (most recent call last)\nCell In[1], line 1\n----> 1 x\n\n"
    chain = link.join(head + f"E: {n}" for n in range(9))
    tb = parse_traceback(chain)
    assert tb.error == "E: 8" and [c.error for c in tb.causes] == [f"E: {n}" for n in range(3, 8)]
    assert tb.dropped_causes == 3 and tb.dropped == 3  # their three frames
    huge = frames * 30 + "RecursionError: deep"  # past MAX_INPUT_CHARS: the middle is counted
    tb = parse_traceback(huge)
    assert tb.error == "RecursionError: deep"
    assert len(tb.frames) + tb.dropped == pytest.approx(30_000, abs=3)


# --- a kernel now ----------------------------------------------------------------------------


@pytest.mark.slow
def test_todays_kernel_prints_what_is_parsed(tmp_path: Path) -> None:
    """The layout comes from the installed IPython: a new version must still be read."""
    data = tmp_path / "public"
    data.mkdir()
    workspace = Workspace(root=tmp_path / "node", input_dir=data)
    code = fixture("working_module_local")["code"]
    sandbox = LocalSandbox(SandboxOptions(preimports=(), warm_pool=False))

    async def go() -> ExecResult:
        try:
            return await sandbox.execute(code, workspace, Limits(120, 256 * 1024))
        finally:
            await sandbox.aclose()

    result = asyncio.run(go())
    assert result.traceback is not None
    tb = parse_traceback(result.traceback)
    assert where(tb.frames) == [
        ("solution.py", 13, None, True),
        ("working/helpers.py", 3, "scale", True),
        ("working/helpers.py", 3, "<listcomp>", True),
    ]
    assert tb.error == "ZeroDivisionError: division by zero"
    assert output_without_traceback(result.output, result.traceback) == ""
