"""The docs against the tree: what README.md and docs/**/*.md name exists.

- Paths: every path-like token (``hdl/vta_core.sv``, ``tb/core/``, ``spec/configs/*.json``, a
  source file's bare name in backticks, a link target) names a file or folder of the checkout.
  A token whose first part is a top-level folder (``hdl/``, ``vtabench/`` ...) is taken from the
  repository root; another (``graph/``, ``api.py``, ``contracts/*.json``: the docs name files
  inside a package they are describing) must be the end of some path in the tree. Output paths
  (``results/``, ``build/``, ``/dev/shm``, ``~/.cache``), URLs and placeholders (``<config>``,
  ``$VAR``) are not checked.
- Modules: every dotted ``vtabench.x.y`` name (in backticks, or after ``python -m``) is a module
  of the tree, or a name one defines.
- The command line: every ``vtabench <subcommand>`` that README.md and docs/ show as code, and
  the ``--options`` after it, exist in that subcommand's parser (what ``vtabench <subcommand>
  --help`` prints).
- make: every ``make <target>`` in README.md and docs/ is a target of the Makefile, and the
  ``VAR=`` settings beside it are variables the Makefile reads.
- The layout: README.md's Layout tables list every top-level entry of the checkout and every
  package and module of ``vtabench/``, and nothing that is not there.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PurePosixPath

import pytest

from vtabench.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: Folders of the checkout that are not its sources: outputs, tools, caches.
NOT_SOURCES = {".git", ".venv", "build", "results", "__pycache__", ".pytest_cache",
               ".hypothesis", "vtabench.egg-info", ".mypy_cache", ".ruff_cache"}
#: The top-level folders that ship inside the package, and the package each installs as.
PACKAGE_DIRS = {"vtabench": "vtabench", "vtabench.hdl": "hdl", "vtabench.tb": "tb",
                "vtabench.opencl": "opencl", "vtabench.drivers": "drivers"}
#: A bare file name in backticks is checked when it ends so (a source, not a run's output).
SOURCE_SUFFIXES = (".py", ".sv", ".svh", ".vlt", ".cl", ".cpp", ".c", ".h", ".tmpl", ".md")
#: Named in the docs, not part of this tree, and why.
NOT_OURS = {
    "hardware/intelfocl/src/vta.cl": "upstream VTA's OpenCL kernel (apache/tvm-vta)",
    "vta.h": "upstream VTA's kernel header (apache/tvm-vta)",
    "vta/hw_spec_const.h": "upstream VTA's generated header",
    "hw_spec.h": "upstream VTA's ISA header",
    "onnx/backend/test/data": "the onnx package's test models",
    "image/*.bin": "a member of a .vtapkg package",
    "programs/*.bin": "a member of a .vtapkg package",
    "profile/*.bin": "a member of a .vtapkg package",
    "vta_sim_protocol.h": "generated into build/c-driver/<config>/gen/",
}
#: Top-level folders .gitignore keeps out of the tree (builds, results, the venv, wheels carried
#: to the device machine): a fresh clone has none of them, so docs naming them name outputs.
IGNORED_ROOTS = tuple(line.strip().strip("/") + "/" for line in
                      (ROOT / ".gitignore").read_text().splitlines()
                      if line.startswith("/") and line.strip().endswith("/"))
#: First parts of paths that are outputs or someone's machine, never sources.
OUTPUT_ROOTS = ("/", "~", "$", "./", "../build", "http:", "https:", "file:", "site-packages/",
                *IGNORED_ROOTS)

PATH_CHARS = r"[A-Za-z0-9_.*\-]"
#: A path with at least one slash: a/b, a/b/, a/b.c, a/*.json
SLASHED = re.compile(rf"(?<![\w./$~<>{{}}@:-])((?:{PATH_CHARS}+/)+{PATH_CHARS}*)(?![\w<>{{}}$])")
#: a backtick span, which may wrap onto the next line (not across a blank line)
BACKTICKS = re.compile(r"`((?:[^`\n]|\n(?!\s*\n))+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOTTED = re.compile(r"(?<![\w.])(vtabench(?:\.\w+)+)")


def _walk(folder: Path) -> Iterator[Path]:
    for entry in folder.iterdir():
        if entry.name in NOT_SOURCES:
            continue
        yield entry
        if entry.is_dir() and not entry.is_symlink():
            yield from _walk(entry)


@cache
def tree() -> tuple[PurePosixPath, ...]:
    """Every file and folder of the checkout (the working tree, so files others are adding
    count), relative to the root."""
    return tuple(PurePosixPath(p.relative_to(ROOT).as_posix()) for p in _walk(ROOT))


@cache
def top_level() -> frozenset[str]:
    return frozenset(p.name for p in ROOT.iterdir() if p.name not in NOT_SOURCES
                     and not p.name.startswith("."))


def exists(token: str, doc: Path) -> bool:
    """Does the path ``token`` (glob characters allowed) named in ``doc`` exist? From the root
    when its first part is a top-level name, else from the root, the doc's folder or as the end
    of any path of the tree."""
    token = token.rstrip("/")
    first = token.split("/", 1)[0]
    rooted = first in top_level() or first in ("..", ".")
    if any(ch in token for ch in "*?["):
        depth = len(PurePosixPath(token).parts)
        return any(p.match(token) and (not rooted or len(p.parts) == depth) for p in tree())
    if (ROOT / token).exists() or (doc.parent / token).exists():
        return True
    return not rooted and any(("/" + p.as_posix()).endswith("/" + token) for p in tree())


def _spans(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, token, quoted) for every path-like token of a Markdown text; quoted tokens
    come from backticks (a span may wrap onto the next line), link targets and the first cell of
    a table row."""
    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    text = re.sub(r"^ *```.*$", "", text, flags=re.M)  # a fence is no span; its lines are prose

    for match in BACKTICKS.finditer(text):
        for token in match.group(1).split():
            yield line_of(match.start()), token, True
    for match in LINK.finditer(text):
        yield line_of(match.start()), match.group(1).split("#", 1)[0], True
    prose = BACKTICKS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for number, line in enumerate(prose.splitlines(), 1):
        if line.startswith("|"):
            for path in first_cell_paths(line):
                yield number, path, True
        for match in SLASHED.finditer(line):
            yield number, match.group(1), False


