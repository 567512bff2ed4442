"""Agentic nodes end to end: ``podium.run`` on the toy task, a scripted tool-calling model, real
sandboxed kernels. The model works in the node's kernel cell by cell; the node's record is its
notebook, its ``solution.py`` and its result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

import podium
from podium.formats import Journal
from podium.formats.inert_words import unfenced
from podium.scaffolds.agentic import cut_results
from podium.testing import cell_call, finish_call, review_answer, write_script
from tests.support import run_config, solution

pytestmark = pytest.mark.slow

LOAD = "import pandas as pd\ntrain = pd.read_csv('./input/train.csv')\nprint(train.shape)\n"
TYPO = "from sklearn.linear_model import LogisticRegresion\n"
FIT = (
    "from sklearn.linear_model import LogisticRegression\n"
    "from sklearn.model_selection import train_test_split\n"
    "X, y = train[['x1', 'x2']], train['y']\n"  # `train` is cell 1's
    "X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.25, random_state=0)\n"
    "model = LogisticRegression().fit(X_tr, y_tr)\n"
    "print(f'VALIDATION_METRIC: {(model.predict(X_va) == y_va).mean():.4f}')\n"
)
SUBMIT = (
    "test = pd.read_csv('./input/test.csv')\n"
    "model.fit(X, y)\n"
    "pd.DataFrame({'id': test['id'], 'y': model.predict(test[['x1', 'x2']])})"
    ".to_csv('./submission/submission.csv', index=False)\n"
    "print('written')\n"
)
DUMMY = (
    "from sklearn.dummy import DummyClassifier\n"
    "test = pd.read_csv('./input/test.csv')\n"
    "X, y = train[['x1', 'x2']], train['y']\nmodel = DummyClassifier()\n"
)
AGENTIC = {"search": {"operators": "agentic", "num_drafts": 1}}


def _node(node_id: int, *turns: dict[str, Any], review: bool = True) -> list[dict[str, Any]]:
    lines = [{**t, "node_id": node_id} for t in turns]
    return lines + ([{**review_answer(), "node_id": node_id}] if review else [])


def _run(tmp_path: Path, data_dir: Path, lines: list[dict[str, Any]], **sections: Any) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = write_script(tmp_path / "session.jsonl", lines)
    out = tmp_path / "run"
    search = {**AGENTIC["search"], **sections.pop("search", {})}
    config = run_config(script, out, data_dir, search=search, **sections)
    podium.run(config)
    return out


def _nodes(out: Path) -> dict[int, Any]:
    journal = Journal.open(out / "journal.sqlite")
    try:
        return {n.id: n for n in journal.nodes()}
    finally:
        journal.close()


def test_state_persists_across_cells_and_an_error_is_fixed_in_the_next(
    tmp_path: Path, data_dir: Path
) -> None:
    out = _run(
        tmp_path,
        data_dir,
        _node(
            1,
            cell_call(LOAD, text="First a look at the data."),
            cell_call(TYPO),
            cell_call(FIT, text="A typo: fixed, with the data cell 1 loaded."),
            cell_call(SUBMIT),
            finish_call("Logistic regression on x1 and x2, 25% held out."),
        ),
        budget={"steps": 1},
    )
    node = _nodes(out)[1]
    assert not node.is_buggy, node.bug_reason
    assert node.metric is not None and node.metric.value > 0.8
    assert node.plan == "Logistic regression on x1 and x2, 25% held out."
    assert node.fresh is not None and node.fresh.reproduced, node.fresh  # its clean cells, anew
    assert node.fresh.metric == node.metric.value
    node_dir = out / "nodes" / "1"
    assert (node_dir / "submission.csv").is_file()

    notebook = nbformat.reads((node_dir / "notebook.ipynb").read_text(), as_version=4)
    nbformat.validate(notebook)
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert [c.source for c in code_cells] == [LOAD, TYPO, FIT, SUBMIT]
    assert [c.execution_count for c in code_cells] == [1, 2, 3, 4]
    assert "(400, 4)" in code_cells[0].outputs[0].text
    error = next(o for o in code_cells[1].outputs if o.output_type == "error")
    assert error.ename == "ImportError" and "LogisticRegresion" in error.evalue
    said = [unfenced(c.source) for c in notebook.cells if c.cell_type == "markdown"]
    assert said[0] == "First a look at the data." and said[-1].startswith("Logistic")

    script = (node_dir / "solution.py").read_text()  # the clean cells, in order
    assert "LogisticRegresion\n" not in script and script.index("train = ") < script.index(
        "model.fit(X, y)"
    )
    assert node.code == script
    output = (node_dir / "output.txt").read_text()
    assert output.index("[cell 1]") < output.index("[cell 3]") < output.index("VALIDATION_METRIC")

    journal = Journal.open(out / "journal.sqlite")
    calls = [c for c in journal.calls(1) if c.role == "code"]
    journal.close()
    assert [c.request.meta.turn for c in calls] == [0, 1, 2, 3, 4]
    third = calls[2].request.messages  # what the model read before fixing the typo
    assert third[-1].role == "tool" and "ImportError" in third[-1].content
    assert third[-2].tool_calls[0].arguments == {"code": TYPO}


def test_the_turn_limit_and_a_cell_timeout_end_a_node_with_what_it_has(
    tmp_path: Path, data_dir: Path
) -> None:
    """Node 1 runs out of turns after writing its submission and metric: good. Node 2's only
    cell outlives agentic.cell_timeout: the kernel is stopped and the node is buggy."""
    out = _run(
        tmp_path,
        data_dir,
        [
            # standard library only: node 1's cells stay far inside 3 s on a loaded machine
            *_node(1, cell_call(solution(0.8)), cell_call("print('more')"), cell_call("1")),
            *_node(2, cell_call("import time\ntime.sleep(600)\n"), review=False),
        ],
        budget={"steps": 2},
        search={"num_drafts": 2},
        agentic={"max_turns": 2, "cell_timeout": "3s"},
    )
    first, second = _nodes(out)[1], _nodes(out)[2]
    assert not first.is_buggy, first.bug_reason
    assert "[the node ended: the turn limit (agentic.max_turns = 2)]" in first.exec.output
    assert second.is_buggy and second.bug_reason.startswith("timed out")
    assert second.exec.status == "timeout" and second.exec.duration_s < 120
    notebook = json.loads((out / "nodes" / "2" / "notebook.ipynb").read_text())
    assert notebook["metadata"]["podium"]["ending"].startswith("cell 1 stopped the kernel")


def test_the_cost_budget_stops_before_a_call_that_could_cross_it(
    tmp_path: Path, data_dir: Path
) -> None:
    cost = {"usage": {"input_tokens": 10, "output_tokens": 10, "cost_usd": 0.4}}
    out = _run(
        tmp_path,
        data_dir,
        [
            *_node(
                1, cell_call(LOAD + FIT, **cost), cell_call(SUBMIT, **cost), finish_call(**cost)
            ),
            *_node(2, cell_call(LOAD, **cost)),  # 0.8 + 0.4 > 1.0: never asked
        ],
        budget={"steps": 3, "cost": 1.0},
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["usage"]["cost_usd"] == pytest.approx(0.8)  # never past the budget
    node = _nodes(out)[1]
    assert not node.is_buggy, node.bug_reason  # it had written its submission: it counts
    assert "[the node ended: the run's cost budget: the next code call" in node.exec.output
    assert summary["stop_reason"] == "cost"
    assert not (out / "nodes" / "2" / "notebook.ipynb").exists()  # it asked nothing: unfinished


def test_a_hostile_agentic_session_is_contained_as_a_one_shot_node_is(
    tmp_path: Path, data_dir: Path
) -> None:
    """Cells that look for host files, leave a process running between cells, write outside,
    flood the output and never end: checked on the host, not by what the sandbox says."""
    secret_file = tmp_path / "host-secret.txt"
    secret = "HOST-SECRET-6c1f0e93"
    secret_file.write_text(secret)
    marker = Path("/tmp") / f"podium-agentic-escape-{tmp_path.name}"
    probe = (
        f"for p in [{str(secret_file)!r}, '/proc/1/root{secret_file}']:\n"
        "    try:\n        print(open(p).read())\n"
        "    except Exception as e:\n        print(type(e).__name__)\n"
    )
    linger = (
        "import subprocess\n"
        "p = subprocess.Popen(['sleep', '86399'], start_new_session=True)\n"
        f"open({str(marker)!r}, 'w').write('escaped')\n"
        "print('started', p.pid)\n"
    )
    flood = "import sys\nfor _ in range(400):\n    sys.stdout.write('x' * 50_000 + '\\n')\n"
    out = _run(
        tmp_path,
        data_dir,
        _node(1, cell_call(probe), cell_call(linger), cell_call(flood),
              cell_call("while True:\n    pass\n"), review=False),
        budget={"steps": 1},
        agentic={"cell_timeout": "3s"},
        exec={"max_output_bytes": 64 * 1024},
    )  # fmt: skip
    node = _nodes(out)[1]
    assert node.is_buggy and node.bug_reason.startswith("timed out")
    notebook = nbformat.reads((out / "nodes/1/notebook.ipynb").read_text(), as_version=4)
    outputs = ["".join(o.get("text", "") for o in c.outputs) for c in notebook.cells]
    assert set(outputs[0].split()) <= {"FileNotFoundError", "PermissionError"}, outputs[0]
    assert len(outputs[2]) < 80 * 1024  # the cell's output capped, as a one-shot node's
    assert (out / "nodes/1/output.txt").stat().st_size < 80 * 1024
    assert not marker.exists()  # the sandbox's /tmp is its own
    for path in out.rglob("*"):  # nothing of the host's file anywhere in the run dir
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    lingering = [
        p for p in Path("/proc").iterdir()
        if p.name.isdigit() and b"86399" in _cmdline(p)
    ]  # fmt: skip
    assert lingering == []  # the kernel's processes all died with the node


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_workers_run_agentic_nodes_at_once_and_grow_the_same_tree(
    tmp_path: Path, data_dir: Path
) -> None:
    """Two drafts in flight at once, each in its own kernel: the same nodes as one worker's."""
    lines = [
        *_node(1, cell_call(LOAD + FIT), cell_call("import time\ntime.sleep(2)\n" + SUBMIT),
               finish_call("One.")),
        *_node(2, cell_call(LOAD + FIT.replace("0.25", "0.3")), cell_call(SUBMIT),
               finish_call("Two.")),
    ]  # fmt: skip
    trees = []
    for workers in (1, 2):
        out = _run(
            tmp_path / str(workers), data_dir, lines, budget={"steps": 2},
            search={"num_drafts": 2}, workers=workers,
        )  # fmt: skip
        nodes = _nodes(out)
        trees.append([(n.id, n.plan, n.code, n.metric, n.exec.output) for n in nodes.values()])
        if workers == 2:
            first, second = nodes[1], nodes[2]
            assert first.worker != second.worker  # two kernels at once
            assert first.finished_at and second.created_at < first.finished_at
    assert trees[0] == trees[1]


