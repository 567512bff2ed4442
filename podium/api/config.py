"""Run configuration: typed sections, read from defaults < preset < TOML file < env < CLI.

The resolved config is written into every run dir as ``config.toml``; ``podium resume`` reads it
back, so everything a run depends on must live here. Every invalid value is reported as one line
naming the dotted key and the reason.
"""

from __future__ import annotations

import copy
import difflib
import functools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin
from urllib.parse import urlsplit

import tomli_w
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
)

from podium.errors import ConfigError, did_you_mean
from podium.sandbox.options import SandboxParams
from podium.scaffolds import validate_prompt_overrides

ENV_PREFIX = "PODIUM_"
# PODIUM_* variables that are switches of their own, not config keys: PODIUM_HOME is the root
# of MLE-bench's /home layout for agents/podium/start.sh; PODIUM_METRIC_DIRECTION a data
# folder's metric direction where its description names no metric (podium.benchmarks.data_folder).
RESERVED_ENV = {"PODIUM_DISABLE_PLUGIN_AUTOLOAD", "PODIUM_FAILPOINTS", "PODIUM_DEBUG",
                "PODIUM_HOME", "PODIUM_METRIC_DIRECTION"}  # fmt: skip

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> object:
    """``90``, ``"90s"``, ``"30m"``, ``"1h30m"``, ``"2.5h"`` → seconds (float)."""
    if value is None or isinstance(value, int | float):
        return value
    text = str(value).strip().lower().replace(" ", "")
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {value!r} (use e.g. 90, 90s, 30m, 1h30m)")
    return sum(float(n) * _UNITS[u] for n, u in parts)


Duration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0)]


