"""The library under the command line: what each ``podium`` command does, as functions.

Every command of :mod:`podium.cli` parses its arguments and prints; the work is here, so a
script does exactly what the command does (``podium.run(config)`` is ``podium run``). This
layer may import every room below it and is imported only by the CLI and by users.

The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
