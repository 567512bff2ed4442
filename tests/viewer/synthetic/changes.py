"""How a node's solution comes from its parents': a :class:`Proposal` (a program, its latent
quality, its plan) drafted, improved by one atomic change (a hyperparameter, a feature in or
out, the folds, the threshold), crossed over (one parent's features, the other's model),
debugged (the failing line fixed, nothing else) or broken (a bug a model could have written
into it); and :func:`metric_value`, the metric a solution of a given quality prints.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from tests.viewer.synthetic.programs import BUG_WEIGHTS, FAMILIES, FEATURES, Bug, Family, Program
from tests.viewer.synthetic.task import TaskText


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