def check_http_url(url: str) -> None:
    """Raise ValueError unless ``url`` is ``http(s)://host[:port][/path]`` with a valid port:
    a mistyped server is reported before the run starts, not as every node's failure."""
    if not url or any(c.isspace() for c in url):
        raise ValueError("not a URL (it is empty or holds spaces)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("not an http(s) URL")
    try:
        port = parts.port  # ValueError for a port that is no number or out of range
    except ValueError:
        raise ValueError("the port is not a number in 1-65535") from None
    if not parts.hostname:
        raise ValueError("the URL names no host")
    if port == 0:
        raise ValueError("the port is not a number in 1-65535")


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelPrice(Section):
    """USD per million tokens. ``cached_input``: a prompt token read from the provider's prompt
    cache; ``cache_write``: one written to it. Left out, the backend's fallback applies
    (Anthropic's published 0.1x and 1.25x of ``input``; any other provider: ``input``), never
    litellm's map: a price given here replaces the map's entry whole."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)


class ModelSection(Section):
    name: str | None = Field(
        "baseline", description="code model: baseline (no key), provider/model, scripted:FILE"
    )
    review: str | None = Field(None, description="review model; defaults to the code model")
    plan: str | None = Field(
        None, description="planning model (search.planning=separate); defaults to the code model"
    )
    base_url: str | None = Field(None, description="an OpenAI-compatible server, a proxy...")
    api_key_env: str | None = Field(None, description="the variable holding the key")
    temperature: float | None = Field(None, ge=0, description="sampling temperature")
    max_tokens: int | None = Field(None, gt=0, description="per answer")
    timeout: Duration = Field(600.0, description="per request")
    max_attempts: int = Field(6, ge=1, description="tries per call (rate limits, 5xx...)")
    retry_time: Duration = Field(900.0, description="no retry starts later than this")
    retry_wait: float = Field(1.0, gt=0, description="first backoff, doubled each retry")
    concurrency: int = Field(8, ge=1, description="calls in flight per provider")
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description='{"openai/x" = {input = 0.5, output = 1.5}}'
    )
    replay: Path | None = Field(None, description="a run dir or exported JSONL to answer from")
    replay_miss: Literal["error", "live"] = Field(
        "error", description="a request the record lacks: error, or live (ask the model)"
    )

    @field_validator("base_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        if value is not None:
            check_http_url(value)
        return value

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("must name an environment variable (the key itself never goes here)")
        return value


class SearchSection(Section):
    """Search settings. Keys other than these belong to the chosen strategy (validated by it)."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    strategy: str = "greedy"
    operators: str = "llm"
    memory_chars: int = Field(4000, ge=0, description="size budget of earlier-nodes memory")
    edit_format: Literal["whole", "edit"] = Field(
        "whole",
        description="llm operators' improve and debug: whole (the complete program) or edit "
        "(SEARCH/REPLACE blocks of the parent's code, applied by Podium)",
    )
    leak_check: Literal["off", "suspicious", "always"] = Field(
        "off",
        description="ask whether a good solution's validation score is leaked: off, suspicious "
        "(a perfect score) or always (every good solution; needs a review model)",
    )
    planning: Literal["joint", "separate"] = Field(
        "joint",
        description="llm operators: joint (one call writes plan and code) or separate (the "
        "plan model plans, then the code model codes that plan)",
    )
    final_top_k: int = Field(
        1, ge=1, description="> 1: re-run the k best on a fresh kernel, submit the best mean"
    )
    max_identical_failures: int = Field(
        3,
        ge=0,
        description="nodes in a row with the same code failing the same way that stop the run "
        "(0: never)",
    )
    holdout: float = Field(
        0.0,
        ge=0.0,
        le=0.5,
        description="share of the public training rows the host keeps out of the agent's data "
        "and chooses the final node on (0: off)",
    )


class MemorySection(Section):
    """The retrospective memory: what earlier attempts taught, recalled into each prompt."""

    retrieve: int = Field(
        0, ge=0, le=50, description="records recalled into each prompt (0: the memory is off)"
    )
    dir: Path | None = Field(
        None,
        description="shared by runs: read once as a run starts (its copy kept in the run dir), "
        "each finished node appended",
    )


class BudgetSection(Section):
    steps: int = Field(20, ge=1, description="finished nodes (buggy ones count)")
    time: Duration | None = Field(None, description="wall-clock the run spends running")
    cost: float | None = Field(None, gt=0, description="USD spent on model calls")


class ExecSection(Section):
    timeout: Duration = Field(3600.0, description="per node execution")
    max_output_bytes: int = Field(64 * 1024, ge=1024, description="output kept per node")
    keep_working: bool = False


class AgenticSection(Section):
    """Agentic nodes (``search.operators = "agentic"``): the code model works in the node's own
    kernel, cell by cell; ``exec.timeout`` is then the node's wall time, all cells together."""

    max_turns: int = Field(30, ge=1, description="model calls per agentic node")
    cell_timeout: Duration = Field(600.0, description="per cell (at most exec.timeout)")
    output_chars: int = Field(
        4000, ge=200, description="of a cell's output shown to the model (head and tail)"
    )
    fresh_check: bool = Field(
        True,
        description="run a good node's solution.py again on a fresh kernel, and report "
        "whether its metric reproduces",
    )
    keep_outputs: int = Field(
        3, ge=1, description="latest cell results the model sees whole (up to twice as many)"
    )


class SandboxSection(SandboxParams):
    """``[sandbox]``: ``name`` picks the sandbox; the other keys are its params. These are the
    builtin sandboxes' (:class:`SandboxParams`, where their defaults are written), which a
    plugin sandbox without a model of its own takes too; a plugin sandbox declaring one gets a
    section of that model instead (:func:`config_schema`)."""

    name: str = Field(
        "auto", description="auto (bwrap when it works here), bwrap, local, container"
    )


class RunConfig(Section):
    task: str = ""
    out: Path | None = None
    seed: int = Field(0, description="seed of the run's RNG")
    workers: int = Field(1, ge=1, description="nodes expanded concurrently")
    schedule: Literal["reproducible", "eager"] = Field(
        "reproducible",
        description="reproducible: node n is decided on nodes 1..n-workers, so runs, replays "
        "and resumes grow the same tree (a worker may wait for the oldest node); eager: decide "
        "whenever a worker is free",
    )
    data_dir: Path | None = None
    obfuscated_description: bool = Field(
        False, description="show the agent the task's obfuscated description (MLE-bench's)"
    )
    plugins: list[str] = Field(default_factory=list)
    preset: str | None = None
    model: ModelSection = Field(default_factory=ModelSection)
    search: SearchSection = Field(default_factory=SearchSection)
    budget: BudgetSection = Field(default_factory=BudgetSection)
    exec: ExecSection = Field(default_factory=ExecSection)
    agentic: AgenticSection = Field(default_factory=AgenticSection)
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    prompts: dict[str, str] = Field(default_factory=dict)

    def to_toml(self) -> str:
        return tomli_w.dumps(_drop_none(self.model_dump(mode="json")))


# MLE-bench ran AIDE with these (docs/architecture.md, "Domain facts"): its search, and the
# run's budget (24 h, 500 steps, 9 h per step).
AIDE_SEARCH: dict[str, Any] = {
    "search": {"strategy": "greedy", "num_drafts": 5, "debug_prob": 1.0, "max_debug_depth": 20},
}
MLEBENCH_BUDGET: dict[str, Any] = {
    "budget": {"steps": 500, "time": 24 * 3600.0},
    "exec": {"timeout": 9 * 3600.0},
}
# MLE-bench's reference machine ("36 vCPUs with 440GB RAM and one 24GB A10 GPU", its README)
# given to the one kernel that runs at a time, leaving room for Podium, the warm kernel and the
# system: 400 GiB is 429 GB of the 440. The workspace and file limits bound what a solution may
# unpack or checkpoint (MLE-bench's largest public data is over 100 GB); /dev/shm is the 4G of
# MLE-bench's container config (data loaders' workers share batches there); threads: 36 cores
# of BLAS and data-loader workers pass the default 512.
MLEBENCH_MACHINE: dict[str, Any] = {
    "sandbox": {"memory": "400G", "workspace_size": "500G", "max_files": 5_000_000,
                "tmp_size": "64G", "shm_size": "4G", "processes": 4096, "gpus": "all"},
}  # fmt: skip
# One preset per run (they do not combine), so the machine comes in two: with AIDE's search,
# and without any (for any strategy; greedy's own defaults, mcts, ...).
PRESETS: dict[str, dict[str, Any]] = {
    "aide": {"search": {"strategy": "greedy", "num_drafts": 5, "debug_prob": 0.5,
                        "max_debug_depth": 3}},
    "aide-mlebench": {**AIDE_SEARCH, **MLEBENCH_BUDGET},
    "mlebench-reference": {**MLEBENCH_BUDGET, **MLEBENCH_MACHINE},
    "aide-mlebench-reference": {**AIDE_SEARCH, **MLEBENCH_BUDGET, **MLEBENCH_MACHINE},
}  # fmt: skip


def load_config(
    file: Path | None = None,
    overrides: Iterable[str] = (),
    cli: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunConfig:
    """Merge every source (lowest first: preset, file, env, CLI flags, ``-o``) and validate."""
    layers = [
        read_config_file(file) if file else {},
        env_layer(os.environ if environ is None else environ),
        _nest(dict(cli or {})),
        override_layer(overrides),
    ]
    preset = next((lay["preset"] for lay in reversed(layers) if lay.get("preset")), None)
    merged: dict[str, Any] = {}
    for layer in [preset_layer(preset), *layers]:
        _deep_merge(merged, layer)
    return validate_config(merged)


def merge_changes(data: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a config as a dict, e.g. a run's ``config.toml``) with ``changes`` by dotted key
    (``{"budget.steps": 30}``) merged over it, exactly as :func:`load_config` merges ``-o``
    over the layers below it: ``podium resume``'s raised budgets are one more such layer.
    ``data`` is left as it was; the result is not validated (:func:`validate_config` does)."""
    merged = copy.deepcopy(dict(data))
    _deep_merge(merged, _nest(changes))
    return merged


def validate_config(data: Mapping[str, Any]) -> RunConfig:
    raw_prompts = data.get("prompts", {})
    if not isinstance(raw_prompts, Mapping):
        raise ConfigError(
            f"prompts: expected a table of templates (got {raw_prompts!r})",
            hint='e.g. -o prompts.draft="@draft.md"',
        )
    prompts = {k: _read_at_file(f"prompts.{k}", v) for k, v in raw_prompts.items()}
    schema = config_schema(data)
    try:
        config = schema.model_validate({**data, "prompts": prompts})
    except ValidationError as exc:
        raise config_error(exc, model=schema) from None
    validate_prompt_overrides(config.prompts)
    return config


def config_schema(data: Mapping[str, Any]) -> type[RunConfig]:
    """What ``data`` is validated as: :class:`RunConfig`, or, where ``sandbox.name`` is a plugin
    sandbox that declares params of its own, a RunConfig whose ``[sandbox]`` is ``name`` and
    those params (recorded in config.toml with their defaults, as the builtins' are)."""
    params = _sandbox_params(data)
    return RunConfig if params in (None, SandboxParams) else _with_sandbox_params(params)


def _sandbox_params(data: Mapping[str, Any]) -> type[BaseModel] | None:
    """The params model of the sandbox ``data`` names; None for a plugin sandbox that takes the
    table as a dict, and for a name nobody registers (creating it says so, naming the closest).
    Plugins are loaded (as ``plugins`` and the entry points say) only for a name no builtin
    has."""
    from podium.sandbox.builtin import podium_sandboxes

    table, plugins = data.get("sandbox", {}), data.get("plugins", [])
    default = SandboxSection.model_fields["name"].default
    name = table.get("name", default) if isinstance(table, Mapping) else None
    if not isinstance(name, str):
        return None  # RunConfig says what is wrong
    builtin = {spec.name: spec.params for spec in podium_sandboxes()}
    if name in builtin:
        return builtin[name]
    if not (isinstance(plugins, list) and all(isinstance(p, str) for p in plugins)):
        return None
    from podium.plugins.manager import create_plugin_manager
    from podium.plugins.registry import Registry

    entry = Registry(create_plugin_manager((), plugins)).sandboxes.get(name)
    return entry.spec.params if entry else None


@functools.cache
def _with_sandbox_params(params: type[BaseModel]) -> type[RunConfig]:
    """RunConfig with ``[sandbox]`` as ``name`` and ``params``' keys (unknown ones refused)."""
    name = SandboxSection.model_fields["name"]
    section = create_model(
        f"{params.__name__}Section",
        __base__=(params, Section),
        name=(str, Field(description=name.description)),
    )
    schema: type[RunConfig] = create_model(
        "RunConfig", __base__=RunConfig, sandbox=(section, Field(description=params.__doc__))
    )
    return schema


def preset_layer(name: str | None) -> dict[str, Any]:
    if name is None:
        return {}
    if name not in PRESETS:
        raise ConfigError(
            f"preset: unknown preset {name!r}", hint=did_you_mean(name, PRESETS, "presets")
        )
    return PRESETS[name]


TOML_HINT = (
    "a config file is TOML text, e.g. [budget] steps = 10 (a run dir keeps one: config.toml)"
)


def read_config_file(path: Path) -> dict[str, Any]:
    """A config file (``-c``, or a run's ``config.toml`` read back as a config) as a dict;
    anything that is not a readable TOML text file is a :class:`ConfigError` that speaks of a
    config file. (A run dir's own reader, ``podium.formats.run_files.read_toml``, speaks of the
    run's file; the reports' ``read_run_config`` adds how to repair a compared run.)"""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}", hint=TOML_HINT) from None
    except IsADirectoryError:
        raise ConfigError(
            f"{path} is a directory, not a config file",
            hint=f"give the TOML file itself, e.g. {path / 'config.toml'}",
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not a text file (not UTF-8)", hint=TOML_HINT) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", hint=TOML_HINT) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint=TOML_HINT) from None


def override_layer(overrides: Iterable[str]) -> dict[str, Any]:
    """``-o search.num_drafts=3`` → {"search": {"num_drafts": 3}} (values parsed as TOML)."""
    flat: dict[str, Any] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(
                f"-o {item!r}: expected KEY=VALUE", hint="e.g. -o search.num_drafts=3"
            )
        flat[key] = parse_value(raw.strip())
    return _nest(flat)


def env_layer(environ: Mapping[str, str]) -> dict[str, Any]:
    """``PODIUM_BUDGET__STEPS=10`` → budget.steps = 10; ``PODIUM_SEED=3`` → seed = 3."""
    flat: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in RESERVED_ENV:
            continue
        key = name[len(ENV_PREFIX) :].lower().replace("__", ".")
        flat[key] = parse_value(raw)
    return _nest(flat)


def parse_value(raw: str) -> Any:
    """A TOML literal when the text is one (3, 0.5, true, [..], "x"), else the text itself."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def config_error(
    exc: ValidationError, prefix: str = "", model: type[BaseModel] = RunConfig
) -> ConfigError:
    """The first pydantic error as one line: ``search.num_drafts: <reason> (got 'x')``.

    ``prefix`` and ``model`` locate a sub-model validated on its own (a strategy's params).
    """
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    key = prefix + ".".join(loc)
    if err["type"] == "extra_forbidden":
        return ConfigError(f"{key}: unknown key", hint=_did_you_mean(loc, model))
    got = err.get("input")
    msg = str(err["msg"]).removeprefix("Value error, ")
    shown = isinstance(got, int | float | bool) or (isinstance(got, str) and repr(got) not in msg)
    got_text = f" (got {got!r})" if shown else ""
    return ConfigError(f"{key}: {msg}{got_text}", hint=_value_hint(key, loc, model))


# Keys whose errors are best answered with an example of a valid value.
EXAMPLES = {
    "model.base_url": "e.g. --base-url http://localhost:8000/v1 (http or https, a host, a port "
    "in 1-65535)",
    "model.prices": "e.g. -o 'model.prices.\"openai/x\"={input=0.5, output=1.5}' (USD per "
    "million tokens)",
}


def _value_hint(key: str, loc: list[str], model: type[BaseModel]) -> str:
    """What the key is and its default (the field's description), or an example value."""
    for prefix, example in EXAMPLES.items():
        if key == prefix or key.startswith(prefix + "."):
            return example
    field = _field_at(loc, model)
    if field is None:
        return f"check the value of {key}"
    if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
        keys = ", ".join(field.annotation.model_fields)
        return f"{key} is a section ([{key}] in a file, -o {key}.KEY=VALUE); its keys: {keys}"
    about = f"{key}: {field.description}" if field.description else key
    default = field.get_default(call_default_factory=True)
    if default is None or isinstance(default, list | dict):
        return about
    return (
        f"{about}; default {default:g}"
        if isinstance(default, float)
        else f"{about}; default {default}"
    )


def _field_at(loc: list[str], model: type[BaseModel]) -> Any:
    """The pydantic field at ``loc`` (through sub-sections and tables of them), or None."""
    field = None
    annotation: Any = model
    for part in loc:
        if get_origin(annotation) is dict:  # a table (model.prices): its key, then its values
            annotation = get_args(annotation)[1]
            continue
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        field = annotation.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
    return field


def _did_you_mean(parts: list[str], model: type[BaseModel]) -> str | None:
    for part in parts[:-1]:
        field = model.model_fields.get(part)
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    close = difflib.get_close_matches(parts[-1], list(model.model_fields), n=1)
    return f"did you mean {close[0]}?" if close else f"valid keys: {', '.join(model.model_fields)}"


def _read_at_file(key: str, value: object) -> object:
    """``prompts.x = "@file.md"`` reads the template from a file (recorded inline in the run)."""
    if isinstance(value, str) and value.startswith("@"):
        path = Path(value[1:])
        hint = f'the template file is markdown text, e.g. -o {key}="@prompts/{key[8:]}.md"'
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{key}: {path} is not a text file (not UTF-8)", hint=hint) from None
        except OSError as exc:
            raise ConfigError(f"{key}: cannot read {path}: {exc.strerror}", hint=hint) from None
    return value


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        parts = dotted.split(".")
        node = nested
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(
                    f"{dotted}: {part} is a value, not a section",
                    hint=f"set {part} or {dotted}, not both",
                )
            node = child
        node[parts[-1]] = value
    return nested


def _deep_merge(into: dict[str, Any], layer: Mapping[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value


def _drop_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_none(v) for k, v in data.items() if v is not None}
    return data
