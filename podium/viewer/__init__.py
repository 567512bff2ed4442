"""The run viewer: a live page on 127.0.0.1, a self-contained HTML export, and the run data
they (and ``podium show`` / ``podium rerun``) read."""

from podium.viewer.run_data import RunView, open_run, run_is_live

__all__ = ["RunView", "open_run", "run_is_live"]