def _clean(token: str) -> str:
    token = token.strip("`'\"()[],;")
    token = re.sub(r":\d+(-\d+)?$", "", token)  # file.sv:524
    return token.rstrip(".:,;")


def _placeholders(token: str) -> str | None:
    """``token`` with its upper-case placeholder parts (``hdl/gen/NAME/vta_pkg.sv``,
    ``image/N.bin``) as ``*``; None when every part is upper case (``C/BLOCK_IN``: arithmetic)."""
    parts = token.split("/")
    upper = [bool(re.fullmatch(r"[A-Z][A-Z0-9_]*(\.\w+)?", part)) for part in parts]
    if all(u or not part for u, part in zip(upper, parts)):
        return None
    return "/".join(re.sub(r"^[A-Z][A-Z0-9_]*(?=\.\w+$|$)", "*", part) if u else part
                    for u, part in zip(upper, parts))


def path_tokens(doc: Path) -> Iterator[tuple[int, str]]:
    """The tokens of ``doc`` to look up (line number, path)."""
    for number, raw, quoted in _spans(doc.read_text()):
        token = _placeholders(_clean(raw)) or ""
        if not token or token.startswith(OUTPUT_ROOTS) or "://" in token:
            continue
        if re.search(r"[<>{}$=@]|\.\.\.", token) or token.startswith("-"):
            continue  # placeholders, options, assignments
        if "/" in token:
            first = token.split("/", 1)[0]
            # unquoted prose: only paths from a known root (``TVM/Relax`` is not a path)
            if not quoted and (first not in top_level() and first not in _package_parts()
                               or not (token.endswith("/") or "." in token.rsplit("/", 1)[1])):
                continue  # prose paths: from a known folder, and a folder or a file
            if not re.fullmatch(rf"(?:\.\.?/)*(?:{PATH_CHARS}+/)*{PATH_CHARS}*/?", token):
                continue
            if token not in NOT_OURS:
                yield number, token
        elif (quoted and token not in NOT_OURS and token.endswith(SOURCE_SUFFIXES)
              and re.fullmatch(rf"{PATH_CHARS}+", token)):
            yield number, token


@cache
def _package_parts() -> frozenset[str]:
    """Folder names inside the package folders (``graph``, ``core``, ``contracts`` ...): a prose
    path starting with one is checked."""
    roots = set(PACKAGE_DIRS.values())
    return frozenset(p.name for p in tree() if len(p.parts) > 1 and p.parts[0] in roots
                     and (ROOT / p).is_dir())


