"""Builds ``leaderboard.csv`` for the mini Titanic competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.titanic

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` only), scores its predictions for ``test.csv``
with ``grade.py`` and writes the leaderboard best first. Everything is seeded, so a rerun writes
the same file.

The entries span the field: constant predictions, hand-written rules, random guesses and
scikit-learn models from weak to strong on feature sets from "class and sex" up to everything.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("titanic")  # where leaderboard.csv goes
SEED = 0

# A predictor gets the training and the test frame and returns 0/1 predictions for the test rows.
Predictor = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]


# --- features ------------------------------------------------------------------------------

TITLES = {
    "Mr": "Mr",
    "Mrs": "Mrs",
    "Mme": "Mrs",
    "Ms": "Miss",
    "Miss": "Miss",
    "Mlle": "Miss",
    "Master": "Master",
}


def add_features(frame: pd.DataFrame) -> pd.DataFrame:
    """Derived columns: FamilySize, Title (Mr/Mrs/Miss/Master/Rare) and Deck (cabin letter)."""
    out = frame.copy()
    out["FamilySize"] = out["SibSp"] + out["Parch"]
    raw_title = out["Name"].astype(str).map(_title)
    out["Title"] = raw_title.map(lambda t: TITLES.get(t, "Rare"))
    out["Deck"] = (
        out["Cabin"].astype("object").map(lambda c: c[0] if isinstance(c, str) and c else "U")
    )
    return out


def _title(name: str) -> str:
    match = re.search(r",\s*([^.]+)\.", name)
    return match.group(1).strip() if match else ""


NUMERIC = {"Pclass", "Age", "Fare", "FamilySize"}
FEATURE_SETS: dict[str, list[str]] = {
    "class+sex": ["Pclass", "Sex"],
    "class+sex+age": ["Pclass", "Sex", "Age"],
    "class+sex+age+fare": ["Pclass", "Sex", "Age", "Fare"],
    "class+sex+age+fare+family": ["Pclass", "Sex", "Age", "Fare", "FamilySize"],
    "class+sex+age+fare+family+title": ["Pclass", "Sex", "Age", "Fare", "FamilySize", "Title"],
    "class+sex+age+fare+family+title+port": [
        *["Pclass", "Sex", "Age", "Fare", "FamilySize", "Title", "Embarked"],
    ],
    "class+sex+age+fare+family+title+port+deck": [
        *["Pclass", "Sex", "Age", "Fare", "FamilySize", "Title", "Embarked", "Deck"],
    ],
}


def _preprocessor(columns: list[str], scale: bool) -> ColumnTransformer:
    numeric = [c for c in columns if c in NUMERIC]
    categorical = [c for c in columns if c not in NUMERIC]
    numeric_steps: list[Any] = [SimpleImputer(strategy="median")]
    if scale:
        numeric_steps.append(StandardScaler())
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        parts.append(("num", make_pipeline(*numeric_steps), numeric))
    if categorical:
        encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        parts.append(
            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), encoder), categorical)
        )
    return ColumnTransformer(parts)


def model_solution(model: Any, columns: list[str], scale: bool) -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        pipeline = Pipeline([("prep", _preprocessor(columns, scale)), ("model", model)])
        x_train = _as_object(add_features(train)[columns])
        pipeline.fit(x_train, train["Survived"].astype(int))
        return np.asarray(pipeline.predict(_as_object(add_features(test)[columns])), dtype=int)

    return solve


def _as_object(frame: pd.DataFrame) -> pd.DataFrame:
    """String columns as plain objects with NaN for missing (what the sklearn imputers expect)."""
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].astype("object").where(out[column].notna(), np.nan)
    return out


# --- rules ---------------------------------------------------------------------------------


def constant(value: int) -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full(len(test), value, dtype=int)

    return solve


def random_guess(seed: int, p: float) -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return (np.random.default_rng(seed).random(len(test)) < p).astype(int)

    return solve


def rule(predicate: Callable[[pd.DataFrame], pd.Series]) -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return predicate(add_features(test)).fillna(False).to_numpy(dtype=bool).astype(int)

    return solve


def _female(t: pd.DataFrame) -> pd.Series:
    return t["Sex"] == "female"


def _child(t: pd.DataFrame, age: float) -> pd.Series:
    return (t["Age"] < age) | ((t["Title"] == "Master") & t["Age"].isna())


RULES: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "rule: women survive": _female,
    "rule: women and children under 10 survive": lambda t: _female(t) | _child(t, 10),
    "rule: women and children under 16 survive": lambda t: _female(t) | _child(t, 16),
    "rule: first and second class women survive": lambda t: _female(t) & (t["Pclass"] < 3),
    "rule: first class passengers survive": lambda t: t["Pclass"] == 1,
    "rule: first class passengers and women survive": lambda t: _female(t) | (t["Pclass"] == 1),
    "rule: women survive unless third class with fare over 20": lambda t: (
        _female(t) & ~((t["Pclass"] == 3) & (t["Fare"] > 20))
    ),
    "rule: women and boys in first or second class survive": lambda t: (
        _female(t) | ((t["Title"] == "Master") & (t["Pclass"] < 3))
    ),
    "rule: women except third class large families plus boys": lambda t: (
        (_female(t) & ~((t["Pclass"] == 3) & (t["FamilySize"] >= 4)))
        | ((t["Title"] == "Master") & (t["FamilySize"] < 4))
    ),
}


# --- the entries ---------------------------------------------------------------------------


def _models() -> dict[str, tuple[Any, bool]]:
    """Model name -> (an unfitted estimator, whether numeric features are standardised)."""
    models: dict[str, tuple[Any, bool]] = {}
    for c in (0.001, 0.01, 0.1, 1.0, 10.0):
        models[f"logistic regression C={c:g}"] = (LogisticRegression(C=c, max_iter=2000), True)
    for depth in (1, 2, 3, 5, 8, None):
        name = f"decision tree depth={depth or 'unlimited'}"
        models[name] = (DecisionTreeClassifier(max_depth=depth, random_state=SEED), False)
    for k in (1, 5, 15, 45):
        models[f"k-NN k={k}"] = (KNeighborsClassifier(n_neighbors=k), True)
    models["gaussian naive bayes"] = (GaussianNB(), True)
    models["random forest 200 trees"] = (
        RandomForestClassifier(n_estimators=200, min_samples_leaf=2, random_state=SEED),
        False,
    )
    models["extra trees 200 trees"] = (
        ExtraTreesClassifier(n_estimators=200, min_samples_leaf=2, random_state=SEED),
        False,
    )
    models["gradient boosting"] = (GradientBoostingClassifier(random_state=SEED), False)
    models["hist gradient boosting"] = (
        HistGradientBoostingClassifier(max_iter=100, random_state=SEED),
        False,
    )
    models["SVC rbf C=1"] = (SVC(C=1.0, random_state=SEED), True)
    return models


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Predictor] = {
        "constant: nobody survives (all 0)": constant(0),
        "constant: everybody survives (all 1)": constant(1),
    }
    for seed in range(5):
        found[f"random guess p=0.5 seed={seed}"] = random_guess(seed, 0.5)
    for seed in range(3):
        found[f"random guess p=0.38 seed={seed}"] = random_guess(100 + seed, 0.38)
    found.update({name: rule(predicate) for name, predicate in RULES.items()})
    for set_name, columns in FEATURE_SETS.items():
        for model_name, (model, scale) in _models().items():
            found[f"{model_name} on {set_name}"] = model_solution(model, columns, scale)
    return {name: submission(predict) for name, predict in found.items()}


def submission(predict: Predictor) -> Solution:
    """A predictor as a leaderboard solution: reads the public data, returns the submission."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
        return pd.DataFrame({"PassengerId": test["PassengerId"], "Survived": predict(train, test)})

    return solve


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=False))
