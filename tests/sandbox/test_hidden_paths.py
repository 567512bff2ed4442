"""The mount plan's masks, read as data: which secret paths are masked where, which refuse the
sandbox, and what each task declares. Whether the masks *hold* in a kernel is attacked in
``test_attacks_answers.py``."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path, PurePosixPath

import pytest

from podium.benchmarks.folder import load_folder_task
from podium.benchmarks.holdout import make_holdout
from podium.benchmarks.mlebench import MLEBench
from podium.errors import SandboxUnavailable
from podium.sandbox import BwrapSandbox, SandboxOptions, bwrap_problem
from podium.sandbox.bwrap_command import (
    Bound,
    BwrapFds,
    BwrapLayout,
    bwrap_argv,
    check_hideable,
    hidden_mounts,
)
from podium.sandbox.hidden import bundled_copies, python_paths, secret_paths
from podium.sandbox.identity import SandboxUser
from podium.secret_paths import bundled_answers, podium_secret_paths
from tests.support import MINI, MLEBENCH_FIXTURE, TITANIC

SITE = Path("lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")


def touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def bind(
    source: Path, inside: str | Path, what: str = "the solutions' Python environment"
) -> Bound:
    return Bound(source, PurePosixPath(inside), what)


def test_a_secret_is_masked_where_its_bind_shows_it_links_resolved(tmp_path: Path) -> None:
    env, public = tmp_path / "env", tmp_path / "public"
    raw = touch(env / "podium/benchmarks/mini/t/raw/full.csv").parent
    answers = touch(public / "answers.csv")
    touch(env / "data/t/private/a.csv")
    (tmp_path / "link").symlink_to(env / "data")
    bound = [bind(env, env), bind(public, "/workspace/input", "the task's public data")]
    secrets = [raw, answers, tmp_path / "link", env / "data/t/private", tmp_path / "gone"]
    assert hidden_mounts(bound, secrets) == [
        (PurePosixPath(env / "data"), True),  # the link's target; the private dir inside it once
        (PurePosixPath(raw), True),
        (PurePosixPath("/workspace/input/answers.csv"), False),
    ]


def test_a_secret_under_no_bind_needs_no_mask(tmp_path: Path) -> None:
    secret = touch(tmp_path / "data/private/a.csv").parent
    assert hidden_mounts([bind(tmp_path / "env", tmp_path / "env")], [secret]) == []
    # A bind inside a secret shows only what it binds: the public data in a data dir.
    public = (tmp_path / "data/public").resolve()
    public.mkdir()
    data = [bind(public, "/workspace/input", "the task's public data")]
    assert hidden_mounts(data, [tmp_path / "data"]) == []


def test_a_secret_that_cannot_be_masked_refuses_in_one_line(tmp_path: Path) -> None:
    env = tmp_path / "env"
    (env / "lib").mkdir(parents=True)
    with pytest.raises(SandboxUnavailable) as bound_itself:
        hidden_mounts([bind(env, env)], [env])
    assert "\n" not in str(bound_itself.value) and bound_itself.value.hint
    assert "the solutions' Python environment" in str(bound_itself.value)
    covered = [bind(tmp_path, tmp_path, "the system"), bind(env / "lib", env / "lib")]
    with pytest.raises(SandboxUnavailable, match="is bound inside it"):
        hidden_mounts(covered, [env])


def layout(tmp_path: Path, secrets: list[Path]) -> BwrapLayout:
    return BwrapLayout(
        workspace=tmp_path / "slot", input_dir=tmp_path / "public",
        ipc_dir=Path("/tmp/podium-ipc/kernel"), user=SandboxUser(65533, 65533, "s", switch=True),
        fds=BwrapFds(passwd=7, group=8), python_paths=[tmp_path / "env"], secrets=secrets,
    )  # fmt: skip


def test_the_masks_come_after_every_bind_before_the_root_is_made_read_only(
    tmp_path: Path,
) -> None:
    raw = touch(tmp_path / "env/data/raw/full.csv").parent
    answers = touch(tmp_path / "public/answers.csv")
    argv = bwrap_argv("bwrap", layout(tmp_path, [raw, answers]), ["k"])
    mask = argv.index(str(raw))
    assert argv[mask - 3 : mask + 4] == [
        "--perms", "0555", "--tmpfs", str(raw), "--remount-ro", str(raw), "--ro-bind"]  # fmt: skip
    assert argv[mask + 4 : mask + 6] == ["/dev/null", "/workspace/input/answers.csv"]
    assert mask > argv.index(f"{tmp_path}/public")  # the last bind: the public data
    assert mask < argv.index("--chdir") and argv[-4:-2] == ["--remount-ro", "/"]


def test_check_hideable_refuses_before_anything_starts(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    check_hideable([env], [tmp_path])  # the environment inside a secret: only it is bound
    with pytest.raises(SandboxUnavailable):
        check_hideable([env], [env])
    with pytest.raises(SandboxUnavailable, match="public data"):
        check_hideable([env], [tmp_path / "public"], public=touch(tmp_path / "public/a").parent)


def test_podium_knows_its_own_secrets_whatever_the_task() -> None:
    known = podium_secret_paths()
    every_suite = (p for p in MINI.parent.iterdir() if p.is_dir())
    raws = {task / "raw" for suite in every_suite for task in suite.iterdir() if task.is_dir()}
    assert set(bundled_answers()) == {raw for raw in raws if raw.is_dir()}
    assert set(bundled_answers()) <= set(known) and Path("/private") in known
    assert bundled_answers(Path("/nonexistent")) == []


def fresh_environment(root: Path, *pth: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    (root / SITE / "extra.pth").write_text("".join(f"{p}\n" for p in pth))
    return root / "bin" / "python"


def test_the_environment_binds_its_site_dirs_and_finds_every_copy_of_podium(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"  # an editable install's project: not bound (its .env...)
    touch(project / "mypackage/__init__.py")
    dependencies = Path(sysconfig.get_paths()["purelib"])
    python = fresh_environment(tmp_path / "env", dependencies, project)
    copy = touch(tmp_path / "env" / SITE / "podium/benchmarks/mini/t/raw/full.csv").parent
    # a suite no list names (a newer Podium's, say): masked by the layout alone
    other = touch(tmp_path / "env" / SITE / "podium/benchmarks/newsuite/t/raw/full.csv").parent
    bound = python_paths(str(python))
    assert tmp_path / "env" in bound and dependencies in bound
    assert project not in bound
    assert {copy, other} <= set(bundled_copies(str(python)))
    assert {copy, tmp_path / "declared"} <= set(secret_paths(str(python), [tmp_path / "declared"]))


def test_each_task_declares_its_answers_data_and_raw_data(tmp_path: Path) -> None:
    task = load_folder_task(TITANIC, tmp_path / "data", task_id="mini/titanic")
    declared = set(task.secret_paths())
    assert {task.answers, task.private_dir, tmp_path / "data", TITANIC / "raw"} <= declared
    assert task.public_dir.is_relative_to(tmp_path / "data")  # bound on its own, at input/
    held = make_holdout(task, tmp_path / "run/holdout", 0.2, seed=1).task
    assert {*declared, task.public_dir, tmp_path / "run/holdout/answers"} <= set(
        held.secret_paths()
    )


def test_an_mlebench_task_declares_its_whole_data_dir() -> None:
    data = MLEBENCH_FIXTURE / "data"
    task = MLEBench(MLEBENCH_FIXTURE).load_task("tiny-iris-species", data)
    declared = task.secret_paths()
    assert data.resolve() in declared and task.answers in declared
    assert task.public_dir.is_relative_to(data.resolve())


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bwrap: {bwrap_problem()}")
def test_the_sandbox_refuses_a_secret_it_cannot_mask_before_any_kernel(tmp_path: Path) -> None:
    sandbox = BwrapSandbox(SandboxOptions(warm_pool=False))
    prefix = Path(sys.prefix)
    sandbox.hide([tmp_path / "elsewhere"])  # nothing bound there: nothing to mask
    with pytest.raises(SandboxUnavailable, match="it is the solutions' Python environment"):
        sandbox.hide([prefix])
