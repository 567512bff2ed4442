"""How long the baseline's image scripts take to turn one large JPEG into a row of pixels,
decoding it whole or at a reduced scale (``Image.draft``, which the scripts call since issue
39): plant-pathology-2020's photos are 2048x1365, siim-isic's up to 6000x4000, and the scripts
keep 32x32 or less of each.

Usage:  .venv/bin/python perf/image_decode.py [--width 2048] [--height 1365] [--repeats 20]
"""

from __future__ import annotations

import argparse
import io
import time

import numpy as np
from PIL import Image


def photo(width: int, height: int) -> bytes:
    """A JPEG (quality 90) of smooth random colour, the size of a camera's photo."""
    coarse = np.random.default_rng(0).integers(0, 255, (height // 8, width // 8, 3), np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(coarse).resize((width, height)).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def per_image(data: bytes, draft: bool, repeats: int, size: tuple[int, int]) -> float:
    """CPU milliseconds to open, decode, convert and resize one image as the scripts do."""
    started = time.process_time()
    for _ in range(repeats):
        with Image.open(io.BytesIO(data)) as image:
            if draft:
                image.draft("RGB", size)
            np.asarray(image.convert("RGB").resize(size), dtype=np.float32)
    return (time.process_time() - started) / repeats * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--height", type=int, default=1365)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    data = photo(args.width, args.height)
    for draft in (False, True):
        ms = per_image(data, draft, args.repeats, (32, 32))
        print(f"{'reduced scale' if draft else 'whole':13} {ms:7.1f} CPU ms per "
              f"{args.width}x{args.height} JPEG")  # fmt: skip


if __name__ == "__main__":
    main()
