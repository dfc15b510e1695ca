"""The package's import graph, read from the source with ``ast`` (imports inside functions count).

Used by ``tests/test_architecture.py``; run as a script to print the graph's problems.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "spark_hive_acid"

#: Layer of each package (or top-level module) below ``spark_hive_acid``; a module may import only
#: its own layer or lower ones. The top-level ``spark_hive_acid`` package (the public facade) sits
#: above everything.
LAYERS: dict[str, int] = {
    "exceptions": 0, "options": 0, "options_table": 0, "progress": 0,
    "io": 1,
    "acid": 2,
    "read": 3, "write": 3, "metastore": 3,
    "txn": 4, "catalog": 4,
    "maintenance": 5, "conversion": 5, "direct": 5, "direct_args": 5, "multi_write": 5,
    "compaction": 5, "stream": 5, "tableops": 5,
    "spark": 6, "cli": 6, "__main__": 6,
}
FACADE_LAYER = 99

#: Old import paths kept for one release: each only re-exports its new home, and nothing inside the
#: package imports it. They sit with the facade.
COMPAT_MODULES: frozenset[str] = frozenset({
    "spark_hive_acid.table", "spark_hive_acid.datasource", "spark_hive_acid.metastore.errors",
    "spark_hive_acid.metastore.transaction",
})
#: Imports allowed to point up: the metastore package's lazy re-export of the transaction names
#: that moved to ``txn.hms`` (``from spark_hive_acid.metastore import write_transaction`` keeps
#: working for one release).
COMPAT_EDGES: frozenset[tuple[str, str]] = frozenset({
    ("spark_hive_acid.metastore", "spark_hive_acid.txn.hms"),
})


#: Packages of one layer that must not import each other (issue 21): the read path takes a
#: resolved table (it never opens the metastore, ``read.source``), the write path never reaches
#: into the read path (adopting a Hive-written table is the catalog's job).
FORBIDDEN: tuple[tuple[str, str], ...] = (
    ("read", "metastore"), ("read", "write"), ("write", "read"), ("write", "metastore"),
    ("metastore", "read"), ("metastore", "write"), ("txn", "catalog"),
)
#: The table kinds: only the catalog tells them apart.
TABLE_KINDS = ("PathTable", "MetastoreTable")


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    imports: list[tuple[str, int]] = field(default_factory=list)  # (module, line)
    #: imports under ``if TYPE_CHECKING:`` (for type hints only: no cycle at run time)
    typing_imports: list[tuple[str, int]] = field(default_factory=list)
    external: list[tuple[str, int]] = field(default_factory=list)  # top-level names (pyspark ...)


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def scan(root: Path = ROOT) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        name = module_name(path, root)
        source = path.read_text(encoding="utf-8")
        mod = Module(name, path, source.count("\n") + 1)
        tree = ast.parse(source, str(path))
        for node, typing_only in _nodes(tree):
            imports = mod.typing_imports if typing_only else mod.imports
            if isinstance(node, ast.Import):
                for a in node.names:
                    target = a.name
                    if target.split(".")[0] == PACKAGE:
                        imports.append((target, node.lineno))
                    elif not typing_only:
                        mod.external.append((target.split(".")[0], node.lineno))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(name, path.name == "__init__.py", node)
                if target.split(".")[0] != PACKAGE:
                    if not typing_only:
                        mod.external.append((target.split(".")[0], node.lineno))
                    continue
                for a in node.names:  # `from pkg import module` imports the module itself
                    sub = f"{target}.{a.name}"
                    imports.append((sub if _is_module(root, sub) else target, node.lineno))
        modules[name] = mod
    return modules


def _nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every node, and whether it is under ``if TYPE_CHECKING:`` (imports for type hints only)."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, typing_only = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend((n, True) for n in node.body)
            stack.extend((n, typing_only) for n in node.orelse)
            continue
        yield node, typing_only
        stack.extend((n, typing_only) for n in ast.iter_child_nodes(node))


def _is_module(root: Path, dotted: str) -> bool:
    p = root.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def layer_of(module: str) -> int:
    parts = module.split(".")
    if module in COMPAT_MODULES or len(parts) == 1:
        return FACADE_LAYER
    return LAYERS.get(parts[1], FACADE_LAYER)


def _package_parents(module: str) -> set[str]:
    """A module's enclosing packages: importing them is not a dependency worth checking (Python runs
    a package's ``__init__`` before any of its modules anyway)."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def edges(modules: dict[str, Module]) -> Iterator[tuple[str, str, int]]:
    for m in modules.values():
        for target, line in m.imports:
            if target in modules and target != m.name and target not in _package_parents(m.name):
                yield m.name, target, line


def cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for a, b, _ in edges(modules):
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def mutual_imports(modules: dict[str, Module]) -> list[tuple[str, str]]:
    """Pairs of modules that import each other, counting every import: at module level, inside
    functions and under ``if TYPE_CHECKING:`` (a type-only import back is still two modules that
    cannot be understood apart, and often reaches for the other's private names)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m in modules.values():
        for target, _ in m.imports + m.typing_imports:
            if target in modules and target != m.name and target not in _package_parents(m.name):
                graph[m.name].add(target)
    return sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph[b])


def upward_imports(modules: dict[str, Module]) -> list[str]:
    out = []
    for a, b, line in edges(modules):
        if (a, b) in COMPAT_EDGES:
            continue
        if layer_of(b) > layer_of(a):
            out.append(f"{a}:{line} imports {b} (layer {layer_of(a)} -> {layer_of(b)})")
        if b in COMPAT_MODULES:
            out.append(f"{a}:{line} imports the compatibility path {b}")
    return out


def pyspark_outside_spark(modules: dict[str, Module]) -> list[str]:
    out = []
    for m in modules.values():
        in_spark = m.name.split(".")[1:2] == ["spark"]
        for name, line in m.external:
            if name == "pyspark" and not in_spark:
                out.append(f"{m.name}:{line} imports pyspark")
    return out


def oversized(modules: dict[str, Module], limit: int) -> list[str]:
    return [f"{m.name}: {m.lines} lines" for m in modules.values() if m.lines > limit]


def main(argv: Optional[list[str]] = None) -> int:
    mods = scan()
    problems = ([f"cycle: {' <-> '.join(c)}" for c in cycles(mods)]
                + [f"imported both ways: {a} <-> {b}" for a, b in mutual_imports(mods)]
                + upward_imports(mods)
                + pyspark_outside_spark(mods) + oversized(mods, 500))
    print("\n".join(problems) or "no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


def forbidden_imports(modules: dict[str, Module]) -> list[str]:
    """Imports between packages that :data:`FORBIDDEN` keeps apart."""
    out = []
    for a, b, line in edges(modules):
        pa_, pb = a.split(".")[1:2], b.split(".")[1:2]
        if pa_ and pb and (pa_[0], pb[0]) in FORBIDDEN:
            out.append(f"{a}:{line} imports {b} ({pa_[0]} must not import {pb[0]})")
    return out


def kind_checks_outside_catalog(root: Path = ROOT) -> list[str]:
    """``isinstance(x, PathTable)`` and the like outside ``catalog/``: what differs between the
    table kinds is decided inside the table reference."""
    out = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        if path.parent.name == "catalog":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" \
                    and len(node.args) == 2 and any(k in ast.unparse(node.args[1])
                                                    for k in TABLE_KINDS):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return out
