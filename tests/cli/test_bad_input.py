"""The bad-input battery: what a careless user gives each command, and what they get back.

Every case must end with a non-zero exit, exactly one ``error:`` line naming what is wrong and
one ``hint:`` line saying what to do, and never a traceback; nothing may start (no kernel, no
search, no data preparation), so the whole battery runs in-process in a few seconds. The
command line is the real one (:func:`podium.cli.app.run_cli`, what ``podium`` runs), only without a
new interpreter per case; ``tests/cli/test_app.py`` runs it as a process.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from podium.cli.app import run_cli
from tests.recorded_run import write_recorded_run
from tests.support import TOY_SESSION, TOY_TASK

BINARY = bytes(range(256)) * 4 + b"\xff\xfe\x00garbage"
SCRIPTED = f"scripted:{TOY_SESSION}"


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The bad inputs, made once: every name a case's arguments may use as ``{name}``."""
    root = tmp_path_factory.mktemp("bad")
    made: dict[str, Path] = {
        "nope": root / "no-such-thing",
        "bin": root / "binary.bin",
        "empty": root / "empty.txt",
        "text": root / "notes.txt",
        "dir": root / "a-dir",
        "garbage_toml": root / "garbage.toml",
        "badkey_toml": root / "badkey.toml",
        "badtype_toml": root / "badtype.toml",
        "notjson": root / "answers.jsonl",
        "run": root / "run",
        "sweep": root / "sweep",
        "binconfig_run": root / "binconfig-run",
        "badjournal_run": root / "badjournal-run",
        "out": root / "out",
    }
    made["bin"].write_bytes(BINARY)
    made["empty"].write_bytes(b"")
    made["text"].write_text("just some notes\n")
    made["dir"].mkdir()
    made["garbage_toml"].write_text("this is = = not [toml\n")
    made["badkey_toml"].write_text("[budget]\nstep = 3\n")
    made["badtype_toml"].write_text("budget = 3\n")
    made["notjson"].write_text("hello, this is not JSON\n")
    write_recorded_run(made["run"])
    made["sweep"].mkdir()
    (made["sweep"] / "sweep.json").write_text("{}")
    made["binconfig_run"].mkdir()
    (made["binconfig_run"] / "config.toml").write_bytes(BINARY)
    sqlite3.connect(made["binconfig_run"] / "journal.sqlite").close()
    made["badjournal_run"].mkdir()
    (made["badjournal_run"] / "config.toml").write_text(f'task = "{TOY_TASK}"\n')
    (made["badjournal_run"] / "journal.sqlite").write_bytes(BINARY)
    made["out"].mkdir()
    names = {k: str(v) for k, v in made.items()}
    return {**names, "toy": str(TOY_TASK), "scripted": SCRIPTED}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = run_cli(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_line_error(status: int, stderr: str, fragment: str) -> None:
    """Non-zero; one ``error:`` line holding ``fragment`` then one ``hint:`` line; at most
    warnings and notes besides; no traceback."""
    assert status != 0, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if not line.startswith(("warning: ", "note: "))]
    assert len(lines) == 2, stderr
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), stderr
    assert fragment in lines[0], stderr
    assert len(lines[1]) > len("hint: ") + 5, stderr


