"""Reports of sweeps: runs on disk → ``summary.json``, ``summary.md``, PNG plots and a
disclosure card (what ``podium compare`` writes).

Modules, one job each: ``runs`` (directories → runs and their grid), ``record`` (one run dir),
``stats`` (mean ± SEM, pass@k, cluster bootstrap), ``aggregate`` (per strategy and model, per
split), ``paired`` (against a baseline strategy), ``plots``, ``disclosure``, ``markdown``, and
``report`` (the entry point).
The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
