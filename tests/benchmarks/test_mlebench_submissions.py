"""``podium export mlebench-jsonl`` lines: besides what ``mlebench grade`` reads, the paths
MLE-bench's ``make_submission.py`` writes for its rule-violation and plagiarism checks
(``logs_path``, ``code_path``; null when absent), from run directories as Podium leaves them."""

from __future__ import annotations

import json
from pathlib import Path

from podium.benchmarks import find_run_dirs, mlebench_jsonl


def run_dir(root: Path, name: str, *, best: bool) -> Path:
    """A finished run's directory, as far as the export reads it."""
    path = root / name
    path.mkdir(parents=True)
    summary = {"task": f"mlebench/{name}", "competition_id": name}
    (path / "summary.json").write_text(json.dumps(summary))
    (path / "nodes" / "1").mkdir(parents=True)
    (path / "nodes" / "1" / "solution.py").write_text("print(1)\n")
    if best:
        (path / "best").mkdir()
        (path / "best" / "solution.py").write_text("print('best')\n")
        (path / "best" / "submission.csv").write_text("id,y\n1,0\n")
    return path


def test_each_line_names_the_logs_and_the_final_code(tmp_path: Path) -> None:
    done = run_dir(tmp_path / "sweep", "spooky-author-identification", best=True)
    empty = run_dir(tmp_path / "sweep", "spaceship-titanic", best=False)
    export = mlebench_jsonl(find_run_dirs([tmp_path / "sweep"]))
    assert export.without_submission == 1
    assert export.lines == [
        {
            "competition_id": "spaceship-titanic",
            "submission_path": str((empty / "best" / "submission.csv").resolve()),
            "logs_path": str(empty.resolve()),
            "code_path": None,
            "run_dir": str(empty.resolve()),
        },
        {
            "competition_id": "spooky-author-identification",
            "submission_path": str((done / "best" / "submission.csv").resolve()),
            "logs_path": str(done.resolve()),
            "code_path": str((done / "best" / "solution.py").resolve()),
            "run_dir": str(done.resolve()),
        },
    ]
    json.dumps(export.lines)  # JSON as it is: null where absent
