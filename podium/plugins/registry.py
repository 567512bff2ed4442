"""Name lookups over everything the registered plugins contribute.

Every lookup of an unknown name fails with one line, its hint the closest name (difflib) and
the valid choices; two plugins contributing the same name is an error naming both, so a choice
is never silently shadowed.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from podium.errors import ConfigError, PluginError, UnknownNameError, did_you_mean
from podium.interfaces import Backend, Benchmark, Sandbox, Strategy
from podium.plugins.manager import PodiumPluginManager
from podium.plugins.specs import (
    BackendSpec,
    BenchmarkSpec,
    OperatorSetSpec,
    SandboxSpec,
    StrategySpec,
)
from podium.redact import register_url_credentials, secret_env

S = TypeVar("S", BackendSpec, StrategySpec, SandboxSpec, BenchmarkSpec, OperatorSetSpec)


@dataclass(frozen=True)
class Entry(Generic[S]):
    spec: S
    origin: str


KINDS: dict[str, tuple[str, Any]] = {
    "backend": ("podium_backends", BackendSpec),
    "strategy": ("podium_strategies", StrategySpec),
    "sandbox": ("podium_sandboxes", SandboxSpec),
    "benchmark": ("podium_benchmarks", BenchmarkSpec),
    "operators": ("podium_operator_sets", OperatorSetSpec),
}


class Registry:
    def __init__(self, pm: PodiumPluginManager) -> None:
        self.pm = pm
        self.backends: dict[str, Entry[BackendSpec]] = self._collect("backend")
        self.strategies: dict[str, Entry[StrategySpec]] = self._collect("strategy")
        self.sandboxes: dict[str, Entry[SandboxSpec]] = self._collect("sandbox")
        self.benchmarks: dict[str, Entry[BenchmarkSpec]] = self._collect("benchmark")
        self.operator_sets: dict[str, Entry[OperatorSetSpec]] = self._collect("operators")

    def _collect(self, kind: str) -> dict[str, Any]:
        hook_name, spec_type = KINDS[kind]
        found: dict[str, Entry[Any]] = {}
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
            origin = self.pm.origin_of(impl.plugin_name)
            specs: list[Any] = impl.function() or []
            for spec in specs:
                if not isinstance(spec, spec_type):
                    raise PluginError(
                        f"plugin {impl.plugin_name} ({origin}): {hook_name} returned "
                        f"{type(spec).__name__}, expected {spec_type.__name__}",
                        hint="the plugin is broken: fix it, or leave it out (docs/plugins.md)",
                    )
                name: str = spec.name
                if name in found:
                    raise PluginError(
                        f"{kind} {name!r} is defined twice: by {found[name].origin} "
                        f"and by {origin}",
                        hint="disable one of the plugins",
                    )
                found[name] = Entry(spec, origin)
        return dict(sorted(found.items()))

    # --- lookups --------------------------------------------------------------------------

    def backend(self, model: str, options: Mapping[str, Any]) -> Backend:
        """The backend for ``model``. Whatever credentials it may read are registered as
        secrets first (see :func:`register_backend_secrets`), builtin or plugin alike."""
        provider, arg = split_model_name(model, self.backends)
        entry = self.backends.get(provider)
        if entry is None:
            raise self._unknown_backend(model, provider)
        register_backend_secrets(entry.spec, options)
        return entry.spec.create(arg, options)

    def _unknown_backend(self, model: str, provider: str) -> UnknownNameError:
        """An unknown provider names the closest one; a model that stands for operators
        (``baseline``) asked to answer calls (``--review-model``) says that it cannot."""
        chat = ", ".join(e.spec.usage or n for n, e in self.backends.items())
        if self.model_operator_set(model) is not None:
            return UnknownNameError(
                f"{model!r} is not a chat model: it writes code without one, so it answers no "
                "model calls (it can only be the --model)",
                hint=f"give a chat model: {chat}",
            )
        names = [
            *self.backends,
            *(e.spec.model for e in self.operator_sets.values() if e.spec.model),
        ]
        close = difflib.get_close_matches(provider, names, n=1, cutoff=0.6)
        guess = f"did you mean {close[0]}{model[len(provider) :]}? " if close else ""
        return UnknownNameError(
            f"unknown model provider {provider!r}", hint=f"{guess}available: {self.model_choices()}"
        )

    def strategy(self, name: str) -> StrategySpec:
        """A registered strategy, or ``package.module:Class`` imported directly."""
        if ":" in name and name not in self.strategies:
            return strategy_from_path(name)
        return _lookup("strategy", name, self.strategies)

    def sandbox(self, name: str) -> SandboxSpec:
        """The sandbox ``name``; its ``create`` takes the ``[sandbox]`` table as the config holds
        it (``cfg.sandbox.model_dump()``): see :func:`create_sandbox`."""
        spec = _lookup("sandbox", name, self.sandboxes)
        if spec.params is None:
            return spec
        return replace(spec, create=partial(create_sandbox, spec))

    def operator_set(self, name: str) -> OperatorSetSpec:
        return _lookup("operator set", name, self.operator_sets)

    def model_operator_set(self, model: str) -> OperatorSetSpec | None:
        """The operator set a model name stands for (``baseline``), if any."""
        return next((e.spec for e in self.operator_sets.values() if e.spec.model == model), None)

    def model_choices(self) -> str:
        """Every valid ``--model`` form, for error hints."""
        forms = [e.spec.model for e in self.operator_sets.values() if e.spec.model]
        forms += [e.spec.usage or n for n, e in self.backends.items()]
        return ", ".join(forms)

    def benchmark(self, name: str) -> Benchmark:
        return _lookup("benchmark", name, self.benchmarks).create()

    def listing(self) -> list[tuple[str, str, str, str]]:
        """(kind, name, origin, description) for everything registered."""
        rows: list[tuple[str, str, str, str]] = []
        tables: list[tuple[str, Mapping[str, Entry[Any]]]] = [
            ("backend", self.backends),
            ("strategy", self.strategies),
            ("sandbox", self.sandboxes),
            ("benchmark", self.benchmarks),
            ("operators", self.operator_sets),
        ]
        for kind, table in tables:
            for name, entry in table.items():
                usage = getattr(entry.spec, "usage", "") or name
                shown = usage if kind == "backend" else name
                rows.append((kind, shown, entry.origin, entry.spec.description))
        return rows


def strategy_from_path(path: str) -> StrategySpec:
    """``my_pkg.strategies:MyStrategy``: a Strategy subclass, its ``Params`` (a pydantic model
    for the ``search.*`` keys) if it has one; created with ``Class(params)`` or ``Class()``."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(
            f"cannot import strategy module {module_name!r}: {exc}",
            hint="install it, put it on PYTHONPATH, or load it with -p",
        ) from None
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Strategy)):
        raise PluginError(
            f"{path} is not a Strategy subclass (podium.interfaces.Strategy)",
            hint="give module:Class of a Strategy subclass (see docs/strategies.md)",
        )
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and issubclass(params, BaseModel)):
        params = None
    factory: Any = cls  # a plugin's own constructor: Class(params) or Class()
    return StrategySpec(
        name=path,
        create=(lambda p: factory(p)) if params else (lambda _: factory()),
        params=params,
        description=(cls.__doc__ or "").strip().split("\n")[0],
    )


