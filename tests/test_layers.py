"""The package's imports go one way: down the layers, never in a circle (docs/dev/flow.md).

Every module of vtabench/, drivers/ (installed as vtabench.drivers) and tb/ (vtabench.tb) is
parsed with ``ast`` for its imports: those at the top, inside functions and under
``TYPE_CHECKING`` alike. A module may import its own layer and the layers below it, for types
too. No two modules may import each other, directly or round a longer circle, at the top or
inside a function (moving an import into a function does not undo a circle); an import under
``if TYPE_CHECKING:`` runs nothing, so it closes no circle (spec.isa.layout names spec.config's
``Config`` in its annotations while spec.config calls the layout to check a configuration).

The layers, lowest first, are :data:`LAYERS`: callers sit above what they call, as the flow
runs: cli -> verify -> report -> workloads -> graph -> compiler -> runtime -> drivers -> targets
(fsim, the RTL and its benches, OpenCL) -> hwgen (the generators read spec's data) -> spec ->
base utilities. report sits below verify: it draws the data it is handed and knows no check. The
module unit benches (tb/unit: cocotb tests and their runners, which build programs and check
them against fsim) are verification code, in the verify layer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Source folders and the package each installs as (pyproject.toml's package-dir).
SOURCE_PACKAGES = {"vtabench": "vtabench", "drivers": "vtabench.drivers", "tb": "vtabench.tb"}
#: The layers, lowest first: (name, the modules and packages in it). A module belongs to the
#: layer of the longest entry that names it or a package above it; the root entry ``vtabench``
#: names the package's __init__ only.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("vtabench", "vtabench.sources", "vtabench.workdirs", "vtabench.progress",
              "vtabench.processes")),
    ("spec", ("vtabench.spec",)),
    ("hwgen", ("vtabench.hwgen",)),
    ("targets", ("vtabench.fsim", "vtabench.rtl", "vtabench.tb", "vtabench.opencl",
                 "vtabench.hdl", "vtabench.formal")),
    ("drivers", ("vtabench.drivers",)),
    ("runtime", ("vtabench.runtime",)),
    ("compiler", ("vtabench.compiler",)),
    ("graph", ("vtabench.graph",)),
    ("workloads", ("vtabench.workloads",)),
    ("report", ("vtabench.report",)),
    ("verify", ("vtabench.verify", "vtabench.tb.unit")),
    ("cli", ("vtabench.cli", "vtabench.__main__")),
)
ROOT_PACKAGE = "vtabench"


@dataclass(frozen=True)
class Import:
    """``module`` imports ``target`` (both module names) at ``where`` (file:line);
    ``type_only``: under ``if TYPE_CHECKING:``."""

    module: str
    target: str
    where: str
    type_only: bool = False


def modules_of(roots: Mapping[Path, str]) -> dict[str, Path]:
    """Module name -> file for every .py under each folder of ``roots`` (folder -> package)."""
    found: dict[str, Path] = {}
    for folder, package in roots.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imports_of(module: str, path: Path, known: Mapping[str, Path]) -> Iterator[Import]:
    """The imports of ``module`` (every ``import`` and ``from ... import`` in its text) that
    reach a module of ``known``: the most specific one (``from a.b import c`` is a.b.c when
    that is a module, else a.b). Parent packages a dotted import runs as a side effect are not
    counted: a package's __init__ importing its own modules is no circle."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    type_only = {id(inner) for node in ast.walk(tree) if _is_type_checking_block(node)
                 for stmt in node.body for inner in ast.walk(stmt)}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
                yield Import(module, name, f"{shown}:{node.lineno}", id(node) in type_only)


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
            or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def layer_of(module: str) -> int | None:
    """Index in LAYERS of the layer ``module`` belongs to; None when no entry names it."""
    best: tuple[int, int] | None = None   # (length of the entry, layer index)
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            named = module == entry or (entry != ROOT_PACKAGE and module.startswith(entry + "."))
            if named and (best is None or len(entry) > best[0]):
                best = (len(entry), index)
    return None if best is None else best[1]


