"""The lines of a generated script that read a table task's files and write its submission.

Every kind's codegen reads ``train`` and ``test`` with :func:`read_lines` and builds
``submission`` with :func:`submission_lines`, so the formats ``tables`` knows and the sample
layouts ``analysis`` finds are handled once: a forecast without a test table makes its ``test``
of future dates here, several targets (regressions, or independent 0/1 labels) get ``TARGET``
as a list and one model per target (:func:`target_source`, :func:`per_target_source`), and
one-hot class columns become one class target (:func:`onehot_line`). A task of comma CSVs
with an ``id, target`` sample (``layout`` None) gets exactly the lines it always had.
"""

from __future__ import annotations

from typing import Protocol

from podium.scaffolds.baseline.budget import sample_line
from podium.scaffolds.baseline.specs import Layout, TableFormat
from podium.scaffolds.baseline.tables import RowSample, read_source

KEPT = "submitted"  # the frame of the sample's columns copied from the test table, as read


class TableTask(Protocol):
    """What the reading lines need of a spec (tabular, text and series specs have it)."""

    @property
    def train_file(self) -> str: ...
    @property
    def test_file(self) -> str: ...
    @property
    def train_format(self) -> TableFormat: ...
    @property
    def test_format(self) -> TableFormat: ...
    @property
    def layout(self) -> Layout | None: ...
    @property
    def target(self) -> str: ...


def read_lines(spec: TableTask, sample: RowSample | None = None) -> str:
    """``train = ...`` and ``test = ...``; with a layout, also the target as 0/1 (a True/False
    one) and the keys the submission copies, taken before any feature code changes them. With a
    ``sample``, ``train`` is ``sample.keep`` rows drawn while the file is read in chunks, so the
    script never holds the whole file; ``test`` is read whole (every row is predicted)."""
    layout, target = spec.layout, spec.target
    lines = [f"train = {read_source(spec.train_file, spec.train_format, sample)}"]
    if sample is not None:
        lines[0] += f"  # {sample.chunk} rows at a time"
        lines.append(sample_line(sample.keep))
    if layout is not None and layout.future:
        lines += _future_lines(layout.keys[0], layout.future)
    else:
        lines.append(f"test = {read_source(spec.test_file, spec.test_format)}")
    if layout is not None:
        if layout.boolean:
            lines.append(f"train[{target!r}] = train[{target!r}].astype(int)  # True/False: 1/0")
        if layout.onehot:
            lines.append(onehot_line(target, layout.outputs))
        lines.append(
            f"{KEPT} = test[{list(layout.keys)!r}].reset_index(drop=True)  # copied to the "
            "submission"
        )
    return "\n".join(lines)


def _future_lines(date: str, steps: int) -> list[str]:
    """``test``: the dates a forecast without a test table predicts, after the last training date
    at the data's typical step (months, quarters and years by the calendar)."""
    calendar = "((1, 30.4), (3, 91.3), (12, 365.2))"
    return [
        f"when = pd.Series(pd.to_datetime(train[{date!r}]).drop_duplicates().sort_values().values)",
        "step = when.diff().median()  # the data's typical step",
        f"months = next((m for m, days in {calendar} if abs(step.days - days) <= 3 * m), 0)",
        "future = [when.iloc[-1] + (pd.DateOffset(months=months * h) if months else step * h)",
        f"          for h in range(1, {steps + 1})]",
        f"test = pd.DataFrame({{{date!r}: future}})  # the {steps} steps to forecast",
    ]


def target_source(target: str, targets: tuple[str, ...]) -> str:
    """The value of ``TARGET``: the target's name, or the list of several targets' names (then
    ``train[TARGET]`` is a frame with one column per target)."""
    return repr(list(targets)) if targets else repr(target)


PER_LABEL = '''from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.dummy import DummyClassifier


class PerLabel(BaseEstimator, ClassifierMixin):
    """One copy of ``model`` per 0/1 label column; a column with one value in the rows fitted
    (a rare label, in a fold) gets a constant: no model learns from one class."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        self.estimators_ = []
        for column in np.asarray(y).T:
            model = self.model if len(np.unique(column)) > 1 else DummyClassifier(strategy="prior")
            self.estimators_.append(clone(model).fit(X, column))
        self.classes_ = [e.classes_ for e in self.estimators_]
        return self

    def predict_proba(self, X):
        return [e.predict_proba(X) for e in self.estimators_]

    def predict(self, X):
        return np.column_stack([e.predict(X) for e in self.estimators_])'''


def per_target_source(targets: tuple[str, ...], classification: bool = False) -> str:
    """After the line that builds ``model``: one copy of it per target (several targets: a
    regressor, or ``PerLabel``'s classifier of each 0/1 label), with the newline before it; ""
    for one target. Each copy fits one target column, so a step that reads the target (a column
    selection) sees one column as it does on a single-target task."""
    if not targets:
        return ""
    if classification:
        wrapped = f"model = PerLabel(model)  # one model per label: {', '.join(targets)}"
        return f"\n\n\n{PER_LABEL}\n\n\n{wrapped}"
    return (
        "\nfrom sklearn.multioutput import MultiOutputRegressor\n\n"
        f"model = MultiOutputRegressor(model)  # one model per target: {', '.join(targets)}"
    )


def onehot_line(target: str, columns: tuple[str, ...]) -> str:
    """The line deriving a class target from one-hot training columns (one 1 per row): the
    name of the column holding the 1, so the class probabilities fill those columns."""
    return (
        f"train[{target!r}] = train[{list(columns)!r}].idxmax(axis=1)  # one-hot columns: "
        "the class of each row"
    )


def submission_lines(layout: Layout | None, prediction: str, values: str, standard: str) -> str:
    """The lines that build ``submission`` from ``values`` (the predictions' expression):
    ``standard`` without a layout, else the kept keys and the predictions in the sample's
    column order (one probability column per class, one column per target, or the one
    prediction column)."""
    if layout is None:
        return standard
    if prediction == "classes":
        built = f"submission = pd.concat([{KEPT}, {values}], axis=1)"
    elif len(layout.outputs) > 1:
        frame = f"pd.DataFrame(np.asarray({values}), columns={list(layout.outputs)!r})"
        built = f"submission = pd.concat([{KEPT}, {frame}], axis=1)"
    else:
        built = f"submission = {KEPT}.assign(**{{{layout.outputs[0]!r}: np.asarray({values})}})"
    return f"{built}\nsubmission = submission[{list(layout.columns)!r}]  # the sample's order"
