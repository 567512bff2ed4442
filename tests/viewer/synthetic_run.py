"""Recorded runs of 12 to 2,000 nodes, written in seconds and shaped like real ones, for the
viewer's browser tests and ``perf/viewer_load.py``: :func:`write_synthetic_run`.

No model and no kernel, but nothing else is made up:

* **The tree is the strategy's.** The builtin strategy classes (greedy is AIDE's policy, mcts,
  evolutionary with its crossovers, random) choose every action, driven as the loop drives them
  under its reproducible schedule (``podium/scaffolds/loop.py``): node ``n`` is decided on a
  ``SearchTree`` holding nodes ``1 .. n - workers``, admitted in id order and each shown to
  ``observe``, with nodes ``n - workers + 1 .. n - 1`` in ``tree.pending``, from the run's one
  ``random.Random(seed)``. Only the outcomes are synthetic: a node's metric is drawn around its
  parent's (improving now and then), some nodes are buggy, a debug usually fixes its parent.
  The final node is ``strategy.final_node(tree)``, published to ``best/`` by ``RunDir``, and
  ``summary.json`` is ``build_summary``'s record, so the viewer's best path and header are what
  a real run of that strategy would show. (The tree is an :class:`IndexedTree`, which answers
  exactly as the plain one but keeps its lists of good, buggy and draft nodes as it grows;
  ``test_synthetic_run.py`` replays every decision on a plain ``SearchTree``.)
* **The content is a long LLM run's.** Each node's code (~4 KB) is a scikit-learn solution
  derived from its parent's by a few lines (an improve changes a hyperparameter or a feature, a
  debug fixes the failing line, a crossover takes one parent's features and the other's
  model), its output (~16 KB) the training log such code prints, ending in its
  ``VALIDATION_METRIC`` line, and a buggy node fails the way such code fails: an IPython
  traceback laid out exactly as the sandbox's kernel reports one (the cell frame with its
  context and arrow, then the library frames, copied from real failures of pandas and
  scikit-learn), a timeout, a kernel killed at the memory limit, a missing submission, a review
  that calls the score leaked. Two model calls per node, rendered from the real prompt
  templates (``podium.scaffolds.prompts``) with the real memory of earlier nodes
  (``memory.good_nodes`` on the tree's best 40 good nodes, more than its 4,000 characters
  hold), so every prompt repeats the task description and data preview and carries the
  parent's code and output. Tokens, cost, latency, per-phase timings, workers and timestamps
  follow a simulated clock: nodes take minutes, a run takes hours to days.
* **Written as a run writes it**, through ``Journal`` and ``RunDir``: each node begun when it
  is decided (with the RNG before and after), its code call, and, when its execution and review
  are over, its review call and the finished record, in the order of the simulated clock. The
  last ``running`` nodes are left executing (with their output so far in ``output.txt``). Node
  files are written without the fsync ``RunDir.write_text`` does (what is written is the same;
  the flush would cost seconds for thousands of files).

Deterministic for a seed. 2,000 nodes: 10-13 s on a 2-core VM shared with other work (7-10 s
of CPU; a ~150 MB journal); 12 nodes: 0.1 s.
The code of a good node runs: ``render`` writes scripts that train and submit on data of
this shape, and the tracebacks were checked byte for byte against a kernel's for the same code.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
import operator
import random
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any, cast

import tomli_w

from podium.interfaces import Strategy
from podium.records import (
    Action,
    ExecResult,
    ExecStatus,
    Message,
    Metric,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Node,
    NodeState,
    RequestMeta,
    Timings,
    ToolCall,
    Usage,
)
from podium.scaffolds import Journal, RunDir, build_summary, memory, run_files
from podium.scaffolds.operators import PARENT_OUTPUT_CHARS, format_duration, metric_text
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.review import (
    DESCRIPTION_CHARS_FOR_REVIEW,
    OUTPUT_CHARS_FOR_REVIEW,
    REVIEW_TOOL,
    tail,
)
from podium.scaffolds.spending import Spending
from podium.scaffolds.strategies import MCTS, Evolutionary, Greedy, RandomSearch
from podium.scaffolds.strategies.evolutionary import EvolutionaryParams
from podium.scaffolds.strategies.greedy import GreedyParams
from podium.scaffolds.strategies.mcts import MCTSParams
from podium.tree import SearchTree

if TYPE_CHECKING:
    from podium.scaffolds.loop import Search

TASK_ID = "synthetic/passengers"
MODEL = "openai/gpt-4.1"
REVIEW_MODEL = "openai/gpt-4.1-mini"
PRICES = {MODEL: (2.0, 8.0), REVIEW_MODEL: (0.4, 1.6)}  # USD per million tokens, in and out
START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
EXEC_TIMEOUT_S = 3600.0
MEMORY_LIMIT = "8 GiB"
TRAIN_ROWS, TEST_ROWS = 10_000, 2_500
PACKAGES = "numpy 2.4.6, pandas 3.1.1, scikit-learn 1.9.1, scipy 1.16.3"
LIB = "/usr/lib/python3/dist-packages"  # where the solutions' packages live, in tracebacks
STRATEGIES: dict[str, Callable[[Mapping[str, Any]], Strategy]] = {
    "greedy": lambda p: Greedy(GreedyParams(**p)),
    "mcts": lambda p: MCTS(MCTSParams(**p)),
    "evolutionary": lambda p: Evolutionary(EvolutionaryParams(**p)),
    "random": lambda p: RandomSearch(),
}


# --- what was written ---------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticRun:
    """What :func:`write_synthetic_run` wrote, for tests to check the viewer against.

    ``node_count`` counts every node in the journal, the ``running`` ones (still executing,
    the highest ids) included; ``steps`` the finished ones. ``best`` is the final node (the one
    in ``best/``), ``best_path`` it and all its ancestors. ``buggy`` maps each buggy node to
    its bug reason, ``tracebacks`` names those whose execution raised (an IPython traceback in
    ``exec.traceback`` and at the end of the output), ``crossovers`` maps each crossover to its
    two parents. ``metrics`` holds every metric the journal holds (a buggy node that printed
    its score before failing has one), ``good`` the nodes that count as good.
    """

    root: Path
    strategy: str
    seed: int
    workers: int
    lower_is_better: bool
    node_count: int
    steps: int
    best: int | None
    best_metric: float | None
    best_path: frozenset[int]
    operators: dict[int, str]
    parents: dict[int, tuple[int, ...]]
    metrics: dict[int, float]
    good: frozenset[int]
    buggy: dict[int, str]
    tracebacks: frozenset[int]
    crossovers: dict[int, tuple[int, int]]
    running: tuple[int, ...]
    waiting: tuple[int, ...]  # finished, not admitted yet (no step): a live run's
    task_description: str
    data_preview: str
    started_at: datetime
    updated_at: datetime
    elapsed_s: float  # the run's own clock: from its start to its last event
    seconds: float  # how long writing it took


# --- the task -------------------------------------------------------------------------------

DESCRIPTION = Template("""\
# Overview

## Description

A passenger liner's manifest has been reconstructed from port records, insurance claims and
survivor accounts. For every passenger we know the ticket class, name, sex, age, how many
relatives travelled along, the ticket number, the fare paid, the cabin (when one was
recorded) and the port of embarkation. What we do not know, for the passengers of the test
set, is whether they survived the sinking.

The data are synthetic: they were generated by a model fitted on the original manifest, so
the relations between the features and the outcome are realistic but noisier, and the data
set is larger than the original. Strong solutions combine careful feature engineering (titles
from names, family groups, shared tickets, decks from cabins) with well-validated tabular
models. Leaderboard differences are small: a gain of a few thousandths is significant.

Your task is to predict, for each passenger in the test set, whether they survived.

## Evaluation

$evaluation

## Submission File

For each `PassengerId` in the test set, you must predict $prediction for the `Survived`
variable. The file should contain a header and have the following format:

```
PassengerId,Survived
10000,$example_a
10001,$example_b
10002,$example_c
etc.
```

The file must have exactly one row per test passenger, in any order, and no other columns.

## Timeline

This competition ran for one month. The private leaderboard is computed on 50% of the test
data that is not used for the public leaderboard; final standings are based on the private
leaderboard only.

## Citation

Synthetic passengers, a tabular playground competition. Data derived from public passenger
manifests; all names and tickets are synthetic.

# Data

## Dataset Description

The dataset used for this competition is synthetic but based on a real dataset. It was
generated with a conditional tabular GAN trained on the original passenger list, then
filtered so that no generated passenger duplicates a real one. Expect missing values in
`Age`, `Fare`, `Ticket`, `Cabin` and `Embarked`, and categories that are rare in the test set.

## Files

- **train.csv** - the training set, $train_rows passengers with the outcome (`Survived`)
- **test.csv** - the test set, $test_rows passengers without it; predict `Survived` for them
- **sample_submission.csv** - a sample submission file in the correct format

## Data fields

| Variable | Definition | Key |
|---|---|---|
| PassengerId | a unique id per passenger | |
| Survived | survival | 0 = No, 1 = Yes |
| Pclass | ticket class, a proxy for socio-economic status | 1 = 1st, 2 = 2nd, 3 = 3rd |
| Name | full name, with the title (Mr., Mrs., Miss., Master., Dr., ...) | |
| Sex | sex | male, female |
| Age | age in years; fractional below 1 | |
| SibSp | number of siblings and spouses aboard | |
| Parch | number of parents and children aboard | |
| Ticket | ticket number, sometimes with a prefix naming the office that sold it | |
| Fare | passenger fare, in pounds | |
| Cabin | cabin number; its letter is the deck | |
| Embarked | port of embarkation | C = Cherbourg, Q = Queenstown, S = Southampton |

**Pclass**: 1st = upper, 2nd = middle, 3rd = lower.
**SibSp**: siblings are brothers, sisters, stepbrothers and stepsisters; spouses are
husbands and wives (mistresses and fiancés were ignored).
**Parch**: parents are mothers and fathers; children are daughters, sons, stepdaughters
and stepsons. Some children travelled only with a nanny, so `Parch = 0` for them.

## Notes

- `Fare` is the fare of the whole ticket: passengers sharing a ticket share its fare.
- Titles are informative beyond `Sex` and `Age` (a `Master` is a boy; `Rev`, `Dr`, `Col`
  and the like are rare).
- The public leaderboard is computed on 50% of the test data.
""")
EVALUATION = {
    False: "Submissions are evaluated on **accuracy**: the percentage of passengers whose "
    "survival you predict correctly.",
    True: "Submissions are evaluated on the **log loss** (binary cross-entropy) between the "
    "predicted probabilities and the observed outcomes; the lower the better. Predicted "
    "probabilities are clipped to [1e-15, 1 - 1e-15].",
}
DATA_PREVIEW = f"""\
Files in ./input/:
- sample_submission.csv (117.5 kB)
  {TEST_ROWS} rows x 2 columns
  columns: PassengerId (int64), Survived (int64)
  first rows:
    PassengerId,Survived
    10000,0
    10001,0
- test.csv (648.3 kB)
  {TEST_ROWS} rows x 11 columns
  columns: PassengerId (int64), Pclass (int64), Name (str), Sex (str), Age (float64), \
SibSp (int64), Parch (int64), Ticket (str), Fare (float64), Cabin (str), Embarked (str)
  first rows:
    PassengerId,Pclass,Name,Sex,Age,SibSp,Parch,Ticket,Fare,Cabin,Embarked
    10000,3,"Holliday, Mr. Daniel",male,19.0,0,0,24745,63.01,,S
    10001,3,"Nguyen, Miss. Lorraine",female,53.0,0,0,13264,5.81,,S
- train.csv (2.7 MB)
  {TRAIN_ROWS} rows x 12 columns
  columns: PassengerId (int64), Survived (int64), Pclass (int64), Name (str), Sex (str), \
