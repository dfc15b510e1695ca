"""What one partition's directory listings say, for the doctor and the warehouse compactor.

Everything here comes from listings and file sizes (``io.filesystem.FileStatus``): no file is
opened. One :class:`PartitionFacts` per partition holds the counts and bytes of what the current
snapshot reads (Hive's ``getAcidState``), what waits for a clean (obsolete and aborted
directories), small files, and the *layout evidence* the engine-compatibility rules look at
(``maintenance.compat``): delete-delta files with attempt ids, directories nested in ACID
directories, streaming side files, ACID directories without ``_orc_acid_version``, ``_vT``
directory names, original files, streaming-ingest deltas.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..acid.names import ACID_VERSION_FILE, FLUSH_LENGTH_SUFFIX, ParsedDir, is_hidden, \
    parse_acid_dir
from ..acid.snapshot import ValidIdList
from ..acid.state import AcidState
from ..io.filesystem import FileStatus
from ..read.listing import PartitionListing

_ATTEMPT_FILE = re.compile(r"^bucket_\d+_\d+$", re.ASCII)
#: how many example paths a finding keeps (the counts are always complete)
EXAMPLES = 5


@dataclass
class Evidence:
    """Layout facts the compatibility rules read (paths relative to the partition)."""

    attempt_delete_files: list[str] = field(default_factory=list)
    nested_in_insert: list[str] = field(default_factory=list)  # read base/delta dirs
    nested_in_delete: list[str] = field(default_factory=list)  # read delete deltas
    nested_unread: list[str] = field(default_factory=list)  # obsolete / aborted dirs
    side_files: list[str] = field(default_factory=list)  # *_flush_length in a read or obsolete delta
    missing_version: list[str] = field(default_factory=list)  # read dirs without the version file
    first_dir_missing_version: bool = False  # the base, else the first delta (Trino's check)
    visibility_dirs: list[str] = field(default_factory=list)  # base_N_vT / delta_x_y_vT
    streaming_deltas: list[str] = field(default_factory=list)
    original_files: int = 0


@dataclass
class PartitionFacts:
    """One partition (``partition`` is ``k=v/k2=v2``, ``""`` unpartitioned)."""

    partition: str  # Hive's name (k=v/k2=v2, escaped), as SHOW COMPACTIONS shows it
    path: str
    rel: str = ""  # the directory below the table root, as compaction.runner.compact names it
    base: Optional[str] = None
    base_bytes: int = 0
    deltas: int = 0  # insert deltas read
    delete_deltas: int = 0
    delta_bytes: int = 0  # insert + delete deltas read
    small_deltas: int = 0  # read deltas smaller than pct x the base (HIVE-24974)
    files: int = 0  # data files read
    bytes: int = 0
    small_files: int = 0
    original_files: int = 0
    obsolete: int = 0  # directories (and original files) waiting for a clean
    obsolete_deltas: int = 0
    obsolete_bytes: int = 0
    aborted: int = 0
    aborted_bytes: int = 0
    max_write_id: int = 0
    evidence: Evidence = field(default_factory=Evidence)
    decision: dict[str, Any] = field(default_factory=dict)  # compactIfNeeded's, with its reason
    state: Optional[AcidState] = field(default=None, repr=False)  # getAcidState's (not in JSON)

    @property
    def active_deltas(self) -> int:
        return self.deltas + self.delete_deltas

    def to_json(self) -> dict[str, Any]:
        return {
            "partition": self.partition, "base": self.base, "baseBytes": self.base_bytes,
            "deltas": self.deltas, "deleteDeltas": self.delete_deltas,
            "activeDeltas": self.active_deltas, "deltaBytes": self.delta_bytes,
            "deltaBaseRatio": round(self.delta_bytes / self.base_bytes, 6)
            if self.base_bytes else None,
            "smallDeltas": self.small_deltas, "files": self.files, "bytes": self.bytes,
            "smallFiles": self.small_files, "originalFiles": self.original_files,
            "obsolete": self.obsolete, "obsoleteDeltas": self.obsolete_deltas,
            "obsoleteBytes": self.obsolete_bytes, "aborted": self.aborted,
            "abortedBytes": self.aborted_bytes, "compactIfNeeded": self.decision,
        }


def _note(out: list[str], item: str) -> None:
    if len(out) < EXAMPLES:
        out.append(item)


def partition_facts(name: str, pl: PartitionListing, write_ids: ValidIdList,
                    listed: Callable[[str], Optional[list[FileStatus]]],
                    dir_bytes: Callable[[str], int], *, insert_only: bool,
                    small_file_bytes: int, small_delta_pct: float) -> PartitionFacts:
    """The facts of one partition: ``pl`` is its listing at ``write_ids`` (chosen directories
    listed), ``listed(path)`` the remembered listing of any other directory (obsolete and aborted
    ones are listed before this is called), ``dir_bytes(path)`` the bytes below a nested
    directory."""
    st = pl.state
    f = PartitionFacts(name, pl.path, state=st)
    ev = f.evidence
    chosen: list[ParsedDir] = ([st.base] if st.base else []) + st.deltas + st.delete_deltas
    delta_sizes: list[int] = []
    versioned: dict[str, bool] = {}
    for d in chosen:
        size, versioned[d.path] = _one_dir(f, d, pl.dir_files.get(d.path, []), write_ids,
                                           insert_only, small_file_bytes)
        f.max_write_id = max(f.max_write_id, d.max_write_id)
        if d.is_base:
            f.base, f.base_bytes = d.name, size
            continue
        delta_sizes.append(size)
        f.delta_bytes += size
        if d.is_delete:
            f.delete_deltas += 1
        else:
            f.deltas += 1
    if st.base is not None and f.base_bytes:
        limit = small_delta_pct * f.base_bytes
        f.small_deltas = sum(1 for n in delta_sizes if n < limit)
    first = st.base or (sorted(st.deltas, key=ParsedDir.sort_key)[0] if st.deltas else None)
    if first is not None and not insert_only:
        ev.first_dir_missing_version = not versioned[first.path]
    f.original_files = ev.original_files = len(st.original_files)
    f.files += len(st.original_files)
    f.bytes += sum(o.size for o in st.original_files)
    if not st.base and st.original_files:
        f.base_bytes = sum(o.size for o in st.original_files)
    _unread(f, pl, listed, dir_bytes)
    for c in listed(pl.path) or []:
        if c.is_dir and "_v" in c.name:  # cheap first: most names have no suffix
            parsed = parse_acid_dir(c.name)
            if parsed is not None and parsed.visibility_txn:
                _note(ev.visibility_dirs, c.name)
    return f


def _one_dir(f: PartitionFacts, d: ParsedDir, children: list[FileStatus],
             write_ids: ValidIdList, insert_only: bool, small_file_bytes: int
             ) -> tuple[int, bool]:
    """One pass over a read directory's listing: counts into ``f``, layout evidence; returns
    (bytes of its data files, whether it has ``_orc_acid_version``)."""
    ev = f.evidence
    size = files = small = 0
    versioned = side = False
    for c in children:
        name = c.name
        if c.is_dir:
            if not is_hidden(name):
                _note(ev.nested_in_delete if d.is_delete else ev.nested_in_insert,
                      f"{d.name}/{name}")
            continue
        if name == ACID_VERSION_FILE:
            versioned = True
        elif name.endswith(FLUSH_LENGTH_SUFFIX):
            side = True
            _note(ev.side_files, f"{d.name}/{name}")
        elif not is_hidden(name):
            files += 1
            size += c.size
            small += c.size < small_file_bytes
            if d.is_delete and _ATTEMPT_FILE.match(name):
                _note(ev.attempt_delete_files, f"{d.name}/{name}")
    f.files += files
    f.bytes += size
    f.small_files += small
    if not insert_only and not versioned:
        _note(ev.missing_version, d.name)
    if (not d.is_base and not d.is_delete and d.min_write_id < d.max_write_id
            and d.statement_id < 0 and not d.visibility_txn):
        open_inside = any(d.min_write_id <= e <= d.max_write_id and write_ids.is_open(e)
                          for e in write_ids.exceptions)
        if side or open_inside:
            _note(ev.streaming_deltas, d.name)
    return size, versioned


def _unread(f: PartitionFacts, pl: PartitionListing,
            listed: Callable[[str], Optional[list[FileStatus]]],
            dir_bytes: Callable[[str], int]) -> None:
    """Obsolete and aborted directories (and obsolete original files): counts and bytes."""
    st = pl.state
    sizes = {c.path.rstrip("/"): c.size for c in listed(pl.path) or [] if not c.is_dir}
    for kind, paths in (("obsolete", st.obsolete), ("aborted", st.aborted)):
        total = 0
        for p in paths:
            name = p.rstrip("/").rpartition("/")[2]
            parsed = parse_acid_dir(name)
            if parsed is None:  # an original file under a base
                total += sizes.get(p.rstrip("/"), 0)
                continue
            if kind == "obsolete" and not parsed.is_base:
                f.obsolete_deltas += 1
            for c in listed(p) or []:
                if c.is_dir:
                    if not is_hidden(c.name):
                        _note(f.evidence.nested_unread, f"{name}/{c.name}")
                    total += dir_bytes(c.path)
                else:
                    total += c.size
                    if kind == "obsolete" and c.name.endswith(FLUSH_LENGTH_SUFFIX):
                        _note(f.evidence.side_files, f"{name}/{c.name}")
        if kind == "obsolete":
            f.obsolete, f.obsolete_bytes = len(paths), total
        else:
            f.aborted, f.aborted_bytes = len(paths), total
