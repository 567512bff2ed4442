"""Prepares the mini Titanic competition from the vendored ``raw/titanic.csv``.

Deterministic: the same raw file always gives byte-identical outputs. Writes

- ``public/train.csv``: 891 passengers with ``Survived``;
- ``public/test.csv``: 418 passengers without ``Survived``;
- ``public/sample_submission.csv``: ``PassengerId,Survived`` with every ``Survived`` 0;
- ``private/test.csv``: ``PassengerId,Survived``, the answers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240415
N_TRAIN = 891
N_TEST = 418
# Columns that give the answer away (boat, body) or that Kaggle's version lacks (home.dest).
DROPPED = ["boat", "body", "home.dest"]
KAGGLE_NAMES = {
    "pclass": "Pclass",
    "survived": "Survived",
    "name": "Name",
    "sex": "Sex",
    "age": "Age",
    "sibsp": "SibSp",
    "parch": "Parch",
    "ticket": "Ticket",
    "fare": "Fare",
    "cabin": "Cabin",
    "embarked": "Embarked",
}
# Kaggle's column order (its test.csv is the same without Survived).
COLUMNS = [
    "PassengerId",
    "Survived",
    "Pclass",
    "Name",
    "Sex",
    "Age",
    "SibSp",
    "Parch",
    "Ticket",
    "Fare",
    "Cabin",
    "Embarked",
]


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = pd.read_csv(
        Path(raw) / "titanic.csv",
        na_values=["?"],
        keep_default_na=False,
        dtype={"name": str, "ticket": str, "cabin": str},
    )
    if len(frame) != N_TRAIN + N_TEST:
        raise ValueError(f"expected {N_TRAIN + N_TEST} passengers, found {len(frame)}")
    frame = frame.drop(columns=DROPPED).rename(columns=KAGGLE_NAMES)
    order = np.random.default_rng(SEED).permutation(len(frame))
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(0, "PassengerId", np.arange(1, len(frame) + 1))
    frame = frame[COLUMNS]

    train = frame.iloc[:N_TRAIN]
    test = frame.iloc[N_TRAIN:]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=["Survived"]).to_csv(public / "test.csv", index=False)
    test[["PassengerId"]].assign(Survived=0).to_csv(public / "sample_submission.csv", index=False)
    test[["PassengerId", "Survived"]].to_csv(private / "test.csv", index=False)
