"""The decorator plugins mark their hook implementations with."""

import pluggy

hookimpl = pluggy.HookimplMarker("podium")
