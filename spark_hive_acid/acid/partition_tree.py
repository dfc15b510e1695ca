"""The one walk of a table's ``k=v`` partition directories (each level listed in parallel)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

from ..exceptions import SchemaMismatchError
from ..io.filesystem import FileStatus, FileSystem
from ..io.parallel import list_dirs_parallel
from .names import ParsedDir, is_hidden, parse_acid_dir
from .partitions import unescape

_PARTITION_RE = re.compile(r"^([^=]+)=(.*)$")
LIST_THREADS = 16


@dataclass
class PartitionTree:
    """The partition directories below a table root, as one listing walk found them."""

    names: list[str]  # partition column names (unescaped), outermost first; [] if unpartitioned
    leaves: list[tuple[str, str, tuple[str, ...]]]  # (leaf path, relative path, raw values)
    children: dict[str, list[FileStatus]]  # leaf path -> its listing

    def acid_dirs(self) -> Iterator[ParsedDir]:
        """Every base/delta/delete_delta directory of every leaf."""
        for leaf, _, _ in self.leaves:
            for c in self.children.get(leaf, []):
                parsed = parse_acid_dir(c.name, c.path) if c.is_dir else None
                if parsed is not None:
                    yield parsed


def walk_partitions(fs: FileSystem, table_path: str,
                    root_children: Optional[list[FileStatus]] = None) -> PartitionTree:
    """The one walk of ``k=v`` directories (each level listed in parallel).

    A directory level is a partition level when its non-hidden child directories are named
    ``k=v`` (and are not ACID directories); every directory of a level must use the same key.
    An unpartitioned table (no ``k=v`` directory at its root) has one leaf, the root.
    """
    def partition_children(children: list[FileStatus]) -> list[tuple[FileStatus, str, str]]:
        out = []
        for c in children:
            if not c.is_dir or is_hidden(c.name) or parse_acid_dir(c.name) is not None:
                continue
            m = _PARTITION_RE.match(c.name)
            if m:
                out.append((c, m.group(1), m.group(2)))
        return out

    if root_children is None:
        root_children = fs.list_dir(table_path)
    if not partition_children(root_children):
        return PartitionTree([], [(table_path, "", ())], {table_path: root_children})
    names: list[str] = []
    tree = PartitionTree(names, [], {})
    frontier: list[tuple[str, str, tuple[str, ...], list[FileStatus]]] = [
        (table_path, "", (), root_children)]
    depth = 0
    while frontier:
        level_parts = [(p, rel, vals, ch, partition_children(ch)) for p, rel, vals, ch in frontier]
        if all(not parts for *_, parts in level_parts):
            for p, rel, vals, ch, _ in level_parts:
                tree.leaves.append((p, rel, vals))
                tree.children[p] = ch
            break
        level_names = {k for *_, parts in level_parts for _, k, _ in parts}
        if len(level_names) != 1 or any(not parts for *_, parts in level_parts):
            bad = [p for p, *_, parts in level_parts if not parts][:3]
            raise SchemaMismatchError(
                f"Inconsistent partition directories under {table_path} at depth {depth + 1}: "
                f"names {sorted(level_names)}" + (f"; no partition dirs in {bad}" if bad else ""))
        names.append(unescape(level_names.pop()))
        dirs = [(c, f"{rel}/{c.name}" if rel else c.name, vals + (v,))
                for _, rel, vals, _, parts in level_parts for c, _, v in parts]
        listed = list_many(fs, [c.path for c, _, _ in dirs])
        frontier = [(c.path, rel, vals, children)
                    for (c, rel, vals), children in zip(dirs, listed)]
        depth += 1
    return tree


def leaf_partitions(fs: FileSystem, table_path: str, depth: int) -> list[str]:
    """The relative leaf partition directories that exist (``['']`` for an unpartitioned table)."""
    if depth == 0:
        return [""]
    return sorted(rel for _, rel, _ in walk_partitions(fs, table_path).leaves if rel)


def list_many(fs: FileSystem, paths: list[str]) -> list[list[FileStatus]]:
    """Listings in the order of ``paths``, fetched in parallel (the cost on remote storage)."""
    if len(paths) <= 1:
        return [fs.list_dir(p) for p in paths]
    listed = list_dirs_parallel(fs, paths, max_workers=LIST_THREADS)
    return [listed[p] for p in paths]


def has_acid_dirs(fs: FileSystem, path: str) -> bool:
    """True when ``path`` or a ``k=v`` directory below it holds a base/delta directory."""
    return any(True for _ in walk_partitions(fs, path).acid_dirs())