def create_sandbox(spec: SandboxSpec, table: Mapping[str, Any]) -> Sandbox:
    """``spec``'s sandbox for a ``[sandbox]`` table (``name`` and the sandbox's keys). A spec
    with ``params`` gets the keys validated into that model, a bad one failing in one line that
    names it (the config checked them already, unless the table was made for another sandbox:
    ``podium rerun --sandbox``); one without gets the table itself, as before."""
    if spec.params is None:
        return spec.create(table)
    try:
        params = spec.params.model_validate({k: v for k, v in table.items() if k != "name"})
    except ValidationError as exc:
        raise _bad_params(exc, spec.name, spec.params) from None
    return spec.create(params)


def _bad_params(exc: ValidationError, sandbox: str, model: type[BaseModel]) -> ConfigError:
    """``sandbox.memroy: sandbox 'bwrap' takes no such key`` (did you mean memory? ...)."""
    err = exc.errors()[0]
    key = "sandbox." + ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return ConfigError(
            f"{key}: sandbox {sandbox!r} takes no such key",
            hint=did_you_mean(str(err["loc"][-1]), model.model_fields, "its keys"),
        )
    msg = str(err["msg"]).removeprefix("Value error, ")
    keys = ", ".join(model.model_fields)
    return ConfigError(f"{key}: {msg}", hint=f"the keys of sandbox {sandbox!r}: {keys}")


def register_backend_secrets(spec: BackendSpec, options: Mapping[str, Any]) -> None:
    """Register, by value, every credential a backend is given: the variable the config names
    (``model.api_key_env``, whatever it is called), the variables the spec declares, and the
    credentials of a base URL (``https://user:key@host/v1``). Every backend is built here, so
    those are masked for plugins too; a plugin reading another variable must declare it in
    ``BackendSpec.secret_env`` or read it with :func:`podium.redact.secret_env` (a variable
    with a secret-looking name is masked anyway)."""
    for name in (options.get("api_key_env"), *spec.secret_env):
        if isinstance(name, str):
            secret_env(name)
    base_url = options.get("base_url")
    register_url_credentials(base_url if isinstance(base_url, str) else None)


def split_model_name(model: str, known: Mapping[str, object]) -> tuple[str, str]:
    """``openai/gpt-4o`` → (openai, gpt-4o); ``scripted:f.jsonl`` → (scripted, f.jsonl)."""
    if model in known:
        return model, ""
    cuts = [i for i in (model.find("/"), model.find(":")) if i > 0]
    if not cuts:
        return model, ""
    cut = min(cuts)
    return model[:cut], model[cut + 1 :]


def _lookup(kind: str, name: str, table: Mapping[str, Entry[S]]) -> S:
    entry = table.get(name)
    if entry is None:
        raise _unknown(kind, name, table)
    return entry.spec


def _unknown(kind: str, name: str, table: Mapping[str, Entry[Any]]) -> UnknownNameError:
    """``unknown strategy 'mtcs'`` with the hint ``did you mean mcts? available: ...``."""
    if not table:
        return UnknownNameError(f"unknown {kind} {name!r}", hint="available: (none registered)")
    return UnknownNameError(f"unknown {kind} {name!r}", hint=did_you_mean(name, table))