def _doc_id(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_paths_named_in_docs_exist(doc: Path) -> None:
    missing = sorted({f"{_doc_id(doc)}:{n}: {t}" for n, t in path_tokens(doc)
                      if not exists(t, doc)})
    assert not missing, "paths named in the docs that are not in the tree:\n" + "\n".join(missing)


def _module_file(dotted: list[str]) -> Path | None:
    """The file of the module ``dotted`` in the tree, or None."""
    for package, folder in sorted(PACKAGE_DIRS.items(), key=lambda kv: -len(kv[0])):
        parts = package.split(".")
        if dotted[: len(parts)] == parts:
            base = ROOT.joinpath(folder, *dotted[len(parts):])
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if len(dotted) > len(parts) and candidate.is_file():
                    return candidate
            if len(dotted) == len(parts):
                return base / "__init__.py"
            return None
    return None


def _defines(module: Path, name: str) -> bool:
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return True
    return False


def module_resolves(dotted: str) -> bool:
    """Is ``vtabench.a.b`` a module of the tree, or ``vtabench.a.name`` a name module a defines
    (one level: ``vtabench.report.trace.tracing``)?"""
    parts = dotted.split(".")
    if _module_file(parts) is not None:
        return True
    module = _module_file(parts[:-1])
    return module is not None and _defines(module, parts[-1])


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_modules_named_in_docs_exist(doc: Path) -> None:
    missing = set()
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        spans = [m.group(1) for m in BACKTICKS.finditer(line)]
        spans += [m.group(1) for m in re.finditer(r"python3? -m (\S+)", line)]
        for span in spans:
            for match in DOTTED.finditer(span):
                if not module_resolves(match.group(1)):
                    missing.add(f"{_doc_id(doc)}:{number}: {match.group(1)}")
    assert not missing, \
        "modules named in the docs that are not in the tree:\n" + "\n".join(sorted(missing))


def code_lines(doc: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of what ``doc`` shows as code: backtick spans, indented code blocks and
    fenced blocks (prose around them, "make a few classes dominate", is not a command)."""
    fenced = False
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            yield number, line.strip()
        else:
            for match in re.finditer(r"`([^`]+)`", line):
                yield number, match.group(1)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


#: ``vtabench NAME ARGS`` (or ``python -m vtabench NAME ARGS``), up to a comment or the next
#: command of a shell line
COMMAND = re.compile(r"(?:^|[;&|(]\s*|\s)(?:python3? -m )?vtabench ([a-z][\w-]*)([^;|&#]*)")


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_commands_named_exist(doc: Path) -> None:
    """Every ``vtabench <subcommand>`` shown as code, and its ``--options``, are in the
    subcommand's parser: what ``vtabench <subcommand> --help`` lists."""
    subs = _subparsers()
    problems, seen = [], 0
    for number, code in code_lines(doc):
        for match in COMMAND.finditer(code):
            name, rest = match.groups()
            seen += 1
            if name not in subs:
                problems.append(f"{_doc_id(doc)}:{number}: `vtabench {name}` is not a subcommand")
                continue
            options = {s for a in subs[name]._actions for s in a.option_strings}
            for word in rest.split():
                option = word.strip("[]").split("=", 1)[0]
                if option.startswith("--") and option not in options:
                    problems.append(f"{_doc_id(doc)}:{number}: `vtabench {name}` has no {option}")
    assert not problems, "\n".join(problems)
    if doc.name == "README.md":
        assert seen > 10, "README's command list was not found"


def makefile() -> tuple[set[str], str]:
    """The Makefile's targets and its text."""
    text = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, re.M))
    for phony in re.findall(r"^\.PHONY:(.*)$", text, re.M):
        targets.update(phony.split())
    return targets, text


#: ``make TARGET [VAR=value ...]``
MAKE = re.compile(r"(?<![\w.-])make ([a-z][\w-]*)((?: \[?[A-Z_]+=[^\s\]]*\]?)*)")


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_make_targets_named_exist(doc: Path) -> None:
    targets, text = makefile()
    problems = []
    for number, code in code_lines(doc):
        for match in MAKE.finditer(code):
            target, settings = match.group(1), match.group(2)
            if target not in targets:
                problems.append(f"{_doc_id(doc)}:{number}: make {target}: no such target")
            for var in re.findall(r"([A-Z_]+)=", settings):
                if not re.search(rf"\$\({var}\)", text):
                    problems.append(f"{_doc_id(doc)}:{number}: make {target} {var}=: "
                                    "the Makefile never reads it")
    assert not problems, "\n".join(problems)


def first_cell_paths(row: str) -> list[str]:
    """The paths of a table row's first cell: ``a/b/, c.py`` names a/b/ and a/c.py (a bare name
    after a comma is in the folder of the path before it)."""
    cell = row.split("|")[1].strip()
    paths: list[str] = []
    for item in (part.strip().strip("`") for part in cell.split(",")):
        if not item or " " in item or item.startswith("-"):
            return []
        if paths and "/" not in item.rstrip("/"):
            item = str(PurePosixPath(paths[-1].rstrip("/")).parent / item)
        paths.append(item)
    return paths


def layout_table() -> list[str]:
    """The paths in the first cells of README.md's Layout tables."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    rows = section.splitlines()
    return [path for row, after in zip(rows, rows[1:] + [""])
            if row.startswith("|") and not re.fullmatch(r"\|[-| :]+\|", after)  # a header row
            for path in first_cell_paths(row)]


def test_readme_layout_lists_the_tree() -> None:
    listed = {path.rstrip("/") for path in layout_table()}
    expected = top_level() - {"README.md"}
    assert expected <= listed, f"not in README's Layout: {sorted(expected - listed)}"
    packages = {f"vtabench/{p.name}" for p in (ROOT / "vtabench").iterdir()
                if (p / "__init__.py").is_file()}
    modules = {f"vtabench/{p.name}" for p in (ROOT / "vtabench").glob("*.py")
               if p.name not in ("__init__.py", "__main__.py")}
    assert packages | modules <= listed, \
        f"parts of vtabench/ not in README's Layout: {sorted(packages | modules - listed)}"
    absent = sorted(path for path in listed if path != "results" and not (ROOT / path).exists())
    assert not absent, f"README's Layout names what is not in the tree: {absent}"
