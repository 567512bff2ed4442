"""The house rules of ``podium/``: every import points down a layer, and no module imports
itself back through others (see docs/architecture.md, "Rooms and arrows").

Every ``import`` in the package counts: at module top, inside a function (a lazy import is the
same arrow, taken later), under ``TYPE_CHECKING``, in a room's ``__init__.pyi`` (its lazily
loaded names) and a module named in a string (``importlib.import_module("podium.x")``, a
``python -m`` line): an arrow written as a string is still an arrow. Inside a room, its parts
(subpackages, and the modules :data:`SUBROOMS` names) have arrows of their own. A failure names
the offending module and what it imports, so the fix is to move code down a layer or fix an
interface, not to edit the tables below.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import podium

PACKAGE = Path(podium.__file__).parent

# Lowest first. A module may import its own room and any room of a lower layer; rooms of one
# layer do not import each other. Root modules (``podium/*.py``) are the shared vocabulary and
# leaf helpers every room builds on.
LAYERS: list[set[str]] = [
    {"<root>"},
    {"plugins", "formats"},
    {"sandbox", "scaffolds", "testing"},
    {"benchmarks", "viewer", "experiments"},
    {"api"},
    {"cli"},
]
# Inside a room, lowest first: its parts (a subpackage, or a module named here); ``*`` is every
# other module of the room. A part imports its own modules and the parts of lower rows only.
SUBROOMS: dict[str, list[set[str]]] = {
    "plugins": [{"*"}, {"backends"}, {"builtin"}],  # the builtin plugin registers the backends
    "scaffolds": [{"strategies", "baseline"}, {"*"}],  # policies never reach into the loop
    "experiments": [{"sweeps", "reports"}],  # reports read what sweeps left on disk, not sweeps
    "cli": [{"*"}, {"app"}],  # the app assembles the commands; no command imports it
}
# The two ways in from outside, which name the top on purpose: ``import podium`` offers
# ``podium.run`` (loaded on first use) and ``python -m podium`` is the command line.
ENTRY_POINTS = {"podium", "podium.__main__"}


MODULE_NAME = re.compile(r"podium(?:\.\w+)+")  # a module named in a string (``:attr`` may follow)


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if "mini" in parts:  # the bundled tasks' own scripts run apart from the package
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def sources(path: Path) -> Iterator[Path]:
    """The files of a module: a package's ``__init__.pyi`` (its lazy names) too."""
    yield path
    if path.name == "__init__.py" and path.with_suffix(".pyi").exists():
        yield path.with_suffix(".pyi")


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package's modules that ``name`` imports."""
    for source in sources(path):
        yield from _imported(name, source, known)


def _imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    is_package = path.stem == "__init__"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Not imports: docstrings, a logger's name, a package named as the anchor of its data files.
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    prose |= {id(a) for n in ast.walk(tree) if _call_named(n, NOT_IMPORTS) for a in n.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = MODULE_NAME.fullmatch(node.value.partition(":")[0])
            targets = [named.group()] if named and id(node) not in prose else []
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from a.b import c``: the module ``a.b.c`` if there is one, else ``a.b``'s name
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


NOT_IMPORTS = {"files", "getLogger"}  # calls whose string argument names no import


def _call_named(node: ast.AST, names: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) in names


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in _ROOMS) else "<root>"


_ROOMS = {r for layer in LAYERS for r in layer} - {"<root>"}


def layer(module: str) -> int:
    return next(i for i, rooms in enumerate(LAYERS) if room(module) in rooms)


def part(module: str) -> str:
    """A module's part of its room (``SUBROOMS``): its subpackage, or its own name."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def sublayer(module: str) -> int | None:
    rows = SUBROOMS.get(room(module))
    if rows is None or part(module) == "__init__":  # the room's interface names its parts
        return None
    return next(i for i, row in enumerate(rows) if group(module) in row)


def group(module: str) -> str:
    """A module's name in its room's ``SUBROOMS`` rows: its part, or ``*``."""
    rows = SUBROOMS.get(room(module), [])
    return part(module) if any(part(module) in row for row in rows) else "*"


def test_every_room_of_the_package_has_a_layer() -> None:
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert rooms == _ROOMS, "a new room needs a place in LAYERS (and in the README's Layout)"


def test_every_import_points_down_a_layer_or_stays_in_its_room() -> None:
    upward = []
    for source, targets in graph().items():
        if source in ENTRY_POINTS:
            continue
        for target in targets:
            if target in ENTRY_POINTS:  # ``from podium import __version__``: the root's data
                continue
            same_room = room(source) == room(target)
            if not same_room and layer(target) >= layer(source):
                upward.append(f"{source} -> {target}")
    assert not upward, "imports that point up or sideways:\n" + "\n".join(sorted(upward))


def test_inside_a_room_every_import_points_down_its_parts() -> None:
    upward = []
    for source, targets in graph().items():
        for target in targets:
            if room(source) != room(target) or group(source) == group(target):
                continue
            low, high = sublayer(target), sublayer(source)
            if low is not None and high is not None and low >= high:
                upward.append(f"{source} -> {target}")
    assert not upward, "imports between a room's parts that point up or sideways:\n" + "\n".join(
        sorted(upward)
    )


def test_every_part_a_table_names_is_there() -> None:
    """A renamed subpackage does not leave its row silently empty."""
    for name, rows in SUBROOMS.items():
        parts = {p.stem for p in (PACKAGE / name).iterdir() if p.stem != "__init__"}
        missing = {n for row in rows for n in row} - parts - {"*"}
        assert not missing, f"SUBROOMS[{name!r}] names what the room does not have: {missing}"


def test_no_module_imports_itself_back() -> None:
    edges = {s: {t for t in ts if t not in ENTRY_POINTS} for s, ts in graph().items()}
    cycles = [c for c in strongly_connected(edges) if len(c) > 1]
    assert not cycles, "import circles:\n" + "\n".join(" <-> ".join(sorted(c)) for c in cycles)


def test_the_checker_sees_a_lazy_import_and_a_relative_one(tmp_path: Path) -> None:
    """The walk is not vacuous: it finds an import inside a function, a relative one, a module
    named in a string and a stub's lazy name, and reads no docstring as an import."""
    pkg = tmp_path / "podium" / "cli"
    pkg.mkdir(parents=True)
    (tmp_path / "podium" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from podium.cli import b\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "c.py").write_text('"""Runs podium.cli.a."""\nWORKER = "podium.cli.b"\n')
    (pkg / "__init__.pyi").write_text("from .c import WORKER as WORKER\n")
    known = {
        "podium.cli.a": pkg / "a.py",
        "podium.cli.b": pkg / "b.py",
        "podium.cli.c": pkg / "c.py",
        "podium.cli": pkg / "__init__.py",
    }
    a = set(imported("podium.cli.a", known["podium.cli.a"], known))
    b = set(imported("podium.cli.b", known["podium.cli.b"], known))
    assert "podium.cli.b" in a
    assert "podium.cli.a" in b
    assert set(imported("podium.cli.c", known["podium.cli.c"], known)) == {"podium.cli.b"}
    assert set(imported("podium.cli", known["podium.cli"], known)) == {"podium.cli.c"}
    cycles = strongly_connected({"podium.cli.a": a, "podium.cli.b": b})
    assert any({"podium.cli.a", "podium.cli.b"} <= cycle for cycle in cycles)


def strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively (the package is deeper than it is wide)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components
