"""What plugins hand to Podium through the ``podium_*`` registration hooks.

Each spec names one thing a user can pick (``--model``, ``--strategy``, ``--sandbox``, a task
prefix, an operator set) and carries a factory for it. Specs are plain frozen dataclasses so a
plugin needs nothing but this module and :mod:`podium.interfaces` to contribute one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from podium.errors import PluginError
from podium.interfaces import Backend, Benchmark, OperatorSet, Sandbox, Strategy


@dataclass(frozen=True)
class BackendSpec:
    """A model provider. Model names it serves: ``name``, ``name/<model>`` or ``name:<arg>``.

    ``create(arg, options)`` gets what follows the separator (the provider's model id, or a file
    for ``scripted:``) and the ``model`` config section (base_url, timeouts...).

    ``secret_env``: the environment variables holding this backend's credentials. Their values
    are registered as secrets (:mod:`podium.redact`) before ``create`` runs, so they are masked
    in everything Podium writes or prints, whatever the variables are called. (A backend may
    instead read its key with :func:`podium.redact.secret_env`, which does the same.)
    """

    name: str
    create: Callable[[str, Mapping[str, Any]], Backend]
    description: str = ""
    usage: str = ""
    secret_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class StrategySpec:
    """A search policy. ``params`` validates the ``search.*`` keys it reads (unknown keys fail)."""

    name: str
    create: Callable[[Any], Strategy]
    params: type[BaseModel] | None = None
    description: str = ""


@dataclass(frozen=True)
class SandboxSpec:
    """Where solutions run. ``params``: the pydantic model of the ``[sandbox]`` keys it takes
    (use ``extra="forbid"``; ``name`` picks the sandbox and is no key of it): the config
    validates the table against it (an unknown key fails, naming the closest), records it with
    its defaults, and ``create(params)`` gets an instance. Without one, ``create(options)`` gets
    the table as a dict, as before: ``name`` and the builtin sandboxes' keys
    (``podium.sandbox.options.SandboxParams``), validated as theirs.
    """

    name: str
    create: Callable[[Any], Sandbox]
    isolated: bool
    description: str = ""
    params: type[BaseModel] | None = None

    def __post_init__(self) -> None:
        if self.params is not None and "name" in self.params.model_fields:
            raise PluginError(
                f"sandbox {self.name!r}: its params declare a key 'name', which is the "
                "config's (sandbox.name picks the sandbox)",
                hint="rename that field",
            )


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    create: Callable[[], Benchmark]
    description: str = ""


@dataclass(frozen=True)
class OperatorSetSpec:
    """An implementation of draft / improve / debug. ``create`` gets the operator options.

    ``model``: a ``--model`` name that selects this operator set *instead of* a chat backend
    (the builtin ``baseline`` writes its solutions itself). Such runs have no review model
    unless one is named, and are judged by the metric line and the hard checks alone.
    """

    name: str
    create: Callable[[Mapping[str, Any]], OperatorSet]
    description: str = ""
    model: str | None = None