Age (float64), SibSp (int64), Parch (int64), Ticket (str), Fare (float64), Cabin (str), \
Embarked (str)
  first rows:
    PassengerId,Survived,Pclass,Name,Sex,Age,SibSp,Parch,Ticket,Fare,Cabin,Embarked
    0,1,1,"Oconnor, Mrs. Frankie",female,,2,0,209245,27.14,C12239,S
    1,0,3,"Bryan, Mr. Drew",male,,0,0,27323,13.35,,S"""


@dataclass(frozen=True)
class TaskText:
    """The task as the prompts and the solutions see it: its description, its metric."""

    lower_is_better: bool
    description: str
    metric_name: str
    direction: str


def task_text(lower_is_better: bool) -> TaskText:
    examples = ("0.31", "0.87", "0.05") if lower_is_better else ("0", "1", "0")
    description = DESCRIPTION.substitute(
        evaluation=EVALUATION[lower_is_better],
        prediction="the probability (a number in [0, 1])" if lower_is_better else "0 or 1",
        example_a=examples[0],
        example_b=examples[1],
        example_c=examples[2],
        train_rows=f"{TRAIN_ROWS:,}",
        test_rows=f"{TEST_ROWS:,}",
    )
    return TaskText(
        lower_is_better=lower_is_better,
        description=description,
        metric_name="log loss" if lower_is_better else "accuracy",
        direction="lower is better" if lower_is_better else "higher is better",
    )


# --- solutions: a program and its code ------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """A scikit-learn model a solution may use, the hyperparameters an improve may change (each
    with the values it may take; the first is the usual one) and how long it trains."""

    name: str
    module: str
    label: str
    params: tuple[tuple[str, tuple[str, ...]], ...]
    fixed: tuple[str, ...]  # rendered as they are, after the tunable ones
    fold_s: float  # seconds to train one fold, typically
    weight: float  # how often a draft picks it
    # A timeout's hyperparameters (none: it never times out; those that do have the frames of
    # a real interrupt of their fit, HGB_INTERRUPT or GB_INTERRUPT).
    slow: tuple[tuple[str, str], ...] = ()
    raises_on_strings: bool = False  # its fit converts X to float (a string column fails)
    raises_on_nan: bool = False  # its fit refuses NaN


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("HistGradientBoostingClassifier", "sklearn.ensemble", "histogram gradient boosting",
               (("max_iter", ("500", "300", "800", "1200")),
                ("learning_rate", ("0.05", "0.03", "0.08", "0.1")),
                ("max_leaf_nodes", ("31", "15", "63")),
                ("min_samples_leaf", ("40", "20", "80")),
                ("l2_regularization", ("0.1", "0.0", "1.0"))),
               ("early_stopping=True", "n_iter_no_change=10", "verbose=2"), 30.0, 0.45,
               slow=(("max_iter", "20000"), ("learning_rate", "0.002"))),
        Family("GradientBoostingClassifier", "sklearn.ensemble", "gradient boosting",
               (("n_estimators", ("300", "200", "500")),
                ("learning_rate", ("0.05", "0.03", "0.1")),
                ("max_depth", ("4", "3", "5")),
                ("subsample", ("0.8", "0.9", "1.0"))),
               ("verbose=1",), 90.0, 0.2, slow=(("n_estimators", "20000"),)),
        Family("RandomForestClassifier", "sklearn.ensemble", "random forest",
               (("n_estimators", ("500", "300", "800")),
                ("max_depth", ("10", "8", "12", "None")),
                ("min_samples_leaf", ("2", "1", "4")),
                ("max_features", ('"sqrt"', "0.5", "0.7"))),
               ("n_jobs=-1", "verbose=1"), 45.0, 0.15, raises_on_strings=True),
        Family("ExtraTreesClassifier", "sklearn.ensemble", "extremely randomised trees",
               (("n_estimators", ("800", "500", "1200")),
                ("max_depth", ("12", "10", "None")),
                ("min_samples_leaf", ("2", "1", "3")),
                ("max_features", ('"sqrt"', "0.5"))),
               ("n_jobs=-1", "verbose=1"), 35.0, 0.1, raises_on_strings=True),
        Family("LogisticRegression", "sklearn.linear_model", "logistic regression",
               (("C", ("1.0", "0.3", "0.1", "3.0")),
                ("max_iter", ("2000", "1000", "5000"))),
               ('solver="lbfgs"',), 8.0, 0.1, raises_on_nan=True),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Feature:
    """An engineered feature: its lines in ``add_features`` and the column it reads that
    another feature makes (forgetting that one is a KeyError)."""

    lines: tuple[str, ...]
    needs: str | None = None
    categorical: bool = False


FEATURES: dict[str, Feature] = {
    "IsAlone": Feature(('    df["IsAlone"] = (df["FamilySize"] == 1).astype(int)',)),
    "Deck": Feature(('    df["Deck"] = df["Cabin"].fillna("U").str[0]',), categorical=True),
    "TicketPrefix": Feature(('    df["TicketPrefix"] = df["Ticket"].map(ticket_prefix)',),
                            categorical=True),
    "TicketFreq": Feature(
        ('    df["TicketFreq"] = df.groupby("Ticket")["Ticket"].transform("count").fillna(1)',)),
    "FarePerPerson": Feature(('    df["FarePerPerson"] = df["Fare"] / df["TicketFreq"]',),
                             needs="TicketFreq"),
    "Age_bin": Feature(
        ('    df["Age_bin"] = pd.cut(df["Age"], bins=[0, 12, 18, 35, 60, 120], labels=False)',)),
    "AgeBinClass": Feature(('    df["AgeBinClass"] = df["Age_bin"] * 3 + df["Pclass"]',),
                           needs="Age_bin"),
    "LogFare": Feature(('    df["LogFare"] = np.log1p(df["Fare"])',)),
    "CabinKnown": Feature(('    df["CabinKnown"] = df["Cabin"].notna().astype(int)',)),
    "NameLength": Feature(('    df["NameLength"] = df["Name"].str.len()',)),
    "SexClass": Feature(
        ('    df["SexClass"] = df["Sex"].astype(str) + "_" + df["Pclass"].astype(str)',),
        categorical=True),
    "FareBand": Feature(
        ('    df["FareBand"] = pd.qcut(df["Fare"], 10, labels=False, duplicates="drop")',)),
    "CabinNumber": Feature(
        ('    cabin_number = df["Cabin"].str.extract(r"(\\d+)", expand=False)',
         '    df["CabinNumber"] = cabin_number.astype(float).fillna(0)')),
}  # fmt: skip
BASE_FEATURES = (
    "Pclass",
    "Sex",
    "Age",
    "SibSp",
    "Parch",
    "Fare",
    "Embarked",
    "Title",
    "FamilySize",
)
BASE_CATEGORICAL = ("Sex", "Embarked", "Title")


@dataclass(frozen=True)
class Bug:
    """What is wrong with a program. ``kind``: key_error (a feature reads the column ``key``,
    never made), strings (a text column reaches the model), nan (missing ages reach a model
    that refuses them), name (a misspelt variable), length (training predictions submitted),
    timeout (the ``slow`` hyperparameters), memory (an N² feature), no_submission (written
    elsewhere), leak (the model is fit on the validation fold too). ``restore``: the
    hyperparameters a fix puts back."""

    kind: str
    key: str = ""
    restore: tuple[tuple[str, str], ...] = ()


BUG_WEIGHTS = {"key_error": 5.0, "strings": 3.0, "nan": 3.0, "name": 2.0, "length": 2.0,
               "timeout": 2.0, "memory": 1.0, "no_submission": 1.0, "leak": 1.0}  # fmt: skip
RAISES = {"key_error", "strings", "nan", "name", "length", "timeout"}  # with a traceback


@dataclass(frozen=True)
class Program:
    """A solution as the few choices its code is rendered from, so that a child differs from
    its parent in the lines its change touches."""

    family: str
    params: tuple[tuple[str, str], ...]
    extras: tuple[str, ...]
    folds: int = 5
    threshold: str = "0.5"
    bug: Bug | None = None

    def param(self, name: str) -> str:
        return dict(self.params)[name]

    def with_params(self, changes: Mapping[str, str]) -> Program:
        return replace(self, params=tuple((k, changes.get(k, v)) for k, v in self.params))


@dataclass(frozen=True)
class Code:
    """A program's code, and the line numbers (1-based) its tracebacks point at."""

    text: str
    lines: tuple[str, ...]
    marks: dict[str, int]


def render(program: Program, task: TaskText) -> Code:
    """The program's code: one self-contained script of ~4 KB, the way a model writes one."""
    out: list[str] = []
    marks: dict[str, int] = {}

    def emit(*lines: str, mark: str | None = None) -> None:
        if mark is not None:
            marks[mark] = len(out) + 1
        out.extend(lines)

    for part in (_head, _load, _features, _model, _validation, _submission):
        part(program, task, emit)
    text = "\n".join(out) + "\n"
    return Code(text=text, lines=tuple(out), marks=marks)


Emit = Callable[..., None]


def _head(p: Program, task: TaskText, emit: Emit) -> None:
    family = FAMILIES[p.family]
    metrics = "log_loss" if task.lower_is_better else "accuracy_score, classification_report"
    emit(
        f"# {family.label.capitalize()} on engineered passenger features, "
        f"{p.folds}-fold stratified CV ({task.metric_name}).",
        "import os",
        "import re",
        "import time",
        "import warnings",
        "",
        "import numpy as np",
        "import pandas as pd",
        f"from sklearn.metrics import {metrics}",
        "from sklearn.model_selection import StratifiedKFold",
        f"from {family.module} import {family.name}",
        "",
        'warnings.filterwarnings("ignore")',
        "",
        "SEED = 42",
        f"N_FOLDS = {p.folds}",
    )
    if not task.lower_is_better:
        emit(f"THRESHOLD = {p.threshold}")
    emit(
        'INPUT_DIR = "./input"',
        'SUBMISSION_DIR = "./submission"',
        'RARE_TITLES = ["Dr", "Rev", "Col", "Major", "Capt", "Sir", "Lady", "Don", "Jonkheer"]',
        "BASE_FEATURES = [" + ", ".join(f'"{f}"' for f in BASE_FEATURES) + "]",
        "",
        "",
        "def seed_everything(seed: int) -> None:",
        '    os.environ["PYTHONHASHSEED"] = str(seed)',
        "    np.random.seed(seed)",
        "",
        "",
        "def title_of(name: str) -> str:",
        '    match = re.search(r",\\s*([^\\.]+)\\.", str(name))',
        '    return match.group(1).strip() if match else "None"',
        "",
        "",
        "def ticket_prefix(ticket: object) -> str:",
        "    if not isinstance(ticket, str):",
        '        return "NONE"',
        '    head = ticket.split(" ")[0]',
        '    return "NUM" if head.isdigit() else re.sub(r"[^A-Z]", "", head.upper()) or "NONE"',
        "",
        "",
    )


def _load(p: Program, task: TaskText, emit: Emit) -> None:
    emit(
        "# --- load " + "-" * 69,
        "seed_everything(SEED)",
        "t0 = time.time()",
        'train = pd.read_csv(os.path.join(INPUT_DIR, "train.csv"))',
        'test = pd.read_csv(os.path.join(INPUT_DIR, "test.csv"))',
        'print(f"train: {train.shape}  test: {test.shape}")',
        'TARGET = "Survived"',
        "y = train[TARGET].to_numpy()",
        "full = pd.concat([train.drop(columns=[TARGET]), test], axis=0, ignore_index=True)",
        "",
        "",
    )


def _features(p: Program, task: TaskText, emit: Emit) -> None:
    bug = p.bug.kind if p.bug else None
    emit("# --- features " + "-" * 65)
    emit("def add_features(df: pd.DataFrame) -> pd.DataFrame:", mark="def_features")
    emit(
        "    df = df.copy()",
        '    df["Title"] = df["Name"].map(title_of).replace(RARE_TITLES, "Rare")',
        '    df["FamilySize"] = df["SibSp"] + df["Parch"] + 1',
    )
    if bug != "nan":
        emit(
            '    df["Age"] = df["Age"].fillna(df.groupby(["Pclass", "Sex"])["Age"]'
            '.transform("median"))'
        )
    emit(
        '    df["Fare"] = df["Fare"].fillna(df.groupby("Pclass")["Fare"].transform("median"))',
        '    df["Embarked"] = df["Embarked"].fillna("S")',
    )
    for name in p.extras:
        feature = FEATURES[name]
        emit(*feature.lines, mark=f"feature:{name}")
    emit("    return df", mark="return_features")
    emit("", "")
    emit("full = add_features(full)", mark="call_features")
    categorical = [c for c in BASE_CATEGORICAL if not (bug == "strings" and c == "Sex")]
    categorical += [n for n in p.extras if FEATURES[n].categorical]
    emit(
        "CATEGORICAL = [" + ", ".join(f'"{c}"' for c in categorical) + "]",
        "for col in CATEGORICAL:",
        '    full[col] = full[col].astype("category").cat.codes',
    )
    if p.extras:
        emit("FEATURES = BASE_FEATURES + [", *(f'    "{n}",' for n in p.extras), "]")
    else:
        emit("FEATURES = list(BASE_FEATURES)")
    emit(
        "X = full.loc[: len(train) - 1, FEATURES].reset_index(drop=True)",
        "X_test = full.loc[len(train) :, FEATURES].reset_index(drop=True)",
    )
    if bug == "memory":
        emit(
            "dist = np.abs(X.to_numpy()[:, None, :] - X.to_numpy()[None, :, :]).sum(axis=-1)",
            mark="memory",
        )
        emit('X["NeighbourDist"] = np.sort(dist, axis=1)[:, 1:11].mean(axis=1)')
    emit('print(f"features: {len(FEATURES)} columns")', "print(X.describe().T.round(3))", "", "")


def _model(p: Program, task: TaskText, emit: Emit) -> None:
    family = FAMILIES[p.family]
    emit(
        "# --- model " + "-" * 68,
        f"def make_model(seed: int) -> {family.name}:",
        f"    return {family.name}(",
        *(f"        {k}={v}," for k, v in p.params),
        *(f"        {arg}," for arg in family.fixed),
        "        random_state=seed,",
        "    )",
        "",
        "",
    )


