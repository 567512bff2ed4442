"""The viewer's JSON and its schema (``podium.viewer.schema``): what the real server sends for a
real run (every node kind, an agentic node's notebook), for a sweep, and what an export
embeds is each document's model, exactly; ``/api/schema`` serves the JSON Schemas; and
docs/viewer.md's blocks ("The page's contract") list the models' fields, field by field."""

from __future__ import annotations

import json
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from podium.formats import RunDir
from podium.viewer import packing
from podium.viewer.html_file import export_html
from podium.viewer.schema import (
    DOCUMENTS,
    Document,
    ErrorReply,
    NodeDetail,
    NodeOutput,
    RunJSON,
    SearchResult,
    SweepJSON,
    Versioned,
    schemas,
)
from podium.viewer.server import ViewerServer
from podium.viewer.sweep_data import SweepView
from tests.recorded_run import AgenticRun, RecordedRun
from tests.viewer.test_html_file import DETAILS_OPEN, split_data
from tests.viewer.test_server import request, serving
from tests.viewer.test_sweep_page import DONE, make_sweep
from tests.viewer.test_token import refused_everywhere

DOCS = Path(__file__).resolve().parents[2] / "docs" / "viewer.md"


def exact(model: type[Document], body: bytes) -> None:
    """``body`` is ``model``'s JSON exactly: it validates strictly (no field missing, none
    unknown, each of its type) and the model writes back the very bytes (no value converted,
    the fields in their order)."""
    document = model.model_validate_json(body, strict=True)
    assert document.model_dump_json().encode("utf-8") == body


def sent(srv: ViewerServer, path: str, model: type[Document], status: int = 200) -> Any:
    """GET ``path``: its body is ``model``'s JSON exactly (``exact``); parsed."""
    reply = request(srv, path)
    assert reply.status == status, (path, reply.body[:300])
    assert reply.headers["Content-Type"] == "application/json; charset=utf-8"
    exact(model, reply.body)
    return json.loads(reply.body)


def sent_run(srv: ViewerServer, prefix: str = "") -> dict[str, Any]:
    """A run's every document, as sent; the RunJSON and each node's NodeDetail by id."""
    run = sent(srv, f"{prefix}/api/run", RunJSON)
    details = {str(n["id"]): sent(srv, f"{prefix}/api/node/{n['id']}", NodeDetail)
               for n in run["nodes"]}  # fmt: skip
    sent(srv, f"{prefix}/api/search?q=looks", SearchResult)
    sent(srv, f"{prefix}/api/node/99", ErrorReply, status=404)
    return {"run": run, "details": details}


def test_a_runs_json_is_its_schema(recorded_run: RecordedRun) -> None:
    """Good, buggy (a traceback, a timeout), an analysis with its ablation table, a crossover's
    two diffs, a node still executing (live while the run's lock is held: its output so far),
    and the errors."""
    rd = RunDir(recorded_run.root)
    rd.write_live_output(recorded_run.running, "epoch 1\n")
    with serving(recorded_run.root) as srv:
        served = sent_run(srv)
        rd.lock()
        try:
            live = sent(srv, "/api/run", RunJSON)
            detail = sent(srv, f"/api/node/{recorded_run.running}", NodeDetail)
            output = sent(srv, f"/api/node/{recorded_run.running}/output", NodeOutput)
        finally:
            rd.unlock()
        sent(srv, "/api/nope", ErrorReply, status=404)
    details = served["details"].values()
    kinds = {n["kind"] for n in served["run"]["nodes"]}
    assert kinds == {"good", "buggy", "interrupted", "analysis"}
    assert any(d["ablation"] for d in details)
    assert any(d["exec"] and d["exec"]["traceback_parsed"] for d in details)
    assert any(len(d["diffs"]) == 2 for d in details) and served["run"]["run"]["grade"]
    assert "running" in {n["kind"] for n in live["nodes"]} and live["live"] is True
    assert detail["output_live"] is True and output["output"] == "epoch 1\n"


def test_an_agentic_nodes_json_is_its_schema(agentic_run: AgenticRun) -> None:
    with serving(agentic_run.root) as srv:
        served = sent_run(srv)
    notebook = served["details"][str(agentic_run.node)]["notebook"]
    cells = notebook["cells"]
    assert {c["type"] for c in cells} == {"code", "words"}
    assert any(c["error"] and c["error"]["traceback_parsed"] for c in cells)
    assert all(c["call"] for c in cells)


def test_a_sweeps_json_is_its_schema(tmp_path: Path) -> None:
    with serving(SweepView(make_sweep(tmp_path))) as srv:
        grid = sent(srv, "/api/sweep", SweepJSON)
        sent_run(srv, f"/runs/{DONE}")
        sent(srv, "/runs/nope/api/run", ErrorReply, status=404)
    assert {r["state"] for r in grid["runs"]} == {"finished", "pending"}
    assert next(r for r in grid["runs"] if r["id"] == DONE)["graded"] is True


