"""Tasks stored as folders in MLE-bench's registry layout: loading, preparing, format checks."""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

import podium
from podium.api.runs import load_registry
from podium.benchmarks import load_folder_task, resolve_task
from podium.benchmarks.folder import FolderTask
from podium.errors import TaskError
from podium.formats import Journal
from podium.plugins import Registry
from podium.submission_check import check
from podium.testing.scripted import node_answers, write_script
from tests.support import TOY_TASK, run_config, solution

REQUIRED = {
    # file -> words its hint must contain (what the file should hold)
    "config.yaml": ["id", "grade_fn"],
    "description.md": ["description"],
    "prepare.py": ["prepare(raw, public, private)"],
    "grade.py": ["grade(submission, answers)"],
    "leaderboard.csv": ["score"],
}


@pytest.fixture
def task_copy(tmp_path: Path) -> Path:
    """A private copy of the toy task folder that a test may break."""
    folder = tmp_path / "tasks" / "toy"
    shutil.copytree(TOY_TASK, folder)
    return folder


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# --- loading -----------------------------------------------------------------------------


def test_loading_the_toy_task(toy_task: FolderTask) -> None:
    assert toy_task.id == "toy"
    assert toy_task.name == "Toy Points"
    assert toy_task.description == (TOY_TASK / "description.md").read_text(encoding="utf-8")
    assert toy_task.description.startswith("# Toy Points")
    assert toy_task.lower_is_better is False
    assert toy_task.metric_name == "accuracy"
    assert sorted(p.name for p in toy_task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert toy_task.sample_submission == toy_task.public_dir / "sample_submission.csv"
    assert (toy_task.private_dir / "answers.csv").is_file()
    assert len(pd.read_csv(toy_task.public_dir / "train.csv")) == 400
    test = pd.read_csv(toy_task.public_dir / "test.csv")
    assert len(test) == 100
    assert "y" not in test.columns


def test_private_answers_are_outside_the_public_dir(toy_task: FolderTask) -> None:
    public, private = toy_task.public_dir.resolve(), toy_task.private_dir.resolve()
    assert not private.is_relative_to(public)
    assert not public.is_relative_to(private)
    assert not any(p.name == "answers.csv" for p in public.rglob("*"))
    assert not any(p.is_symlink() for p in public.rglob("*"))


def test_preparing_is_deterministic(tmp_path: Path) -> None:
    first = load_folder_task(TOY_TASK, tmp_path / "a")
    second = load_folder_task(TOY_TASK, tmp_path / "b")
    a = files_under(tmp_path / "a" / "toy" / "prepared")
    b = files_under(tmp_path / "b" / "toy" / "prepared")
    assert a == b
    assert "public/train.csv" in a and "private/answers.csv" in a
    assert first.public_dir != second.public_dir


def test_preparing_happens_once(tmp_path: Path) -> None:
    task = load_folder_task(TOY_TASK, tmp_path)
    sentinel = task.public_dir / "sentinel.txt"  # gone if the data were prepared again
    sentinel.write_text("still here")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "toy").rglob("*") if p.is_file()}

    again = load_folder_task(TOY_TASK, tmp_path)

    assert again.public_dir == task.public_dir
    assert sentinel.read_text() == "still here"
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "toy").rglob("*") if p.is_file()}
    assert after == before


