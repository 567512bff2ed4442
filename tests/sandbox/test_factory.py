"""Forked kernels: from the kernel factory, each isolated on its own, and as a cold one looks.

Everything is checked from the kernel (what a solution can see and do) and from the host
(which processes exist, what is left). The attack tests run against forked kernels as well
(``test_attacks.py``, ``forked``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import BwrapSandbox, SandboxOptions, bwrap_problem
from podium.sandbox.forking import MAX_STARTS
from tests.support import process_gone

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bwrap: {bwrap_problem()}"),
]

LIMITS = Limits(timeout_s=120)
FACTS = r"""
import json, os, socket, sys, resource
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
mounts = sorted("IPC" if l.split()[4].startswith("/tmp/podium-") else l.split()[4]
                for l in open("/proc/self/mountinfo"))
facts = {
    "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()],
    "accounts": [open(f"/etc/{n}").read().replace(str(os.getuid()), "UID")
                 for n in ("passwd", "group")],
    "pids": [os.getpid(), os.getppid(), os.getpgrp() == os.getpid(), os.getsid(0) == os.getpid()],
    "status": {k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                              "NoNewPrivs", "Seccomp")},
    "mounts": mounts,
    "cwd": os.getcwd(), "hostname": socket.gethostname(),
    "interfaces": [name for _, name in socket.if_nameindex()],
    "loopback": open("/sys/class/net/lo/operstate").read() if os.path.exists("/sys/class/net") else
                socket.socket().connect_ex(("127.0.0.1", 9)),
    "env": sorted((k, v) for k, v in os.environ.items() if k not in ("JPY_PARENT_PID",)),
    "argv0": sys.argv[0], "path": sys.path,
    "rlimits": {n: resource.getrlimit(getattr(resource, n)) for n in
                ("RLIMIT_CORE", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_NOFILE")},
    "umask": os.umask(0o22),
    "cgroup": open("/proc/self/cgroup").read(),
    "tmp": sorted(n for n in os.listdir("/tmp") if not n.startswith("podium-")),
    "ipc": [n[:7] for n in os.listdir("/tmp") if n.startswith("podium-")],
    "workspace": sorted(os.listdir("/workspace")),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "user_names": sorted(n for n in dir() if not n.startswith("_")),
}
print("FACTS " + json.dumps(facts))
"""


def facts(result: ExecResult) -> dict[str, Any]:
    assert result.status is ExecStatus.OK, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("FACTS "))
    found: dict[str, Any] = json.loads(line[len("FACTS ") :])
    return found


@asynccontextmanager
async def forked(tmp_path: Path, kernels: int = 1, **options: Any) -> AsyncIterator[BwrapSandbox]:
    """A bwrap sandbox whose pool is served by a kernel factory."""
    public = tmp_path / "public"
    public.mkdir(exist_ok=True)
    (public / "train.csv").write_text("id,y\n1,0\n")
    sandbox = BwrapSandbox(SandboxOptions(**{"preimports": ("numpy",), **options}))
    if sandbox.forking.problem is not None:
        pytest.skip(f"no forked kernels here: {sandbox.forking.problem}")
    await sandbox.warm_up(tmp_path / "run" / ".sandbox", public, kernels)
    await sandbox.settle()
    assert sandbox.forking.current is not None, sandbox.forking.problem
    try:
        yield sandbox
    finally:
        await sandbox.aclose()


def node(tmp_path: Path, name: str) -> Workspace:
    return Workspace(tmp_path / "run" / "nodes" / name, tmp_path / "public")


async def run(sandbox: BwrapSandbox, tmp_path: Path, name: str, code: str) -> ExecResult:
    return await sandbox.execute(code, node(tmp_path, name), LIMITS)


def test_a_forked_kernel_looks_like_a_cold_one(tmp_path: Path) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with forked(tmp_path) as sandbox:
            warm = facts(await run(sandbox, tmp_path, "forked", FACTS))
        cold_box = BwrapSandbox(SandboxOptions(preimports=("numpy",), warm_pool=False))
        try:
            cold = facts(await run(cold_box, tmp_path, "cold", FACTS))
        finally:
            await cold_box.aclose()
        return warm, cold

    warm, cold = asyncio.run(go())
    assert warm["ids"][0] != 0 and warm["status"]["CapEff"] == "0000000000000000"
    assert warm["pids"] == [2, 1, False, False]  # under its namespace's init, as in bwrap
    assert warm["interfaces"] == ["lo"]
    assert warm["status"]["Seccomp"] == "2"
    differ = {key: (warm[key], cold[key]) for key in warm if warm[key] != cold[key]}
    assert set(differ) <= {"mounts", "ids"}, differ
    # Where Podium is root each kernel is a uid (and gid) of its own, listed in its passwd:
    # alike but for the number (the same one when the first was given back before).
    identity = BwrapSandbox(SandboxOptions()).identity
    for ids in (warm["ids"], cold["ids"]):
        assert ids == [ids[0]] * 4 + [[]] and identity.owns(ids[0])
    # The same mount points; the forked one has more, covered and unreachable: the factory's
    # own /tmp and /dev/shm under the kernel's, and what the factory had bound beneath them (a
    # solutions' environment under /tmp, bound again over the kernel's /tmp, as in the cold one).
    extra = list(warm["mounts"])
    for point in cold["mounts"]:
        extra.remove(point)
    assert sorted(p for p in extra if p in ("/dev/shm", "/tmp")) == ["/dev/shm", "/tmp"]
    assert all(p in cold["mounts"] and p.startswith("/tmp/") for p in extra if p[:5] == "/tmp/")
    assert set(extra) - {"/dev/shm", "/tmp"} <= {p for p in extra if p.startswith("/tmp/")}


def test_a_forked_kernel_sees_only_its_own_workspace(tmp_path: Path) -> None:
    spy = r"""
import os, json
found = {"workspace": sorted(os.listdir("/workspace")),
         "working": sorted(os.listdir("/workspace/working")),
         "staging": os.path.exists("/tmp/.podium"),
         "mounts": open("/proc/self/mountinfo").read(),
         "roots": sorted(os.listdir("/proc"))}
print("SPY " + json.dumps(found))
"""

    async def go() -> tuple[ExecResult, ExecResult, Path]:
        async with forked(tmp_path, kernels=2) as sandbox:
            scratch = sandbox.forking.current.spec.scratch  # type: ignore[union-attr]
            first = await run(sandbox, tmp_path, "a", "open('submission/submission.csv', 'w')\n")
            second = await run(sandbox, tmp_path, "b", spy)
            return first, second, scratch

    first, second, scratch = asyncio.run(go())
    assert first.status is ExecStatus.OK
    seen = json.loads(second.output.split("SPY ", 1)[1])
    assert seen["working"] == [] and not seen["staging"]
    assert seen["workspace"] == ["input", "submission", "validate_submission.py", "working"]
    # No other slot, nor the directory holding them all, is mounted in this kernel.
    mounted_slots = [line for line in seen["mounts"].splitlines() if str(scratch) in line]
    assert len(mounted_slots) == 1 and " /workspace " in mounted_slots[0]
    assert (tmp_path / "run" / "nodes" / "a" / "submission.csv").exists()


def test_state_set_in_one_node_is_absent_in_the_next(tmp_path: Path) -> None:
    setter = (
        "import json, numpy, sys\n"
        "secret = 42\njson.podium_mark = 1\nsys.podium_mark = 1\n"
        "numpy.random.seed(7)\nopen('/tmp/left', 'w').write('x')\nopen('/dev/shm/left', 'w')\n"
        "print(numpy.random.random())\n"
    )
    getter = (
        "import json, os, random, sys, numpy\n"
        "print('LEFT', 'secret' in dir(), hasattr(json, 'podium_mark'),"
        " hasattr(sys, 'podium_mark'), os.path.exists('/tmp/left'),"
        " os.path.exists('/dev/shm/left'))\n"
        "print('RANDOM', numpy.random.random(), random.random())\n"
    )

    async def go() -> list[ExecResult]:
        async with forked(tmp_path, kernels=2) as sandbox:
            return [await run(sandbox, tmp_path, str(i), code)
                    for i, code in enumerate([setter, getter, getter])]  # fmt: skip

    results = asyncio.run(go())
    assert all(r.status is ExecStatus.OK for r in results), [r.output for r in results]
    for later in results[1:]:
        assert "LEFT False False False False False" in later.output
    # Siblings forked from one process do not share their random generators' state.
    draws = [r.output.split("RANDOM ", 1)[1].split() for r in results[1:]]
    assert draws[0][0] != draws[1][0] and draws[0][1] != draws[1][1]


def test_threads_processes_and_joblib_work_in_a_forked_kernel(tmp_path: Path) -> None:
    code = r"""
import multiprocessing as mp, numpy as np, threading, time
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_info
a = np.random.default_rng(0).normal(size=(1500, 1500))
b = a @ a  # BLAS, with its own threads
print("BLAS", max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
def square(x):
    return x * x
for method in ("fork", "spawn"):  # spawn pickles by name: a built-in, not a cell's function
    with mp.get_context(method).Pool(2) as pool:
        print(method.upper(), pool.map(abs, [0, -1, -4, -9]))
print("JOBLIB", Parallel(n_jobs=2)(delayed(square)(i) for i in range(4)))
X = np.random.default_rng(1).normal(size=(300, 5)); y = (X[:, 0] > 0).astype(int)
print("FOREST", RandomForestClassifier(n_estimators=20, n_jobs=-1).fit(X, y).score(X, y))
"""

    async def go() -> ExecResult:
        async with forked(tmp_path) as sandbox:
            return await run(sandbox, tmp_path, "n", code)

    result = asyncio.run(go())
    assert result.status is ExecStatus.OK, result.output
    assert f"BLAS {os.cpu_count()}" in result.output  # one BLAS thread per CPU, as cold
    assert "FORK [0, 1, 4, 9]" in result.output and "SPAWN [0, 1, 4, 9]" in result.output
    assert "JOBLIB [0, 1, 4, 9]" in result.output and "FOREST 1.0" in result.output


async def _until(condition: Callable[[], Awaitable[bool] | bool], what: str) -> None:
    """Wait for an event (no fixed sleep decides the outcome; 120 s is a hang)."""
    for _ in range(12_000):
        got = condition()
        if await got if isinstance(got, Awaitable) else got:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def test_killing_the_factory_mid_run_costs_no_node(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    waits = (
        "import os, time\nopen('working/started', 'w').close()\n"
        "while not os.path.exists('working/go'):\n    time.sleep(0.01)\nprint('done')\n"
    )

    async def go() -> list[ExecResult]:
        async with forked(tmp_path) as sandbox:
            factory = sandbox.forking.current
            assert factory is not None and factory.pid
            running = asyncio.ensure_future(run(sandbox, tmp_path, "running", waits))
            scratch = factory.spec.scratch
            await _until(lambda: any(scratch.glob("*/working/started")), "the node started")
            os.kill(factory.pid, signal.SIGKILL)
            await _until(lambda: process_gone(factory.pid or 0), "the factory died")
            for started in scratch.glob("*/working/started"):
                (started.parent / "go").touch()
            results = [await running]
            for i in range(3):  # the first is cold (or from the new factory), then forked again
                results.append(await run(sandbox, tmp_path, f"after-{i}", "print(6 * 7)"))
            await _until(lambda: sandbox.forking.current is not None, "a new factory")
            new = sandbox.forking.current
            assert new is not None and new is not factory and new.alive()
            results.append(await run(sandbox, tmp_path, "last", "print(6 * 7)"))
            return results

    with caplog.at_level(logging.WARNING, logger="podium"):
        results = asyncio.run(go())
    assert results[0].status is ExecStatus.OK and "done" in results[0].output
    assert all(r.status is ExecStatus.OK and "42" in r.output for r in results[1:])
    assert any("kernel factory" in r.message for r in caplog.records)


def test_a_factory_that_keeps_dying_leaves_every_kernel_cold(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def go() -> list[ExecResult]:
        results = []
        async with forked(tmp_path) as sandbox:
            for i in range(MAX_STARTS + 1):
                factory = sandbox.forking.current
                if factory is not None and factory.pid and factory.alive():
                    os.kill(factory.pid, signal.SIGKILL)
                    await _until(lambda f=factory: not f.alive(), "the factory died")  # type: ignore[misc]
                results.append(await run(sandbox, tmp_path, str(i), "print(6 * 7)"))
                await sandbox.settle()
                await _until(
                    lambda: sandbox.forking.current is not None or sandbox.forking.problem,
                    "a new factory or none",
                )
            assert sandbox.forking.problem and "failed" in sandbox.forking.problem
            results.append(await run(sandbox, tmp_path, "cold", "print(6 * 7)"))
        return results

    with caplog.at_level(logging.WARNING, logger="podium"):
        results = asyncio.run(go())
    assert all(r.status is ExecStatus.OK and "42" in r.output for r in results)
    assert any("every kernel now starts cold" in r.message for r in caplog.records)


def test_closing_leaves_no_factory_and_no_kernel(tmp_path: Path) -> None:
    async def go() -> tuple[int, int]:
        async with forked(tmp_path, kernels=2) as sandbox:
            factory = sandbox.forking.current
            assert factory is not None
            await run(sandbox, tmp_path, "n", "print(1)")
            return factory.process.pid, factory.pid or 0

    bwrap_pid, factory_pid = asyncio.run(go())
    assert process_gone(bwrap_pid) and process_gone(factory_pid)
    leftovers = [p for p in Path("/tmp").glob(f"podium-{os.getpid()}-*") if p.exists()]
    assert leftovers == []


def test_each_forked_kernel_has_secrets_of_its_own(tmp_path: Path) -> None:
    """What a process draws once and a fork inherits: each kernel has its own, as a cold one
    does (multiprocessing's authkey, which its connections and managers authenticate with;
    the generators), and the same kind of value."""
    secrets = (
        "import hashlib, multiprocessing, random, sys\n"
        "key = bytes(multiprocessing.current_process().authkey)\n"
        "print('SECRETS', len(key), hashlib.sha256(key).hexdigest(), random.random(),"
        " sys.modules['numpy'].random.random() if 'numpy' in sys.modules else None)\n"
    )

    async def go() -> list[ExecResult]:
        # Loaded in the factory, as joblib and scikit-learn load it among the default imports.
        loaded = ("numpy", "multiprocessing")
        async with forked(tmp_path, kernels=2, preimports=loaded) as sandbox:
            warm = [await run(sandbox, tmp_path, f"forked-{i}", secrets) for i in range(2)]
        cold_box = BwrapSandbox(SandboxOptions(preimports=("numpy",), warm_pool=False))
        try:
            return [*warm, await run(cold_box, tmp_path, "cold", secrets)]
        finally:
            await cold_box.aclose()

    results = asyncio.run(go())
    seen = [r.output.split("SECRETS ", 1)[1].split() for r in results]
    assert all(r.status is ExecStatus.OK for r in results), [r.output for r in results]
    assert [s[0] for s in seen] == ["32", "32", "32"]  # a 32-byte key, as a cold kernel's
    for column in range(1, 4):
        values = [s[column] for s in seen]
        assert len(set(values)) == 3, (column, values)


POOLS = """
import json, threadpoolctl, numpy, sklearn.ensemble
print("POOLS " + json.dumps(sorted({p["num_threads"] for p in threadpoolctl.threadpool_info()})))
"""


def test_a_forked_kernels_thread_pools_are_the_size_it_was_given(tmp_path: Path) -> None:
    """The libraries size their pools as the factory imports them, before any fork: the
    factory must start with the kernel's ``threads``, not the host's core count."""

    async def go() -> ExecResult:
        async with forked(tmp_path, preimports=("numpy", "sklearn.ensemble"), threads=1) as box:
            return await run(box, tmp_path, "pools", POOLS)

    result = asyncio.run(go())
    assert result.status is ExecStatus.OK, result.output
    assert "POOLS [1]" in result.output, result.output
