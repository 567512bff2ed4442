"""Text recipes: TF-IDF features of the documents and a linear model on them.

For short documents (reviews, titles, posts) a linear model on TF-IDF n-grams is the classical
strong baseline. A recipe names the model (logistic regression, a linear SVM, naive Bayes; ridge
or a linear SVR for a numeric target) and the features: word n-grams up to ``words``,
character n-grams (within words) up to ``chars``, the smallest document frequency kept and
whether term counts are dampened (``sublinear_tf``). Drafts try the models in turn; improve
changes one choice (the n-grams, the regularisation, the frequency cut, the model); debug falls
back to a logistic regression (ridge) on word unigrams, then to a constant; crossover keeps the
fitter parent's model and takes the other's features.

A large corpus is sized (:func:`sized`, issue 39): a draft costs at most
``budget.DRAFT_SECONDS``, a later node ``budget.GROW_SECONDS``, and counting n-grams stays
within ``budget.MEMORY_BYTES``; a sized recipe may grow back (:func:`_grow`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.moves import RecipeMove, one_move
from podium.scaffolds.baseline.parts import Part, nothing
from podium.scaffolds.baseline.recipe_line import unsized_fields
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
    # Sizing (see :func:`sized`): what a large corpus gives up to fit a budget.
    holdout: bool = False  # one 20% hold-out split instead of 5 folds, whatever the rows
    sample: int = 0  # validate and fit on at most this many documents (0: all of them)
    max_features: int = 0  # keep the most frequent n-grams, this many (0: every one)

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> TextRecipe:
        return cls(**data)

    def fields(self) -> dict[str, Any]:
        return unsized_fields(self, SIZING)


SIZING = {"holdout": False, "sample": 0, "max_features": 0}  # the sizing fields, their defaults
HOLDOUT_ABOVE_ROWS = 20_000  # cross-validate fewer documents; one hold-out split beyond
MIN_ROWS = 20_000  # sizing keeps at least this many documents (unless memory allows fewer)
MAX_FEATURES = 200_000  # sizing's vocabulary when more terms are expected


def families(spec: TextSpec) -> tuple[str, ...]:
    return CLASSIFIERS if spec.problem == "classification" else REGRESSORS


def _start(family: str) -> TextRecipe:
    return TextRecipe(family, dict(MODELS[family].params))


# --- sizing ----------------------------------------------------------------------------------


def holds_out(recipe: TextRecipe, spec: TextSpec) -> bool:
    """Whether the script validates on one hold-out split: large corpora, or a sized recipe."""
    return recipe.holdout or spec.rows > HOLDOUT_ABOVE_ROWS


def fitted_rows(recipe: TextRecipe, spec: TextSpec) -> int:
    return min(spec.rows, recipe.sample) if recipe.sample else spec.rows


def _grams(recipe: TextRecipe) -> tuple[int, int]:
    """Word n-gram lengths and character n-gram lengths (the script's fallback: unigrams)."""
    lengths = max(recipe.chars - 1, 0)
    return (recipe.words if recipe.words or lengths else 1), lengths


def vocabulary(recipe: TextRecipe, spec: TextSpec) -> float:
    """Terms the vectoriser keeps, at most (``budget.VOCABULARY_SHARE`` of the n-grams)."""
    words, lengths = _grams(recipe)
    chars = fitted_rows(recipe, spec) * (spec.chars or budget.DOCUMENT_CHARS)
    terms = budget.VOCABULARY_SHARE * budget.text_grams(chars, words, lengths)
    return min(terms, recipe.max_features) if recipe.max_features else terms


def seconds(recipe: TextRecipe, spec: TextSpec) -> float:
    """The script's cost on one core: vectorising and fitting 5 folds of 80% of the documents
    (or one) and the final fit; a calibrated SVM fits 3 more times each."""
    words, lengths = _grams(recipe)
    chars = fitted_rows(recipe, spec) * (spec.chars or budget.DOCUMENT_CHARS)
    fits = 1.8 if holds_out(recipe, spec) else 5.0
    if recipe.family == "linear_svm" and spec.prediction != "label":
        fits *= 2.5  # CalibratedClassifierCV(cv=3): three fits on two thirds
    terms = vocabulary(recipe, spec)
    return fits * budget.text_seconds(recipe.family, chars, words, lengths, terms, spec.classes)


def memory_rows(recipe: TextRecipe, spec: TextSpec) -> int:
    """The most documents whose n-grams ``recipe``'s script can count in memory."""
    words, lengths = _grams(recipe)
    per_row = budget.text_bytes(spec.chars or budget.DOCUMENT_CHARS, words, lengths)
    return int(budget.MEMORY_BYTES // max(per_row, 1))


def _shrink_rows(recipe: TextRecipe, spec: TextSpec, limit: float, floor: int,
                 cost: Callable[[TextRecipe], float]) -> TextRecipe:  # fmt: skip
    """Fewer documents, in proportion to the excess ``cost``, never below ``floor``."""
    for _ in range(8):
        rows = fitted_rows(recipe, spec)
        if cost(recipe) <= limit or rows <= floor:
            break
        recipe = replace(recipe, sample=max(floor, int(rows * min(0.9, limit / cost(recipe)))))
    return recipe


def sized(recipe: TextRecipe, spec: TextSpec, limit: float) -> TextRecipe:
    """``recipe``, giving up as little as it takes to cost at most ``limit`` seconds of one core
    and to count its n-grams in ``budget.MEMORY_BYTES``; at sizing's floors when even that
    does not fit. In order: a sample of the documents that fits memory, the ``MAX_FEATURES``
    most frequent n-grams when more are expected, one hold-out split instead of 5 folds, a
    sample down to ``MIN_ROWS`` documents. A recipe within the limit is returned unchanged, so
    corpora that fit (every bundled one) are written as before sizing existed."""
    r = recipe
    if seconds(r, spec) <= limit and fitted_rows(r, spec) <= memory_rows(r, spec):
        return r
    cap = memory_rows(r, spec)
    if fitted_rows(r, spec) > cap:
        r = replace(r, sample=cap)
    if not r.max_features and vocabulary(r, spec) > MAX_FEATURES:
        r = replace(r, max_features=MAX_FEATURES)
    if seconds(r, spec) > limit and not holds_out(r, spec):
        r = replace(r, holdout=True)
    return _shrink_rows(r, spec, limit, min(MIN_ROWS, spec.rows), lambda x: seconds(x, spec))


def draft(spec: TextSpec, index: int, rng: random.Random) -> TextRecipe:
    """The ``index``-th draft: the models in turn on word uni- and bigrams; past the first
    round, other features drawn at random; sized to ``budget.DRAFT_SECONDS``."""
    order = families(spec)
    recipe = _start(order[index % len(order)])
    if index >= len(order):
        words, chars = rng.choice([(1, 0), (1, 5), (2, 5), (3, 0), (0, 5)])
        recipe = replace(recipe, words=words, chars=chars, min_df=rng.choice([1, 2, 3]))
    return sized(recipe, spec, budget.DRAFT_SECONDS)


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


def _grow(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str] | None:
    """Take back part of what sizing gave up: twice the documents or n-grams, or 5 folds
    again, when the result still fits ``budget.GROW_SECONDS`` and memory."""
    options: list[tuple[TextRecipe, str]] = []
    if r.sample:
        rows = 0 if r.sample * 2 >= spec.rows else r.sample * 2
        options.append((replace(r, sample=rows), f"fit on {rows or 'all'} documents"))
    if r.max_features:
        doubled = r.max_features * 2
        terms = 0 if doubled >= vocabulary(replace(r, max_features=0), spec) else doubled
        why = f"keep the {terms} most frequent n-grams" if terms else "keep every n-gram"
        options.append((replace(r, max_features=terms), why))
    if r.holdout and spec.rows <= HOLDOUT_ABOVE_ROWS:
        options.append((replace(r, holdout=False), "validate with 5-fold cross-validation"))
    fits = [(new, why) for new, why in options if sized(new, spec, budget.GROW_SECONDS) == new]
    return rng.choice(fits) if fits else None


def improve(parent: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str]:
    """Change one choice of ``parent``: mostly the n-grams or the regularisation. A sized
    parent may also take back part of what it gave up (:func:`_grow`); a child beyond
    ``budget.GROW_SECONDS`` or memory is sized."""
    moves: list[tuple[Move, float]] = [(_ngrams, 0.4), (_tune, 0.3), (_switch, 0.1),
                                       (_min_df, 0.1), (_sublinear, 0.1)]  # fmt: skip
    if parent.family not in TUNING:  # a constant prediction: change the model
        moves = [(_switch, 1.0)]
    if parent.holdout or parent.sample or parent.max_features:  # a sized recipe may grow back
        moves.append((_grow, 0.3))
    child, why = one_move(moves, parent, spec, rng, _switch)
    return sized(child, spec, budget.GROW_SECONDS), why


def crossover(
    fitter: TextRecipe, other: TextRecipe, spec: TextSpec
) -> tuple[TextRecipe, str] | None:
    """The fitter parent's model and its hyperparameters, the other's TF-IDF features (n-grams,
    frequency cut, sublinear tf); ``None`` when those are the fitter parent's already."""
    child = replace(fitter, words=other.words, chars=other.chars, min_df=other.min_df,
                    sublinear_tf=other.sublinear_tf)  # fmt: skip
    child = sized(child, spec, budget.GROW_SECONDS)
    if child == fitter:
        return None
    taken = f"words up to {other.words}, characters up to {other.chars}, min_df {other.min_df}"
    return child, f"keep the {fitter.family} model, take the features ({taken}) from the other"


def debug(parent: TextRecipe | None, spec: TextSpec) -> tuple[TextRecipe, str]:
    """Fall back to a plain linear model on word unigrams, then to a constant prediction."""
    linear = "logistic" if spec.problem == "classification" else "ridge"
    simple = replace(_start(linear), words=1)
    simple = sized(simple, spec, budget.DRAFT_SECONDS)
    if parent != simple:
        return simple, f"fall back to a plain {linear} model on word unigrams"
    dummy = "dummy_classifier" if spec.problem == "classification" else "dummy_regressor"
    constant = sized(replace(_start(dummy), words=1), spec, budget.DRAFT_SECONDS)
    return constant, "fall back to a constant prediction, which cannot fail"


# --- ablate and refine -----------------------------------------------------------------------


def _refine_model(r: TextRecipe, spec: TextSpec, rng: random.Random) -> tuple[TextRecipe, str]:
    """The model block's refine: its regularisation tuned, else another linear family."""
    return _tune(r, spec, rng) or _switch(r, spec, rng)


def _longer(
    r: TextRecipe, spec: TextSpec, rng: random.Random, which: str
) -> tuple[TextRecipe, str] | None:
    """The n-grams' refine: one length more (words up to 3, characters up to 5)."""
    now = getattr(r, which)
    if now >= NGRAM_MOST[which]:
        return None
    changes: dict[str, Any] = {which: now + 1}
    unit = "word" if which == "words" else "character"
    return replace(r, **changes), f"use {unit} n-grams up to length {now + 1} instead of {now}"


NGRAM_MOST = {"words": 3, "chars": 5}  # the longest n-grams refine goes to


def parts(r: TextRecipe, spec: TextSpec) -> list[Part[TextRecipe]]:
    """What an ablation of ``r`` takes out, one at a time (:mod:`parts`): the model (replaced
    by a constant prediction), word or character n-grams (when it has both), word n-grams
    longer than one, sublinear term frequencies."""
    dummy = "dummy_classifier" if spec.problem == "classification" else "dummy_regressor"
    found: list[Part[TextRecipe]] = []
    if r.family != dummy:
        constant = replace(r, family=dummy, params=dict(MODELS[dummy].params))
        found.append(Part("constant model", constant, "a constant prediction",
                          partial(_refine_model, r, spec), model=True))  # fmt: skip
    longer_words = partial(_longer, r, spec, which="words")
    if r.words and r.chars:
        found.append(Part("no character n-grams", replace(r, chars=0), "word n-grams only",
                          partial(_longer, r, spec, which="chars")))  # fmt: skip
        found.append(Part("no word n-grams", replace(r, words=0), "character n-grams only",
                          longer_words))  # fmt: skip
    if r.words > 1:
        found.append(Part("word unigrams only", replace(r, words=1), "single words",
                          longer_words))  # fmt: skip
    if r.sublinear_tf:
        raw = replace(r, sublinear_tf=False)
        found.append(Part("raw term counts", raw, "raw term counts", nothing))
    return found
