"""The answers, and everything they can be derived from, are readable in no sandbox.

A solution that finds a task's raw data rebuilds its private answers (the bundled tasks'
``prepare.py`` is deterministic) and scores perfectly. Each test puts that content on the host
under a path the sandbox binds (the solutions' environment, the public data), then a kernel,
cold and forked, reads every readable file of its whole tree (``/`` but ``/proc``, ``/sys``,
``/dev``): a file whose size and sha256 are a secret file's, or a text file holding a secret's
text, is a leak. The same search finds the public data (so it did look) and, with the masks
off, every secret (so the content really was within reach: what the sandbox did before).

The wheel test is the reported attack: Podium built as a wheel and installed (``--no-deps``) in
a fresh environment that is the solutions' interpreter, running mini/titanic.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from podium.benchmarks.folder import FolderTask, load_folder_task
from podium.interfaces import Limits, Workspace
from podium.records import ExecStatus
from podium.sandbox import SandboxOptions, bwrap_problem
from podium.sandbox.hidden import python_paths
from tests.sandbox.test_attacks import (  # the `isolated` fixture: cold and forked kernels
    OPTIONS,
    forked_pool,
    isolated,  # noqa: F401
    make_sandbox,
)
from tests.support import REPO, TITANIC

_BWRAP_PROBLEM = bwrap_problem()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_BWRAP_PROBLEM is not None, reason=f"no bwrap: {_BWRAP_PROBLEM}"),
]

SEARCH_TIMEOUT_S = 280.0  # a walk of ~200,000 files takes ~3 s idle; a loaded machine is slow
SITE = Path("lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")
DEPENDENCIES = Path(sysconfig.get_paths()["purelib"])  # this venv's: numpy, ipykernel, ...

# Reads every regular file of the kernel's tree whose size is a secret file's (to hash it), and
# every text file up to 1 MiB (to look for a secret's text); prints what matched, as JSON.
_SEARCH = """
import hashlib, json, os
TARGETS = json.loads({targets!r})
SMALL, TEXT = 1 << 20, (".csv", ".tsv", ".txt", ".json", ".md", ".dat", ".data")
wanted = {{}}
for size, digest in TARGETS["hashes"]:
    wanted.setdefault(size, set()).add(digest)
