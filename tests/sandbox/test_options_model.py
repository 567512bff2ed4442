"""``[sandbox]`` is validated against the chosen sandbox's params model, like ``[search]``
against a strategy's: the builtins' ``SandboxParams`` (each default written there once), or a
plugin sandbox's own model declared on its ``SandboxSpec``; a plugin sandbox without one gets
the table as a dict, as before.

Everything runs for real: configs through ``load_config``, plugins loaded from files by the
plugin manager, a run of the toy task with a plugin sandbox and ``podium rerun`` of its node.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.api.config import RunConfig, load_config, validate_config
from podium.api.rerun import rerun_node
from podium.api.runs import load_registry
from podium.cli.help import config_default
from podium.errors import ConfigError, PluginError, UnknownNameError
from podium.sandbox import LocalSandbox, ResourceLimits, SandboxOptions
from podium.sandbox.limits import LimitParams, default_memory_bytes
from podium.sandbox.options import SandboxParams
from tests.support import node_answers, run_config, solution, write_script

DOCS = Path(__file__).parents[2] / "docs" / "sandbox.md"
GiB = 1024**3

# A plugin sandbox with params of its own: a local kernel that hands the solution its stamp.
STAMPED = """\
import dataclasses

from pydantic import BaseModel, ConfigDict, Field

from podium.plugins import SandboxSpec, hookimpl
from podium.sandbox import LocalSandbox, SandboxOptions


class StampParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stamp: str = Field("unset", description="what the solution finds in $STAMP")
    repeats: int = Field(2, ge=1, description="how many times")


class Stamped(LocalSandbox):
    name = "stamped"

    def __init__(self, params: StampParams) -> None:
        super().__init__(SandboxOptions(preimports=(), warm_pool=False))
        self.params = params

    def launch(self, slot, ipc):
        command, guard = super().launch(slot, ipc)
        env = {**command.env, "STAMP": self.params.stamp * self.params.repeats}
        return dataclasses.replace(command, env=env), guard


@hookimpl
def podium_sandboxes():
    return [SandboxSpec(name="stamped", create=Stamped, isolated=False, params=StampParams)]
"""

# The older form: no params, the table as a dict.
AS_DICT = """\
from podium.interfaces import Sandbox
from podium.plugins import SandboxSpec, hookimpl


class Given(Sandbox):
    name, isolated = "given", False

    def __init__(self, options):
        self.options = options

    async def environment(self):
        raise NotImplementedError

    async def execute(self, code, workspace, limits):
        raise NotImplementedError


@hookimpl
def podium_sandboxes():
    return [SandboxSpec(name="given", create=Given, isolated=False)]
"""

# Params of its own that extend the builtins': their keys, and one more.
MORE = """\
from pydantic import Field

from podium.plugins import SandboxSpec, hookimpl
from podium.sandbox import LocalSandbox
from podium.sandbox.options import SandboxParams


class MoreParams(SandboxParams):
    banner: str = Field("hi", description="shown at the start")


class More(LocalSandbox):
    name = "more"

    def __init__(self, params: MoreParams) -> None:
        super().__init__(params.options())
        self.banner = params.banner


@hookimpl
def podium_sandboxes():
    return [SandboxSpec(name="more", create=More, isolated=False, params=MoreParams)]
"""

NAMED = """\
from pydantic import BaseModel

from podium.plugins import SandboxSpec, hookimpl


class Params(BaseModel):
    name: str = "mine"


@hookimpl
def podium_sandboxes():
    return [SandboxSpec(name="named", create=dict, isolated=False, params=Params)]
"""


def load(*overrides: str, **cli: Any) -> RunConfig:
    return load_config(None, overrides, cli, environ={})


def plugin(tmp_path: Path, source: str) -> str:
    path = tmp_path / "sandbox_plugin.py"
    path.write_text(source)
    return str(path)


# --- the builtins' keys ------------------------------------------------------------------------


def test_every_default_comes_from_the_model() -> None:
    """A bare SandboxOptions / ResourceLimits, the options of an empty table and those of the
    config's own [sandbox] are one thing: the model's defaults; --help shows the same."""
    model = SandboxParams()
    assert SandboxOptions() == model.options() == SandboxOptions.from_config({})
    assert SandboxOptions.from_config(load().sandbox.model_dump()) == SandboxOptions()
    assert ResourceLimits() == model.resource_limits() == SandboxOptions().limits
    assert ResourceLimits().memory_bytes == default_memory_bytes()  # memory = "auto"
    for key, field in SandboxParams.model_fields.items():
        default = field.get_default(call_default_factory=True)
        assert config_default(f"sandbox.{key}") == ("none" if default is None else str(default))
    assert set(LimitParams.model_fields) < set(SandboxParams.model_fields)


def test_every_default_in_the_docs_limits_table_is_the_models() -> None:
    """docs/sandbox.md's table of limits names each setting with its default."""
    table = DOCS.read_text().split("## Limits, and what enforces them")[1].split("\n\n")[1]
    shown = dict(re.findall(r"`sandbox\.(\w+)` \(([^)]*)\)", table))
    assert len(shown) == 8 and set(shown) <= set(LimitParams.model_fields)
    for key, text in shown.items():
        default = LimitParams.model_fields[key].default
        if default == "auto":
            assert text in str(LimitParams.model_fields[key].description), key
        else:
            assert text.replace(",", "") == ("none" if default is None else str(default)), key


