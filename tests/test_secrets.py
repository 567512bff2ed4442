"""API keys never reach the run directory, the logs, the progress output or error messages.

Keys are masked by value: whatever a variable is called, the key Podium read from it is masked
wherever text is written or printed, even when the provider (or a plugin) echoes it back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium import redact
from podium.api.runs import load_registry
from podium.cli.app import app
from podium.exec_output import omitted_line
from podium.testing import FakeOpenAI, Received, Reply
from tests.support import agent_responder, cli_env, podium_cli, solution

pytestmark = pytest.mark.slow

DUMP_ENV = """\
import os, shutil
print(sorted(os.environ.items()))
for pid in os.listdir("/proc"):
    try:
        print(open(f"/proc/{pid}/environ").read())
    except OSError:
        pass
print("VALIDATION_METRIC: 0.5")
shutil.copy("input/sample_submission.csv", "submission/submission.csv")
"""


def leaks(secret: str, run_dir: Path, *outputs: str) -> list[str]:
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    found = [str(p) for p in files if secret.encode() in p.read_bytes()]
    return found + [f"output #{i}" for i, text in enumerate(outputs) if secret in text]


def run_toy(url: str, out: Path, env: dict[str, str]) -> tuple[int, str, str]:
    done = podium_cli(
        "-v", "run", "tests/fixtures/tasks/toy", "--model", "openai/gpt-4.1", "--base-url", url,
        "--steps", "1", "--out", str(out), "-o", "model.retry_wait=0.01", "-o",
        "sandbox.preimports=[]", env=env,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_a_working_key_appears_nowhere(tmp_path: Path) -> None:
    key, other = "sk-podium-PLANTED-4f9a1c2e7b", "sk-ant-PLANTED-other-8d3e"
    with FakeOpenAI(api_key=key, responder=agent_responder(DUMP_ENV)) as fake:
        code, stdout, stderr = run_toy(
            fake.url, tmp_path / "run", cli_env(OPENAI_API_KEY=key, ANTHROPIC_API_KEY=other)
        )
        assert fake.received[0].key == key  # it was really sent
    assert code == 0, stderr
    output = (tmp_path / "run" / "nodes" / "1" / "output.txt").read_text()
    assert "PATH" in output  # the solution did dump its environment
    assert leaks(key, tmp_path / "run", stdout, stderr) == []
    assert leaks(other, tmp_path / "run", stdout, stderr) == []


def test_a_key_a_solution_reads_under_the_local_sandbox_is_masked(tmp_path: Path) -> None:
    """``local`` does not isolate: the solution can read Podium's environment and print the
    key. What it printed is masked before it reaches the review model, the journal or a file."""
    key = "sk-podium-LOCAL-planted-5e8b2a"
    with FakeOpenAI(api_key=key, responder=agent_responder(DUMP_ENV)) as fake:
        done = podium_cli(
            "run", "tests/fixtures/tasks/toy", "--model", "openai/gpt-4.1", "--base-url",
            fake.url, "--steps", "1", "--out", str(tmp_path / "run"), "--sandbox", "local",
            "-o", "model.api_key_env=MYLLM_AUTH", "-o", "sandbox.preimports=[]",
            env=cli_env(MYLLM_AUTH=key),
        )  # fmt: skip
        reviews = [r.prompt_text for r in fake.received if r.forced_tool]
    assert done.returncode == 0, done.stderr
    assert "***" in (tmp_path / "run" / "nodes" / "1" / "output.txt").read_text()
    assert leaks(key, tmp_path / "run", done.stdout, done.stderr, *reviews) == []


ACME_PLUGIN = """\
import os

from podium.errors import ModelError
from podium.interfaces import Backend
from podium.plugins import BackendSpec, hookimpl
from podium.records import ModelResponse, ToolCall, Usage


class Acme(Backend):
    \"\"\"A review model whose key comes from a variable no name rule would call secret; it
    echoes the key in every answer, and in the error of its second call.\"\"\"

    def __init__(self, arg, options):
        self.model, self.token, self.calls = f"acme/{arg}", os.environ["ACME_AUTH"], 0

    async def complete(self, request):
        self.calls += 1
        if self.calls == 2:
            raise ModelError(f"acme: token {self.token} refused", "acme")
        review = {"is_bug": False, "summary": f"fine, says {self.token}", "metric": None}
        call = ToolCall(name="submit_review", arguments=review)
        return ModelResponse(tool_call=call, usage=Usage(calls=1), model=self.model)


@hookimpl
def podium_backends():
    return [BackendSpec(name="acme", create=Acme, secret_env=("ACME_AUTH",))]