def _validation(p: Program, task: TaskText, emit: Emit) -> None:
    fit = "model.fit(X, y)" if p.bug and p.bug.kind == "leak" else "model.fit(X_tr, y_tr)"
    emit(
        "# --- validation " + "-" * 63,
        "oof = np.zeros(len(X))",
        "test_pred = np.zeros(len(X_test))",
        "folds = StratifiedKFold(n_splits=N_FOLDS, shuffle=True, random_state=SEED)",
        "for fold, (tr_idx, va_idx) in enumerate(folds.split(X, y), start=1):",
        "    X_tr, X_va = X.iloc[tr_idx], X.iloc[va_idx]",
        "    y_tr, y_va = y[tr_idx], y[va_idx]",
        "    model = make_model(SEED + fold)",
    )
    emit(f"    {fit}", mark="fit")
    emit(
        "    oof[va_idx] = model.predict_proba(X_va)[:, 1]",
        "    test_pred += model.predict_proba(X_test)[:, 1] / N_FOLDS",
    )
    if task.lower_is_better:
        emit(
            "    fold_score = log_loss(y_va, oof[va_idx])",
            '    print(f"fold {fold}/{N_FOLDS} log loss: {fold_score:.5f}  '
            '({time.time() - t0:.0f}s)")',
            "",
            "score = log_loss(y, oof)",
            'print(f"CV log loss: {score:.5f}")',
        )
    else:
        emit(
            "    fold_score = accuracy_score(y_va, oof[va_idx] > THRESHOLD)",
            '    print(f"fold {fold}/{N_FOLDS} accuracy: {fold_score:.5f}  '
            '({time.time() - t0:.0f}s)")',
            "    print(classification_report(y_va, oof[va_idx] > THRESHOLD, digits=4))",
            "",
            "score = accuracy_score(y, oof > THRESHOLD)",
            'print(f"CV accuracy: {score:.5f}")',
        )
    emit('print(f"VALIDATION_METRIC: {score:.6f}")', "", "")


def _submission(p: Program, task: TaskText, emit: Emit) -> None:
    bug = p.bug.kind if p.bug else None
    source = {"name": "test_preds", "length": "oof"}.get(bug or "", "test_pred")
    if task.lower_is_better:
        labels = f"labels = np.clip({source}, 1e-6, 1 - 1e-6)"
    else:
        labels = f"labels = ({source} > THRESHOLD).astype(int)"
    emit("# --- submission " + "-" * 63, "os.makedirs(SUBMISSION_DIR, exist_ok=True)")
    emit(labels, mark="labels")
    emit('sub = pd.DataFrame({"PassengerId": test["PassengerId"]})')
    emit("sub[TARGET] = labels", mark="assign")
    if bug == "no_submission":
        emit('sub.to_csv("submission.csv", index=False)')
    else:
        emit('sub.to_csv(os.path.join(SUBMISSION_DIR, "submission.csv"), index=False)')
    shown = "describe()" if task.lower_is_better else "value_counts(normalize=True)"
    emit(
        "print(sub.head())",
        f"print(sub[TARGET].{shown})",
        'print(f"done in {time.time() - t0:.0f}s")',
        "",
        "from validate_submission import validate  # noqa: E402",
        "",
        "print(validate())",
    )


# --- solutions: drafts, changes and bugs ----------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """A node's program, its latent quality (an accuracy: higher is better, whatever the
    task's metric) and the plan's words for what it does."""

    program: Program
    quality: float
    plan: str


def draft(rng: random.Random, task: TaskText) -> Proposal:
    families = list(FAMILIES.values())
    family = rng.choices(families, weights=[f.weight for f in families])[0]
    params = tuple((k, v[0] if rng.random() < 0.5 else rng.choice(v)) for k, v in family.params)
    extras: tuple[str, ...] = ()
    for name in rng.sample(sorted(FEATURES), rng.randint(2, 5)):
        extras = _with_feature(extras, name)
    program = Program(family.name, params, extras, folds=10 if rng.random() < 0.1 else 5)
    quality = 0.772 + QUALITY_BONUS[family.name] + 0.0006 * len(extras) + rng.gauss(0, 0.008)
    plan = (
        f"A first solution: {family.label} on the base passenger features plus "
        f"{', '.join(extras)}. Titles come from the names (rare ones grouped), missing ages are "
        "filled with the median of their class and sex, fares with the class median, and "
        f"categories are label-encoded. {program.folds}-fold stratified cross-validation gives "
        f"the out-of-fold {task.metric_name} as the validation metric; the test predictions "
        "are averaged over the folds."
    )
    return Proposal(program, quality, plan)


QUALITY_BONUS = {"HistGradientBoostingClassifier": 0.004, "GradientBoostingClassifier": 0.003,
                 "RandomForestClassifier": 0.0, "ExtraTreesClassifier": -0.002,
                 "LogisticRegression": -0.01}  # fmt: skip


def _with_feature(extras: tuple[str, ...], name: str) -> tuple[str, ...]:
    """``extras`` with ``name`` added last, after the feature it reads (added too if missing)."""
    if name in extras:
        return extras
    need = FEATURES[name].needs
    if need is not None and need not in extras:
        extras = (*extras, need)
    return (*extras, name)


def improve(parent: Proposal, rng: random.Random, task: TaskText) -> Proposal:
    """One atomic change of the parent: a hyperparameter, a feature in or out, the folds or
    the decision threshold; the quality moves a little, towards a ceiling."""
    change = rng.choices(
        ("param", "add", "drop", "folds", "threshold"),
        weights=(0.5, 0.25, 0.12, 0.04, 0.0 if task.lower_is_better else 0.07),
    )[0]
    program, words = CHANGES[change](parent.program, rng)
    drift = 0.22 * (0.805 - parent.quality)
    quality = parent.quality + rng.gauss(drift, 0.004)
    plan = (
        f"{words} Everything else stays as it is, so the validation {task.metric_name} shows "
        f"the effect of this one change (the parent scored {_shown(parent.quality, task)})."
    )
    return Proposal(program, quality, plan)


def _change_param(p: Program, rng: random.Random) -> tuple[Program, str]:
    name, options = rng.choice(FAMILIES[p.family].params)
    old = p.param(name)
    new = rng.choice([o for o in options if o != old] or [old])
    words = f"Change {name} of the {FAMILIES[p.family].label} from {old} to {new}."
    return p.with_params({name: new}), words


def _add_feature(p: Program, rng: random.Random) -> tuple[Program, str]:
    missing = [n for n in sorted(FEATURES) if n not in p.extras]
    if not missing:
        return _change_param(p, rng)
    name = rng.choice(missing)
    words = f"Add the {name} feature ({FEATURES[name].lines[-1].split('=', 1)[1].strip()})."
    return replace(p, extras=_with_feature(p.extras, name)), words


def _drop_feature(p: Program, rng: random.Random) -> tuple[Program, str]:
    needed = {FEATURES[n].needs for n in p.extras}
    droppable = [n for n in p.extras if n not in needed]
    if not droppable:
        return _add_feature(p, rng)
    name = rng.choice(droppable)
    words = f"Drop the {name} feature: it looks like noise in the fold scores."
    return replace(p, extras=tuple(n for n in p.extras if n != name)), words


def _change_folds(p: Program, rng: random.Random) -> tuple[Program, str]:
    folds = 10 if p.folds == 5 else 5
    words = f"Use {folds} folds instead of {p.folds} for a steadier validation estimate."
    return replace(p, folds=folds), words


def _change_threshold(p: Program, rng: random.Random) -> tuple[Program, str]:
    new = rng.choice([t for t in ("0.45", "0.48", "0.5", "0.52") if t != p.threshold])
    words = f"Move the decision threshold from {p.threshold} to {new} to balance the classes."
    return replace(p, threshold=new), words


CHANGES: dict[str, Callable[[Program, random.Random], tuple[Program, str]]] = {
    "param": _change_param,
    "add": _add_feature,
    "drop": _drop_feature,
    "folds": _change_folds,
    "threshold": _change_threshold,
}


def crossover(a: Proposal, b: Proposal, rng: random.Random, task: TaskText) -> Proposal:
    """Solution A's features with solution B's model (its family and hyperparameters)."""
    program = replace(a.program, family=b.program.family, params=b.program.params, bug=None)
    best = max(a.quality, b.quality)
    quality = best + rng.gauss(0.15 * (0.805 - best), 0.003)
    label = FAMILIES[b.program.family].label
    features = ", ".join(a.program.extras) or "the base set only"
    plan = (
        f"Combine the two: solution A's features ({features}) with solution B's {label} and "
        "its hyperparameters "
        f"({', '.join(f'{k}={v}' for k, v in b.program.params)}). A scored "
        f"{_shown(a.quality, task)}, B {_shown(b.quality, task)}; B's model should make better "
        "use of A's richer features. The validation and submission code are A's."
    )
    return Proposal(program, quality, plan)


def debug(parent: Proposal, reason: str, rng: random.Random) -> Proposal:
    """The parent with its bug fixed (and nothing else changed)."""
    bug = parent.program.bug
    assert bug is not None
    program, words = FIXES[bug.kind](parent.program, bug)
    first = reason.splitlines()[0] if reason else "an error"
    plan = f"The previous run failed: {first}. {words} Nothing else changes."
    return Proposal(program, parent.quality + rng.gauss(0, 0.002), plan)


def _fix_key(p: Program, bug: Bug) -> tuple[Program, str]:
    user = next(n for n in p.extras if FEATURES[n].needs == bug.key)
    at = p.extras.index(user)
    extras = (*p.extras[:at], bug.key, *p.extras[at:])
    words = f"{user} reads the {bug.key} column, which is never made: create it first."
    return replace(p, extras=extras, bug=None), words


def _fix_timeout(p: Program, bug: Bug) -> tuple[Program, str]:
    values = ", ".join(f"{k}={v}" for k, v in bug.restore)
    return replace(p.with_params(dict(bug.restore)), bug=None), (
        f"Training was far too slow for the time limit: go back to {values}."
    )


FIX_WORDS = {
    "strings": "Sex is missing from CATEGORICAL, so it reached the model as text: encode it too.",
    "nan": "The Age imputation line was lost; put it back so no NaN reaches the model.",
    "name": "The test predictions are in test_pred, not test_preds.",
    "length": "The submission took the out-of-fold predictions; use the test predictions.",
    "memory": "Drop the pairwise-distance feature: an N x N x F array cannot fit in memory.",
    "no_submission": "Write the file to ./submission/submission.csv, where it is expected.",
    "leak": "Fit each fold's model on its training part only (X_tr, y_tr), not on all of X.",
}


def _fix_plain(p: Program, bug: Bug) -> tuple[Program, str]:
    return replace(p, bug=None), FIX_WORDS[bug.kind]


FIXES: dict[str, Callable[[Program, Bug], tuple[Program, str]]] = {
    "key_error": _fix_key,
    "timeout": _fix_timeout,
    **dict.fromkeys(FIX_WORDS, _fix_plain),
}


def break_program(program: Program, rng: random.Random, fixed: str | None = None) -> Program:
    """``program`` with a bug a model could have written into it (one its family can have;
    not the one a debug just ``fixed``)."""
    family = FAMILIES[program.family]
    kinds = [k for k in BUG_WEIGHTS if k != fixed and _possible(k, program, family)]
    kind = rng.choices(kinds, weights=[BUG_WEIGHTS[k] for k in kinds])[0]
    if kind == "key_error":
        user = rng.choice(_key_error_users(program))
        need = FEATURES[user].needs or ""
        return replace(program, extras=(*program.extras, user), bug=Bug(kind, key=need))
    if kind == "timeout":
        restore = tuple((k, program.param(k)) for k, _ in family.slow)
        return replace(program.with_params(dict(family.slow)), bug=Bug(kind, restore=restore))
    return replace(program, bug=Bug(kind))


def _possible(kind: str, program: Program, family: Family) -> bool:
    if kind == "key_error":
        return bool(_key_error_users(program))
    if kind == "strings":
        return family.raises_on_strings
    if kind == "nan":
        return family.raises_on_nan
    if kind == "timeout":
        return bool(family.slow)
    return True


def _key_error_users(program: Program) -> list[str]:
    """Features that read a column another feature makes, neither in the program yet."""
    return [
        n
        for n, f in sorted(FEATURES.items())
        if f.needs is not None and n not in program.extras and f.needs not in program.extras
    ]


def _shown(quality: float, task: TaskText) -> str:
    return f"{metric_value(quality, task):.5f}"


def metric_value(quality: float, task: TaskText) -> float:
    """The validation metric a solution of this quality prints (6 decimals, as it prints it)."""
    value = 0.47 - 2.0 * (quality - 0.772) if task.lower_is_better else quality
    return round(value, 6)


# --- executions: the output, and how a solution fails ---------------------------------------


@dataclass(frozen=True)
class Execution:
    """What running a program gave: the result, and what the review makes of it."""

    result: ExecResult
    metric: float | None  # what its VALIDATION_METRIC line says, if it printed one
    has_submission: bool
    bug_reason: str | None
    summary: str


def execute(proposal: Proposal, code: Code, rng: random.Random, task: TaskText) -> Execution:
    """Run ``code`` the way the sandbox would have: its output, its failure, its timings."""
    program = proposal.program
    kind = program.bug.kind if program.bug else None
    value = metric_value(0.97 + 0.02 * rng.random(), task) if kind == "leak" else None
    value = value if value is not None else metric_value(proposal.quality, task)
    printed = _printed(program, code, value, rng, task)
    ends = _ENDINGS.get(kind or "", _ok)
    run = ends(program, code, printed, value, rng, task)
    if kind is None:  # the review says what was tried, then what came of it
        run = replace(run, summary=f"{_first_sentence(proposal.plan)} {run.summary}")
    return run


def _first_sentence(text: str) -> str:
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


@dataclass(frozen=True)
class Printed:
    """What a program printed, up to where it stopped; ``fold`` is the fold it stopped in
    (0: before training), ``seconds`` how long it ran."""

    text: str
    fold: int
    seconds: float


STOPS_AT = {"key_error": "features", "memory": "features", "strings": "fit", "nan": "fit",
            "timeout": "timeout"}  # fmt: skip


def _printed(
    program: Program, code: Code, value: float, rng: random.Random, task: TaskText
) -> Printed:
    family = FAMILIES[program.family]
    stop = STOPS_AT.get(program.bug.kind if program.bug else "", "end")
    lines = [f"train: ({TRAIN_ROWS}, 12)  test: ({TEST_ROWS}, 11)"]
    if stop == "features":
        return Printed("\n".join(lines) + "\n", 0, rng.uniform(3.0, 12.0))
    features = [*BASE_FEATURES, *program.extras]
    lines += [f"features: {len(features)} columns", *_describe(features)]
    if stop == "fit":
        return Printed("\n".join(lines) + "\n", 1, rng.uniform(4.0, 15.0))
    fold_s = family.fold_s * rng.lognormvariate(0, 0.25)
    last = 1 if stop == "timeout" else program.folds  # the slow model never ends a fold
    for fold in range(1, last + 1):
        if stop == "timeout" and fold == last:
            lines += FOLD_LOGS[program.family](program, rng, True)
            return Printed("\n".join(lines) + "\n", fold, EXEC_TIMEOUT_S)
        lines += FOLD_LOGS[program.family](program, rng, False)
        score = value + rng.gauss(0, 0.006)
        lines.append(
            f"fold {fold}/{program.folds} {task.metric_name}: {score:.5f}  "
            f"({5 + fold * fold_s:.0f}s)"
        )
        if not task.lower_is_better:
            lines += _report(score, rng)
    lines += [f"CV {task.metric_name}: {value:.5f}", f"VALIDATION_METRIC: {value:.6f}"]
    seconds = 8 + program.folds * fold_s
    if program.bug and program.bug.kind in ("name", "length"):
        return Printed("\n".join(lines) + "\n", program.folds, seconds)
    lines += _submission_lines(rng, task, seconds)
    written = not (program.bug and program.bug.kind == "no_submission")
    lines.append(VALID if written else MISSING)
    return Printed("\n".join(lines) + "\n", program.folds, seconds)


VALID = "(True, '')"
MISSING = "(False, 'the submission ./submission/submission.csv does not exist')"
FEATURE_STATS = {  # count is always the training rows; mean, std, min, 25%, 50%, 75%, max
    "Pclass": (2.106, 0.837, 1.0, 1.0, 2.0, 3.0, 3.0), "Sex": (0.563, 0.496, 0, 0, 1, 1, 1),
    "Age": (38.355, 18.313, 0.08, 25.0, 39.0, 53.0, 87.0), "SibSp": (0.397, 0.862, 0, 0, 0, 1, 8),
    "Parch": (0.455, 0.951, 0, 0, 0, 1, 9), "Fare": (43.929, 69.589, 0.68, 10.04, 24.46, 33.5,
    744.66), "Embarked": (1.488, 0.806, 0, 1, 2, 2, 2), "Title": (2.311, 0.914, 0, 2, 2, 3, 4),
    "FamilySize": (1.852, 1.438, 1, 1, 1, 2, 17), "IsAlone": (0.553, 0.497, 0, 0, 1, 1, 1),
    "Deck": (6.211, 1.905, 0, 7, 7, 7, 7), "TicketPrefix": (11.38, 6.12, 0, 7, 14, 14, 38),
    "TicketFreq": (1.177, 0.573, 1, 1, 1, 1, 6), "FarePerPerson": (39.87, 63.1, 0.68, 9.81, 22.15,
    31.33, 744.66), "Age_bin": (2.327, 1.088, 0, 2, 3, 3, 4), "AgeBinClass": (9.087, 3.437, 1, 7,
    10, 12, 15), "LogFare": (3.268, 0.943, 0.519, 2.4, 3.237, 3.541, 6.614), "CabinKnown": (0.304,
    0.46, 0, 0, 0, 1, 1), "NameLength": (18.55, 3.142, 9, 16, 18, 21, 39), "SexClass": (2.659,
    1.588, 0, 1, 2, 4, 5), "FareBand": (4.492, 2.869, 0, 2, 4, 7, 9), "CabinNumber": (40.39,
    74.21, 0, 0, 0, 42, 472), "NeighbourDist": (1.17, 0.22, 0.4, 1.0, 1.16, 1.31, 2.9),
}  # fmt: skip


def _describe(features: list[str]) -> list[str]:
    """``print(X.describe().T.round(3))`` for these features."""
    width = max(len(f) for f in features)
    head = " " * width + "    count     mean     std    min     25%     50%     75%      max"
    rows = [head]
    for name in features:
        mean, std, low, q1, q2, q3, high = FEATURE_STATS[name]
        rows.append(
            f"{name:<{width}}  {TRAIN_ROWS:>7.1f}  {mean:>7.3f}  {std:>6.3f}  {low:>5.2f}"
            f"  {q1:>6.3f}  {q2:>6.3f}  {q3:>6.3f}  {high:>7.3f}"
        )
    return rows


def _report(accuracy: float, rng: random.Random) -> list[str]:
    """``classification_report(..., digits=4)`` of one validation fold."""
    support0 = round(TRAIN_ROWS / 5 * rng.uniform(0.56, 0.58))
    support1 = TRAIN_ROWS // 5 - support0
    rows = []
    scores = []
    for label, support, shift in (("0", support0, 0.02), ("1", support1, -0.03)):
        precision = accuracy + shift + rng.gauss(0, 0.006)
        recall = accuracy + shift * 1.5 + rng.gauss(0, 0.008)
        f1 = 2 * precision * recall / (precision + recall)
        scores.append((precision, recall, f1, support))
        rows.append(f"{label:>12}     {precision:.4f}    {recall:.4f}    {f1:.4f}    {support:>6}")
    total = support0 + support1
    macro = [sum(s[i] for s in scores) / 2 for i in range(3)]
    weighted = [sum(s[i] * s[3] for s in scores) / total for i in range(3)]
    return [
        "              precision    recall  f1-score   support",
        "",
        *rows,
        "",
        f"    accuracy                         {accuracy:.4f}    {total:>6}",
        f"   macro avg     {macro[0]:.4f}    {macro[1]:.4f}    {macro[2]:.4f}    {total:>6}",
        f"weighted avg     {weighted[0]:.4f}    {weighted[1]:.4f}    {weighted[2]:.4f}    "
        f"{total:>6}",
        "",
    ]


def _submission_lines(rng: random.Random, task: TaskText, seconds: float) -> list[str]:
    """What ``print(sub.head())`` and the summary of the predictions print."""
    if task.lower_is_better:
        head = [f"{i}        {10000 + i}  {rng.uniform(0.03, 0.97):.6f}" for i in range(5)]
        mean = rng.uniform(0.40, 0.46)
        summary = [
            f"count    {TEST_ROWS}.000000",
            f"mean        {mean:.6f}",
            f"std         {rng.uniform(0.25, 0.3):.6f}",
            f"min         {rng.uniform(0.01, 0.05):.6f}",
            f"25%         {mean - 0.22:.6f}",
            f"50%         {mean + 0.01:.6f}",
            f"75%         {mean + 0.27:.6f}",
            f"max         {rng.uniform(0.95, 0.99):.6f}",
            "Name: Survived, dtype: float64",
        ]
    else:
        head = [f"{i}        {10000 + i}         {rng.randint(0, 1)}" for i in range(5)]
        share = rng.uniform(0.55, 0.6)
        summary = [
            "Survived",
            f"0    {share:.4f}",
            f"1    {1 - share:.4f}",
            "Name: proportion, dtype: float64",
        ]
    return ["   PassengerId  Survived", *head, *summary, f"done in {seconds:.0f}s"]


def _hgb_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    """A fold of ``HistGradientBoostingClassifier(verbose=2)``: a line per boosting round
    until early stopping (or, cut by the time limit, until the interrupt)."""
    rate, leaves = float(p.param("learning_rate")), int(p.param("max_leaf_nodes"))
    best = max(3, round(rng.uniform(8, 20) * 0.05 / rate))
    rounds = rng.randint(60, 150) if cut else min(int(p.param("max_iter")), best + 10)
    lines = [
        f"Binning 0.001 GB of training data: {rng.uniform(0.01, 0.03):.3f} s",
        f"Binning 0.000 GB of validation data: {rng.uniform(0.001, 0.004):.3f} s",
        "Fitting gradient boosted rounds:",
    ]
    head = f"/{p.param('max_iter')}] 1 tree, {leaves} leaves, max depth = "
    curve = _loss_curve(rate, rounds)
    total = 0.0
    for i in range(1, rounds + 1):
        draw = int(rng.random() * 1000)  # one draw per round: depth, time and noise from it
        total += ROUND_SECONDS[draw]
        train, valid = curve[i - 1]
        valid += max(0, i - best) * 0.0003 + draw * 6e-7
        lines.append(
            f"[{i}{head}{7 + draw % 6}, train loss: {train}, val loss: {valid:.5f}, "
            f"in {ROUND_TIMES[draw]}s"
        )
    if cut:
        return [*lines, f"[{rounds + 1}/{p.param('max_iter')}] "]
    return [
        *lines,
        f"Fit {rounds} trees in {total + 0.4:.3f} s, ({rounds * leaves} total leaves)",
        f"Time spent computing histograms: {total * 0.41:.3f}s",
        f"Time spent finding best splits:  {total * 0.22:.3f}s",
        f"Time spent applying splits:      {total * 0.33:.3f}s",
        f"Time spent predicting:           {total * 0.01:.3f}s",
    ]


ROUND_SECONDS = [0.002 + 0.02 * (k * 7919 % 1000) / 1000 for k in range(1000)]
ROUND_TIMES = [f"{t:.3f}" for t in ROUND_SECONDS]


@functools.cache
def _loss_curve(rate: float, rounds: int) -> list[tuple[str, float]]:
    """Per boosting round, the training loss as printed and the validation loss's trend."""
    return [
        (f"{0.43 + 0.26 * math.exp(-i * rate * 1.1):.5f}", 0.47 + 0.22 * math.exp(-i * rate * 1.2))
        for i in range(1, rounds + 1)
    ]


