"""The run viewer: a live page on 127.0.0.1, a self-contained HTML export, and the run data
they (and ``podium show`` / ``podium rerun``) read."""

from podium.viewer.html_file import export_html
from podium.viewer.run_data import RunView, open_run, run_is_live
from podium.viewer.server import make_server, serve

__all__ = ["RunView", "export_html", "make_server", "open_run", "run_is_live", "serve"]
