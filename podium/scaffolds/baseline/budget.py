"""What a baseline script costs before it runs: seconds of one core and bytes of memory.

The recipes size their choices with these figures (issue 39): a first draft must finish in
about ``DRAFT_SECONDS`` of one core (node 1 in a few minutes on 2 cores, whatever the task),
a later node may grow up to ``GROW_SECONDS``, and no script may hold more than
``MEMORY_BYTES`` of model data. The coefficients were measured on scikit-learn 1.x, one thread,
on synthetic tables shaped like MLE-bench's leaf-classification (99 classes), a 2,000-column
table and the taxi-fare table, and for the other kinds on TF-IDF corpora of 20,000-100,000
documents, 32x32 RGB and 8x8 greyscale images and monthly series (see perf/baseline_scale.py
and perf/README.md); they are meant to be right within a factor of about two (over rather
than under), which is all a budget needs.
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


# --- text: TF-IDF n-grams and a linear model ---------------------------------------------------

DOCUMENT_CHARS = 500  # characters per document when the spec does not say (a review, a post)
PER_CHAR_WORDS = 2e-7  # tokenising and counting one character of text, per word n-gram length
PER_CHAR_CHARS = 2.5e-7  # ... per character n-gram length (char_wb 2..n: n - 1 lengths)
GRAMS_WORDS = 0.18  # n-grams (matrix entries) per character of text, per word n-gram length
GRAMS_CHARS = 0.4  # ... per character n-gram length
PER_GRAM: dict[str, float] = {  # one fit, per n-gram entry of the TF-IDF matrix (one class)
    "logistic": 1e-6, "linear_svm": 1e-6, "naive_bayes": 3e-8, "ridge": 3e-7, "linear_svr": 3e-7,
}  # fmt: skip
PER_TERM_CLASS = 2e-6  # a multi-class linear model's passes over its coefficients, per term
VOCABULARY_SHARE = 0.1  # distinct terms kept (min_df >= 2) per n-gram entry, at most
GRAM_BYTES = 120  # counting one n-gram: index arrays, the vocabulary's share, the CSR copies
CHAR_BYTES = 4  # one character of text: the frame's string and the joined document


def text_grams(chars: int, words: int, lengths: int) -> float:
    """TF-IDF matrix entries of ``chars`` characters of text: word n-grams up to ``words``,
    ``lengths`` character n-gram lengths."""
    return chars * (GRAMS_WORDS * words + GRAMS_CHARS * lengths)


def text_seconds(
    family: str, chars: int, words: int, lengths: int, vocabulary: float, classes: int
) -> float:
    """Vectorising ``chars`` characters and one fit of ``family`` on the matrix, whose
    ``vocabulary`` terms a multi-class model carries once per class."""
    vectorise = chars * (PER_CHAR_WORDS * words + PER_CHAR_CHARS * lengths)
    per_class = classes if classes > 2 else 1
    fit = PER_GRAM.get(family, 0.0) * text_grams(chars, words, lengths) * per_class
    if classes > 2 and family != "naive_bayes":
        fit += PER_TERM_CLASS * vocabulary * classes
    return vectorise + fit


def text_bytes(chars: int, words: int, lengths: int) -> float:
    """Memory of vectorising ``chars`` characters of text (the peak: every n-gram is counted
    before ``min_df`` or ``max_features`` prune the vocabulary)."""
    return chars * CHAR_BYTES + text_grams(chars, words, lengths) * GRAM_BYTES


# --- images: pixels, PCA and a classifier ------------------------------------------------------

PER_IMAGE_READ = 2e-4  # opening and decoding one image (from a folder or a zip)
PER_PIXEL_READ = 4e-8  # converting and resizing, per pixel value
PER_PIXEL_PCA = 3e-9  # PCA: rows x pixels x components
PER_PAIR_SVC = 1.5e-9  # an RBF SVM: rows^2 x columns (x 4 with Platt-scaled probabilities)
PER_MAC_MLP = 5e-11  # an MLP: rows x weights x passes
PIXEL_BYTES = 20  # one pixel value held: float32, in about five copies (list, stack, folds)


PER_STORED_PIXEL = 2.8e-9
"""Decoding one pixel of an image as stored, at the reduced scale the scripts ask of a JPEG
(``Image.draft``; perf/image_decode.py: a 2048x1365 photo 7.7 ms, 6000x4000 67 ms)."""


def image_read_seconds(images: int, pixels: int, stored: int = 0) -> float:
    """Loading ``images`` images of ``stored`` pixels each (as stored; 0: small) as rows of
    ``pixels`` values."""
    return images * (PER_IMAGE_READ + PER_PIXEL_READ * pixels + PER_STORED_PIXEL * stored)


def image_fit_seconds(
    family: str, params: dict[str, Any], rows: int, pixels: int, pca: int, classes: int
) -> float:
    """One fit of an image pipeline (PCA to ``pca`` components when set, then ``family``) on
    ``rows`` images of ``pixels`` values, and the prediction of a quarter as many."""
    width = min(pca, pixels) if pca else pixels
    reduce = PER_PIXEL_PCA * rows * pixels * width if pca else 0.0
    if family == "svc":
        probability = 4 if params.get("probability") else 1
        return reduce + PER_PAIR_SVC * rows * rows * width * probability
    if family == "mlp":
        hidden = int(params.get("hidden_layer_sizes", [100])[0])
        weights = (width + max(classes, 2)) * hidden
        return reduce + PER_MAC_MLP * rows * weights * int(params.get("max_iter", 200))
    tabular = {"logistic": "linear"}.get(family, family)
    return reduce + fit_seconds(tabular, params, rows, width, max(classes, 2))


def image_bytes(images: int, pixels: int) -> float:
    return images * pixels * PIXEL_BYTES


# --- series: regressions on lag features ----------------------------------------------------

PER_DESIGN_CALL = 3e-6  # building one feature column for every series at one origin and horizon
PER_DESIGN_CELL = 2e-8  # ... per value
DESIGN_BYTES = 24  # one design value: the list of blocks, their stack and the model's copy
SERIES_FITS = 0.4
"""A series model's fit, as a share of the tabular coefficients' estimate: regressions on a
few dozen dense lag columns (measured, 300 monthly series: forests 69 CPU s for 236
estimated, histogram boosting 11 for 38)."""


def series_seconds(
    family: str, params: dict[str, Any], calls: int, rows: int, columns: int, models: int
) -> float:
    """Building ``rows`` x ``columns`` design values in ``calls`` (origin, horizon) steps and
    fitting ``models`` models of ``family`` on them (one per horizon, or one)."""
    design = calls * columns * PER_DESIGN_CALL + rows * columns * PER_DESIGN_CELL
    each = rows // max(models, 1)
    if family == "ridge":
        return design + models * fit_seconds("linear", {}, each, columns, 0)
    if family == "random_forest":
        each = int(each * float(params.get("max_samples", 1.0)))
    return design + SERIES_FITS * models * fit_seconds(family, params, each, columns, 0)


def sample_line(rows: int) -> str:
    """The line a sized image, text or series script samples its training table with, right
    after reading it (the tabular script writes the same line)."""
    return (
        f"train = train.sample(n=min(len(train), {rows}), random_state=0)  # fit within the budget"
    )
