"""Prepares the mini MNIST competition from the vendored ``raw/mnist_5k.csv.gz``.

The raw file has no header: 5,000 rows of 785 integers, the 28 x 28 grey levels (0-255) of one
digit in row-major order followed by its label. The rows are sorted by label (500 of each digit),
so ids are given after a seeded shuffle: they say nothing about the label. Writes

- ``public/train/<id>.png`` and ``public/test/<id>.png``: each digit as an 8-bit greyscale PNG,
  28 x 28, white ink on black as in MNIST;
- ``public/train.csv``: ``id,label`` for the 4,000 training images;
- ``public/sample_submission.csv``: ``id,label`` for the 1,000 test images, every label 0;
- ``private/test.csv``: ``id,label``, the answers.

The split is stratified (400 training and 100 test images of each digit). Deterministic: the
shuffle is seeded and Pillow's PNG encoder writes no timestamp, so the same raw file and the same
Pillow/zlib give byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

SEED = 19980801
SIDE = 28
N_CLASSES = 10
PER_CLASS = 500
TRAIN_PER_CLASS = 400


def prepare(raw: Path, public: Path, private: Path) -> None:
    table = pd.read_csv(Path(raw) / "mnist_5k.csv.gz", header=None, dtype="int64").to_numpy()
    if table.shape != (N_CLASSES * PER_CLASS, SIDE * SIDE + 1):
        raise ValueError(f"expected 5000 rows of 785 values, found {table.shape}")
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > 255:
        raise ValueError("pixel values must lie in 0..255")
    if list(np.bincount(labels, minlength=N_CLASSES)) != [PER_CLASS] * N_CLASSES:
        raise ValueError(f"expected {PER_CLASS} images of each digit 0-9")

    rng = np.random.default_rng(SEED)
    # Within each digit, the first 400 in a shuffled order train and the other 100 test.
    shuffled = rng.permutation(len(table))
    rank_in_class = np.empty(len(table), dtype=np.int64)
    rank_in_class[shuffled] = (
        pd.Series(labels[shuffled]).groupby(labels[shuffled]).cumcount().to_numpy()
    )
    is_train = rank_in_class < TRAIN_PER_CLASS
    # Ids come from a second, independent shuffle, so that neither the label nor the side of the
    # split can be read from an id; the files are listed in id order.
    ids = rng.permutation(len(table)) + 1
    by_id = np.argsort(ids)
    ids, pixels, labels, is_train = ids[by_id], pixels[by_id], labels[by_id], is_train[by_id]
    pixels = pixels.astype(np.uint8)

    public, private = Path(public), Path(private)
    for folder, chosen in (("train", is_train), ("test", ~is_train)):
        (public / folder).mkdir()
        for image_id, image in zip(ids[chosen], pixels[chosen], strict=True):
            Image.fromarray(image.reshape(SIDE, SIDE)).save(public / folder / f"{image_id}.png")

    train = pd.DataFrame({"id": ids[is_train], "label": labels[is_train]})
    test = pd.DataFrame({"id": ids[~is_train], "label": labels[~is_train]})
    train.to_csv(public / "train.csv", index=False)
    test.assign(label=0).to_csv(public / "sample_submission.csv", index=False)
    test.to_csv(private / "test.csv", index=False)