def test_an_export_embeds_the_documents_the_server_sends(
    recorded_run: RecordedRun, tmp_path: Path
) -> None:
    with serving(recorded_run.root) as srv:
        served = sent_run(srv)
    dest = tmp_path / "run.html"
    export_html(recorded_run.root, dest)
    html = dest.read_text(encoding="utf-8")
    run = json.loads(split_data(html)[0])
    details = packing.unpack(json.loads(split_data(html, DETAILS_OPEN)[0]))
    assert {"run": run, "details": details} == served  # so each is its model's JSON too


def test_the_schemas_are_served_with_the_token_only(recorded_run: RecordedRun) -> None:
    with serving(recorded_run.root) as srv:
        reply = request(srv, "/api/schema")
        assert reply.status == 200 and reply.json() == schemas()
        refused_everywhere(srv, ["/api/schema"])
    assert set(schemas()) == {"RunJSON", "NodeDetail", "NodeOutput", "SearchResult",
                              "SweepJSON", "ErrorReply"}  # fmt: skip


def test_every_field_of_every_document_is_required() -> None:
    """The page never meets an absent key: each object of the contract lists every field as
    required, in its order (null stands for a missing value)."""
    for model in _described():
        if issubclass(model, Document):
            schema = model.model_json_schema(mode="serialization")
            schema = schema["$defs"][model.__name__] if "$ref" in schema else schema  # recursive
            assert schema["required"] == list(model.model_fields), model.__name__
            assert schema["additionalProperties"] is False, model.__name__


# --- docs/viewer.md's blocks ----------------------------------------------------------------
# A block is a fenced ``text`` block of definitions, ``Name = {"key", "key": value, ...}``:
# a value is an example, ``Name``, ``[value]``, ``{...}``, ``a | b``; ``...Name`` in an
# object lists Name's fields there, a bare ``...`` stands for more keys of a mapping.


@dataclass
class Ref:
    name: str


@dataclass
class Obj:
    members: list[tuple[str, Any]]  # (key, value or None); ("...Name", None) for a spread


@dataclass
class Arr:
    items: list[Any]


@dataclass
class Alt:
    options: list[Any]


