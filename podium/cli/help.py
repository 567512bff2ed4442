"""``--help`` that shows what a user may give: the config's defaults and the registry's names.

The run options default to None on the command line (a flag not given leaves the value to the
preset, the config file and the environment), so their help states the config's own default,
read from :class:`podium.api.config.RunConfig`. The names a registry knows (strategies, sandboxes,
models, benchmarks) come from plugins. Both are filled in by :class:`ChoicesCommand` only when
the help is printed (the help texts hold a :data:`LATER` mark until then), so neither an
ordinary command line nor ``podium --help`` pays for the config's models or the registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand

from podium.errors import PodiumError

if TYPE_CHECKING:
    from podium.plugins import Registry

# ``{{default of budget.steps or no limit}}`` in a help text: the config's default, filled in
# when the help is printed; ``{{presets}}``: the config's presets.
LATER = re.compile(
    r"\{\{(?:default of (?P<key>[\w.]+) or (?P<none>[^}]*)|(?P<presets>presets))\}\}"
)


def config_default(dotted: str) -> str:
    """The built-in default of a config key, as a user writes it: ``budget.steps`` → ``20``,
    ``exec.timeout`` → ``1h``; ``none`` where there is none."""
    from pydantic import BaseModel

    from podium.api.config import RunConfig

    model: type[BaseModel] = RunConfig
    *sections, name = dotted.split(".")
    for section in sections:
        annotation = model.model_fields[section].annotation
        assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
        model = annotation
    value = model.model_fields[name].get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, float) and name in ("timeout", "time", "retry_time"):
        return _duration(value)
    return str(value)


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _chat_models(registry: Registry) -> str:
    return ", ".join(e.spec.usage or n for n, e in registry.backends.items())


# Parameter name → (what the names are, the names the registry offers for it).
CHOICES: dict[str, tuple[str, Callable[[Registry], str]]] = {
    "strategy": ("Choices", lambda r: ", ".join(r.strategies)),
    "strategies": ("Choices", lambda r: ", ".join(r.strategies)),
    "sandbox": ("Choices", lambda r: ", ".join(r.sandboxes)),
    "model": ("Choices", lambda r: r.model_choices()),
    "models": ("Choices", lambda r: r.model_choices()),
    "review_model": ("Choices", _chat_models),
    "plan_model": ("Choices", _chat_models),
    "task": ("Benchmarks", lambda r: ", ".join(r.benchmarks)),
    "tasks": ("Benchmarks", lambda r: ", ".join(r.benchmarks)),
    "benchmark": ("Choices", lambda r: ", ".join(r.benchmarks)),
}
DEFAULT_MARK = "  [default: "


def fill_choices(params: list[Any], registry: Registry) -> None:
    """Add ``Choices: ...`` to the help of each parameter :data:`CHOICES` knows, before its
    ``[default: ...]`` (once: a command's parameters live as long as the command)."""
    for param in params:
        entry = CHOICES.get(param.name or "")
        help_text: str | None = getattr(param, "help", None)
        if entry is None or help_text is None or f"{entry[0]}:" in help_text:
            continue
        label, names = entry
        text, mark, default = help_text.partition(DEFAULT_MARK)
        param.help = f"{text} {label}: {names(registry)}.{mark}{default}"


class ChoicesCommand(TyperCommand):
    """A command whose ``--help`` lists the registered names its options take."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # click's, as typer carries it
        fill_later(self.params)
        registry = _registry()
        if registry is not None:
            fill_choices(self.params, registry)
        super().format_help(ctx, formatter)


def _registry() -> Registry | None:
    """The built-in plugins and the installed ones; None when they cannot load (the help is
    printed without choices then: it must never fail)."""
    from podium.api.runs import load_registry

    try:
        return load_registry([])
    except PodiumError:
        return None


def with_default(help_text: str, dotted: str, none: str = "none") -> str:
    """``help_text`` ending in ``[default: X]`` with the config's default for ``dotted``
    (``none`` says what no value means), X filled in when the help is printed."""
    return f"{help_text}{DEFAULT_MARK}{{{{default of {dotted} or {none}}}}}]"


def fill_later(params: list[Any]) -> None:
    """Fill in each :data:`LATER` mark of the parameters' help texts."""
    for param in params:
        help_text: str | None = getattr(param, "help", None)
        if help_text and LATER.search(help_text):
            param.help = LATER.sub(_later, help_text)


def _later(mark: re.Match[str]) -> str:
    if mark["presets"]:
        from podium.api.config import PRESETS

        return ", ".join(PRESETS)
    default = config_default(mark["key"])
    return mark["none"] if default == "none" else default