def test_preparing_runs_again_when_prepare_py_changes(task_copy: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    task = load_folder_task(task_copy, data)
    sentinel = task.public_dir / "sentinel.txt"
    sentinel.write_text("from the first preparation")
    assert not (task.public_dir / "extra.txt").exists()

    prepare = task_copy / "prepare.py"
    prepare.write_text(
        prepare.read_text()
        + '    (public / "extra.txt").write_text("written by the new prepare.py")\n'
    )
    again = load_folder_task(task_copy, data)

    assert (again.public_dir / "extra.txt").read_text() == "written by the new prepare.py"
    assert not sentinel.exists()
    assert (again.private_dir / "answers.csv").is_file()
    leftovers = sorted(p.name for p in (data / "toy").iterdir() if p.name.startswith("prepared"))
    assert leftovers == ["prepared"]


HELPER = """
from collections.abc import Callable
from pathlib import Path


def prepare(raw: Path, public: Path, private: Path) -> None:
    seed = (raw / "seed.txt").read_text()
    (public / "train.csv").write_text("id,y\\n1," + seed + "\\n")
    (public / "test.csv").write_text("id\\n2\\n")
    (public / "sample_submission.csv").write_text("id,y\\n2,0\\n")
    (private / "answers.csv").write_text("id,y\\n2,1\\n")
"""


@pytest.mark.parametrize(
    "change",
    [
        lambda folder: (folder / "raw" / "seed.txt").write_text("7"),  # the raw data
        lambda folder: (folder / "raw" / "more.csv").write_text("a\n1\n"),  # a new raw file
        lambda folder: (folder / "helper.py").write_text(HELPER.replace("1,", "2,")),
    ],
    ids=["raw data", "a new raw file", "the preparer's module, not prepare.py"],
)
def test_preparing_runs_again_when_what_it_reads_changes(
    change: Callable[[Path], object], task_copy: Path, tmp_path: Path
) -> None:
    """A generated task keeps its generator and seed in raw/; config.yaml may name a preparer
    outside prepare.py. Data prepared from old inputs is never served; grading files do not
    count."""
    config = yaml.safe_load((task_copy / "config.yaml").read_text())
    (task_copy / "config.yaml").write_text(yaml.safe_dump({**config, "preparer": "helper:prepare"}))
    (task_copy / "helper.py").write_text(HELPER)
    (task_copy / "raw").mkdir()
    (task_copy / "raw" / "seed.txt").write_text("3")
    data = tmp_path / "data"
    sentinel = load_folder_task(task_copy, data).public_dir / "sentinel.txt"
    sentinel.write_text("gone if the data were prepared again")
    (task_copy / "description.md").write_text("# Reworded\n\nMetric: accuracy.\n")
    (task_copy / "leaderboard.csv").write_text("teamName,score\na,0.9\nb,0.5\n")
    load_folder_task(task_copy, data)
    assert sentinel.exists()  # grading files and notes do not change the data

    change(task_copy)
    again = load_folder_task(task_copy, data)
    assert not sentinel.exists()
    assert (again.private_dir / "answers.csv").is_file()


FAILING_PREPARE = "def prepare(raw, public, private):\n    raise RuntimeError('needs raw data')\n"


def test_data_prepared_elsewhere_is_used_as_is(
    toy_task: FolderTask, task_copy: Path, tmp_path: Path
) -> None:
    # As `mlebench prepare` leaves it: public and private, no Podium marker. The folder's
    # prepare.py would need the raw download: it must not run, and nothing may be written.
    data = tmp_path / "data"
    prepared = data / "toy" / "prepared"
    shutil.copytree(toy_task.public_dir, prepared / "public")
    shutil.copytree(toy_task.private_dir, prepared / "private")
    (task_copy / "prepare.py").write_text(FAILING_PREPARE)
    before = files_under(data)

    task = load_folder_task(task_copy, data)

    assert task.public_dir == prepared / "public" and task.answers.is_file()
    assert files_under(data) == before  # no .prepare.lock, no marker
    assert sorted(p.name for p in (data / "toy").iterdir()) == ["prepared"]


def test_incomplete_data_prepared_elsewhere_is_prepared_again(
    toy_task: FolderTask, task_copy: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(toy_task.public_dir, data / "toy" / "prepared" / "public")  # no answers
    (task_copy / "prepare.py").write_text(FAILING_PREPARE)
    with pytest.raises(TaskError, match="needs raw data"):
        load_folder_task(task_copy, data)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_a_missing_file_is_named_with_what_it_should_hold(
    name: str, task_copy: Path, tmp_path: Path
) -> None:
    (task_copy / name).unlink()
    with pytest.raises(TaskError) as err:
        load_folder_task(task_copy, tmp_path / "data")
    assert name in err.value.message
    assert err.value.hint is not None
    assert name in err.value.hint
    for word in REQUIRED[name]:
        assert word in err.value.hint
    assert not (tmp_path / "data" / "toy" / "prepared").exists()


def test_a_missing_folder_is_a_task_error(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="not found"):
        load_folder_task(tmp_path / "nowhere", tmp_path / "data")


@pytest.mark.parametrize(
    "key", ["id", "name", "dataset.answers", "dataset.sample_submission", "grader.grade_fn"]
)
def test_config_missing_a_key_names_it(key: str, task_copy: Path, tmp_path: Path) -> None:
    config_path = task_copy / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    *parents, last = key.split(".")
    section = config
    for part in parents:
        section = section[part]
    del section[last]
    config_path.write_text(yaml.safe_dump(config))
    with pytest.raises(TaskError) as err:
        load_folder_task(task_copy, tmp_path / "data")
    assert key in err.value.message
    assert "config.yaml" in err.value.message


def test_config_that_is_not_yaml_is_a_task_error(task_copy: Path, tmp_path: Path) -> None:
    (task_copy / "config.yaml").write_text("id: [unclosed\n  name: {\n")
    with pytest.raises(TaskError, match=r"config\.yaml"):
        load_folder_task(task_copy, tmp_path / "data")


BROKEN_PREPARES = {
    "raises": (
        "def prepare(raw, public, private):\n"
        "    (public / 'train.csv').write_text('id\\n1\\n')\n"
        "    raise RuntimeError('disk on fire')\n",
        "disk on fire",
    ),
    "fails to import": ("import no_such_module_for_podium_tests\n", "no_such_module"),
    "has no prepare()": ("def prepare_data(raw, public, private):\n    pass\n", "prepare"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_PREPARES))
def test_a_failing_prepare_leaves_no_half_prepared_data(
    case: str, task_copy: Path, tmp_path: Path
) -> None:
    good = (task_copy / "prepare.py").read_text()
    source, detail = BROKEN_PREPARES[case]
    (task_copy / "prepare.py").write_text(source)
    data = tmp_path / "data"

    with pytest.raises(TaskError) as err:
        load_folder_task(task_copy, data)
    assert "prepare.py" in err.value.message
    assert detail in err.value.message
    assert [p.name for p in (data / "toy").iterdir() if p.name.startswith("prepared")] == []

    (task_copy / "prepare.py").write_text(good)
    task = load_folder_task(task_copy, data)
    assert len(pd.read_csv(task.public_dir / "train.csv")) == 400
    assert [p.name for p in (data / "toy").iterdir() if p.name.startswith("prepared")] == [
        "prepared"
    ]


def test_a_prepare_without_the_sample_submission_is_a_task_error(
    task_copy: Path, tmp_path: Path
) -> None:
    (task_copy / "prepare.py").write_text(
        "def prepare(raw, public, private):\n    (public / 'train.csv').write_text('id\\n')\n"
    )
    with pytest.raises(TaskError, match="sample_submission"):
        load_folder_task(task_copy, tmp_path / "data")


def test_lower_is_better_comes_from_the_leaderboard_order(task_copy: Path, tmp_path: Path) -> None:
    board = pd.read_csv(task_copy / "leaderboard.csv")
    board["score"] = board["score"].iloc[::-1].to_numpy()  # ascending: an error metric
    board.to_csv(task_copy / "leaderboard.csv", index=False)
    task = load_folder_task(task_copy, tmp_path / "data")
    assert task.lower_is_better is True


def test_blank_scores_inside_the_leaderboard_are_kept(task_copy: Path, tmp_path: Path) -> None:
    board = pd.read_csv(task_copy / "leaderboard.csv")
    board.loc[len(board) // 2, "score"] = None  # MLE-bench grades such a board without complaint
    board.to_csv(task_copy / "leaderboard.csv", index=False)
    task = load_folder_task(task_copy, tmp_path / "data")
    assert len(task.leaderboard) == len(board) and task.lower_is_better is False
    assert sum(math.isnan(s) for s in task.leaderboard) == 1


@pytest.mark.parametrize(("row", "end"), [(0, "first"), (-1, "last")])
def test_a_blank_score_at_an_end_leaves_the_direction_unknown(
    task_copy: Path, tmp_path: Path, row: int, end: str
) -> None:
    board = pd.read_csv(task_copy / "leaderboard.csv")
    board.loc[board.index[row], "score"] = None
    board.to_csv(task_copy / "leaderboard.csv", index=False)
    line = 2 if row == 0 else len(board) + 1
    with pytest.raises(TaskError, match=f"the {end} score \\(line {line}\\) is empty") as err:
        load_folder_task(task_copy, tmp_path / "data")
    assert err.value.hint is not None and "first and last" in err.value.hint


def test_a_leaderboard_without_scores_is_a_task_error(task_copy: Path, tmp_path: Path) -> None:
    (task_copy / "leaderboard.csv").write_text("teamId,rank\n1,1\n2,2\n")
    with pytest.raises(TaskError, match="score") as err:
        load_folder_task(task_copy, tmp_path / "data")
    assert err.value.hint is not None


# --- format-only submission checks ---------------------------------------------------------


def sample(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.sample_submission)


def write(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False)
    return path


def test_the_sample_and_a_real_prediction_pass(toy_task: FolderTask, tmp_path: Path) -> None:
    assert toy_task.check_submission(toy_task.sample_submission) is None
    predictions = sample(toy_task).assign(y=1).iloc[::-1]  # any row order is fine
    assert toy_task.check_submission(write(predictions, tmp_path / "s.csv")) is None


def test_the_check_never_needs_the_private_answers(tmp_path: Path) -> None:
    task = load_folder_task(TOY_TASK, tmp_path / "data")
    shutil.rmtree(task.private_dir)
    assert task.check_submission(task.sample_submission) is None
    bad = write(sample(task).iloc[:10], tmp_path / "short.csv")
    assert "the competition's grader rejects it" in (task.check_submission(bad) or "")
    # The structural check works from the public files alone (as it does inside the sandbox).
    assert "rows" in (check(bad, task.sample_submission) or "")


WIDE_HEADER = "id,y" + "".join(f",c{i}" for i in range(10**6)) + "\n"  # 7.9 MB of header


def test_an_absurd_submission_is_refused_before_the_grader_reads_it(
    toy_task: FolderTask, tmp_path: Path
) -> None:
    """A million-column header: refused on its first megabyte, in milliseconds (the grader
    worker took minutes on it, the loop's structural check hours), and no grader is started."""
    path = tmp_path / "submission.csv"
    path.write_text(WIDE_HEADER + "".join(f"{i},0\n" for i in range(401, 501)))
    start = time.monotonic()
    reason = toy_task.check_submission(path) or ""
    assert time.monotonic() - start < 10
    assert reason.startswith("the submission's header line is over 1,048,576 bytes long")
    assert not toy_task._grader_checks  # never asked


def test_a_node_with_an_absurd_submission_does_not_stall_the_node_beside_it(
    tmp_path: Path, data_dir: Path
) -> None:
    """Two workers: one node writes a million-column header, the other a valid submission.
    The first is buggy with the bound's reason, and neither node waits on the other's check."""
    wide = "'id,y' + ''.join(f',c{i}' for i in range(10**6)) + '\\n'"
    hostile = solution(
        0.5, submit=False, extra=f"open('submission/submission.csv', 'w').write({wide})"
    )
    steady = solution(0.6, sleep=1.0)
    script = write_script(tmp_path / "s.jsonl", [node_answers(hostile), node_answers(steady)])
    podium.run(
        run_config(script, tmp_path / "run", data_dir, steps=2, workers=2, search={"num_drafts": 2})
    )
    nodes = {n.metric.value if n.metric else None: n for n in
             Journal.open(tmp_path / "run" / "journal.sqlite").nodes()}  # fmt: skip
    assert set(nodes) == {0.5, 0.6}
    assert nodes[0.5].is_buggy and "header line is over" in (nodes[0.5].bug_reason or "")
    assert not nodes[0.6].is_buggy
    assert nodes[0.5].timings.overhead_s < 10 and nodes[0.6].timings.overhead_s < 10


# --- task references -----------------------------------------------------------------------


def test_resolve_a_folder_path(registry: Registry, data_dir: Path) -> None:
    task = resolve_task(str(TOY_TASK), registry, data_dir)
    assert task.id == "toy"
    assert (task.public_dir / "train.csv").is_file()


@pytest.mark.parametrize("ref", ["foo/bar", "nosuchtask"])
def test_resolve_an_unknown_name(ref: str, registry: Registry, data_dir: Path) -> None:
    with pytest.raises(TaskError) as err:
        resolve_task(ref, registry, data_dir)
    assert ref in err.value.message
    assert err.value.hint is not None
    assert "folder" in err.value.hint


def test_resolve_a_file_is_refused(registry: Registry, data_dir: Path) -> None:
    with pytest.raises(TaskError, match="file") as err:
        resolve_task(str(TOY_TASK / "config.yaml"), registry, data_dir)
    assert err.value.hint is not None


def test_resolve_a_missing_folder_path(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="not found"):
        resolve_task(str(tmp_path / "no" / "such" / "task"), registry, tmp_path)


def test_resolve_nothing(registry: Registry, data_dir: Path) -> None:
    with pytest.raises(TaskError) as err:
        resolve_task("", registry, data_dir)
    assert err.value.hint is not None