SCALAR = "scalar"
FENCE = re.compile(r"^ *```text\n(.*?)^ *```", re.MULTILINE | re.DOTALL)
DEFINITION = re.compile(r"^ *([A-Z]\w*) *= *", re.MULTILINE)
TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\.\.\.|[{}\[\]:,|]|[\w.+-]+)')


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        pos = 0
        while text[pos:].strip():
            found = TOKEN.match(text, pos)
            assert found is not None, f"cannot read {text[pos : pos + 40]!r}"
            self.tokens.append(found.group(1))
            pos = found.end()
        self.pos = 0

    def next(self) -> str:
        self.pos += 1
        return self.tokens[self.pos - 1]

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def value(self) -> Any:
        options = [self.term()]
        while self.peek() == "|":
            self.next()
            options.append(self.term())
        return options[0] if len(options) == 1 else Alt(options)

    def term(self) -> Any:
        token = self.next()
        if token == "{":
            return Obj(self.members())
        if token == "[":
            return Arr(self.items())
        return Ref(token) if re.fullmatch(r"[A-Z]\w*", token) else SCALAR

    def members(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        while (token := self.next()) != "}":
            if token == ",":
                continue
            if token == "...":
                spread = self.peek() not in (",", "}")
                out.append((f"...{self.next()}" if spread else "...", None))
                continue
            key = token.strip('"')
            value = None
            if self.peek() == ":":
                self.next()
                value = self.value()
            out.append((key, value))
        return out

    def items(self) -> list[Any]:
        out = []
        while self.peek() != "]":
            if self.peek() == ",":
                self.next()
                continue
            out.append(self.value())
        self.next()
        return out


def docs_definitions() -> dict[str, Any]:
    """Every definition in docs/viewer.md's ``text`` blocks, by name."""
    found: dict[str, Any] = {}
    for block in FENCE.findall(DOCS.read_text(encoding="utf-8")):
        starts = list(DEFINITION.finditer(block))
        for this, after in zip(starts, [*starts[1:], None], strict=True):
            end = after.start() if after else len(block)
            parser = _Parser(block[this.end() : end])
            assert this.group(1) not in found, f"{this.group(1)} is defined twice"
            found[this.group(1)] = parser.value()
            assert parser.peek() is None, f"{this.group(1)}: more after its value"
    return found


def _shape(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """("model", M) or ("list", M) when a field holds a model M (or null) or a list of them."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = kept[0] if len(kept) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        if isinstance(item, type) and issubclass(item, BaseModel):
            return "list", item
    return None


def _described() -> dict[type[BaseModel], None]:
    """Every model the documents hold (and the bases they extend), each once."""
    todo: list[type[BaseModel]] = list(DOCUMENTS.values())
    seen: dict[type[BaseModel], None] = {}
    while todo:
        model = todo.pop()
        if model in seen or model in (Document, Versioned, BaseModel):
            continue
        seen[model] = None
        todo.extend(base for base in model.__mro__[1:] if isinstance(base, type)
                    and issubclass(base, Document))  # fmt: skip
        todo.extend(shape[1] for f in model.model_fields.values()
                    if (shape := _shape(f.annotation)))  # fmt: skip
    return seen


class _Checker:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.problems: list[str] = []

    def fields(self, obj: Obj) -> list[tuple[str, Any]]:
        out = []
        for key, value in obj.members:
            if key.startswith("...") and key != "...":
                spread = self.defs.get(key[3:])
                if isinstance(spread, Obj):
                    out.extend(self.fields(spread))
                else:
                    self.problems.append(f"{key}: no object {key[3:]} is defined")
            else:
                out.append((key, value))
        return out

    def model(self, model: type[BaseModel], value: Any, where: str) -> None:
        if isinstance(value, Ref):
            if value.name != model.__name__:
                self.problems.append(f"{where}: {value.name}, but the model is {model.__name__}")
            elif value.name not in self.defs:
                self.problems.append(f"{where}: {value.name} is not defined")
            return
        if not isinstance(value, Obj):
            self.problems.append(f"{where}: a {model.__name__}, described as no object")
            return
        listed = self.fields(value)
        keys, want = [k for k, _ in listed], list(model.model_fields)
        if keys != want:
            self.problems.append(f"{where}: the docs list {keys}, {model.__name__} has {want}")
        for key, field_value in listed:
            if key in model.model_fields:
                self.field(model.model_fields[key].annotation, field_value, f"{where}.{key}")

    def field(self, annotation: Any, value: Any, where: str) -> None:
        shape = _shape(annotation)
        if shape is None:
            return
        kind, model = shape
        if value is None:
            self.problems.append(f"{where}: a {model.__name__}; give its fields or its name")
            return
        options = value.options if isinstance(value, Alt) else [value]
        for option in options:
            if option is SCALAR:  # null
                continue
            if kind == "model":
                self.model(model, option, where)
            elif isinstance(option, Arr) and option.items:
                for item in option.items:
                    self.model(model, item, f"{where}[]")
            else:
                self.problems.append(f"{where}: a list of {model.__name__}, given no list")


def problems(defs: dict[str, Any]) -> list[str]:
    """Where the definitions ``defs`` and the models part."""
    known = {model.__name__: model for model in _described()}
    checker = _Checker(defs)
    for name in DOCUMENTS:
        if name not in defs:
            checker.problems.append(f"{name}: not described in {DOCS.name}")
    for name, value in defs.items():
        if name not in known:
            checker.problems.append(f"{name}: described, but no document holds such a model")
        else:
            checker.model(known[name], value, name)
    return checker.problems


def test_the_docs_blocks_list_every_documents_fields() -> None:
    """Each document of the contract, and each object in it, is described in docs/viewer.md
    with exactly its model's fields, in order; a name the docs define is a model's."""
    found = problems(docs_definitions())
    assert not found, "docs/viewer.md and podium/viewer/schema.py disagree:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ('RunJSON = {"format", "version"}', "the docs list ['format', 'version']"),
        ('SearchResult = {"ids", "more"}', "SearchResult has ['ids']"),
        ("Extra = {}", "Extra: described, but no document holds such a model"),
        ('SweepJSON = {"format", "version", "sweep", "axes", "runs": [SweepRun]}',
         "SweepJSON.sweep: a SweepHeader; give its fields or its name"),
        ('Call = {"role", "seq", "model", "attempts", "error", "fatal", "started_at", '
         '"messages": [{"role", "content"}], "tools", "response"}',
         "Call.messages[]: the docs list ['role', 'content']"),
        ('RunNode = {...Light, "x", "y", "tree_parent"}', "...Light: no object Light"),
    ],
)  # fmt: skip
def test_the_docs_check_finds_a_field_out_of_step(block: str, problem: str) -> None:
    """The check fails where the docs and a model part: a field missing or one too many, at
    any depth, an object left undescribed, a name no model has."""
    found = DEFINITION.match(block)
    assert found is not None
    defs = {**docs_definitions(), found.group(1): _Parser(block[found.end() :]).value()}
    assert any(problem in p for p in problems(defs)), problems(defs)