def _gb_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    """A fold of ``GradientBoostingClassifier(verbose=1)``: rounds 1-10, then every 10th up
    to 100, every 100th up to 1000, ... (scikit-learn's reporter)."""
    n = int(p.param("n_estimators"))
    oob = float(p.param("subsample")) < 1.0
    fields = ["Iter", "Train Loss", *(["OOB Improve"] if oob else []), "Remaining Time"]
    lines = [("%10s " + "%16s " * (len(fields) - 1)) % tuple(fields)]
    per_round = FAMILIES[p.family].fold_s / 300 * rng.uniform(0.8, 1.2)
    shown = [i for i in _reported_rounds(n) if not cut or i <= rng.randint(300, 3000)]
    for i in shown:
        loss = 0.8 + 0.56 * math.exp(-i / 120) + rng.gauss(0, 0.002)
        left = (n - i) * per_round
        remaining = f"{left / 60:.2f}m" if left > 60 else f"{left:.2f}s"
        row = [f"{i:>10d}", f"{loss:>16.4f}"]
        if oob:
            row.append(f"{rng.gauss(0.004, 0.02) * math.exp(-i / 400):>16.4f}")
        lines.append(" ".join([*row, f"{remaining:>16s}"]))
    return lines


def _reported_rounds(n: int) -> Iterator[int]:
    step = 1
    for i in range(1, n + 1):
        if i % step == 0:
            yield i
        if i == 10 * step:
            step *= 10


def _forest_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    """A fold of a forest with ``n_jobs=-1, verbose=1``: joblib's progress for the fit and
    for the two ``predict_proba`` calls (36 workers, the size of MLE-bench's machine)."""
    n = int(p.param("n_estimators"))
    fit_s = FAMILIES[p.family].fold_s * rng.uniform(0.8, 1.2)
    lines = _joblib(n, "-1", fit_s)
    for share in (0.02, 0.03):
        lines += _joblib(n, "36", fit_s * share)
    return lines


def _joblib(n: int, jobs: str, seconds: float) -> list[str]:
    width = len(str(n))
    done = [k for k in (26, 176, 426, 776, 1226) if k < n]
    lines = [
        f"[Parallel(n_jobs={jobs})]: Using backend ThreadingBackend with 36 concurrent workers."
    ]
    for k in done:
        lines.append(
            f"[Parallel(n_jobs={jobs})]: Done {k:{width}d} tasks      | elapsed: "
            f"{_joblib_time(seconds * k / n)}"
        )
    lines.append(
        f"[Parallel(n_jobs={jobs})]: Done {n} out of {n} | elapsed: "
        f"{_joblib_time(seconds)} finished"
    )
    return lines


def _joblib_time(seconds: float) -> str:
    return f"{seconds / 60:4.1f}min" if seconds > 60 else f" {seconds:5.1f}s"


