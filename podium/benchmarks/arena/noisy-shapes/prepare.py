"""Prepares the noisy-shapes competition from its generator, ``raw/generate.py``.

The generator draws 7,500 labelled 16 x 16 greyscale images (its process and seed are in
``raw/SOURCE.md``); the first 2,500 drawn are the training images, the other 5,000 the test
images (the draws are independent, so this is a random split). Ids 1..7500 come from a seeded
shuffle of all images, so an id says nothing about the class or the side of the split. Writes

- ``public/train/<id>.png`` and ``public/test/<id>.png``: 8-bit greyscale PNGs, 16 x 16;
- ``public/train.csv``: ``id,label`` for the 2,500 training images;
- ``public/sample_submission.csv``: ``id,label`` for the 5,000 test images, every label ``disk``;
- ``private/test.csv``: ``id,label``, the answers.

Deterministic: the generator and the shuffle are seeded and Pillow's PNG encoder writes no
timestamp, so the same numpy/scipy/Pillow give byte-identical files.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
from PIL import Image

ID_SEED = 7
N_TRAIN = 2500


def prepare(raw: Path, public: Path, private: Path) -> None:
    generator = _generator(Path(raw) / "generate.py")
    images, classes = generator.generate()
    labels = np.asarray(generator.CLASSES)[classes]
    ids = np.random.default_rng(ID_SEED).permutation(len(images)) + 1
    is_train = np.arange(len(images)) < N_TRAIN
    by_id = np.argsort(ids)
    ids, images, labels, is_train = ids[by_id], images[by_id], labels[by_id], is_train[by_id]

    public, private = Path(public), Path(private)
    for folder, chosen in (("train", is_train), ("test", ~is_train)):
        (public / folder).mkdir()
        for image_id, image in zip(ids[chosen], images[chosen], strict=True):
            Image.fromarray(image).save(public / folder / f"{image_id}.png")
    train = pd.DataFrame({"id": ids[is_train], "label": labels[is_train]})
    test = pd.DataFrame({"id": ids[~is_train], "label": labels[~is_train]})
    train.to_csv(public / "train.csv", index=False)
    test.assign(label=generator.CLASSES[0]).to_csv(public / "sample_submission.csv", index=False)
    test.to_csv(private / "test.csv", index=False)


def _generator(path: Path) -> ModuleType:
    """``raw/generate.py`` as a module (raw/ is not a package, and is masked from solutions)."""
    spec = importlib.util.spec_from_file_location("noisy_shapes_generate", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load the generator {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
