"""The ``container`` sandbox: it refuses to start where no container is seen (unless told that
one encloses Podium), says in its stamp that the container is the boundary, and runs a node
like ``local`` plus the limits that need no namespace."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from podium.api.runs import load_registry
from podium.errors import SandboxUnavailable
from podium.interfaces import Limits, Workspace
from podium.sandbox import ContainerSandbox, SandboxOptions, container_evidence
from podium.sandbox import container as container_module
from podium.sandbox.container import create
from tests.support import process_gone, wait_gone


def test_no_container_is_seen_on_a_bare_root(tmp_path: Path) -> None:
    (tmp_path / "proc" / "1").mkdir(parents=True)
    (tmp_path / "proc" / "1" / "cgroup").write_text("0::/init.scope\n")
    assert container_evidence(tmp_path, environ={}) is None


@pytest.mark.parametrize(
    ("made", "environ", "seen"),
    [
        (".dockerenv", {}, "/.dockerenv (Docker)"),
        ("run/.containerenv", {}, "/run/.containerenv (Podman)"),
        (None, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
         "KUBERNETES_SERVICE_HOST (a Kubernetes pod)"),
        ("proc/1/cgroup", {}, "/proc/1/cgroup names docker"),
    ],
)  # fmt: skip
def test_a_container_is_seen_by_its_marks(
    tmp_path: Path, made: str | None, environ: dict[str, str], seen: str
) -> None:
    if made is not None:
        (tmp_path / made).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / made).write_text("12:memory:/docker/0123abcd\n")
    assert container_evidence(tmp_path, environ=environ) == seen


def test_outside_a_container_it_refuses_unless_assumed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(container_module, "container_evidence", lambda: None)
    with pytest.raises(SandboxUnavailable) as excinfo:
        load_registry().sandbox("container").create({})
    assert "\n" not in excinfo.value.message and "none was detected" in excinfo.value.message
    assert excinfo.value.hint is not None and "sandbox.assume_container=true" in excinfo.value.hint
    with pytest.raises(SandboxUnavailable):
        ContainerSandbox(SandboxOptions(), evidence=None)
    box = create({"assume_container": True})
    assert box.evidence == "sandbox.assume_container = true"


def test_its_stamp_says_the_container_is_the_boundary() -> None:
    box = ContainerSandbox(SandboxOptions(), evidence="/.dockerenv (Docker)", bwrap_why="no userns")
    assert box.isolated is False  # Podium's isolation does not hold: not clean-track
    assert load_registry().sandbox("container").isolated is False
    detail = box.describe()
    assert detail.startswith(
        "container: the container is the isolation boundary (MLE-bench harness: /.dockerenv "
        "(Docker)); bubblewrap: no userns; kernels run as uid "
    )
    assert "no network" not in detail and "by watchdog" in detail
    assert box.notice is not None and "bubblewrap: no userns" in box.notice
    gaps = box.isolation_gaps()
    if os.getuid() == 0:  # as root in a container, its root-only files are the kernels' too
        assert gaps and gaps[0].startswith("kernels are root in the container")


@pytest.mark.slow
def test_a_node_runs_like_local_and_leaves_nothing_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-in-a-kernel")
    data = tmp_path / "public"
    data.mkdir()
    (data / "train.csv").write_text("id,y\n1,0\n")
    code = (
        "import json, os, subprocess\n"
        "child = subprocess.Popen(['setsid', 'sleep', '600'])\n"
        "open('submission/submission.csv', 'w').write('id,y\\n1,0\\n')\n"
        "print('FACTS', json.dumps({'input': os.listdir('input'), 'child': child.pid,\n"
        "      'key': 'OPENAI_API_KEY' in os.environ}))\n"
    )
    box = ContainerSandbox(SandboxOptions(preimports=(), warm_pool=False), evidence="a test")

    async def run() -> str:
        try:
            result = await box.execute(code, Workspace(tmp_path / "node", data), Limits(120))
        finally:
            await box.aclose()
        assert not result.failed, result.output
        return result.output

    output = asyncio.run(run())
    facts = json.loads(output.split("FACTS ", 1)[1])
    assert facts["input"] == ["train.csv"] and facts["key"] is False
    assert (tmp_path / "node" / "submission.csv").read_text() == "id,y\n1,0\n"
    if box.cgroups.version is not None:  # its cgroup's processes are killed before the hand-over
        assert process_gone(facts["child"])
    else:  # no pid namespace and no cgroup: a detached child outlives the node (documented)
        os.kill(facts["child"], 9)
        assert wait_gone(facts["child"], within_s=60)
