"""Podium: build and evaluate ML-engineering agents on Kaggle-style competitions.

The Python API mirrors the CLI: ``podium.run(config)`` does what ``podium run`` does and
``podium.resume(run_dir)`` what ``podium resume`` does. Heavy modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from podium.api import RunResult, resume, run
    from podium.config import RunConfig, load_config

__all__ = ["RunConfig", "RunResult", "__version__", "load_config", "resume", "run"]


def __getattr__(name: str) -> Any:
    if name in ("run", "resume", "RunResult"):
        from podium import api

        return getattr(api, name)
    if name in ("RunConfig", "load_config"):
        from podium import config

        return getattr(config, name)
    raise AttributeError(f"module 'podium' has no attribute {name!r}")
