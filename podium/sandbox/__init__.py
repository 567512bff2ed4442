"""Sandboxes: run a solution in a fresh Jupyter kernel, isolated and limited where possible.

``bwrap`` (bubblewrap + cgroups + seccomp, as an unprivileged uid) is the real one; ``local``
isolates nothing; ``container`` is for inside MLE-bench's container, which is then the isolation
boundary (limits, no namespaces); ``auto`` picks bwrap when it works here. ``KernelSandbox`` is
the base for a sandbox of one's own: say how to launch a kernel for a slot and its ipc
directory, and get the warm pool, the relay capping every message, limits on output and time,
and the race-free hand-over of outputs for free.

The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