def upward_imports(imports: list[Import]) -> list[str]:
    """Each import from a lower layer to a higher one, as a line (once per statement)."""
    out = set()
    for imp in imports:
        low, high = layer_of(imp.module), layer_of(imp.target)
        if low is not None and high is not None and high > low:
            out.add(f"{imp.where}: {imp.module} ({LAYERS[low][0]}) imports {imp.target} "
                    f"({LAYERS[high][0]})")
    return sorted(out)


def circles(imports: list[Import]) -> list[list[str]]:
    """The import circles: each strongly connected set of two or more modules (Tarjan),
    sorted. Type-only imports are left out (they run nothing)."""
    graph: dict[str, set[str]] = {}
    for imp in (i for i in imports if not i.type_only):
        graph.setdefault(imp.module, set()).add(imp.target)
        graph.setdefault(imp.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe_circle(members: list[str], imports: list[Import]) -> str:
    inside = set(members)
    edges = sorted({f"{i.module} -> {i.target} ({i.where})" for i in imports
                    if i.module in inside and i.target in inside and not i.type_only})
    return "circle of " + ", ".join(members) + ":\n    " + "\n    ".join(edges)


def all_imports(roots: Mapping[Path, str]) -> tuple[dict[str, Path], list[Import]]:
    known = modules_of(roots)
    return known, [imp for m, p in known.items() for imp in imports_of(m, p, known)]


MODULES, IMPORTS = all_imports({REPO / folder: pkg for folder, pkg in SOURCE_PACKAGES.items()})


def test_every_module_has_a_layer():
    assert len(MODULES) > 100, sorted(MODULES)   # the tree was found
    unplaced = sorted(m for m in MODULES if layer_of(m) is None)
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"


def test_no_module_imports_a_higher_layer():
    up = upward_imports(IMPORTS)
    assert not up, "imports from a lower layer to a higher one:\n  " + "\n  ".join(up)


def test_no_import_circle():
    found = circles(IMPORTS)
    assert not found, "import circles:\n  " + "\n  ".join(describe_circle(c, IMPORTS)
                                                         for c in found)


@pytest.fixture
def toy_tree(tmp_path: Path) -> Path:
    """A package ``vtabench`` of four modules: spec.a imports cli lazily (upward), spec.a and
    spec.b import each other (b inside a function, relatively), rtl.c imports spec.b and
    spec.b imports rtl.c for types only (upward, but no circle)."""
    pkg = tmp_path / "vtabench"
    for folder in (pkg, pkg / "spec", pkg / "rtl", pkg / "cli"):
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").write_text("")
    (pkg / "spec" / "a.py").write_text("from vtabench.spec import b\n\n"
                                       "def run():\n    import vtabench.cli.main\n")
    (pkg / "spec" / "b.py").write_text("from typing import TYPE_CHECKING\n\n"
                                       "if TYPE_CHECKING:\n    from vtabench.rtl.c import C\n\n"
                                       "def late():\n    from . import a\n")
    (pkg / "rtl" / "c.py").write_text("from vtabench.spec.b import late\n")
    (pkg / "cli" / "main.py").write_text("")
    return pkg


def test_the_checker_finds_a_lazy_upward_import_and_a_circle_in_a_function(toy_tree):
    known, imports = all_imports({toy_tree: "vtabench"})
    assert "vtabench.spec.a" in known and "vtabench.cli.main" in known
    up = upward_imports(imports)
    assert len(up) == 2, up
    assert "vtabench.spec.a (spec) imports vtabench.cli.main (cli)" in up[0]
    assert up[0].split(": ")[0].endswith("a.py:4")
    assert "vtabench.spec.b (spec) imports vtabench.rtl.c (targets)" in up[1]
    assert circles(imports) == [["vtabench.spec.a", "vtabench.spec.b"]]