@pytest.mark.parametrize(
    ("override", "limit", "expected"),
    [("sandbox.memory=4G", "memory_bytes", 4 * GiB),
     ("sandbox.memory=auto", "memory_bytes", default_memory_bytes()),
     ('sandbox.memory="none"', "memory_bytes", None),
     ("sandbox.workspace_size=unlimited", "workspace_bytes", None),
     ("sandbox.workspace_size=512MiB", "workspace_bytes", 512 * 1024**2),
     ("sandbox.tmp_size=1.5G", "tmp_bytes", int(1.5 * GiB)),
     ("sandbox.shm_size=65536", "shm_bytes", 65536),
     ("sandbox.max_message_size=8M", "max_message_bytes", 8 * 1024**2),
     ("sandbox.processes=64", "max_processes", 64),
     ("sandbox.cpu_time_s=30", "cpu_time_s", 30)],
)  # fmt: skip
def test_sizes_read_as_written(override: str, limit: str, expected: int | None) -> None:
    cfg = load(override)
    written = override.split("=", 1)[1].strip('"')
    key = override.split("=")[0].removeprefix("sandbox.")
    assert str(getattr(cfg.sandbox, key)) == written  # config.toml keeps the text
    limits = SandboxOptions.from_config(cfg.sandbox.model_dump()).limits
    assert getattr(limits, limit) == expected


def test_the_reference_preset_reads_into_its_limits() -> None:
    options = SandboxOptions.from_config(load(preset="mlebench-reference").sandbox.model_dump())
    assert options.limits == ResourceLimits(
        memory_bytes=400 * GiB, max_processes=4096, workspace_bytes=500 * GiB,
        max_files=5_000_000, tmp_bytes=64 * GiB, shm_bytes=4 * GiB,
    )  # fmt: skip
    assert options.gpus == "all"