def test_older_cell_results_are_cut_in_steps_so_the_sent_prefix_stays_put() -> None:
    """The context rule: the latest keep_outputs results whole; older ones cut, the cut moving
    keep_outputs results at a time (a prompt cache reads what did not change)."""
    assert [cut_results(n, 3) for n in range(1, 12)] == [0, 0, 0, 0, 0, 3, 3, 3, 6, 6, 6]
    assert all(n - cut_results(n, 3) >= min(n, 3) for n in range(30))


def test_a_score_that_needs_the_sessions_state_is_reported_as_not_reproduced(
    tmp_path: Path, data_dir: Path
) -> None:
    """A cell that failed after setting a variable is left out of solution.py; the session's
    score used it, so a fresh kernel cannot reproduce it, and the node says so."""
    out = _run(
        tmp_path,
        data_dir,
        _node(
            1,
            cell_call(LOAD + "score = 0.91\nraise ValueError('after setting score')\n"),
            cell_call(DUMMY + SUBMIT + "print(f'VALIDATION_METRIC: {score}')\n"),
            finish_call(),
        ),
        budget={"steps": 1},
    )  # fmt: skip
    node = _nodes(out)[1]
    assert not node.is_buggy and node.metric is not None and node.metric.value == 0.91
    assert node.fresh is not None and not node.fresh.reproduced
    assert node.fresh.status == "error" and "NameError" in (node.fresh.error or "")