texts = [text.encode() for text in TARGETS["texts"]]
found, files, stack = [], 0, ["/"]
while stack:
    try:
        entries = list(os.scandir(stack.pop()))
    except OSError:
        continue
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.path not in ("/proc", "/sys", "/dev"):
                    stack.append(entry.path)
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            files += 1
            size = entry.stat(follow_symlinks=False).st_size
            if size not in wanted and not (size <= SMALL and entry.name.lower().endswith(TEXT)):
                continue
            with open(entry.path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        digest = hashlib.sha256(data).hexdigest()
        hits = [t.decode() for t in texts if t in data]
        if digest in wanted.get(len(data), ()) or hits:
            found.append([entry.path, digest, hits])
print("SEARCH", json.dumps({{"found": found, "files": files}}))
"""


@dataclass(frozen=True)
class Targets:
    """What the kernel looks for: files (by size and sha256) and texts."""

    files: tuple[Path, ...]
    texts: tuple[str, ...] = ()

    def code(self) -> str:
        hashes = [[p.stat().st_size, _sha256(p)] for p in self.files]
        return _SEARCH.format(targets=json.dumps({"hashes": hashes, "texts": list(self.texts)}))


@dataclass(frozen=True)
class Found:
    """What the search found: ``(path inside, sha256, texts)`` per file, and files seen."""

    hits: list[tuple[str, str, list[str]]]
    files: int

    def where(self, file: Path | None = None, text: str | None = None) -> list[str]:
        """Paths inside holding ``file``'s content or ``text``."""
        digest = _sha256(file) if file is not None else None
        return sorted(p for p, d, texts in self.hits if d == digest or text in texts)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def search(
    kind: str, options: SandboxOptions, ws: Workspace, hidden: Iterable[Path], targets: Targets
) -> Found:
    """Run the search in one kernel of a sandbox told to hide ``hidden``."""

    async def go() -> Found:
        sandbox = make_sandbox(kind, options)
        try:
            sandbox.hide(hidden)
            await forked_pool(sandbox, ws)
            result = await sandbox.execute(targets.code(), ws, Limits(SEARCH_TIMEOUT_S, 1 << 20))
        finally:
            await sandbox.aclose()
        assert result.status is ExecStatus.OK, result.output
        match = re.search(r"^SEARCH (.*)$", result.output, re.MULTILINE)
        assert match, result.output
        data = json.loads(match.group(1))
        return Found([tuple(hit) for hit in data["found"]], int(data["files"]))

    return asyncio.run(go())


def make_environment(root: Path) -> Path:
    """A fresh venv at ``root`` (no pip) whose other packages are this venv's, through a
    ``.pth`` file (as a layered environment has them); its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    (root / SITE / "podium-test-dependencies.pth").write_text(f"{DEPENDENCIES}\n")
    return root / "bin" / "python"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- secrets under every kind of bound path ------------------------------------------------


@dataclass(frozen=True)
class Planted:
    """Secret content on the host, each under a path the sandbox binds."""

    options: SandboxOptions
    ws: Workspace
    hidden: tuple[Path, ...]  # what the run declares (``Task.secret_paths``)
    secrets: dict[str, Path]  # what must be found nowhere, by how it got there
    public: Path  # found at /workspace/input/train.csv: the search did look
    bound: tuple[Path, ...]  # the roots the sandbox binds that hold them


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    root = tmp_path_factory.mktemp("planted")
    python = make_environment(root / "env")
    env, site = root / "env", root / "env" / SITE

    def secret(path: Path) -> Path:
        return write(path, f"id,label\n1,SECRET-{uuid.uuid4().hex}\n")

    public = root / "public"
    secrets = {
        # a copy of Podium in the environment (a wheel's): its bundled raw data, found by
        # the sandbox itself, declared by nobody
        "bundled raw data": secret(site / "podium/benchmarks/mini/some-task/raw/full.csv"),
        # a task's data dir inside the environment, declared by the task
        "declared directory": secret(env / "share/data/some-task/prepared/private/answers.csv"),
        # a file of answers inside the public data itself, declared by the task
        "declared file": secret(public / "answers.csv"),
        # a secret declared through a link: masked where the link leads
        "declared through a link": secret(env / "share/other/answers.csv"),
    }
    (root / "link").symlink_to(env / "share/other")
    train = write(public / "train.csv", f"id,y\n1,PUBLIC-{uuid.uuid4().hex}\n")
    hidden = (env / "share/data", public / "answers.csv", root / "link")
    options = dataclasses.replace(OPTIONS, python=str(python))
    ws = Workspace(root=root / "node", input_dir=public)
    return Planted(options, ws, hidden, secrets, train, (env, public))


def _targets(planted: Planted) -> Targets:
    files = (*planted.secrets.values(), planted.public)
    return Targets(files, tuple(p.read_text().split(",")[-1].strip() for p in files))


def test_no_secret_under_any_bound_path_is_readable(
    isolated: str,  # noqa: F811
    planted: Planted,
) -> None:
    found = search(isolated, planted.options, planted.ws, planted.hidden, _targets(planted))
    assert found.where(planted.public) == ["/workspace/input/train.csv"], found
    leaks = {why: found.where(path) for why, path in planted.secrets.items()}
    assert leaks == {why: [] for why in planted.secrets}, leaks
    assert found.files > 1000  # it walked the whole tree: the system, the environment


def test_the_search_finds_every_secret_when_nothing_is_masked(
    planted: Planted, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control: the sandbox as it was (no masks) shows every secret where it is bound.
    monkeypatch.setattr("podium.sandbox.bwrap.secret_paths", lambda python, declared: ())
    for path in planted.secrets.values():
        assert any(path.resolve().is_relative_to(root) for root in planted.bound)
    assert set(python_paths(planted.options.python or "")) >= {planted.bound[0]}
    found = search("bwrap", planted.options, planted.ws, planted.hidden, _targets(planted))
    assert {why: bool(found.where(path)) for why, path in planted.secrets.items()} == dict.fromkeys(
        planted.secrets, True
    ), found
    assert found.where(planted.secrets["declared file"]) == ["/workspace/input/answers.csv"]


# --- the reported attack: Podium installed from a wheel -----------------------------------


@dataclass(frozen=True)
class Installed:
    python: Path
    package: Path  # the wheel's podium, in the environment's site-packages


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """Podium's wheel, built from this checkout, installed with ``--no-deps`` in a fresh
    environment (its dependencies from this venv, through a ``.pth``)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy: the build writes build/ and *.egg-info beside its input
    shutil.copytree(REPO / "podium", source / "podium",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"),
                    str(source)], check=True)  # fmt: skip
    (wheel,) = (root / "dist").glob("podium-*.whl")
    python = make_environment(root / "env")
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index",
                    "--no-compile", str(wheel)], check=True)  # fmt: skip
    where = subprocess.run([str(python), "-I", "-c", "import podium; print(podium.__file__)"],
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    package = Path(where.strip()).parent
    assert package == root / "env" / SITE / "podium"  # the wheel's, not this checkout's
    yield Installed(python, package)


@pytest.fixture(scope="module")
def titanic(tmp_path_factory: pytest.TempPathFactory) -> FolderTask:
    return load_folder_task(TITANIC, tmp_path_factory.mktemp("data"), task_id="mini/titanic")


def _raw_data(package: Path) -> tuple[Path, ...]:
    """Every bundled task's raw data files (their licences and notes are no secret)."""
    raw = package.glob("benchmarks/mini/*/raw/*")
    return tuple(sorted(p for p in raw if not p.name.startswith(("LICENSE", "SOURCE"))))


def test_a_wheel_install_shows_no_raw_data_nor_answers(
    isolated: str,  # noqa: F811
    installed: Installed,
    titanic: FolderTask,
    tmp_path: Path,
) -> None:
    raw = _raw_data(installed.package)
    titanic_raw = installed.package / "benchmarks/mini/titanic/raw/titanic.csv"
    assert titanic_raw in raw and len(raw) >= 8
    # On the host the raw data is in the environment's prefix, which every kernel binds.
    assert (installed.package.parents[3]) in python_paths(str(installed.python))
    answers = titanic.answers.read_text().splitlines()
    rows = "\n".join(answers[100:110])  # ten answers in a row: in no file by chance
    passenger = titanic_raw.read_text().splitlines()[1]
    train = titanic.public_dir / "train.csv"
    targets = Targets((*raw, titanic.answers, train), (rows, passenger))
    options = dataclasses.replace(OPTIONS, python=str(installed.python))
    ws = Workspace(root=tmp_path / "node", input_dir=titanic.public_dir)
    found = search(isolated, options, ws, titanic.secret_paths(), targets)
    assert found.where(train) == ["/workspace/input/train.csv"], found
    leaks = [hit for hit in found.hits if hit[0] != "/workspace/input/train.csv"]
    assert leaks == [], leaks
