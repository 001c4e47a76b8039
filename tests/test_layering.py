"""Layering rules that import-linter's contracts (.importlinter) do not state.

- No cycle between files: the import graph of the project's packages, built by grimp (the graph
  library of import-linter, which also sees the imports inside function bodies), has no strongly
  connected component of more than one module.
- An import inside a function body says why it is there: a comment ``# deferred: <reason>`` on
  its line, or on the line just above it (a comment above a run of consecutive imports covers the
  run; a comment of several lines may open with it). The reason names the optional dependency or
  the measured start-up cost that needs it.
"""

from __future__ import annotations

import ast
import configparser
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def project_packages() -> list[str]:
    """The packages import-linter checks (root_packages of .importlinter): one list for both."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter", encoding="utf-8")
    return config["importlinter"]["root_packages"].split()


def strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def successors(module: str) -> Iterator[str]:
        return iter(sorted(graph.find_modules_directly_imported_by(module) & modules))

    for root in sorted(modules):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, successors(root))]
        while work:
            module, pending = work[-1]
            for imported in pending:
                if imported not in index:
                    index[imported] = low[imported] = len(index)
                    stack.append(imported)
                    on_stack.add(imported)
                    work.append((imported, successors(imported)))
                    break
                if imported in on_stack:
                    low[module] = min(low[module], index[imported])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    """A cycle's modules and the imports that join them, with their line numbers."""
    lines = [" <-> ".join(component)]
    members = set(component)
    for importer in component:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            details = graph.get_import_details(importer=importer, imported=imported)
            numbers = ", ".join(f"l.{d['line_number']}" for d in details)
            lines.append(f"    {importer} -> {imported} ({numbers})")
    return "\n".join(lines)


def test_no_import_cycle_between_files():
    packages = project_packages()
    graph = grimp.build_graph(*packages, cache_dir=None)
    modules = {m for m in graph.modules if m.split(".")[0] in packages}
    cycles = strongly_connected(graph, modules)
    assert not cycles, "import cycles between files:\n" + "\n".join(
        describe(graph, component) for component in cycles)


def test_the_cycle_finder_finds_a_cycle_and_only_cycles():
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c", "p.d"):
        graph.add_module(module)
    for importer, imported in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.d", "p.a")):
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="")
    assert strongly_connected(graph, set(graph.modules)) == [["p.a", "p.b", "p.c"]]


# --- imports inside function bodies ---------------------------------------------------------

DEFERRED = re.compile(r"#\s*deferred:\s*(?P<reason>.*\S)")
# Each top-level area checked on its own, so the report says which one breaks the rule.
AREAS = ["common", "archive", "retrieval", "agent", "trace_site", "measurement", "scripts",
         "manage.py"]


def comments_by_line(source: str) -> dict[int, str]:
    return {token.start[0]: token.string
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT}


def function_body_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement inside a function or method, however deeply nested."""
    def walk(node: ast.AST, in_function: bool) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                yield child
            yield from walk(child, in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef))
    yield from walk(tree, False)


def undeclared_deferred_imports(path: Path, root: Path = ROOT) -> list[str]:
    """The function-body imports of one file that carry no ``# deferred: <reason>`` comment."""
    source = path.read_text(encoding="utf-8")
    comments = comments_by_line(source)
    lines = source.splitlines()
    comment_only = {n for n in comments if lines[n - 1].lstrip().startswith("#")}
    imports = sorted(function_body_imports(ast.parse(source)), key=lambda n: n.lineno)
    import_lines = {line for node in imports
                    for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}

    def declared(node: ast.stmt) -> bool:
        own = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        if any(DEFERRED.search(comments.get(line, "")) for line in own):
            return True
        above = node.lineno - 1
        while above in import_lines and not DEFERRED.search(comments.get(above, "")):
            above -= 1  # the statement is in a run of imports: look above the run
        if DEFERRED.search(comments.get(above, "")):
            return True
        while above in comment_only:  # a comment of several lines: its first may say it
            if DEFERRED.search(comments[above]):
                return True
            above -= 1
        return False

    relative = path.relative_to(root)
    return [f"{relative}:{node.lineno}: {ast.unparse(node)}" for node in imports
            if not declared(node)]


def area_files(area: str) -> list[Path]:
    top = ROOT / area
    files = [top] if top.is_file() else sorted(top.rglob("*.py"))
    return [f for f in files if "migrations" not in f.relative_to(ROOT).parts]


@pytest.mark.parametrize("area", AREAS)
def test_imports_inside_functions_say_why(area):
    offenders = [line for path in area_files(area) for line in undeclared_deferred_imports(path)]
    assert not offenders, (
        "imports inside a function body without a '# deferred: <reason>' comment (move them "
        "to the top of the module, or name the optional dependency or the measured start-up "
        "cost that needs them):\n" + "\n".join(offenders))


def test_the_deferred_import_check_reads_comments(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text(
        "import os\n"
        "def plain():\n"
        "    import json\n"
        "def same_line():\n"
        "    import spacy  # deferred: optional dependency spaCy\n"
        "def above_a_run():\n"
        "    # deferred: the model load costs 5 s\n"
        "    import spacy\n"
        "    from spacy import tokens\n"
        "def empty_reason():\n"
        "    import re  # deferred:\n"
        "def long_comment():\n"
        "    # deferred: the openai client takes 0.9 s to import,\n"
        "    # paid only by the endpoint's provider\n"
        "    import openai\n"
        "def unrelated_comment():\n"
        "    # the json module\n"
        "    import json\n"
        "class Box:\n"
        "    def method(self):\n"
        "        def inner():\n"
        "            from os import path\n"
        "        return inner\n",
        encoding="utf-8")
    assert undeclared_deferred_imports(source, root=tmp_path) == [
        "sample.py:3: import json", "sample.py:11: import re", "sample.py:18: import json",
        "sample.py:22: from os import path"]
