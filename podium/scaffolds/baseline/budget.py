"""What a baseline script costs before it runs: seconds of one core and bytes of memory.

The recipes size their choices with these figures (issue 39): a first draft must finish in
about ``DRAFT_SECONDS`` of one core (node 1 in a few minutes on 2 cores, whatever the task),
a later node may grow up to ``GROW_SECONDS``, and no script may hold more than
``MEMORY_BYTES`` of model data. The coefficients were measured on scikit-learn 1.x, one thread,
on synthetic tables shaped like MLE-bench's leaf-classification (99 classes), a 2,000-column
table and the taxi-fare table (see perf/baseline_scale.py); they are meant to be right within
a factor of about two, which is all a budget needs.
"""

from __future__ import annotations

import math
from typing import Any

DRAFT_SECONDS = 120.0  # a first draft: about two minutes of one core
GROW_SECONDS = 1800.0
"""Any later node (improve, crossover, debug): half an hour of one core, a quarter of an hour on
2 cores, well within the default node timeout (an hour). Every bundled task's improves stay
below it, except tuning chains the node timeout would cut anyway (ames: 1,000 trees of depth
8 on one-hot columns)."""
MEMORY_BYTES = 2 * 1024**3
"""Model data a script may hold. The kernel's own limit is the sandbox's (at most 8 GiB, half the
machine's memory by default) and operators cannot see it; a quarter of the usual limit leaves
room for pandas' copies, the library code and a second kernel."""
COPIES = 6  # dense copies of the feature matrix a script holds at once (frame, X, folds, model)
OBJECT_BYTES = 80  # one string value in a pandas frame (the object and its pointer)

# Seconds per unit of work for one tree / round / pass, by family (one core).
PER_CELL_BOOSTING = 3e-7  # gradient_boosting: rows x columns x depth / 3, per tree
PER_CELL_HISTOGRAM = 1.5e-8  # hist_gradient_boosting: rows x columns, per tree
PER_BIN_HISTOGRAM = 2e-8  # hist_gradient_boosting: columns x 256 bins x leaves, per tree
PER_SPLIT_FOREST = 8e-8  # random_forest: rows x log2(rows) x candidate columns, per tree
PER_SPLIT_EXTRA = 2.5e-8  # extra_trees: the same, with random thresholds
PER_CELL_TREE = 1.3e-7  # decision_tree: rows x columns x depth
PER_CELL_LINEAR = 2e-7  # logistic regression: rows x columns x classes (about 100 passes)
PER_CELL_RIDGE = 1e-9  # ridge: rows x columns^2
PER_PAIR_NEIGHBOURS = 7e-11  # k-NN: query rows x training rows x columns
PER_CELL_READ = 2e-7  # reading and preparing one value of the training table
PER_CELL_PARSE = 1e-7  # parsing one value of a row a sampled read passes over (2 M x 8: 1.6 s)
PER_DATE = 2e-6  # parsing one date string


def _trees(params: dict[str, Any], default: int) -> int:
    return int(params.get("n_estimators", params.get("max_iter", default)))


def _candidates(params: dict[str, Any], width: int, classifier: bool) -> float:
    """Columns a forest's split looks at: sklearn's sqrt for classifiers, a fraction given."""
    share = params.get("max_features", "sqrt" if classifier else 1.0)
    if share == "sqrt":
        return math.sqrt(width)
    return width * float(share) if isinstance(share, float) else float(min(share, width))


def fit_seconds(family: str, params: dict[str, Any], rows: int, width: int, classes: int) -> float:
    """One fit of ``family`` on ``rows`` x ``width`` model columns, and one prediction of a
    quarter as many rows (a fold's validation). ``classes`` above 2 multiply what fits one
    model per class (boosting) or scores every class at each split (trees)."""
    per_class = classes if classes > 2 else 1
    class_load = 1 + classes / 40  # a split's criterion over many classes
    log_rows = math.log2(max(rows, 2))
    if family == "gradient_boosting":
        depth = float(params.get("max_depth", 3)) / 3
        return PER_CELL_BOOSTING * rows * width * depth * _trees(params, 100) * per_class
    if family == "hist_gradient_boosting":
        leaves = float(params.get("max_leaf_nodes", 31))
        tree = PER_CELL_HISTOGRAM * rows * width + PER_BIN_HISTOGRAM * width * 256 * leaves
        return tree * _trees(params, 100) * per_class
    if family in ("random_forest", "extra_trees"):
        unit = PER_SPLIT_FOREST if family == "random_forest" else PER_SPLIT_EXTRA
        candidates = _candidates(params, width, classes > 0)
        return unit * rows * log_rows * candidates * _trees(params, 100) * class_load
    if family == "decision_tree":
        return PER_CELL_TREE * rows * width * float(params.get("max_depth", 5)) * class_load
    if family == "linear":
        if classes:
            return PER_CELL_LINEAR * rows * width * per_class
        return PER_CELL_RIDGE * rows * width * width
    if family == "knn":
        return PER_PAIR_NEIGHBOURS * (rows / 4) * rows * width
    return 1e-7 * rows  # dummy


def read_seconds(rows: int, columns: int, dates: int, skipped: int = 0) -> float:
    """Reading the training table's ``rows`` rows and deriving their date parts; ``skipped``:
    rows a sampled read parses and drops."""
    return (
        PER_CELL_READ * rows * columns
        + PER_DATE * rows * dates
        + PER_CELL_PARSE * skipped * columns
    )


def rows_in_memory(width: int, strings: int) -> int:
    """Training rows whose model data fits ``MEMORY_BYTES``: ``width`` numbers per row held
    ``COPIES`` times over, plus ``strings`` string values per row in the frame."""
    per_row = 8 * width * COPIES + OBJECT_BYTES * strings
    return MEMORY_BYTES // max(per_row, 1)