"""


def echoing_model() -> Callable[[Received], Reply]:
    """A code model whose server echoes the key it received: in a 500 (retried), in a normal
    answer (the plan and the code), in a refused request (the node fails), in the 401 that
    finally stops the run."""
    calls: list[int] = []

    def respond(received: Received) -> Reply:
        calls.append(1)
        key = received.key or "(no key)"
        if len(calls) == 1:
            return Reply.error(500, f"upstream refused key {key}")
        if len(calls) == 3:
            return Reply.error(400, f"bad request from key {key}")
        if len(calls) == 5:
            return Reply.error(401, f"Incorrect API key provided: {key}.")
        code = solution(0.8, extra=f'print("echo {key}")  # the key is {key}')
        return Reply.text(f"The key I was sent is {key}.\n\n```python\n{code}```\n")

    return respond


def test_keys_under_any_variable_name_are_masked_by_value(tmp_path: Path) -> None:
    """The reported leak: -o model.api_key_env=MYLLM_AUTH, a server echoing the key, and a
    plugin backend with its own variable. Neither key appears in any file of the run dir (the
    journal read as bytes, WAL included), the calls export, the viewer export, stdout or stderr.
    """
    key, token = "sk-planted-MYLLM-5e0c2a9d71", "acme-planted-3b8f61d0"
    plugin = tmp_path / "acme.py"
    plugin.write_text(ACME_PLUGIN)
    run = tmp_path / "run"
    with FakeOpenAI(api_key=key, responder=echoing_model()) as fake:
        done = podium_cli(
            "-v", "run", "tests/fixtures/tasks/toy", "--model", "openai/gpt-4.1", "--base-url",
            fake.url, "--review-model", "acme/r1", "-p", str(plugin), "--steps", "5", "--out",
            str(run), "-o", "model.api_key_env=MYLLM_AUTH", "-o", "model.retry_wait=0.01",
            "-o", "sandbox.preimports=[]",
            env=cli_env(MYLLM_AUTH=key, ACME_AUTH=token),
        )  # fmt: skip
        assert {r.key for r in fake.received} == {key}  # the key really came from MYLLM_AUTH
        assert fake.hits == 5
    assert done.returncode == 1, done.stderr  # the echoed 401 stopped the run
    assert "API key rejected" in done.stderr and "***" in done.stderr

    runner = CliRunner()
    exported = runner.invoke(app, ["calls", "export", str(run)])
    assert exported.exit_code == 0, exported.output
    page = tmp_path / "view.html"
    viewed = runner.invoke(app, ["view", str(run), "--export", str(page)])
    assert viewed.exit_code == 0, viewed.output
    calls = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(calls) >= 4 and "The key I was sent is ***." in exported.stdout  # masked, kept
    assert (run / "nodes" / "1" / "output.txt").read_text().startswith("echo ***")

    outputs = (done.stdout, done.stderr, exported.stdout, page.read_text())
    for secret in (key, token):
        assert leaks(secret, run, *outputs) == []
        assert secret.encode() not in page.read_bytes()


# --- the registry, without a run ----------------------------------------------------------


def test_a_value_read_as_a_key_is_masked_whatever_its_variable_is_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEAM_LLM", "planted-by-value-61f0")
    monkeypatch.setenv("TEAM_SHORT", "abc")
    assert redact.redact("planted-by-value-61f0") == "planted-by-value-61f0"  # not read yet
    assert redact.secret_env("TEAM_LLM") == "planted-by-value-61f0"
    assert redact.secret_env("TEAM_SHORT") == "abc"  # returned, but too short to mask
    assert redact.secret_env("TEAM_UNSET") is None
    assert redact.redact("key planted-by-value-61f0, abc") == "key ***, abc"
    nested = {"a": ["x planted-by-value-61f0"], "planted-by-value-61f0": 1, "n": 2}
    assert redact.redact_data(nested) == {"a": ["x ***"], "***": 1, "n": 2}


def test_credentials_in_a_url_are_registered() -> None:
    redact.register_url_credentials(
        "https://podium-user:p%40ss-planted-9a2b@proxy.example/v1?api_key=q-planted-77c1e0&x=plain"
    )
    shown = redact.redact(
        "https://podium-user:p%40ss-planted-9a2b@proxy | p@ss-planted-9a2b | q-planted-77c1e0 | "
        "Basic cG9kaXVtLXVzZXI6cEBzcy1wbGFudGVkLTlhMmI= | plain"
    )
    assert shown == "https://***:***@proxy | *** | *** | Basic *** | plain"
    redact.register_url_credentials("not a url at all")  # nothing to register, no error


def test_every_backend_gets_its_declared_and_configured_keys_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered by the registry before the plugin's factory runs, whether or not it reads
    them: the variable ``model.api_key_env`` names and the ones its spec declares."""
    plugin = tmp_path / "acme.py"
    plugin.write_text(ACME_PLUGIN)
    monkeypatch.setenv("ACME_AUTH", "acme-registered-0d4e7f")
    monkeypatch.setenv("TEAM_GATEWAY", "team-registered-a81c3b")
    load_registry([str(plugin)]).backend("acme/x", {"api_key_env": "TEAM_GATEWAY"})
    assert {"acme-registered-0d4e7f", "team-registered-a81c3b"} <= redact.registered_secrets()


@pytest.mark.parametrize("cut_at", [6, 11, 20, 28])  # both pieces at least 6 long
def test_a_key_cut_in_two_by_the_output_cap_is_masked_on_both_sides(cut_at: int) -> None:
    """The output kept is its head and tail around a marker: a key printed across the cut is
    two pieces, neither of them the key, and both must go. So must a key that an output still
    being written ends in the middle of."""
    key = "sk-podium-CUTPLANTED-93f1c0a7d2e4x"  # 34 characters
    head, tail = key[:cut_at], key[cut_at:]
    text = f"start\nkey={head}" + omitted_line(12345) + f"{tail} end\n"
    masked = redact.redact_output(text, [key])
    assert head not in masked and tail not in masked, masked
    assert masked.startswith("start\nkey=") and masked.endswith(" end\n")
    assert "[... 12345 bytes of output omitted ...]" in masked
    so_far = redact.redact_output(f"loss 0.3\nkey={key[:cut_at]}", [key])
    assert key[:cut_at] not in so_far and so_far.startswith("loss 0.3\nkey=")


def test_short_pieces_and_ordinary_text_are_left_alone() -> None:
    key = "sk-podium-CUTPLANTED-93f1c0a7d2e4x"
    text = "epoch sk-po" + omitted_line(7) + "4x done\nsk-podium is a prefix, not at a cut\n"
    assert redact.redact_output(text, [key]) == text  # 5 characters each side: too short
