"""Text recipes: TF-IDF features of the documents and a linear model on them.

For short documents (reviews, titles, posts) a linear model on TF-IDF n-grams is the classical
strong baseline. A recipe names the model (logistic regression, a linear SVM, naive Bayes; ridge
or a linear SVR for a numeric target) and the features: word n-grams up to ``words``,
character n-grams (within words) up to ``chars``, the smallest document frequency kept and
whether term counts are dampened (``sublinear_tf``). Drafts try the models in turn; improve
changes one choice (the n-grams, the regularisation, the frequency cut, the model); debug falls
back to a logistic regression (ridge) on word unigrams, then to a constant; crossover keeps the
fitter parent's model and takes the other's features.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from podium.scaffolds.baseline.moves import RecipeMove, one_move
from podium.scaffolds.baseline.specs import TextSpec


@dataclass(frozen=True)
class TextModel:
    module: str
    estimator: str
    params: dict[str, Any]


MODELS: dict[str, TextModel] = {
    "logistic": TextModel("sklearn.linear_model", "LogisticRegression",
                          {"C": 4.0, "max_iter": 2000}),
    "linear_svm": TextModel("sklearn.svm", "LinearSVC", {"C": 0.5}),
    "naive_bayes": TextModel("sklearn.naive_bayes", "MultinomialNB", {"alpha": 0.1}),
    "ridge": TextModel("sklearn.linear_model", "Ridge", {"alpha": 1.0}),
    "linear_svr": TextModel("sklearn.svm", "LinearSVR", {"C": 0.5, "max_iter": 5000}),
    "dummy_classifier": TextModel("sklearn.dummy", "DummyClassifier", {"strategy": "prior"}),
    "dummy_regressor": TextModel("sklearn.dummy", "DummyRegressor", {"strategy": "mean"}),
}  # fmt: skip
CLASSIFIERS = ("logistic", "linear_svm", "naive_bayes")
REGRESSORS = ("ridge", "linear_svr")
TUNING: dict[str, tuple[str, float, float]] = {  # family → (parameter, lowest, highest)
    "logistic": ("C", 0.01, 100),
    "linear_svm": ("C", 0.01, 100),
    "naive_bayes": ("alpha", 0.001, 10),
    "ridge": ("alpha", 0.01, 100),
    "linear_svr": ("C", 0.01, 100),
}


@dataclass(frozen=True)
class TextRecipe:
    family: str
    params: dict[str, Any] = field(default_factory=dict)
    words: int = 2  # word n-grams of length 1..words (0: none)
    chars: int = 0  # character n-grams of length 2..chars, within words (0: none)
    min_df: int = 2  # n-grams in fewer documents are dropped
    sublinear_tf: bool = True  # 1 + log(count) rather than the raw count

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> TextRecipe:
        return cls(**data)


def families(spec: TextSpec) -> tuple[str, ...]:
    return CLASSIFIERS if spec.problem == "classification" else REGRESSORS


def _start(family: str) -> TextRecipe:
    return TextRecipe(family, dict(MODELS[family].params))


def draft(spec: TextSpec, index: int, rng: random.Random) -> TextRecipe:
    """The ``index``-th draft: the models in turn on word uni- and bigrams; past the first
    round, other features drawn at random."""
    order = families(spec)
    recipe = _start(order[index % len(order)])
    if index >= len(order):
        words, chars = rng.choice([(1, 0), (1, 5), (2, 5), (3, 0), (0, 5)])
        recipe = replace(recipe, words=words, chars=chars, min_df=rng.choice([1, 2, 3]))
    return recipe


# --- improve ---------------------------------------------------------------------------------

Move = RecipeMove[TextRecipe, TextSpec]


def _ngrams(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str] | None:
    options = [(w, r.chars) for w in (1, 2, 3) if w != r.words]
    options += [(r.words, c) for c in (0, 4, 5) if c != r.chars and (c or r.words)]
    words, chars = rng.choice(options)
    if words != r.words:
        return replace(r, words=words), f"use word n-grams up to length {words}"
    why = f"add character n-grams up to length {chars}" if chars else "drop character n-grams"
    return replace(r, chars=chars), why


def _tune(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str] | None:
    if r.family not in TUNING:
        return None
    name, low, high = TUNING[r.family]
    value = r.params[name]
    new = round(min(max(value * rng.choice([0.3, 3.0]), low), high), 6)
    if new == value:
        return None
    return replace(r, params={**r.params, name: new}), f"set {name} from {value} to {new}"


def _min_df(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str]:
    min_df = rng.choice([m for m in (1, 2, 3, 5) if m != r.min_df])
    return replace(r, min_df=min_df), f"keep n-grams found in at least {min_df} documents"


def _sublinear(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str]:
    why = "dampen term counts (sublinear tf)" if not r.sublinear_tf else "use raw term counts"
    return replace(r, sublinear_tf=not r.sublinear_tf), why


def _switch(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str]:
    family = rng.choice([f for f in families(spec) if f != r.family])
    new = replace(r, family=family, params=dict(MODELS[family].params))
    return new, f"switch the model from {r.family} to {family}"


def improve(parent: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str]:
    """Change one choice of ``parent``: mostly the n-grams or the regularisation."""
    moves: list[tuple[Move, float]] = [(_ngrams, 0.4), (_tune, 0.3), (_switch, 0.1),
                                       (_min_df, 0.1), (_sublinear, 0.1)]  # fmt: skip
    if parent.family not in TUNING:  # a constant prediction: change the model
        moves = [(_switch, 1.0)]
    return one_move(moves, parent, spec, rng, _switch)


def crossover(
    fitter: TextRecipe, other: TextRecipe, spec: TextSpec
) -> tuple[TextRecipe, str] | None:
    """The fitter parent's model and its hyperparameters, the other's TF-IDF features (n-grams,
    frequency cut, sublinear tf); ``None`` when those are the fitter parent's already."""
    child = replace(fitter, words=other.words, chars=other.chars, min_df=other.min_df,
                    sublinear_tf=other.sublinear_tf)  # fmt: skip
    if child == fitter:
        return None
    taken = f"words up to {other.words}, characters up to {other.chars}, min_df {other.min_df}"
    return child, f"keep the {fitter.family} model, take the features ({taken}) from the other"


def debug(parent: TextRecipe | None, spec: TextSpec) -> tuple[TextRecipe, str]:
    """Fall back to a plain linear model on word unigrams, then to a constant prediction."""
    linear = "logistic" if spec.problem == "classification" else "ridge"
    simple = replace(_start(linear), words=1)
    if parent != simple:
        return simple, f"fall back to a plain {linear} model on word unigrams"
    dummy = "dummy_classifier" if spec.problem == "classification" else "dummy_regressor"
    return replace(_start(dummy), words=1), "fall back to a constant prediction, which cannot fail"
