"""The run viewer: a live page on 127.0.0.1, a self-contained HTML export, and the run data
they (and ``podium show`` / ``podium rerun``) read.

The names are in ``__init__.pyi`` and load on first use: reading a run's data never loads the
graph layout (igraph) or the server.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