# (id, arguments with {name}s from ``paths``, a fragment of the error line)
CASES: list[tuple[str, str, str]] = [
    # --- podium run: the config file -----------------------------------------------------
    ("run-config-binary", "run {toy} -c {bin}", "is not a text file"),
    ("run-config-dir", "run {toy} -c {dir}", "is a directory, not a config file"),
    ("run-config-missing", "run {toy} -c {nope}", "config file not found"),
    ("run-config-empty-garbage", "run {toy} -c {garbage_toml}", "invalid TOML"),
    ("run-config-unknown-key", "run {toy} -c {badkey_toml}", "budget.step: unknown key"),
    ("run-config-section-a-value", "run {toy} -c {badtype_toml}", "budget:"),
    # --- podium run: the run dir and data dir ----------------------------------------------
    ("run-out-file", "run {toy} --out {text}", "--out"),
    ("run-out-under-a-file", "run {toy} --out {text}/run", "is a file, not a directory"),
    ("run-out-holds-a-run", "run {toy} --out {run}", "already holds a run"),
    ("run-out-by-override", "run {toy} -o out='{text}'", "--out"),
    ("run-data-dir-file", "run {toy} --data-dir {text}", "--data-dir"),
    # --- podium run: models -------------------------------------------------------------
    ("run-scripted-binary", "run {toy} --model scripted:{bin}", "not a text file"),
    ("run-scripted-missing", "run {toy} --model scripted:{nope}", "not found"),
    ("run-scripted-dir", "run {toy} --model scripted:{dir}", "is a directory"),
    ("run-scripted-not-json", "run {toy} --model scripted:{notjson}", "not JSON"),
    ("run-review-baseline", "run {toy} --model {scripted} --review-model baseline",
     "is not a chat model"),
    ("run-unknown-provider", "run {toy} --model opneai/gpt-4o", "unknown model provider"),
    ("run-empty-model", "run {toy} -o model.name=''", "no model given"),
    ("run-replay-missing", "run {toy} --replay {nope}", "--replay"),
    ("run-replay-binary", "run {toy} --replay {bin}", "not a text file"),
    ("run-replay-empty-dir", "run {toy} --replay {dir}", "not a Podium run directory"),
    ("run-replay-empty-file", "run {toy} --replay {empty}", "no recorded model calls"),
    ("run-replay-miss", "run {toy} --replay-miss maybe", "model.replay_miss"),
    # --- podium run: --base-url ----------------------------------------------------------
    ("run-base-url-not-a-url", "run {toy} --model openai/x --base-url 'not a url'",
     "model.base_url"),
    ("run-base-url-no-scheme", "run {toy} --model openai/x --base-url localhost:8000/v1",
     "not an http(s) URL"),
    ("run-base-url-ftp", "run {toy} --model openai/x --base-url ftp://host/v1", "http(s)"),
    ("run-base-url-port-range", "run {toy} --model openai/x --base-url http://localhost:99999/v1",
     "port"),
    ("run-base-url-port-text", "run {toy} --model openai/x --base-url http://localhost:80a/v1",
     "port"),
    ("run-base-url-no-host", "run {toy} --model openai/x --base-url http:///v1", "no host"),
    ("run-base-url-empty", "run {toy} --model openai/x --base-url ''", "model.base_url"),
    ("run-base-url-override", "run {toy} -o model.base_url='http://x:0'", "port"),
    # --- podium run: budgets and numbers ---------------------------------------------------
    ("run-steps-zero", "run {toy} --steps 0", "budget.steps"),
    ("run-steps-negative", "run {toy} --steps -3", "budget.steps"),
    ("run-steps-text", "run {toy} --steps many", "--steps"),
    ("run-cost-zero", "run {toy} --cost 0", "budget.cost"),
    ("run-cost-negative", "run {toy} --cost -1", "budget.cost"),
    ("run-time-bad", "run {toy} --time soon", "not a duration"),
    ("run-time-zero", "run {toy} --time 0", "budget.time"),
    ("run-time-negative", "run {toy} --time -5m", "budget.time"),
    ("run-time-mixed", "run {toy} --time 1h30", "not a duration"),
    ("run-timeout-bad", "run {toy} --timeout forever", "exec.timeout"),
    ("run-workers-zero", "run {toy} --workers 0", "workers"),
    ("run-workers-negative", "run {toy} --workers -2", "workers"),
    ("run-seed-text", "run {toy} --seed x", "--seed"),
    # --- podium run: -o ------------------------------------------------------------------
    ("run-o-no-equals", "run {toy} -o nonsense", "expected KEY=VALUE"),
    ("run-o-no-key", "run {toy} -o =3", "expected KEY=VALUE"),
    ("run-o-unknown-key", "run {toy} -o search.num_draft=3", "unknown key"),
    ("run-o-unknown-section", "run {toy} -o modle.name=x", "unknown key"),
    ("run-o-bad-type", "run {toy} -o budget.steps=many", "budget.steps"),
    ("run-o-value-and-section", "run {toy} -o seed=1 -o seed.x=2", "is a value, not a section"),
    ("run-o-bad-size", "run {toy} -o sandbox.memory=lots", "sandbox.memory"),
    ("run-o-bad-price", "run {toy} -o 'model.prices.\"a/b\"={{input=-1, output=1}}'",
     "model.prices"),
    ("run-o-prompt-file-missing", "run {toy} -o prompts.draft='@{nope}'", "prompts.draft"),
    ("run-o-prompt-file-binary", "run {toy} -o prompts.draft='@{bin}'", "not a text file"),
    ("run-o-strategy-param", "run {toy} --strategy random -o search.num_drafts=2",
     "search.num_drafts"),
    # --- podium run: names ---------------------------------------------------------------
    ("run-unknown-strategy", "run {toy} --strategy mtcs", "unknown strategy 'mtcs'"),
    ("run-strategy-path", "run {toy} --strategy no_such_module:Thing", "cannot import"),
    ("run-unknown-sandbox", "run {toy} --sandbox dokcer", "unknown sandbox"),
    ("run-unknown-preset", "run {toy} --preset aid", "unknown preset"),
    ("run-unknown-operators", "run {toy} --model {scripted} -o search.operators=lml",
     "unknown operator set"),
    ("run-plugin-missing-file", "run {toy} -p {nope}.py", "plugin"),
    ("run-plugin-missing-module", "run {toy} -p no_such_plugin_module", "plugin"),
    # --- podium run: tasks ---------------------------------------------------------------
    ("run-task-bare-id", "run titanic", "unknown task 'titanic'"),
    ("run-task-typo", "run mini/titanc", "unknown task 'mini/titanc'"),
    ("run-task-unknown-benchmark", "run nosuchbench/task", "unknown task"),
    ("run-task-missing-folder", "run ./{nope}", "task folder not found"),
    ("run-task-a-file", "run {text}", "is a file, not a task folder"),
    ("run-task-empty-folder", "run {dir}", "task folder"),
    ("run-task-empty", "run ''", "no task given"),
    ("run-no-task", "run", "missing argument"),
    ("run-unknown-option", "run {toy} --stepz 3", "no such option: --stepz"),
    # --- podium resume -------------------------------------------------------------------
    ("resume-missing", "resume {nope}", "does not exist"),
    ("resume-file", "resume {text}", "is a file, not a run directory"),
    ("resume-empty-dir", "resume {dir}", "not a Podium run directory"),
    ("resume-sweep", "resume {sweep}", "is a sweep directory"),
    ("resume-binary-config", "resume {binconfig_run}", "not a text file"),
    ("resume-garbage-journal", "resume {badjournal_run}", "not an SQLite database"),
    ("resume-steps-zero", "resume {run} --steps 0", "budget.steps"),
    ("resume-time-bad", "resume {run} --time soon", "not a duration"),
    ("resume-cost-negative", "resume {run} --cost -2", "budget.cost"),
    # --- podium show / view / rerun ------------------------------------------------------
    ("show-missing", "show {nope}", "does not exist"),
    ("show-file", "show {text}", "is a file"),
    ("show-empty-dir", "show {dir}", "not a Podium run directory"),
    ("show-garbage-journal", "show {badjournal_run}", "not an SQLite database"),
    ("show-no-such-node", "show {run} 999", "has no node 999"),
    ("show-node-text", "show {run} first", "invalid value"),
    ("show-buggy-with-node", "show {run} 2 --buggy", "--buggy"),
    ("show-messages-without-node", "show {run} --messages", "--messages"),
    ("show-output-lines-negative", "show {run} 1 --output-lines -1", "--output-lines"),
    ("view-missing", "view {nope}", "does not exist"),
    ("view-file", "view {text}", "is a file"),
    ("view-sweep-damaged", "view {sweep}", "sweep.json is damaged"),  # a sweep is served
    ("view-sweep-export", "view {sweep} --export {dir}/x.html", "--export writes one run's page"),
    ("view-bad-port", "view {run} --port 70000", "--port 70000"),
    ("view-export-to-dir", "view {run} --export {dir}", "is a directory"),
    ("view-export-with-port", "view {run} --export {out}/x.html --port 9000", "--port"),
    ("rerun-missing", "rerun {nope} 1", "does not exist"),
    ("rerun-empty-dir", "rerun {dir} 1", "not a Podium run directory"),
    ("rerun-no-such-node", "rerun {run} 999", "no node 999"),
    ("rerun-timeout-bad", "rerun {run} 1 --timeout soon", "--timeout"),
    ("rerun-timeout-zero", "rerun {run} 1 --timeout 0", "--timeout"),
    ("rerun-unknown-sandbox", "rerun {run} 1 --sandbox dokcer", "unknown sandbox"),
    # --- podium grade --------------------------------------------------------------------
    ("grade-missing", "grade mini/titanic {nope}", "no submission at"),
    ("grade-dir", "grade mini/titanic {dir}", "is a directory, not a submission"),
    ("grade-unknown-task", "grade mini/titanc {text}", "unknown task"),
    ("grade-data-dir-file", "grade mini/titanic {text} --data-dir {text}", "--data-dir"),
    ("grade-too-long", "grade mini/titanic {dir}/" + "a" * 300 + ".csv", "File name too long"),
    # --- podium tasks / plugins ----------------------------------------------------------
    ("tasks-unknown-benchmark", "tasks mnii", "unknown benchmark 'mnii'"),
    ("tasks-unknown-split", "tasks mlebench:nope", "no split"),
    ("tasks-split-of-mini", "tasks mini --split low", "no splits"),
    ("tasks-data-dir-file", "tasks mini --data-dir {text}", "--data-dir"),
    ("plugins-missing", "plugins -p {nope}.py", "plugin"),
    # --- podium calls / export -----------------------------------------------------------
    ("calls-list-missing", "calls list {nope}", "does not exist"),
    ("calls-list-file", "calls list {text}", "is a file"),
    ("calls-export-empty-dir", "calls export {dir}", "not a Podium run directory"),
    ("calls-export-garbage-journal", "calls export {badjournal_run}", "not an SQLite database"),
    ("calls-unknown-command", "calls lsit {run}", "no such command"),
    ("export-missing", "export mlebench-jsonl {nope}", "is not a directory"),
    ("export-no-runs", "export mlebench-jsonl {dir}", "no runs found"),
    ("export-not-mlebench", "export mlebench-jsonl {run}", "none of these runs is of an MLE"),
    ("export-unknown-format", "export csv {run}", "no such command"),
    # --- podium bench / compare ----------------------------------------------------------
    ("bench-no-out", "bench --tasks mini", "needs --tasks and --out"),
    ("bench-unknown-benchmark", "bench --tasks mnii --out {out}/s1", "unknown benchmark"),
    ("bench-unknown-task", "bench --tasks mini/titanc --out {out}/s2", "--tasks"),
    ("bench-unknown-strategy", "bench --tasks mini --strategies greedy,mtcs --out {out}/s3",
     "unknown strategy"),
    ("bench-unknown-model", "bench --tasks mini --models opneai/x --out {out}/s4", "unknown"),
    ("bench-seeds-bad", "bench --tasks mini --seeds x --out {out}/s5", "--seeds"),
    ("bench-steps-zero", "bench --tasks mini --steps 0 --out {out}/s6", "budget.steps"),
    ("bench-executor", "bench --tasks mini --executor slurm --out {out}/s7", "unknown executor"),
    ("bench-out-file", "bench --tasks mini --out {text}", "{text}"),
    ("bench-resume-missing", "bench --resume {nope}", "not a sweep directory"),
    ("bench-resume-run-dir", "bench --resume {run}", "not a sweep directory"),
    ("bench-base-url", "bench --tasks mini --out {out}/s8 -o model.base_url=nope",
     "model.base_url"),
    ("compare-missing", "compare {nope}", "{nope}"),
    ("compare-two-without-out", "compare {run} {run}", "say where the report goes"),
    ("compare-unknown-baseline", "compare {run} --baseline mtcs --out {out}/r1", "baseline"),
    # --- podium models check -------------------------------------------------------------
    ("models-unknown-provider", "models check opneai/gpt-4o", "unknown model provider"),
    ("models-base-url", "models check openai/x --base-url 'not a url'", "model.base_url"),
    ("models-base-url-port", "models check openai/x --base-url http://h:65536/v1", "port"),
    ("models-timeout-bad", "models check openai/x --timeout soon", "model.timeout"),
    ("models-bad-override", "models check openai/x -o model.max_tokens=0", "model.max_tokens"),
    ("models-baseline", "models check baseline", "is not a chat model"),
    ("models-no-command", "models chek openai/x", "no such command"),
    # --- podium sandbox run --------------------------------------------------------------
    ("sandbox-file-missing", "sandbox run {nope}.py --workspace {out}/w --input {dir}",
     "not found"),
    ("sandbox-file-dir", "sandbox run {dir} --workspace {out}/w --input {dir}", "is a directory"),
    ("sandbox-file-binary", "sandbox run {bin} --workspace {out}/w --input {dir}",
     "not a text file"),
    ("sandbox-input-missing", "sandbox run {text} --workspace {out}/w --input {nope}", "--input"),
    ("sandbox-input-file", "sandbox run {text} --workspace {out}/w --input {text}", "--input"),
    ("sandbox-workspace-file", "sandbox run {text} --workspace {text} --input {dir}",
     "--workspace"),
    ("sandbox-unknown", "sandbox run {text} --workspace {out}/w --input {dir} --sandbox dokcer",
     "unknown sandbox"),
    ("sandbox-memory", "sandbox run {text} --workspace {out}/w --input {dir} --memory lots",
     "sandbox.memory"),
    ("sandbox-timeout-zero", "sandbox run {text} --workspace {out}/w --input {dir} --timeout 0",
     "--timeout"),
    ("sandbox-no-input", "sandbox run {text} --workspace {out}/w", "missing option"),
    # --- the top level -------------------------------------------------------------------
    ("unknown-command", "rnu {toy}", "no such command 'rnu'"),
    ("unknown-global-option", "--verbos run {toy}", "no such option"),
]  # fmt: skip


