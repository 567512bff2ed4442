"""The agent: the search loop, operators (LLM, agentic and baseline), prompts, review,
strategies, the final choice. What it writes to disk is spelled in :mod:`podium.formats`.

The names are in ``__init__.pyi`` and load on first use, so naming one does not load the room.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