def _quiet_log(p: Program, rng: random.Random, cut: bool) -> list[str]:
    return []  # LogisticRegression prints nothing


FOLD_LOGS: dict[str, Callable[[Program, random.Random, bool], list[str]]] = {
    "HistGradientBoostingClassifier": _hgb_log,
    "GradientBoostingClassifier": _gb_log,
    "RandomForestClassifier": _forest_log,
    "ExtraTreesClassifier": _forest_log,
    "LogisticRegression": _quiet_log,
}


# --- how an execution ends ------------------------------------------------------------------

Ending = Callable[[Program, Code, Printed, float, random.Random, TaskText], Execution]


def _ok(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    family = FAMILIES[p.family]
    summary = (
        f"With {family.label}, {p.folds}-fold stratified CV on "
        f"{len(BASE_FEATURES) + len(p.extras)} features gives a CV {task.metric_name} of "
        f"{value:.5f}; the submission was written and passes validate()."
    )
    result = _result(ExecStatus.OK, printed.text, printed.seconds, rng)
    return Execution(result, value, True, None, summary)


def _reviewed_bug(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    """Ran to the end, yet buggy: no submission where it belongs, or a leaked score."""
    assert p.bug is not None
    result = _result(ExecStatus.OK, printed.text, printed.seconds, rng)
    if p.bug.kind == "no_submission":
        summary = (
            f"The CV {task.metric_name} is {value:.5f}, but the submission was written to "
            "./submission.csv instead of ./submission/submission.csv, and validate() reports "
            "it missing."
        )
        return Execution(result, value, False, "no submission/submission.csv was written", summary)
    summary = (
        "The model is fit on the whole training set inside the CV loop (model.fit(X, y)), so "
        f"every validation fold was seen in training: the CV {task.metric_name} of {value:.5f} "
        "is leaked and not a trustworthy estimate."
    )
    return Execution(result, value, True, f"review: {summary}", summary)


def _memory(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    reason = f"memory limit ({MEMORY_LIMIT}) exceeded"
    output = (
        f"{printed.text}\nKernelDied: kernel died (signal SIGKILL) during execution\n"
        f"MemoryLimitExceeded: {reason}\n"
    )
    result = _result(ExecStatus.DIED, output, rng.uniform(20, 90), rng).model_copy(
        update={
            "error_name": "MemoryLimitExceeded",
            "error_value": reason,
            "killed_reason": reason,
            "peak_memory_bytes": 8 * 1024**3,
        }
    )
    summary = (
        "The kernel was killed at the memory limit while building the pairwise-distance "
        f"feature: an N x N x F array for {TRAIN_ROWS:,} rows does not fit in {MEMORY_LIMIT}. "
        "Nothing was trained."
    )
    return Execution(result, None, False, f"the kernel died ({reason})", summary)


def _timeout(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    frames = HGB_INTERRUPT if p.family == "HistGradientBoostingClassifier" else GB_INTERRUPT
    tb = traceback_text("KeyboardInterrupt", "", [cell_frame(code, code.marks["fit"])], frames)
    output = (
        f"{printed.text}{tb}\n\nTimeoutError: execution exceeded "
        f"{EXEC_TIMEOUT_S:g} s and was stopped\n"
    )
    result = _result(ExecStatus.TIMEOUT, output, EXEC_TIMEOUT_S + 3.0, rng).model_copy(
        update={
            "error_name": "TimeoutError",
            "error_value": "timeout",
            "traceback": tb,
            "killed_reason": "timeout",
            "timed_out": True,
        }
    )
    slow = ", ".join(f"{k}={p.param(k)}" for k, _ in FAMILIES[p.family].slow)
    summary = (
        f"The run did not finish: {FAMILIES[p.family].label} with {slow} was still training "
        f"fold {printed.fold} of {p.folds} when the {format_duration(EXEC_TIMEOUT_S)} limit "
        "stopped it. No score, no submission."
    )
    return Execution(result, None, False, "timed out (timeout)", summary)


def _raised(
    p: Program, code: Code, printed: Printed, value: float, rng: random.Random, task: TaskText
) -> Execution:
    """The solution raised: the kernel's traceback, at the end of the output too."""
    assert p.bug is not None
    name, message, summary = _error(p, value, task)
    tb = RAISERS[p.bug.kind](p, code, name, message)
    result = _result(ExecStatus.ERROR, f"{printed.text}{tb}\n", printed.seconds, rng)
    result = result.model_copy(update={"error_name": name, "error_value": message, "traceback": tb})
    metric = value if p.bug.kind in ("name", "length") else None
    return Execution(result, metric, False, f"{name}: {message}", summary)


def _error(p: Program, value: float, task: TaskText) -> tuple[str, str, str]:
    """The exception a bug raises (name, message) and the review's summary of it."""
    assert p.bug is not None
    kind, score = p.bug.kind, f"CV {task.metric_name} {value:.5f}"
    if kind == "key_error":
        user = next(n for n in p.extras if FEATURES[n].needs == p.bug.key)
        return (
            "KeyError",
            f"'{p.bug.key}'",
            (
                f"The run stopped in add_features with KeyError: '{p.bug.key}': the {user} feature "
                "reads a column that is never created. No validation score or submission."
            ),
        )
    if kind == "strings":
        return (
            "ValueError",
            "could not convert string to float: 'male'",
            (
                "model.fit failed at once: Sex is not in CATEGORICAL, so the column reaches the "
                "model as text. Nothing was trained or scored."
            ),
        )
    if kind == "nan":
        return (
            "ValueError",
            NAN_MESSAGE,
            (
                "LogisticRegression refused the training data: Age still holds NaN because the "
                "imputation line is missing. No score, no submission."
            ),
        )
    if kind == "name":
        return (
            "NameError",
            "name 'test_preds' is not defined",
            (
                f"Training and validation ran ({score}), then the submission step failed with "
                "NameError: the predictions are in test_pred, not test_preds. No submission."
            ),
        )
    return (
        "ValueError",
        f"Length of values ({TRAIN_ROWS}) does not match length of index ({TEST_ROWS})",
        (
            f"Training and validation ran ({score}), but the submission took the out-of-fold "
            f"predictions ({TRAIN_ROWS} rows) instead of the test predictions ({TEST_ROWS}). "
            "No submission."
        ),
    )


def _result(status: ExecStatus, output: str, seconds: float, rng: random.Random) -> ExecResult:
    return ExecResult(
        status=status,
        output=output,
        output_bytes=len(output.encode()),
        duration_s=round(seconds, 3),
        kernel_start_s=round(rng.uniform(0.01, 0.3), 3),
        peak_memory_bytes=int(rng.uniform(0.4, 2.5) * 1024**3),
    )


_ENDINGS: dict[str, Ending] = {
    "no_submission": _reviewed_bug,
    "leak": _reviewed_bug,
    "memory": _memory,
    "timeout": _timeout,
    **dict.fromkeys(("key_error", "strings", "nan", "name", "length"), _raised),
}


# --- tracebacks, laid out as IPython lays them out (podium's kernels strip the colours) -------

RULE = "-" * 75
CAUSE = "\n\nThe above exception was the direct cause of the following exception:\n\n"


def traceback_text(name: str, message: str, cells: list[str], frames: list[str]) -> str:
    """One exception: the rule, its header, the cell frames, the library frames, its line."""
    return f"{RULE}\n{_exception(name, message, [*cells, *frames])}"


def _exception(name: str, message: str, frames: list[str]) -> str:
    body = "\n\n".join(frames)
    return f"{name:<42}Traceback (most recent call last)\n{body}\n\n{name}: {message}"


def cell_frame(code: Code, line: int, scope: tuple[int, int] | None = None, where: str = "") -> str:
    """The frame of the cell's own code: 4 lines of context before the failing one and 3
    after, within ``scope`` (a function's first and last lines; the whole cell by default)."""
    first, last = scope or (1, len(code.lines))
    rows = [f"Cell In[1], line {line}{where}"]
    for n in range(max(first, line - 4), min(last, line + 3) + 1):
        text = code.lines[n - 1]
        mark = f"{'-' * max(5 - len(str(n)), 1)}> {n}" if n == line else f"{n:>7}"
        rows.append(f"{mark} {text}")
    return "\n".join(rows)


def _raise_key_error(p: Program, code: Code, name: str, message: str) -> str:
    user = next(n for n in p.extras if FEATURES[n].needs == p.bug.key) if p.bug else ""
    scope = (code.marks["def_features"], code.marks["return_features"])
    inner = cell_frame(code, code.marks[f"feature:{user}"], scope, ", in add_features(df)")
    chained = _exception(name, message, KEY_ERROR_CHAIN)
    main = _exception(
        name, message, [cell_frame(code, code.marks["call_features"]), inner, *KEY_ERROR_FRAMES]
    )
    return f"{RULE}\n{chained}{CAUSE}{main}"


def _raise_at(mark: str, frames: list[str]) -> Callable[[Program, Code, str, str], str]:
    def raise_(p: Program, code: Code, name: str, message: str) -> str:
        return traceback_text(name, message, [cell_frame(code, code.marks[mark])], frames)

    return raise_


NAN_MESSAGE = (
    "Input X contains NaN.\nLogisticRegression does not accept missing values encoded as NaN "
    "natively. For supervised learning, you might want to consider "
    "sklearn.ensemble.HistGradientBoostingClassifier and Regressor which accept missing values "
    "encoded as NaNs natively. Alternatively, it is possible to preprocess the data, for "
    "instance by using an imputer transformer in a pipeline or drop samples with missing "
    "values. See https://scikit-learn.org/stable/modules/impute.html You can find a list of all "
    "estimators that handle NaN values at the following page: "
    "https://scikit-learn.org/stable/modules/impute.html#estimators-that-handle-nan-values"
)


def _frames(text: str) -> list[str]:
    """Library frames as the kernel printed them (copied from real failures, pandas 3.1 and
    scikit-learn 1.9 under ipykernel 7), separated by blank lines, their site-packages path
    written SITE/."""
    return text.replace("SITE/", f"{LIB}/").split("\n\n")


KEY_ERROR_CHAIN = _frames("""\
File SITE/pandas/core/indexes/base.py:3816, in Index.get_loc(self, key)
   3815 try:
-> 3816     return self._engine.get_loc(casted_key)
   3817 except KeyError as err:

File pandas/_libs/index.pyx:172, in pandas._libs.index.IndexEngine.get_loc()
--> 172 'Could not get source, probably due dynamically evaluated source code.'

File pandas/_libs/index.pyx:201, in pandas._libs.index.IndexEngine.get_loc()
--> 201 'Could not get source, probably due dynamically evaluated source code.'

File pandas/_libs/hashtable_class_helper.pxi:7726, in pandas._libs.hashtable.PyObjectHashTab\
le.get_item()
-> 7726 'Could not get source, probably due dynamically evaluated source code.'

File pandas/_libs/hashtable_class_helper.pxi:7734, in pandas._libs.hashtable.PyObjectHashTab\
le.get_item()
-> 7734 'Could not get source, probably due dynamically evaluated source code.\'""")

KEY_ERROR_FRAMES = _frames("""\
File SITE/pandas/core/frame.py:4330, in DataFrame.__getitem__(self, key)
   4326\x20
   4327         if is_single_key:
   4328             if self.columns.nlevels > 1:
   4329                 return self._getitem_multilevel(key)
-> 4330             indexer = self.columns.get_loc(key)
   4331             if is_integer(indexer):
   4332                 indexer = [indexer]  # type: ignore[assignment]
   4333         else:

File SITE/pandas/core/indexes/base.py:3823, in Index.get_loc(self, key)
   3818     if isinstance(casted_key, slice) or (
   3819         isinstance(casted_key, abc.Iterable)
   3820         and any(isinstance(x, slice) for x in casted_key)
   3821     ):
   3822         raise InvalidIndexError(key) from err
-> 3823     raise KeyError(key) from err
   3824 except TypeError:
   3825     # If we have a listlike key, _check_indexing_error will raise
   3826     #  InvalidIndexError. Otherwise we fall through and re-raise
   3827     #  the TypeError.
   3828     self._check_indexing_error(key)""")

STRINGS_FRAMES = _frames("""\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/ensemble/_forest.py:334, in BaseForest.fit(self, X, y, sample_weight)
    331 if issparse(y):
    332     raise ValueError("sparse multilabel-indicator for y is not supported.")
--> 334 X, y = validate_data(
    335     self,
    336     X,
    337     y,
    338     multi_output=True,
    339     accept_sparse="csc",
    340     dtype=np.float32,
    341     ensure_all_finite=False,
    342 )
    343 # _compute_missing_values_in_feature_mask checks if X has missing values and
    344 # will raise an error if the underlying tree base estimator can't handle missing
    345 # values. Only the criterion is required to determine if the tree supports
    346 # missing values.
    347 estimator = type(self.estimator)(criterion=self.criterion)

File SITE/sklearn/utils/validation.py:3058, in validate_data(_estimator, X, y, reset, valida\
te_separately, skip_check_array, **check_params)
   3056         y = check_array(y, input_name="y", **check_y_params)
   3057     else:
-> 3058         X, y = check_X_y(X, y, **check_params)
   3059     out = X, y
   3061 if not no_val_X and check_params.get("ensure_2d", True):

File SITE/sklearn/utils/validation.py:1330, in check_X_y(X, y, accept_sparse, accept_large_s\
parse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_2d, allow_nd, multi_ou\
tput, ensure_min_samples, ensure_min_features, y_numeric, estimator)
   1325         estimator_name = _check_estimator_name(estimator)
   1326     raise ValueError(
   1327         f"{estimator_name} requires y to be passed, but the target y is None"
   1328     )
-> 1330 X = check_array(
   1331     X,
   1332     accept_sparse=accept_sparse,
   1333     accept_large_sparse=accept_large_sparse,
   1334     dtype=dtype,
   1335     order=order,
   1336     copy=copy,
   1337     force_writeable=force_writeable,
   1338     ensure_all_finite=ensure_all_finite,
   1339     ensure_2d=ensure_2d,
   1340     allow_nd=allow_nd,
   1341     ensure_min_samples=ensure_min_samples,
   1342     ensure_min_features=ensure_min_features,
   1343     estimator=estimator,
   1344     input_name="X",
   1345 )
   1347 y = _check_y(y, multi_output=multi_output, y_numeric=y_numeric, estimator=estimator)
   1349 check_consistent_length(X, y)

File SITE/sklearn/utils/validation.py:1038, in check_array(array, accept_sparse, accept_larg\
e_sparse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_non_negative, ensur\
e_2d, allow_nd, ensure_min_samples, ensure_min_features, estimator, input_name)
   1036         array = xp.astype(array, dtype, copy=False)
   1037     else:
-> 1038         array = _asarray_with_order(array, order=order, dtype=dtype, xp=xp)
   1039 except ComplexWarning as complex_warning:
   1040     raise ValueError(
   1041         "Complex data not supported\\n{}\\n".format(array)
   1042     ) from complex_warning

File SITE/sklearn/utils/_array_api.py:983, in _asarray_with_order(array, dtype, order, copy,\
 xp, device)
    981     array = numpy.array(array, order=order, dtype=dtype)
    982 else:
--> 983     array = numpy.asarray(array, order=order, dtype=dtype)
    985 # At this point array is a NumPy ndarray. We convert it to an array
    986 # container that is consistent with the input's namespace.
    987 return xp.asarray(array)

File SITE/pandas/core/generic.py:1985, in NDFrame.__array__(self, dtype, copy)
   1981             )
   1982         values = self._values
   1983         if copy is None:
   1984             # Note: branch avoids `copy=None` for NumPy 1.x support
-> 1985             arr = np.asarray(values, dtype=dtype)
   1986         else:
   1987             arr = np.array(values, dtype=dtype, copy=copy)
   1988\x20""")

NAN_FRAMES = _frames("""\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/linear_model/_logistic.py:1437, in LogisticRegression.fit(self, X, y, samp\
le_weight)
   1434 if self.n_jobs is not None:
   1435     warnings.warn(msg, category=FutureWarning)
-> 1437 X, y = validate_data(
   1438     self,
   1439     X,
   1440     y,
   1441     accept_sparse="csr",
   1442     dtype=[xp.float64, xp.float32],
   1443     order="C",
   1444     accept_large_sparse=solver not in ["liblinear", "sag", "saga"],
   1445 )
   1446 n_features = X.shape[1]
   1447 check_classification_targets(y)

File SITE/sklearn/utils/validation.py:3058, in validate_data(_estimator, X, y, reset, valida\
te_separately, skip_check_array, **check_params)
   3056         y = check_array(y, input_name="y", **check_y_params)
   3057     else:
-> 3058         X, y = check_X_y(X, y, **check_params)
   3059     out = X, y
   3061 if not no_val_X and check_params.get("ensure_2d", True):

File SITE/sklearn/utils/validation.py:1330, in check_X_y(X, y, accept_sparse, accept_large_s\
parse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_2d, allow_nd, multi_ou\
tput, ensure_min_samples, ensure_min_features, y_numeric, estimator)
   1325         estimator_name = _check_estimator_name(estimator)
   1326     raise ValueError(
   1327         f"{estimator_name} requires y to be passed, but the target y is None"
   1328     )
-> 1330 X = check_array(
   1331     X,
   1332     accept_sparse=accept_sparse,
   1333     accept_large_sparse=accept_large_sparse,
   1334     dtype=dtype,
   1335     order=order,
   1336     copy=copy,
   1337     force_writeable=force_writeable,
   1338     ensure_all_finite=ensure_all_finite,
   1339     ensure_2d=ensure_2d,
   1340     allow_nd=allow_nd,
   1341     ensure_min_samples=ensure_min_samples,
   1342     ensure_min_features=ensure_min_features,
   1343     estimator=estimator,
   1344     input_name="X",
   1345 )
   1347 y = _check_y(y, multi_output=multi_output, y_numeric=y_numeric, estimator=estimator)
   1349 check_consistent_length(X, y)

File SITE/sklearn/utils/validation.py:1090, in check_array(array, accept_sparse, accept_larg\
e_sparse, dtype, order, copy, force_writeable, ensure_all_finite, ensure_non_negative, ensur\
e_2d, allow_nd, ensure_min_samples, ensure_min_features, estimator, input_name)
   1084     raise ValueError(
   1085         f"Found array with dim {array.ndim},"
   1086         f" while dim <= 2 is required{context}."
   1087     )
   1089 if ensure_all_finite:
-> 1090     _assert_all_finite(
   1091         array,
   1092         input_name=input_name,
   1093         estimator_name=estimator_name,
   1094         allow_nan=ensure_all_finite == "allow-nan",
   1095     )
   1097 if copy:
   1098     if _is_numpy_namespace(xp):
   1099         # only make a copy if `array` and `array_orig` may share memory`

File SITE/sklearn/utils/validation.py:137, in _assert_all_finite(X, allow_nan, msg_dtype, es\
timator_name, input_name)
    134 if first_pass_isfinite:
    135     return
--> 137 _assert_all_finite_element_wise(
    138     X,
    139     xp=xp,
    140     allow_nan=allow_nan,
    141     msg_dtype=msg_dtype,
    142     estimator_name=estimator_name,
    143     input_name=input_name,
    144 )

File SITE/sklearn/utils/validation.py:186, in _assert_all_finite_element_wise(X, xp, allow_n\
an, msg_dtype, estimator_name, input_name)
    169 if estimator_name and input_name == "X" and has_nan_error:
    170     # Improve the error message on how to handle missing values in
    171     # scikit-learn.
    172     msg_err += (
    173         f"\\n{estimator_name} does not accept missing values"
    174         " encoded as NaN natively. For supervised learning, you might want"
   (...)    184         "#estimators-that-handle-nan-values"
    185     )
--> 186 raise ValueError(msg_err)""")

LENGTH_FRAMES = _frames('''\
File SITE/pandas/core/frame.py:4659, in DataFrame.__setitem__(self, key, value)
   4655             # Column to set is duplicated
   4656             self._setitem_array([key], value)
   4657         else:
   4658             # set column
-> 4659             self._set_item(key, value)

File SITE/pandas/core/frame.py:4895, in DataFrame._set_item(self, key, value)
   4891                 target="column on a DataFrame",
   4892                 hint="Use a full-length tuple key instead.",
   4893             )
   4894\x20
-> 4895         value, refs = self._sanitize_column(value)
   4896\x20
   4897         if (
   4898             key in self.columns

File SITE/pandas/core/frame.py:6406, in DataFrame._sanitize_column(self, value)
   6402                 value = Series(value)
   6403             return _reindex_for_setitem(value, self.index)
   6404\x20
   6405         if is_list_like(value):
-> 6406             com.require_length_match(value, self.index)
   6407         return sanitize_array(value, self.index, copy=True, allow_2d=True), None

File SITE/pandas/core/common.py:612, in require_length_match(data, index)
    608 """
    609 Check the length of data matches the length of the index.
    610 """
    611 if len(data) != len(index):
--> 612     raise ValueError(
    613         "Length of values "
    614         f"({len(data)}) "
    615         "does not match length of index "
    616         f"({len(index)})"
    617     )''')

HGB_INTERRUPT = _frames('''\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/ensemble/_hist_gradient_boosting/gradient_boosting.py:783, in BaseHistGrad\
ientBoosting.fit(self, X, y, sample_weight, X_val, y_val, sample_weight_val)
    781 if self.verbose >= 2:
    782     iteration_start_time = time()
--> 783     print(
    784         "[{}/{}] ".format(iteration + 1, self.max_iter), end="", flush=True
    785     )
    787 # Update gradients and hessians, inplace
    788 # Note that self._loss expects shape (n_samples,) for
    789 # n_trees_per_iteration = 1 else shape (n_samples, n_trees_per_iteration).
    790 if self._loss.constant_hessian:

File SITE/ipykernel/iostream.py:694, in OutStream.flush(self)
    683 """trigger actual zmq send
    684\x20
    685 send will happen in the background thread
    686 """
    687 if (
    688     self.pub_thread
    689     and self.pub_thread.thread is not None
   (...)    692 ):
    693     # request flush on the background thread
--> 694     self.pub_thread.schedule(self._flush)
    695     # wait for flush to actually get through, if we can.
    696     evt = threading.Event()

File SITE/ipykernel/iostream.py:343, in IOPubThread.schedule(self, f)
    341     self._events.append(f)
    342     # wake event thread (message content is ignored)
--> 343     self._event_pipe.send(b"")
    344 else:
    345     f()

File SITE/zmq/sugar/socket.py:713, in Socket.send(self, data, flags, copy, track, routing_id\
, group)
    706         data = zmq.Frame(
    707             data,
    708             track=track,
    709             copy=copy or None,
    710             copy_threshold=self.copy_threshold,
    711         )
    712     data.group = group
--> 713 return super().send(data, flags=flags, copy=copy, track=track)

File zmq/backend/cython/_zmq.py:1152, in zmq.backend.cython._zmq.Socket.send()
-> 1152 'Could not get source, probably due dynamically evaluated source code.'

File zmq/backend/cython/_zmq.py:1200, in zmq.backend.cython._zmq.Socket.send()
-> 1200 'Could not get source, probably due dynamically evaluated source code.'

File zmq/backend/cython/_zmq.py:1468, in zmq.backend.cython._zmq._send_copy()
-> 1468 'Could not get source, probably due dynamically evaluated source code.'

File zmq/backend/cython/_zmq.py:179, in zmq.backend.cython._zmq._check_rc()
--> 179 'Could not get source, probably due dynamically evaluated source code.\'''')

GB_INTERRUPT = _frames('''\
File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/ensemble/_gb.py:806, in BaseGradientBoosting.fit(self, X, y, sample_weight\
, monitor)
    803     self._resize_state()
    805 # fit the boosting stages
--> 806 n_stages = self._fit_stages(
    807     X_train,
    808     y_train,
    809     raw_predictions,
    810     sample_weight_train,
    811     self._rng,
    812     X_val,
    813     y_val,
    814     sample_weight_val,
    815     begin_at_stage,
    816     monitor,
    817 )
    819 # change shape of arrays after fit (early-stopping or additional ests)
    820 if n_stages != self.estimators_.shape[0]:

File SITE/sklearn/ensemble/_gb.py:902, in BaseGradientBoosting._fit_stages(self, X, y, raw_p\
redictions, sample_weight, random_state, X_val, y_val, sample_weight_val, begin_at_stage, mo\
nitor)
    895         initial_loss = factor * self._loss(
    896             y_true=y_oob_masked,
    897             raw_prediction=raw_predictions[~sample_mask],
    898             sample_weight=sample_weight_oob_masked,
    899         )
    901 # fit next stage of trees
--> 902 raw_predictions = self._fit_stage(
    903     i,
    904     X,
    905     y,
    906     raw_predictions,
    907     sample_weight,
    908     sample_mask,
    909     random_state,
    910     X_csc=X_csc,
    911     X_csr=X_csr,
    912 )
    914 # track loss
    915 if do_oob:

File SITE/sklearn/ensemble/_gb.py:500, in BaseGradientBoosting._fit_stage(self, i, X, y, raw\
_predictions, sample_weight, sample_mask, random_state, X_csc, X_csr)
    497     sample_weight = sample_weight * sample_mask.astype(np.float64)
    499 X = X_csc if X_csc is not None else X
--> 500 tree.fit(
    501     X, neg_g_view[:, k], sample_weight=sample_weight, check_input=False
    502 )
    504 # update tree leaves
    505 X_for_tree_update = X_csr if X_csr is not None else X

File SITE/sklearn/base.py:1403, in _fit_context.<locals>.decorator.<locals>.wrapper(estimato\
r, *args, **kwargs)
   1393     estimator._validate_params()
   1395 with (
   1396     config_context(
   1397         skip_parameter_validation=(
   (...)   1401     callback_management_context(estimator),
   1402 ):
-> 1403     return fit_method(estimator, *args, **kwargs)

File SITE/sklearn/tree/_classes.py:1399, in DecisionTreeRegressor.fit(self, X, y, sample_wei\
ght, check_input)
   1369 @_fit_context(prefer_skip_nested_validation=True)
   1370 def fit(self, X, y, sample_weight=None, check_input=True):
   1371     """Build a decision tree regressor from the training set (X, y).
   1372\x20
   1373     Parameters
   (...)   1396         Fitted estimator.
   1397     """
-> 1399     super()._fit(
   1400         X,
   1401         y,
   1402         sample_weight=sample_weight,
   1403         check_input=check_input,
   1404     )
   1405     return self

File SITE/sklearn/tree/_classes.py:467, in BaseDecisionTree._fit(self, X, y, sample_weight, \
check_input, missing_values_in_feature_mask)
    456 else:
    457     builder = BestFirstTreeBuilder(
    458         splitter,
    459         min_samples_split,
   (...)    464         self.min_impurity_decrease,
    465     )
--> 467 builder.build(self.tree_, X, y, sample_weight, missing_values_in_feature_mask)
    469 if self.n_outputs_ == 1 and is_classifier(self):
    470     self.n_classes_ = self.n_classes_[0]''')

RAISERS: dict[str, Callable[[Program, Code, str, str], str]] = {
    "key_error": _raise_key_error,
    "strings": _raise_at("fit", STRINGS_FRAMES),
    "nan": _raise_at("fit", NAN_FRAMES),
    "name": _raise_at("labels", []),
    "length": _raise_at("assign", LENGTH_FRAMES),
}


# --- model calls: the prompts a run would send, the answers it would get ----------------------

PROMPTS = Prompts()
MEMORY_CHARS = 4000  # search.memory_chars' default
MEMORY_NODES = 40  # more good nodes than the memory can hold (its lines are 200+ characters)
BUG_PLANS: dict[str, Callable[[Program], str]] = {
    "key_error": lambda p: f" Also add {p.extras[-1]} ({_formula(p.extras[-1])}).",
    "memory": lambda p: (
        " Also add a nearest-neighbour feature: the mean L1 distance to the 10 closest passengers."
    ),
    "timeout": lambda p: (
        " Train much longer, with "
        + ", ".join(f"{k}={v}" for k, v in FAMILIES[p.family].slow)
        + "."
    ),
}


def _formula(feature: str) -> str:
    return FEATURES[feature].lines[-1].split("=", 1)[1].strip()


class IndexedTree(SearchTree):
    """The loop's ``SearchTree``, keeping its lists of good, buggy and draft nodes as nodes
    are added instead of filtering every node at each call: the same lists in the same order,
    so a strategy decides exactly as on the plain tree, but a 2,000-node run is not quadratic
    in them (strategies ask for them at every decision)."""

    def __init__(self, lower_is_better: bool) -> None:
        super().__init__(lower_is_better)
        self._good: list[Node] = []
        self._buggy: list[Node] = []
        self._drafts: list[Node] = []

    def add(self, node: Node) -> None:
        assert node.id not in self, "a node is added once"
        super().add(node)
        if node.is_good:
            self._good.append(node)
        if node.is_buggy:
            self._buggy.append(node)
        if not node.parent_ids:
            self._drafts.append(node)

    def good_nodes(self) -> list[Node]:
        return list(self._good)

    def buggy_nodes(self) -> list[Node]:
        return list(self._buggy)

    def drafts(self) -> list[Node]:
        return list(self._drafts)


@dataclass(frozen=True)
class Seen:
    """What the operators of a node see: the tree its decision was made on, and the same
    tree's best good nodes only (all its memory can hold; a tree of thousands costs a sort of
    thousands per prompt)."""

    tree: SearchTree
    best: SearchTree


def code_request(
    action: Action,
    parents: list[Node],
    seen: Seen,
    task: TaskText,
    steps_left: int,
    meta: RequestMeta,
) -> ModelRequest:
    """The code model's prompt for ``action``, rendered from the real templates with the values
    ``LLMOperators.values`` gives them."""
    values = {
        "task_description": task.description,
        "data_preview": DATA_PREVIEW,
        "metric_name": task.metric_name,
        "direction": task.direction,
        "exec_timeout": format_duration(EXEC_TIMEOUT_S),
        "packages": PACKAGES,
        "budget": f"Steps left in this search, including this one: {steps_left}.",
        "memory": memory.good_nodes(seen.best, MEMORY_CHARS, action.parent_ids),
        "rules": "",
    }
    if parents:
        parent = parents[0]
        output = parent.exec.output if parent.exec else ""
        values |= {
            "parent_plan": parent.plan or "(none)",
            "parent_code": parent.code.rstrip(),
            "parent_output": tail(output, PARENT_OUTPUT_CHARS),
            "parent_metric": metric_text(parent),
            "bug_reason": parent.bug_reason or "",
            "debug_history": memory.debug_history(seen.tree, parent, MEMORY_CHARS),
        }
    if len(parents) > 1:
        other = parents[1]
        values |= {
            "other_plan": other.plan or "(none)",
            "other_code": other.code.rstrip(),
            "other_metric": metric_text(other),
        }
    return ModelRequest(
        messages=[
            Message(role="system", content=PROMPTS.render("system", values)),
            Message(role="user", content=PROMPTS.render(action.operator, values)),
        ],
        meta=meta,
    )


def review_request(code: str, output: str, task: TaskText) -> ModelRequest:
    """The review model's prompt, as ``review.ask_model`` renders it (its ``meta`` is set once
    its number is known)."""
    values = {
        "task_description": tail(task.description, DESCRIPTION_CHARS_FOR_REVIEW),
        "code": code,
        "output": tail(output, OUTPUT_CHARS_FOR_REVIEW),
        "metric_name": task.metric_name,
        "direction": task.direction,
    }
    return ModelRequest(
        messages=[
            Message(role="system", content=PROMPTS.render("review_system", values)),
            Message(role="user", content=PROMPTS.render("review", values)),
        ],
        tools=[REVIEW_TOOL],
        tool_choice=REVIEW_TOOL.name,
    )


def answered(
    request: ModelRequest,
    model: str,
    rng: random.Random,
    text: str = "",
    tool_call: ToolCall | None = None,
) -> tuple[ModelResponse, int]:
    """An answer with the tokens, cost and latency such a prompt and answer would have, and
    the attempts it took (one call in 30 was retried once, 4 s later)."""
    chars = sum(len(m.content) for m in request.messages)
    tokens_in = chars // 4 + (60 if request.tools else 0)
    tokens_out = len(text) // 4 or 40 + len(str(tool_call.arguments if tool_call else "")) // 4
    price_in, price_out = PRICES[model]
    usage = Usage(
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        calls=1,
        cost_usd=round((tokens_in * price_in + tokens_out * price_out) / 1e6, 6),
    )
    latency = 0.6 + tokens_in / 40_000 + tokens_out / rng.uniform(45.0, 90.0)
    attempts = 2 if rng.random() < 1 / 30 else 1
    latency += 4.0 * (attempts - 1)
    response = ModelResponse(
        text=text,
        tool_call=tool_call,
        usage=usage,
        latency_s=round(latency, 3),
        model=model,
        finish="tool_call" if tool_call else "stop",
    )
    return response, attempts


# --- the run --------------------------------------------------------------------------------


@dataclass
class Made:
    """A node as the run left it, and the proposal it came from (its children's start)."""

    node: Node
    proposal: Proposal


@dataclass(order=True)
class _Review:
    """A node whose review starts at ``at`` (seconds into the run): its review call (numbered
    then, as ``CallRecorder`` numbers calls) and its finished record are written once the
    run's clock passes it."""

    at: float
    node_id: int
    request: ModelRequest = field(compare=False)
    response: ModelResponse = field(compare=False)
    attempts: int = field(compare=False)
    node: Node = field(compare=False)


@dataclass(frozen=True)
class _Spec:
    nodes: int
    strategy: str
    seed: int
    running: int
    lower_is_better: bool
    workers: int
    params: Mapping[str, Any]
    bug_rate: float


BUG_SHARE = {"draft": 1.2, "improve": 1.0, "crossover": 1.2, "debug": 1.6}  # x bug_rate


class _Run:
    """One synthetic run being written: the loop's state (the tree, the strategy, the RNG),
    the simulated clock, and the writes that are due."""

    def __init__(self, root: Path, spec: _Spec) -> None:
        self.spec, self.task = spec, task_text(spec.lower_is_better)
        self.rd = RunDir(root)
        root.mkdir(parents=True)
        self.rd.write_config(_config_toml(spec))
        meta = {"podium_version": "synthetic", "task_id": TASK_ID, "created_at": START.isoformat()}
        self.journal = Journal.create(self.rd.journal, meta)
        self.strategy = STRATEGIES[spec.strategy](spec.params)
        self.tree = IndexedTree(spec.lower_is_better)
        self.ranked: list[tuple[float, int]] = []  # admitted good nodes, best first
        self.top: tuple[int, ...] = ()  # the best of them, in self.best
        self.best = SearchTree(spec.lower_is_better)
        self.rng = random.Random(spec.seed)
        self.made: dict[int, Made] = {}
        self.admitted = 0  # nodes 1 .. admitted are in the tree
        self.due: list[_Review] = []  # a heap
        self.finish_at: dict[int, float] = {}
        self.worker_of: dict[int, int] = {}
        self.decided_at = 0.0
        self.done_by = [0.0]  # done_by[k]: when nodes 1 .. k had all finished
        self.seq = {"code": 0, "review": 0}
        self.spending = Spending(None)
        self.elapsed = 0.0
        self.writer = ThreadPoolExecutor(max_workers=1)  # one thread: each node's files in order
        self.writes: list[Future[None]] = []

    # --- the loop ---------------------------------------------------------------------------

    def grow(self) -> None:
        """Decide and write every node; then, for a finished run, admit the rest (as the loop
        does when it ends)."""
        for node_id in range(1, self.spec.nodes + 1):
            action, before, after = self._decide(node_id)
            if action is None:
                break
            self._write_node(node_id, action, before, after)
        while self.due:
            self._write_review(heapq.heappop(self.due))
        if not self.spec.running:
            self._admit_through(len(self.made))

    def _decide(self, node_id: int) -> tuple[Action | None, Any, Any]:
        """The strategy's action on nodes 1 .. id - workers, the rest pending (the loop's
        reproducible schedule), from the run's RNG: its state before and after."""
        w = self.spec.workers
        self._admit_through(node_id - w)
        pending = range(max(node_id - w + 1, 1), node_id)
        self.tree.pending = [_action(self.made[i].node) for i in pending]
        before = self.rng.getstate()
        action = self.strategy.next_action(self.tree, self.rng)
        return action, before, self.rng.getstate()

    def _admit_through(self, last: int) -> None:
        while self.admitted < last:
            self.admitted += 1
            node = self.made[self.admitted].node
            self.tree.add(node)
            self.strategy.observe(node, self.tree)
            if node.is_good and node.metric is not None:
                bisect.insort(self.ranked, (-self.tree.direction.score(node.metric.value), node.id))

    def _seen(self) -> Seen:
        top = tuple(node_id for _, node_id in self.ranked[:MEMORY_NODES])
        if top != self.top:  # the best nodes change less and less often as the run goes on
            self.top, self.best = top, SearchTree(self.spec.lower_is_better)
            for node_id in top:
                self.best.add(self.made[node_id].node)
        return Seen(self.tree, self.best)

    # --- one node ---------------------------------------------------------------------------

    def _write_node(self, node_id: int, action: Action, before: Any, after: Any) -> None:
        """Decided now: journaled with the RNG, its code asked for, then left running or run."""
        rng = random.Random(f"{self.spec.seed}:{node_id}")
        start, worker = self._start(node_id)
        while self.due and self.due[0].at <= start:
            self._write_review(heapq.heappop(self.due))
        proposal = self._propose(action, rng)
        code = render(proposal.program, self.task)
        node = Node(
            id=node_id,
            parent_ids=action.parent_ids,
            operator=action.operator,
            worker=worker,
            created_at=START + timedelta(seconds=start),
        )
        self.journal.begin(node, before, after, self._tick(start))
        call = self._code_call(node_id, action, proposal, code, start, rng)
        self.journal.record_call(call)
        self._spend(call)
        assert call.response is not None
        node = node.model_copy(
            update={
                "plan": proposal.plan,
                "code": code.text,
                "state": NodeState.EXECUTING,
                "timings": Timings(model_s=call.response.latency_s),
            }
        )
        self._write_file(node_id, run_files.SOLUTION, code.text)
        ready = start + 0.03 + call.response.latency_s
        if node_id > self.spec.nodes - self.spec.running:
            self._leave_running(node, proposal, code, ready, rng)
        else:
            self._execute(node, proposal, code, (start, ready), call.response.usage, rng)

    def _start(self, node_id: int) -> tuple[float, int]:
        """When the node is decided (once nodes 1 .. id - workers are done, and not before the
        decision before it) and the lowest worker free then."""
        w = self.spec.workers
        start = max(self.decided_at, self.done_by[max(node_id - w, 0)])
        self.decided_at = start
        busy = {
            self.worker_of[i]
            for i in range(max(node_id - w + 1, 1), node_id)
            if self.finish_at[i] > start
        }
        worker = min(set(range(w)) - busy)
        self.worker_of[node_id] = worker
        return start, worker

    def _propose(self, action: Action, rng: random.Random) -> Proposal:
        """The operator's solution, made buggy with the operator's share of ``bug_rate``."""
        parents = [self.made[p] for p in action.parent_ids]
        if action.operator == "draft":
            proposal = draft(rng, self.task)
        elif action.operator == "improve":
            proposal = improve(parents[0].proposal, rng, self.task)
        elif action.operator == "crossover":
            proposal = crossover(parents[0].proposal, parents[1].proposal, rng, self.task)
        else:
            proposal = debug(parents[0].proposal, parents[0].node.bug_reason or "", rng)
        if rng.random() < self.spec.bug_rate * BUG_SHARE.get(action.operator, 1.0):
            fixed = parents[0].proposal.program.bug if action.operator == "debug" else None
            program = break_program(proposal.program, rng, fixed.kind if fixed else None)
            assert program.bug is not None
            extra = BUG_PLANS[program.bug.kind](program) if program.bug.kind in BUG_PLANS else ""
            proposal = replace(proposal, program=program, plan=proposal.plan + extra)
        return proposal

    def _code_call(
        self,
        node_id: int,
        action: Action,
        proposal: Proposal,
        code: Code,
        start: float,
        rng: random.Random,
    ) -> ModelCall:
        seq = self.seq["code"]
        self.seq["code"] += 1
        meta = RequestMeta(node_id=node_id, role="code", seq=seq)
        parents = [self.made[p].node for p in action.parent_ids]
        steps_left = self.spec.nodes - node_id + 1
        request = code_request(action, parents, self._seen(), self.task, steps_left, meta)
        answer = f"{proposal.plan}\n\n```python\n{code.text}```\n"
        response, attempts = answered(request, MODEL, rng, answer)
        return _call(request, response, start + 0.01, attempts)

    def _execute(
        self,
        node: Node,
        proposal: Proposal,
        code: Code,
        times: tuple[float, float],
        usage: Usage,
        rng: random.Random,
    ) -> None:
        """Run it and review it; its files now, its review and finished record when due."""
        start, ready = times
        run = execute(proposal, code, rng, self.task)
        result = run.result
        review_at = ready + 0.02 + result.kernel_start_s + result.duration_s
        verdict = {
            "is_bug": run.bug_reason is not None,
            "summary": run.summary,
            "metric": run.metric,
        }
        request = review_request(code.text, result.output, self.task)
        tool = ToolCall(name=REVIEW_TOOL.name, arguments=verdict)
        response, attempts = answered(request, REVIEW_MODEL, rng, tool_call=tool)
        finish = review_at + response.latency_s + rng.uniform(0.005, 0.05)
        self._finished(node.id, finish)
        timings = Timings(
            model_s=node.timings.model_s,
            kernel_start_s=result.kernel_start_s,
            exec_s=result.duration_s,
            review_model_s=response.latency_s,
            total_s=round(finish - start, 3),
        )
        admitted = not self.spec.running or node.id <= self.spec.nodes - self.spec.workers
        done = node.model_copy(
            update={
                "state": NodeState.DONE,
                "step": node.id if admitted else None,
                "exec": result,
                "metric": None
                if run.metric is None
                else Metric(value=run.metric, lower_is_better=self.task.lower_is_better),
                "is_buggy": run.bug_reason is not None,
                "bug_reason": run.bug_reason,
                "summary": run.summary,
                "has_submission": run.has_submission,
                "usage": usage + response.usage,
                "timings": timings,
                "finished_at": START + timedelta(seconds=finish),
            }
        )
        self.made[node.id] = Made(done, proposal)
        self._write_file(node.id, run_files.OUTPUT, result.output)
        if run.has_submission:
            self._write_file(node.id, run_files.NODE_SUBMISSION, _submission_csv(rng, self.task))
        heapq.heappush(self.due, _Review(review_at, node.id, request, response, attempts, done))

    def _leave_running(
        self, node: Node, proposal: Proposal, code: Code, ready: float, rng: random.Random
    ) -> None:
        """A node still executing when the run was read: its record says so, and its output
        so far is in output.txt (the loop rewrites it while the solution runs)."""
        value = metric_value(proposal.quality, self.task)
        printed = _printed(proposal.program, code, value, rng, self.task)
        share = rng.uniform(0.1, 0.9)
        lines = printed.text.splitlines(keepends=True)
        self.made[node.id] = Made(node, proposal)
        self._finished(node.id, math.inf)
        self.journal.update(node, self._tick(ready))
        so_far = "".join(lines[: int(len(lines) * share)])
        self.writes.append(
            self.writer.submit(self.rd.write_text, node.id, run_files.OUTPUT, so_far)
        )
        self.elapsed = max(self.elapsed, ready + share * printed.seconds)

    def _finished(self, node_id: int, at: float) -> None:
        self.finish_at[node_id] = at
        self.done_by.append(max(self.done_by[-1], at))

    def _write_review(self, due: _Review) -> None:
        seq = self.seq["review"]
        self.seq["review"] += 1
        meta = RequestMeta(node_id=due.node_id, role="review", seq=seq)
        request = due.request.model_copy(update={"meta": meta})
        call = _call(request, due.response, due.at, due.attempts)
        self.journal.record_call(call)
        self._spend(call)
        self.journal.update(due.node, self._tick(self.finish_at[due.node_id]))

    def _spend(self, call: ModelCall) -> None:
        assert call.response is not None
        self.spending.add(call.role, call.model, call.response.usage)

    def _tick(self, at: float) -> float:
        """The journal's running time, never going back (writes come in the clock's order)."""
        self.elapsed = max(self.elapsed, at)
        return round(self.elapsed, 3)

    def _write_file(self, node_id: int, name: str, text: str) -> None:
        """A node file where RunDir puts it, without its fsync (see the module's docstring),
        by the writer thread: the file system's time overlaps the generation's."""
        self.writes.append(self.writer.submit(_write_node_file, self.rd, node_id, name, text))

    def _files_written(self) -> None:
        """Wait for the writer thread; a write that failed fails the run here."""
        self.writer.shutdown(wait=True)
        for write in self.writes:
            write.result()

    # --- the end ----------------------------------------------------------------------------

    def finish(self, started: float) -> SyntheticRun:
        """``best/`` and ``summary.json`` as the run leaves them; what was written."""
        final = self.strategy.final_node(self.tree)
        self._files_written()
        self.rd.publish_best(final)
        live = self.spec.running > 0
        view = _SearchView(self, None if live else final)
        record = build_summary(cast("Search", view), None if live else "steps", _info(self.spec))
        updated = START + timedelta(seconds=self.elapsed)
        self.rd.write_summary(record.model_copy(update={"updated_at": updated.isoformat()}))
        self.journal.close()
        return self._report(final, updated, time.perf_counter() - started)

    def _report(self, final: Node | None, updated: datetime, seconds: float) -> SyntheticRun:
        nodes = [m.node for m in self.made.values()]
        return SyntheticRun(
            root=self.rd.root,
            strategy=self.spec.strategy,
            seed=self.spec.seed,
            workers=self.spec.workers,
            lower_is_better=self.spec.lower_is_better,
            node_count=len(nodes),
            steps=len(self.tree),
            best=final.id if final else None,
            best_metric=final.metric.value if final and final.metric else None,
            best_path=_ancestors(self.made, final.id) if final else frozenset(),
            operators={n.id: n.operator for n in nodes},
            parents={n.id: n.parent_ids for n in nodes},
            metrics={n.id: n.metric.value for n in nodes if n.metric is not None},
            good=frozenset(n.id for n in nodes if n.is_good),
            buggy={n.id: n.bug_reason or "" for n in nodes if n.is_buggy},
            tracebacks=frozenset(n.id for n in nodes if n.exec and n.exec.traceback),
            crossovers={
                n.id: (n.parent_ids[0], n.parent_ids[1]) for n in nodes if n.operator == "crossover"
            },
            running=tuple(n.id for n in nodes if n.state is NodeState.EXECUTING),
            waiting=tuple(n.id for n in nodes if n.state is NodeState.DONE and n.step is None),
            task_description=self.task.description,
            data_preview=DATA_PREVIEW,
            started_at=START,
            updated_at=updated,
            elapsed_s=round(self.elapsed, 3),
            seconds=seconds,
        )


@dataclass
class _SearchView:
    """What ``build_summary`` reads of a ``Search``, answered by the synthetic run."""

    run: _Run
    final: Node | None
    reruns: list[Any] = field(default_factory=list)
    error: str | None = None
    stop_detail: str | None = None

    @property
    def tree(self) -> SearchTree:
        return self.run.tree

    @property
    def parts(self) -> _SearchView:
        return self  # build_summary asks for parts.strategy

    @property
    def strategy(self) -> Strategy:
        return self.run.strategy

    @property
    def spending(self) -> Spending:
        return self.run.spending

    @property
    def journal(self) -> Journal:
        return self.run.journal

    def elapsed(self) -> float:
        return self.run.elapsed


def _info(spec: _Spec) -> dict[str, Any]:
    """summary.json's first fields, as ``api.runs`` fills them."""
    return {
        "task": TASK_ID,
        "competition_id": "passengers",
        "task_type": "tabular-classification",
        "complexity": "low",
        "obfuscated_description": False,
        "model": MODEL,
        "review_model": REVIEW_MODEL,
        "strategy": spec.strategy,
        "sandbox": "bwrap",
        "sandbox_detail": "bubblewrap 0.11.0, seccomp filter, cgroup v2 limits",
        "sandboxed": True,
        "isolation_gaps": [],
        "seed": spec.seed,
        "workers": spec.workers,
        "schedule": "reproducible",
        "budget": {"steps": spec.nodes, "time": None, "cost": None},
    }


def _config_toml(spec: _Spec) -> str:
    """The resolved config.toml, in ``RunConfig.to_toml``'s layout (the keys that matter here;
    building a RunConfig would import ``podium.api``, a second)."""
    return tomli_w.dumps(
        {
            "task": TASK_ID,
            "seed": spec.seed,
            "workers": spec.workers,
            "schedule": "reproducible",
            "model": {
                "name": MODEL,
                "review": REVIEW_MODEL,
                "prices": {m: {"input": p[0], "output": p[1]} for m, p in PRICES.items()},
            },
            "search": {
                "strategy": spec.strategy,
                "operators": "llm",
                "memory_chars": MEMORY_CHARS,
                "final_top_k": 1,
                **spec.params,
            },
            "budget": {"steps": spec.nodes},
            "exec": {"timeout": EXEC_TIMEOUT_S, "max_output_bytes": 65536},
            "sandbox": {"name": "bwrap", "memory": "8G"},
        }
    )


def _call(request: ModelRequest, response: ModelResponse, at: float, attempts: int) -> ModelCall:
    """The call as ``CallRecorder`` journals it, started ``at`` seconds into the run."""
    meta = request.meta
    return ModelCall(
        node_id=meta.node_id,
        role=meta.role,
        seq=meta.seq,
        request=request,
        response=response,
        model=response.model,
        attempts=attempts,
        started_at=START + timedelta(seconds=at),
    )


def _write_node_file(rd: RunDir, node_id: int, name: str, text: str) -> None:
    path = rd.node_file(node_id, name)
    if name == run_files.SOLUTION:  # the node's first file
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _ancestors(made: Mapping[int, Made], node_id: int) -> frozenset[int]:
    seen: set[int] = set()
    todo = [node_id]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(made[current].node.parent_ids)
    return frozenset(seen)


def _action(node: Node) -> Action:
    return Action(operator=node.operator, parent_ids=node.parent_ids)


_ROWS = [f"\n{10000 + i}," for i in range(TEST_ROWS)]
_PROBABILITIES = [f"{i / 1000:.3f}" for i in range(1, 1000)]


def _submission_csv(rng: random.Random, task: TaskText) -> str:
    """A submission.csv of the test set's shape (its values are noise)."""
    if task.lower_is_better:
        values: Any = rng.choices(_PROBABILITIES, k=TEST_ROWS)
    else:
        values = format(rng.getrandbits(TEST_ROWS), f"0{TEST_ROWS}b")
    return "PassengerId,Survived" + "".join(map(operator.add, _ROWS, values)) + "\n"


def write_synthetic_run(
    root: Path,
    nodes: int,
    *,
    strategy: str = "mcts",
    seed: int = 0,
    running: int = 0,
    lower_is_better: bool = False,
    workers: int = 4,
    params: Mapping[str, Any] | None = None,
    bug_rate: float = 0.25,
) -> SyntheticRun:
    """Write a run of ``nodes`` nodes into ``root`` (which must not exist); say what it holds.

    ``strategy``: greedy, mcts, evolutionary or random, with ``params`` (its ``search.*``
    keys, e.g. ``{"num_drafts": 5}``). ``workers``: nodes in flight (the schedule and the
    workers recorded follow it). ``running``: how many of the last nodes are still executing
    (at most ``workers``): the run is then caught live, its summary says running, and the
    finished nodes the reproducible schedule has not admitted yet have no step (``waiting``).
    The viewer shows them as running only while a process holds the run's lock
    (``RunDir(root).lock()``), else as interrupted. ``bug_rate``: an improve's chance to be
    buggy (a draft's and a crossover's are 1.2 times it, a debug's 1.6 times). The same
    arguments write the same run.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    if nodes < 1 or workers < 1 or not 0 <= running <= min(workers, nodes):
        raise ValueError("need nodes >= 1, workers >= 1 and 0 <= running <= min(workers, nodes)")
    started = time.perf_counter()
    spec = _Spec(
        nodes, strategy, seed, running, lower_is_better, workers, dict(params or {}), bug_rate
    )
    run = _Run(root, spec)
    run.grow()
    return run.finish(started)
