"""Podium: build and evaluate ML-engineering agents on Kaggle-style competitions.

The Python API mirrors the CLI: ``podium.run(config)`` does what ``podium run`` does and
``podium.resume(run_dir)`` what ``podium resume`` does. Heavy modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from podium.api import RunConfig, RunResult, load_config, resume, run

__all__ = ["RunConfig", "RunResult", "__version__", "load_config", "resume", "run"]


def __getattr__(name: str) -> Any:
    """The front door (:mod:`podium.api`) loads on first use, so importing the vocabulary
    (``podium.records``, ``podium.interfaces``) stays light and never loads the layers above."""
    if name in __all__:
        import podium.api

        return getattr(podium.api, name)
    raise AttributeError(f"module 'podium' has no attribute {name!r}")
