"""One table's listings, turned into per-partition facts (``maintenance.facts``).

The table is resolved once (``TableRef.source()``: its snapshot, and a metastore table's
partitions), then every partition is listed through one :class:`ListedFileSystem`: Hive's
``getAcidState`` per partition (``read.listing.list_table``, which also lists the directories the
snapshot reads), then the obsolete and aborted directories, in parallel (``io.parallel``). Every
directory is listed once; no data file is opened.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Optional

from ..acid.logstate import install_names, installs_in_progress
from ..acid.names import is_hidden, parse_acid_dir
from ..acid.partition_tree import LIST_THREADS
from ..acid.partitions import partition_name
from ..catalog.base import TableRef
from ..compaction.initiator import decide_listing, thresholds
from ..exceptions import HiveAcidError
from ..io.filesystem import FileSystem
from ..io.parallel import list_dirs_parallel
from ..read.listing import list_table
from .facts import PartitionFacts, partition_facts
from .listed_fs import ListedFileSystem

log = logging.getLogger(__name__)

DEFAULT_SMALL_FILE_BYTES = 1 << 20  # 1 MiB
DEFAULT_SMALL_DELTA_PCT = 0.01  # hive.txn.acid.metrics.delta.pct.threshold (HIVE-24974)


@dataclass
class TableFacts:
    """A table's facts: its identity, snapshot, and one entry per partition."""

    name: str  # how messages name it: a path or db.table
    ref: TableRef
    location: str
    kind: str  # "full-acid" or "insert-only"
    snapshot: str
    properties: dict[str, str]
    partition_columns: list[str]
    partitions: list[PartitionFacts] = field(default_factory=list)
    lists: int = 0  # directory listings made
    opens: int = 0  # files opened (0 on a warehouse of compacted or Hive-written tables)
    property_error: Optional[str] = None  # a bad compactorthreshold.* property
    installing: dict[str, int] = field(default_factory=dict)  # partition dir -> install's W

    @property
    def insert_only(self) -> bool:
        return self.kind == "insert-only"


def scan_table(ref: TableRef, *, small_file_bytes: int = DEFAULT_SMALL_FILE_BYTES,
               small_delta_pct: float = DEFAULT_SMALL_DELTA_PCT) -> TableFacts:
    """List ``ref`` at its current snapshot (see the module docstring)."""
    source = ref.source()
    seed = dict(source.tree.children) if source.tree is not None else None
    fs = ListedFileSystem(source.fs, source.write_ids, seed)
    names, listings = list_table(fs, source.path, source.write_ids, source.txns,
                                 source.insert_only, source.known_partitions, source.tree)
    unread = [p for pl in listings for p in pl.state.obsolete + pl.state.aborted
              if _looks_like_dir(p)]
    if unread:
        for p, children in list_dirs_parallel(fs, unread, LIST_THREADS, missing_ok=True).items():
            fs.listings.setdefault(p.rstrip("/"), children)
    props = dict(source.layout.properties) if source.layout is not None else {}
    facts = TableFacts(source.display, ref, source.location,
                       "insert-only" if source.insert_only else "full-acid",
                       source.write_ids.to_string(), props, list(names))
    try:
        thresholds(props)
    except HiveAcidError as e:
        facts.property_error = str(e)
    root = source.path.rstrip("/")
    for pl in listings:
        p = pl.path.rstrip("/")
        rel = "" if p == root else p[len(root):].lstrip("/")  # as compaction names it
        name = partition_name(names, list(pl.values)) if names else rel
        pf = partition_facts(name, pl, source.write_ids, fs.listed,
                             lambda path: _bytes_below(fs, path),
                             insert_only=source.insert_only, small_file_bytes=small_file_bytes,
                             small_delta_pct=small_delta_pct)
        pf.rel = rel
        pf.decision = _decision(pl, props, source.insert_only, facts.property_error)
        facts.partitions.append(pf)
    facts.partitions.sort(key=lambda x: x.partition)
    facts.installing = installs_under_way(source.fs, source.path)
    facts.lists, facts.opens = fs.lists, fs.opens
    log.debug("scanned %s: %d partition(s), %d listing(s), %d file(s) opened", facts.name,
              len(facts.partitions), fs.lists, fs.opens)
    return facts


def installs_under_way(fs: FileSystem, table_path: str) -> dict[str, int]:
    """Partition directory -> the compaction (write or txn id) whose output is being installed
    there (readers do not see it yet: ``read.listing.listing_without_installs``). One listing;
    the install records are read only when there are some."""
    names = install_names(fs, table_path)
    if not names:
        return {}
    out: dict[str, int] = {}
    for w, rec in installs_in_progress(fs, table_path, names).items():
        for _, final in rec.pairs:
            out[final.rstrip("/").rpartition("/")[0]] = w
    return out


def _decision(pl: Any, props: dict[str, str], insert_only: bool, error: Optional[str]) -> dict[str, Any]:
    if error is not None:
        return {"decision": None, "reason": error}
    d = decide_listing(pl, props, insert_only)
    return {"decision": d["decision"], "reason": d["reason"]}


def _looks_like_dir(path: str) -> bool:
    """Obsolete entries are directories, or original files (``000000_0``) under a base."""
    return parse_acid_dir(path.rstrip("/").rpartition("/")[2]) is not None


def _bytes_below(fs: ListedFileSystem, path: str) -> int:
    """Bytes of every file below ``path`` (a directory nested in an ACID directory: rare)."""
    total = 0
    try:
        for c in fs.list_dir(path):
            if c.is_dir:
                total += 0 if is_hidden(c.name) else _bytes_below(fs, c.path)
            else:
                total += c.size
    except HiveAcidError:
        return total
    return total
