"""Solutions as programs: a :class:`Program` is the few choices a solution is made of (a
scikit-learn model and its hyperparameters, the engineered features, the folds, the decision
threshold, and its :class:`Bug` if it has one), and :func:`render` writes its code (~4 KB, one
self-contained script, the way a model writes one), so that a child differs from its parent in
the lines its change touches. The code of a good node runs: ``render`` writes scripts that
train and submit on data of the task's shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from tests.viewer.synthetic.task import TaskText


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