@pytest.mark.parametrize(
    ("override", "message", "hint"),
    [("sandbox.memroy=4G", "sandbox.memroy: unknown key", "did you mean memory?"),
     ("sandbox.memory=lots", "sandbox.memory: not a size; write e.g. 4G, 512M or none",
      'sandbox.memory: per kernel; "auto": half the RAM, at most 8G; default auto'),
     ('sandbox.tmp_size="none"', "sandbox.tmp_size: not a size; write e.g. 4G or 512M",
      "default 2G"),
     ("sandbox.workspace_size=-1", "sandbox.workspace_size: not a size", "default 20G"),
     ("sandbox.processes=2", "sandbox.processes: Input should be greater than or equal to 8",
      "default 512"),
     ("sandbox.interrupt_grace_s=0", "sandbox.interrupt_grace_s", "default 3"),
     ("sandbox.gpus=abc", 'sandbox.gpus: not "all" or device indices', '"all" or device')],
)  # fmt: skip
def test_a_bad_key_or_value_is_one_line_with_a_hint(override: str, message: str, hint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(override)
    assert caught.value.message.startswith(message) and "\n" not in caught.value.message
    assert hint in (caught.value.hint or "")


def test_a_builtin_given_another_sandboxs_keys_says_which_it_takes() -> None:
    """``podium rerun --sandbox local`` of a plugin sandbox's run: its table is not local's."""
    local = load_registry().sandbox("local")
    with pytest.raises(ConfigError) as caught:
        local.create({"name": "stamped", "stamp": "x", "warm_pool": False})
    assert caught.value.message == "sandbox.stamp: sandbox 'local' takes no such key"
    assert (caught.value.hint or "").startswith("its keys: memory, processes")
    made = local.create(load("sandbox.preimports=[]").sandbox.model_dump())
    assert isinstance(made, LocalSandbox) and made.options.preimports == ()


# --- plugin sandboxes --------------------------------------------------------------------------


def test_a_plugin_sandbox_with_params_is_validated_recorded_and_given_them(
    tmp_path: Path,
) -> None:
    plugins = [plugin(tmp_path, STAMPED)]
    cfg = load("sandbox.repeats=3", sandbox={"name": "stamped"}, plugins=plugins)
    assert cfg.sandbox.model_dump() == {"name": "stamped", "stamp": "unset", "repeats": 3}
    recorded = tomllib.loads(cfg.to_toml())
    assert recorded["sandbox"] == {"name": "stamped", "stamp": "unset", "repeats": 3}
    assert validate_config(recorded).sandbox == cfg.sandbox  # podium resume reads it back

    box = load_registry(plugins).sandbox("stamped").create(cfg.sandbox.model_dump())
    given = vars(box)["params"]  # what the plugin's factory got
    assert type(given).__name__ == "StampParams"
    assert (given.stamp, given.repeats) == ("unset", 3)

    for override, message, hint in [
        ("sandbox.repeat=3", "sandbox.repeat: unknown key", "did you mean repeats?"),
        ("sandbox.memory=4G", "sandbox.memory: unknown key", "valid keys: stamp, repeats"),
        ("sandbox.repeats=0", "sandbox.repeats: Input should be greater", "how many times"),
    ]:
        with pytest.raises(ConfigError) as caught:
            load(override, sandbox={"name": "stamped"}, plugins=plugins)
        assert caught.value.message.startswith(message), override
        assert hint in (caught.value.hint or ""), override


def test_a_run_and_a_rerun_hand_a_plugin_sandbox_its_params(tmp_path: Path, data_dir: Path) -> None:
    """From the config to the kernel: the node's solution prints what the params said, in the
    run and in ``podium rerun`` (which reads them back from the run's config.toml)."""
    code = solution(0.8, extra='import os; print("stamp:", os.environ["STAMP"])')
    script = write_script(tmp_path / "s.jsonl", [node_answers(code)])
    config = run_config(script, tmp_path / "run", data_dir, steps=1, plugins=[plugin(
        tmp_path, STAMPED)], search={"num_drafts": 1})  # fmt: skip
    config["sandbox"] = {"name": "stamped", "stamp": "ab"}
    result = podium.run(config)
    output = (result.run_dir / "nodes" / "1" / "output.txt").read_text()
    assert "stamp: abab\n" in output
    report = rerun_node(result.run_dir, 1)
    assert "stamp: abab\n" in (Path(report.rerun_dir) / "output.txt").read_text()
    assert report.sandbox == "stamped"


def test_a_plugin_sandbox_without_params_gets_the_table_as_a_dict(tmp_path: Path) -> None:
    """As before: ``name`` and every builtin key, validated as the builtins' are."""
    plugins = [plugin(tmp_path, AS_DICT)]
    cfg = load("sandbox.memory=4G", sandbox={"name": "given"}, plugins=plugins)
    box = load_registry(plugins).sandbox("given").create(cfg.sandbox.model_dump())
    given = vars(box)["options"]  # what the plugin's factory got
    assert given == {**SandboxParams(memory="4G").model_dump(), "name": "given"}
    assert type(given) is dict
    with pytest.raises(ConfigError, match=r"sandbox\.memroy: unknown key"):
        load("sandbox.memroy=4G", sandbox={"name": "given"}, plugins=plugins)


def test_params_extending_the_builtins_take_their_keys_and_more(tmp_path: Path) -> None:
    plugins = [plugin(tmp_path, MORE)]
    cfg = load("sandbox.memory=4G", "sandbox.banner=yo", sandbox={"name": "more"}, plugins=plugins)
    box = load_registry(plugins).sandbox("more").create(cfg.sandbox.model_dump())
    assert isinstance(box, LocalSandbox) and box.options.limits.memory_bytes == 4 * GiB
    assert vars(box)["banner"] == "yo"
    with pytest.raises(ConfigError) as caught:
        load("sandbox.baner=yo", sandbox={"name": "more"}, plugins=plugins)
    assert (caught.value.message, caught.value.hint) == (
        "sandbox.baner: unknown key",
        "did you mean banner?",
    )


def test_params_may_not_take_the_configs_own_key(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match="its params declare a key 'name'"):
        load(sandbox={"name": "named"}, plugins=[plugin(tmp_path, NAMED)])


def test_an_unknown_sandbox_is_named_when_it_is_made() -> None:
    cfg = load(sandbox={"name": "bwarp"})  # no plugin has it: the config keeps the builtin keys
    assert cfg.sandbox.memory == "auto"
    with pytest.raises(UnknownNameError, match="unknown sandbox 'bwarp'"):
        load_registry().sandbox(cfg.sandbox.name)


def test_uid_0_is_kept_as_written_so_the_sandbox_refuses_it() -> None:
    """``user = 0`` is root, not "no value": it must reach the check that refuses root."""
    assert SandboxParams.of({"user": 0}).options().user == 0
    assert SandboxParams.of({}).options().user == "auto"