def test_an_agentic_node_solves_mini_titanic_and_is_graded(
    tmp_path: Path, data_dir: Path, titanic: Any
) -> None:
    """A bundled competition: the kernel's submission is graded on the private answers."""
    look = "import pandas as pd\ntrain = pd.read_csv('./input/train.csv')\nprint(train.dtypes)\n"
    fit = (
        "from sklearn.ensemble import RandomForestClassifier\n"
        "from sklearn.model_selection import cross_val_score\n"
        "def features(df):\n"
        "    out = df[['Pclass', 'SibSp', 'Parch']].copy()\n"
        "    out['male'] = (df['Sex'] == 'male').astype(int)\n"
        "    out['Fare'] = df['Fare'].fillna(df['Fare'].median())\n"
        "    out['Age'] = df['Age'].fillna(df['Age'].median())\n"
        "    return out\n"
        "X, y = features(train), train['Survived']\n"
        "model = RandomForestClassifier(n_estimators=100, max_depth=5, random_state=0)\n"
        "print(f'VALIDATION_METRIC: {cross_val_score(model, X, y, cv=5).mean():.4f}')\n"
    )
    submit = (
        "test = pd.read_csv('./input/test.csv')\n"
        "model.fit(X, y)\n"
        "pd.DataFrame({'PassengerId': test['PassengerId'], 'Survived': model.predict("
        "features(test))}).to_csv('./submission/submission.csv', index=False)\n"
    )
    script = write_script(
        tmp_path / "titanic.jsonl",
        _node(1, cell_call(look), cell_call(fit), cell_call(submit), finish_call("RF.")),
    )
    config = run_config(script, tmp_path / "run", data_dir, steps=1, search=AGENTIC["search"])
    config["task"] = "mini/titanic"
    result = podium.run(config)
    node = _nodes(result.run_dir)[1]
    assert not node.is_buggy, node.bug_reason
    assert node.fresh is not None and node.fresh.reproduced
    grade = json.loads((result.run_dir / "grade.json").read_text())
    assert grade["valid_submission"] is True and grade["score"] > 0.7