@pytest.fixture
def no_new_files(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Cases run in an empty folder, which they must leave empty: no runs/, no sweep, and no
    task data prepared (the data cache is in that folder too). Matplotlib's font cache, which a
    library may build on import, is not Podium's: it goes elsewhere."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path_factory.mktemp("matplotlib")))
    yield tmp_path
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_a_hint(
    args: str,
    fragment: str,
    paths: dict[str, str],
    no_new_files: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, _, stderr = _run(shlex.split(args.format(**paths)), capsys)
    assert_one_line_error(status, stderr, fragment.format(**paths))
    assert not any(Path(paths["out"]).iterdir())  # nothing made where it was pointed


# --- around the battery: what its hints name, and what is not an error -------------------


def test_the_review_model_hint_lists_only_models_that_can_review(
    paths: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, stderr = _run(
        ["run", paths["toy"], "--model", SCRIPTED, "--review-model", "baseline"], capsys
    )
    hint = stderr.splitlines()[1]
    assert "openai/<model>" in hint and "baseline" not in hint


def test_an_invalid_submission_is_graded_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    bad = tmp_path / "submission.csv"
    bad.write_text("a,b\n1,2\n")
    status, out, stderr = _run(["grade", str(TOY_TASK), str(bad), "--data-dir", str(data_dir)],
                               capsys)  # fmt: skip
    assert status == 1 and "Traceback" not in stderr
    assert out.startswith("score: none, invalid submission: ")
    assert "thresholds: gold" in out  # the report is still printed in full
    status, out, _ = _run(
        ["grade", str(TOY_TASK), str(bad), "--data-dir", str(data_dir), "--json"], capsys
    )
    assert status == 1 and json.loads(out)["valid_submission"] is False


def test_a_valid_submission_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    sample = data_dir / "toy" / "prepared" / "public" / "sample_submission.csv"
    status, out, stderr = _run(
        ["grade", str(TOY_TASK), str(sample), "--data-dir", str(data_dir)], capsys
    )
    assert status == 0, stderr
    assert out.startswith("score: ")
