"""What the solutions' interpreter can import, described the same way on every identical run.

The prompts list these packages so the model writes code that runs. The probe runs the
interpreter itself (it may be another environment than Podium's own) and reports versions of a
fixed list of data-science distributions, sorted, so the text is deterministic.
"""

from __future__ import annotations

import asyncio
import json

from podium.errors import SandboxError, SandboxUnavailable
from podium.records import EnvironmentInfo

NOTABLE_DISTRIBUTIONS = (
    "numpy", "pandas", "scipy", "scikit-learn", "lightgbm", "xgboost", "catboost",
    "statsmodels", "torch", "torchvision", "torchaudio", "tensorflow", "keras", "jax",
    "transformers", "timm", "sentence-transformers", "optuna", "polars", "pyarrow",
    "matplotlib", "seaborn", "pillow", "opencv-python", "opencv-python-headless",
    "scikit-image", "nltk", "spacy", "gensim", "tokenizers", "datasets",
)  # fmt: skip

_PROBE = """
import importlib.metadata as md, json, platform, sys
found = {}
for name in json.loads(sys.argv[1]):
    try:
        found[name] = md.version(name)
    except md.PackageNotFoundError:
        pass
try:
    import ipykernel
except ImportError:
    sys.exit(3)
print(json.dumps({"python_version": platform.python_version(), "packages": found}))
"""
NO_IPYKERNEL = 3


async def probe_environment(python: str) -> EnvironmentInfo:
    try:
        proc = await asyncio.create_subprocess_exec(
            python, "-c", _PROBE, json.dumps(NOTABLE_DISTRIBUTIONS),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
    except OSError as exc:
        raise SandboxUnavailable(
            f"cannot run the solutions' interpreter {python}: {exc.strerror}",
            hint="set sandbox.python to a Python with ipykernel, or leave it unset",
        ) from None
    out, err = await proc.communicate()
    if proc.returncode == NO_IPYKERNEL:
        raise SandboxUnavailable(
            f"the solutions' interpreter {python} cannot import ipykernel",
            hint=f"{python} -m pip install ipykernel",
        )
    if proc.returncode != 0:
        raise SandboxError(f"cannot run the solutions' interpreter {python}: {err.decode()[-300:]}")
    return EnvironmentInfo.model_validate_json(out)
