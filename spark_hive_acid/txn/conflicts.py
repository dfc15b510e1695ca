"""Write-write conflict rules: when two concurrent writes may not both commit.

The yardstick: whatever several writers do at once, the table afterwards equals the result of the
operations that succeeded, applied one after the other in *some* order; the only failure allowed is
CommitConflictError for the one that commits second. Hive resolves reads by write id, not by commit
order: a ``base_W`` hides every directory of a lower write id in its partition, and whatever has a
higher write id stays visible above it. So a rule depends on which of the two has the higher write
id, not only on which commits first.

``T`` commits; ``E`` committed first and ``T``'s snapshot did not include it:

1. both delete rows in a common partition (Hive's write-set check: both read the same rows);
2. ``T`` read the table (DELETE/UPDATE/MERGE, restore) and ``E`` replaced a partition ``T``
   changes, or the whole table: ``T`` was computed from rows that no longer exist;
3. ``T`` overwrites and ``E`` read the table with a higher write id: ``E``'s changes to old rows
   would show above the new base (with a lower write id they are hidden under it, as if ``E``
   came first; what it inserted elsewhere is rule 4's);
4. ``T`` replaces a *region* (the whole table: a static overwrite or ``truncate``; the partitions
   a condition selects: a static partition overwrite, ``dropPartitions``) and ``E`` appended with
   a lower write id into a partition of that region ``T`` did not replace (it did not exist when
   ``T`` listed the table): those rows would survive a replacement that came after them (an
   append with a higher write id is simply an append after it);
5. the mirror of 4: ``T`` appends with a lower write id than ``E``'s replacement, into a
   partition of ``E``'s region that ``E`` did not replace;
6. one of them is a MERGE that inserts rows no target row matched and the other inserted rows
   anywhere: one of those may carry a key the MERGE decided was absent (two upserts of one new key
   would both insert it);
7. both overwrite, and either replaces the whole table or a partition the other replaced (a
   base it wrote, or inside its region) (Hive serialises INSERT OVERWRITE with an exclusive lock);
8. both compact a common partition (one compaction of a partition at a time, as Hive's compaction
   queue allows; a compaction changes no rows, so it conflicts with nothing else).

Appends never conflict with appends, nor with DELETE/UPDATE/MERGE that do not insert unmatched
rows (an append is not computed from what it read). Every rule is symmetric in what the two
writes are; only the commit order decides which of the two fails. Metastore transactions get Hive's own locks
and write-set check instead.
"""
from __future__ import annotations

from typing import Any, Optional

from ..acid.log_records import Terminal
from ..acid.partition_condition import PartitionCondition
from .base import DML_OPERATIONS, WriteSet


def write_set_of_record(record: Terminal) -> WriteSet:
    """The write set a commit record describes; records written before write sets were recorded
    are read conservatively from their operation and partitions."""
    if record.write_set is not None:
        return WriteSet.from_json(record.write_set)
    return legacy_write_set(str(record.operation or ""), record.partitions,
                            record.dml_partitions)


def legacy_write_set(operation: str, partitions: Any, dml_partitions: Any) -> WriteSet:
    parts = frozenset(partitions or ())
    if operation == "overwrite":
        return WriteSet(overwritten=parts, static_overwrite=True)
    return WriteSet(inserted=parts, deleted=frozenset(dml_partitions or ()),
                    reads_table=operation in DML_OPERATIONS,
                    inserts_unmatched=operation == "merge")


def conflict(t: WriteSet, t_write_id: int, e: WriteSet, e_write_id: int) -> Optional[str]:
    """Why ``t`` (committing) may not commit after ``e`` (see the module docstring); None: fine."""
    e_over = _overwrites(e)
    t_over = _overwrites(t)
    if t.deleted & e.deleted:
        return f"both deleted rows of partition(s) {_some(t.deleted & e.deleted)}"
    if t.reads_table and (e.static_overwrite or _replaced(e, t.touched)):
        return "it overwrote rows this operation read and changed"
    if t_over and e.reads_table and e_write_id > t_write_id and (
            t.static_overwrite or _replaced(t, e.touched)):
        return "it changed rows this overwrite replaces, and would stay visible above it"
    outside = _in_region(t, e.inserted) - t.overwritten
    if e_write_id < t_write_id and outside:
        return ("it appended to partition(s) this overwrite replaces but had not seen: "
                f"{_some(outside)}")
    outside = _in_region(e, t.inserted) - e.overwritten
    if t_write_id < e_write_id and outside:
        return ("this write appends to partition(s) its overwrite replaces but had not seen: "
                f"{_some(outside)}")
    if t.inserts_unmatched and e.inserted:
        return "it inserted rows that may match keys this MERGE inserted as new"
    if e.inserts_unmatched and t.inserted:
        return "it is a MERGE that inserted keys it found absent; this write inserts rows too"
    if t_over and e_over and (t.static_overwrite or e.static_overwrite
                              or t.overwritten & e.overwritten
                              or _in_region(t, e.overwritten) or _in_region(e, t.overwritten)):
        return "both overwrite the same partitions"
    if t.compacted & e.compacted:
        return f"both compacted partition(s) {_some(t.compacted & e.compacted)}"
    return None


def _overwrites(ws: WriteSet) -> bool:
    return ws.static_overwrite or bool(ws.overwritten) or ws.replaced is not None


def _region(ws: WriteSet) -> Optional[PartitionCondition]:
    if ws.replaced is None:
        return None
    region = _REGIONS.get(ws.replaced)
    if region is None:
        region = _REGIONS[ws.replaced] = PartitionCondition.from_json(ws.replaced)
    return region


def _in_region(ws: WriteSet, parts: frozenset[str]) -> frozenset[str]:
    """Those of ``parts`` inside the region ``ws`` replaced as a whole: the whole table (a static
    overwrite) or the partitions its condition selects, whether they existed then or not."""
    if ws.static_overwrite:
        return parts
    region = _region(ws)
    if region is None:
        return frozenset()
    return frozenset(p for p in parts if region.matches_name(p))


def _replaced(ws: WriteSet, parts: frozenset[str]) -> bool:
    """Whether ``ws`` replaced any of ``parts`` (a base it wrote, or its region)."""
    return bool(parts & ws.overwritten) or bool(_in_region(ws, parts))


_REGIONS: dict[str, PartitionCondition] = {}


def _some(parts: frozenset[str]) -> str:
    names = sorted(p or "(the table)" for p in parts)
    return ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
