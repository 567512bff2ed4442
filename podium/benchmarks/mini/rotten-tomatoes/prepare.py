"""Prepares the mini Rotten Tomatoes competition from ``raw/rotten_tomatoes_corpus.csv.bz2``.

The raw file has one row per text with the columns ``category`` (``fresh``, ``rotten`` or
``plot``), ``filename`` (the Rotten Tomatoes page it came from), ``text`` and ``movie_name``.
Only the reviews are kept (plot summaries are not opinions), each on one line (whitespace runs,
line breaks included, become one space). Writes

- ``public/train.csv``: ``id,review,sentiment`` (1 = fresh, 0 = rotten);
- ``public/test.csv``: ``id,review``;
- ``public/sample_submission.csv``: ``id,sentiment`` with every ``sentiment`` 0.5;
- ``private/test.csv``: ``id,sentiment``, the answers.

The split is by movie: 47 of the 156 movies (about 30% of the reviews) are test movies, and all
of their reviews are in the test set. Within a movie reviews are far from independent (the share
of fresh reviews ranges from 0 to 1 between movies), so a random split would reward recognising
the movie rather than reading the review. For the same reason ``movie_name`` and ``filename`` (which
names the movie) are dropped, and ids come from a shuffle of all reviews, so that neither an id
nor the row order groups a movie's reviews together. Deterministic: seeded, no clock.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20020614
N_MOVIES = 156
N_TEST_MOVIES = 47
SENTIMENT = {"fresh": 1, "rotten": 0}


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = pd.read_csv(
        Path(raw) / "rotten_tomatoes_corpus.csv.bz2", dtype=str, keep_default_na=False
    )
    expected = ["category", "filename", "text", "movie_name"]
    if list(frame.columns) != expected:
        raise ValueError(f"expected the columns {expected}, found {list(frame.columns)}")
    reviews = frame[frame["category"].isin(list(SENTIMENT))].copy()
    # Line breaks and runs of spaces inside a snippet are left over from the HTML pages' line
    # wrapping; as one line per review the CSVs read (and count) as one row per line.
    reviews["text"] = reviews["text"].map(lambda text: " ".join(text.split()))
    # Two reviews appear twice for the same movie: keep one copy of each.
    reviews = reviews.drop_duplicates(["movie_name", "text"]).reset_index(drop=True)
    movies = np.array(sorted(reviews["movie_name"].unique()))
    if len(movies) != N_MOVIES:
        raise ValueError(f"expected reviews of {N_MOVIES} movies, found {len(movies)}")

    rng = np.random.default_rng(SEED)
    test_movies = set(rng.permutation(movies)[:N_TEST_MOVIES])
    reviews = reviews.iloc[rng.permutation(len(reviews))].reset_index(drop=True)
    table = pd.DataFrame(
        {
            "id": np.arange(1, len(reviews) + 1),
            "review": reviews["text"],
            "sentiment": reviews["category"].map(SENTIMENT).astype("int64"),
        }
    )
    in_test = reviews["movie_name"].isin(test_movies).to_numpy()
    train, test = table[~in_test], table[in_test]

    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test[["id", "review"]].to_csv(public / "test.csv", index=False)
    test[["id"]].assign(sentiment=0.5).to_csv(public / "sample_submission.csv", index=False)
    test[["id", "sentiment"]].to_csv(private / "test.csv", index=False)
