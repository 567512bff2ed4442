"""Every file Podium writes and reads back, with no agent logic: a run dir's names, readers
and writers (``run_files``, ``RunDir``), the journal, the summary record, an agentic node's
notebook (and the model's words made inert in it), and a sweep dir (its grid and manifest).

The agent writes these; the viewer, the sweeps, the reports and the CLI read them; none of
them needs the agent room for it. The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
