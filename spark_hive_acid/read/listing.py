"""Listing a table directory: partition discovery and the files each snapshot reads."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ..acid.logstate import install_names, installs_in_progress, read_install
from ..acid.names import ParsedDir, is_hidden, parse_bucket_file
from ..acid.partition_tree import LIST_THREADS, PartitionTree, list_many, walk_partitions
from ..acid.partitions import DEFAULT_PARTITION, unescape_value
from ..acid.snapshot import ValidIdList
from ..acid.state import AcidState, list_files_recursive, select_acid_state
from ..io.filesystem import FileStatus, FileSystem
from ..io.parallel import list_dirs_parallel
from .source import KnownPartitions

log = logging.getLogger(__name__)

#: Listings retried when a compaction's install began or ended while they ran.
INSTALL_RETRIES = 5

#: What one listing found: partition names, [(leaf directory, raw values)], {leaf: children}.
Listing = tuple[Sequence[str], Sequence[tuple[str, tuple[Optional[str], ...]]],
                dict[str, list[FileStatus]]]


@dataclass
class PartitionListing:
    """One leaf directory (the table root when unpartitioned) and what the snapshot reads there."""

    path: str
    values: tuple[Optional[str], ...]  # unescaped partition values; None = default partition
    state: AcidState = field(default_factory=AcidState)
    dir_files: dict[str, list[FileStatus]] = field(default_factory=dict)  # acid dir path -> files


def list_table(fs: FileSystem, table_path: str, write_ids: ValidIdList, txns: ValidIdList,
               insert_only: bool, known_partitions: Optional[KnownPartitions] = None,
               tree: Optional[PartitionTree] = None) -> tuple[list[str], list[PartitionListing]]:
    """Partition names and, per leaf directory, the snapshot's state and files.

    ``known_partitions`` (names, [(location, raw values)]) comes from a metastore; without it the
    partitions are discovered from ``k=v`` directory names below the table, or taken from
    ``tree``, a walk already made (for the snapshot of a table without a log)."""
    walked = [tree] if tree is not None else []  # used by the first listing only

    def listing() -> Listing:
        if known_partitions is not None:
            names, leaves = known_partitions
            listed = list_dirs_parallel(fs, [p for p, _ in leaves], max_workers=LIST_THREADS,
                                        missing_ok=True) if leaves else {}
            return names, leaves, {p: listed[p] for p, _ in leaves}
        found = walked.pop() if walked else walk_partitions(fs, table_path)
        return found.names, [(p, vals) for p, _, vals in found.leaves], found.children

    names, leaves, children_by_leaf = listing_without_installs(fs, table_path, listing)
    listings: list[PartitionListing] = []
    for leaf_path, raw_values in leaves:
        state = select_acid_state(fs, children_by_leaf[leaf_path], write_ids, txns,
                                  insert_only=insert_only, partition_path=leaf_path)
        values = tuple(v if v is None or known_partitions is not None and v != DEFAULT_PARTITION
                       else unescape_value(v) for v in raw_values)
        listings.append(PartitionListing(leaf_path, values, state))
    # list the selected ACID directories (in parallel: the cost on remote storage)
    dirs: list[ParsedDir] = []
    for pl in listings:
        st = pl.state
        dirs.extend(([st.base] if st.base else []) + st.deltas + st.delete_deltas)
    dir_files = dict(zip([d.path for d in dirs],
                         list_many(fs, [d.path for d in dirs]) if dirs else []))
    for pl in listings:
        st = pl.state
        for d in ([st.base] if st.base else []) + st.deltas + st.delete_deltas:
            pl.dir_files[d.path] = dir_files[d.path]
    return list(names), listings


def listing_without_installs(fs: FileSystem, table_path: str,
                             listing: Callable[[], Listing]) -> Listing:
    """``listing()`` (-> names, leaves, {leaf: children}) with the output directories of
    compactions still being installed left out, so a reader sees a compaction's directories all
    at once or not at all (``acid.logstate`` installs; ``txn.committer.commit_compaction``).

    The ``installs/`` names are read before and after the listing: a name that appeared in
    between means an install began or ended while the listing ran, which may have seen half of it;
    the listing is then taken again (``INSTALL_RETRIES`` times, after which the directories of
    those installs are left out too)."""
    before = install_names(fs, table_path)
    result = listing()
    after = install_names(fs, table_path)
    fresh = after - before
    for _ in range(INSTALL_RETRIES):
        if not fresh:
            break
        before = after
        result = listing()
        after = install_names(fs, table_path)
        fresh = after - before
    if not after:
        return result
    hide = {final.rstrip("/") for rec in installs_in_progress(fs, table_path, after).values()
            for _, final in rec.pairs}
    if fresh:  # still moving after the retries: leave out everything those installs touch
        for stem in {n.split(".")[0] for n in fresh if n.split(".")[0].isdigit()}:
            rec = read_install(fs, table_path, int(stem))
            hide.update(final.rstrip("/") for _, final in (rec.pairs if rec else ()))
    if not hide:
        return result
    names, leaves, children = result
    return names, leaves, {leaf: [c for c in ch if c.path.rstrip("/") not in hide]
                           for leaf, ch in children.items()}


def data_files_of_dir(fs: FileSystem, d: ParsedDir, children: list[FileStatus],
                      insert_only: bool) -> list[FileStatus]:
    """Data files of a selected directory (docs/format.md §2: bucket files in deltas, all in a base)."""
    if insert_only:
        out: list[FileStatus] = []
        for c in children:
            if is_hidden(c.name):
                continue
            if c.is_dir:
                out.extend(list_files_recursive(fs, c.path))
            elif c.size > 0 or c.name.endswith(".parquet"):
                out.append(c)
        return sorted(out, key=lambda f: f.path)
    files = []
    for c in children:
        if c.is_dir or is_hidden(c.name):
            continue
        if parse_bucket_file(c.name) is not None:
            files.append(c)
        elif not d.is_delete and not c.name.endswith("_flush_length"):
            files.append(c)  # raw (LOAD DATA) files, or a base's plainly named files
    return sorted(files, key=lambda f: f.path)
