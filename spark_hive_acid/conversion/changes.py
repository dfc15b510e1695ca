"""What each write id of a Hive ACID table changed, told by its directories and delete events.

* The write ids of a table are the ids in its ``base``/``delta``/``delete_delta`` names (a
  ``delta_x_y`` of several write ids -- streaming ingest, minor compaction -- is read: its
  ``currentTransaction`` column), those committed in the snapshot.
* The oldest version a conversion can start from is the newest *compacted* base the snapshot
  reads (a major compaction erased the events of the write ids below it; Hive's
  ACID_NOT_ENOUGH_HISTORY): older history collapses into the first target snapshot.
* Write id W, in a snapshot at W, changed: the partitions whose base is ``base_W`` and not a
  compactor's (an INSERT OVERWRITE replaced them); the rows it inserted (their ROW__ID write id is
  W); the groups (``conversion.keys``) holding the rows its delete events name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..acid.names import ParsedDir, parse_bucket_file
from ..acid.orc import delete_key_columns, flush_length, is_acid_schema, key_arrays, open_orc
from ..acid.partitions import partition_name
from ..acid.snapshot import ValidIdList
from ..read.listing import PartitionListing
from ..read.plan import TablePlan
from ..read.ranges import event_write_ids, is_compacted
from ..read.scan import TableScan
from .keys import CHUNK_BITS

Group = tuple[int, int, int]  # (original write id, bucket property as unsigned, chunk)


def partition_of(plan: TablePlan, pl: PartitionListing) -> str:
    """The Hive partition name of ``pl`` (``""`` unpartitioned): how groups name partitions."""
    if not plan.partition_names:
        return ""
    return partition_name(plan.partition_names, list(pl.values))


@dataclass
class WriteChange:
    """What write id ``write_id`` changed, per partition name."""

    write_id: int
    replaced: set[str] = field(default_factory=set)  # INSERT OVERWRITE: whole partitions
    inserted: set[str] = field(default_factory=set)  # partitions with rows of write id W
    deleted: dict[str, set[Group]] = field(default_factory=dict)  # groups it deleted rows of

    @property
    def empty(self) -> bool:
        return not (self.replaced or self.inserted or self.deleted)

    @property
    def operation(self) -> str:
        """What the directories tell: insert, delete, update (both), insert_overwrite, none."""
        if self.replaced:
            return "insert_overwrite"
        if self.deleted:
            return "update" if self.inserted else "delete"
        return "insert" if self.inserted else "none"


def _covers(d: ParsedDir, w: int) -> bool:
    return d.min_write_id <= w <= d.max_write_id


def write_ids_present(scan: TableScan, low: int, high: int) -> list[int]:
    """The committed write ids in (low, high] that left a directory or events the snapshot of
    ``scan`` can see (every directory of the listing, visible or not, is looked at)."""
    snap = scan.write_ids
    found: set[int] = set()
    for pl in scan.plan.partitions:
        for d in pl.state.all_acid_dirs:
            if d.max_write_id <= low or d.min_write_id > high:
                continue
            if d.min_write_id == d.max_write_id:
                found.add(d.max_write_id)
            elif not d.is_base and d.path in pl.dir_files:
                found.update(event_write_ids(scan.fs, d, pl.dir_files[d.path], snap))
    return sorted(w for w in found if low < w <= high and snap.is_valid(w))


def first_version(scan: TableScan) -> int:
    """The oldest write id the history can be read from: the newest compacted base chosen
    (0: every write id's events are still there)."""
    out = 0
    for pl in scan.plan.partitions:
        base = pl.state.base
        if base is not None and is_compacted(scan.fs, base):
            out = max(out, base.write_id)
    return out


def compacted_since(scan: TableScan, low: int) -> dict[str, int]:
    """Partitions whose chosen base is a compaction above write id ``low``: ``{name: base}``."""
    out = {}
    for pl in scan.plan.partitions:
        base = pl.state.base
        if base is not None and base.write_id > low and is_compacted(scan.fs, base):
            out[partition_of(scan.plan, pl)] = base.write_id
    return out


def change_of(scan_w: TableScan, w: int) -> WriteChange:
    """What write id ``w`` changed; ``scan_w`` reads the table as of ``w``."""
    change = WriteChange(w)
    plan = scan_w.plan
    for pl in plan.partitions:
        name = partition_of(plan, pl)
        base = pl.state.base
        if base is not None and base.write_id == w and not is_compacted(scan_w.fs, base):
            change.replaced.add(name)
            continue
        if any(_covers(d, w) for d in pl.state.deltas):
            change.inserted.add(name)  # refined when read: the rows whose write id is w
        groups: set[Group] = set()
        for d in pl.state.delete_deltas:
            if _covers(d, w):
                groups |= _deleted_groups(scan_w, pl, d, w)
        if groups:
            change.deleted[name] = groups
    return change


def _deleted_groups(scan: TableScan, pl: PartitionListing, d: ParsedDir, w: int) -> set[Group]:
    """The groups of the rows the delete events of write id ``w`` in ``d`` delete."""
    out: set[Group] = set()
    for f in pl.dir_files.get(d.path, []):
        if parse_bucket_file(f.name) is None or f.size == 0:
            continue
        length = flush_length(scan.fs, f.path)
        orc = open_orc(scan.fs, f.path, length, size=f.size if length is None else None)
        if orc.nrows == 0 or not is_acid_schema(orc.schema):
            continue
        cols = delete_key_columns(orc.schema, f.path)
        owid, bp, rid, cur = key_arrays(orc.read(columns=cols), cols, f.path)
        keep = cur == w
        if not keep.any():
            continue
        keys = np.stack([owid[keep].astype(np.int64), bp[keep].astype(np.int64) & 0xFFFFFFFF,
                         rid[keep].astype(np.int64) >> CHUNK_BITS], axis=1)
        out.update(map(tuple, np.unique(keys, axis=0).tolist()))
    return out


def end_version(snapshot: ValidIdList, scan: TableScan, up_to: Optional[int]) -> int:
    """The last write id to convert: every write id up to it has ended (the low watermark), at
    most ``up_to``; for a directory without a log (everything present is committed), the highest
    write id in its directory names."""
    open_ids = [e for e in snapshot.exceptions if e not in snapshot.aborted]
    low = min(open_ids) - 1 if open_ids else snapshot.high_watermark
    if snapshot.everything_valid:
        low = max((d.max_write_id for pl in scan.plan.partitions for d in pl.state.all_acid_dirs),
                  default=0)
    return low if up_to is None else min(low, up_to)
