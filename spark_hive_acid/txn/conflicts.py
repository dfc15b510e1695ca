"""Write-write conflict rules: when two concurrent writes may not both commit.

The yardstick: whatever several writers do at once, the table afterwards equals the result of the
operations that succeeded, applied one after the other in *some* order; the only failure allowed is
CommitConflictError for the one that commits second. Hive resolves reads by write id, not by commit
order: a ``base_W`` hides every directory of a lower write id in its partition, and whatever has a
higher write id stays visible above it. So a rule depends on which of the two has the higher write
id, not only on which commits first.

``T`` commits; ``E`` committed first and ``T``'s snapshot did not include it:

1. both delete rows in a common partition (Hive's write-set check: both read the same rows);
2. ``T`` read the table (DELETE/UPDATE/MERGE) and ``E`` overwrote a partition ``T`` changes, or the
   whole table: ``T`` was computed from rows that no longer exist;
3. ``T`` overwrites and ``E`` read the table with a higher write id: ``E``'s changes to old rows
   would show above the new base (with a lower write id they are hidden under it, as if ``E``
   came first; what it inserted elsewhere is rule 4's);
4. ``T`` overwrites the whole table and ``E`` appended with a lower write id into a partition the
   overwrite did not replace (it did not exist yet): those rows would survive an overwrite that
   came after them (an append with a higher write id is simply an append after the overwrite);
5. the mirror of 4: ``T`` appends with a lower write id than ``E``'s whole-table overwrite, into a
   partition ``E`` did not replace;
6. one of them is a MERGE that inserts rows no target row matched and the other inserted rows
   anywhere: one of those may carry a key the MERGE decided was absent (two upserts of one new key
   would both insert it);
7. both overwrite, and either replaces the whole table or they replace a common partition (Hive
   serialises INSERT OVERWRITE with an exclusive lock);
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
    e_over = e.static_overwrite or bool(e.overwritten)
    t_over = t.static_overwrite or bool(t.overwritten)
    if t.deleted & e.deleted:
        return f"both deleted rows of partition(s) {_some(t.deleted & e.deleted)}"
    if t.reads_table and (e.static_overwrite or e.overwritten & t.touched):
        return "it overwrote rows this operation read and changed"
    if t_over and e.reads_table and e_write_id > t_write_id and (
            t.static_overwrite or e.touched & t.overwritten):
        return "it changed rows this overwrite replaces, and would stay visible above it"
    if t.static_overwrite and e_write_id < t_write_id and e.inserted - t.overwritten:
        return ("it appended to partition(s) this whole-table overwrite did not replace: "
                f"{_some(e.inserted - t.overwritten)}")
    if e.static_overwrite and t_write_id < e_write_id and t.inserted - e.overwritten:
        return ("this write appends to partition(s) its whole-table overwrite did not replace: "
                f"{_some(t.inserted - e.overwritten)}")
    if t.inserts_unmatched and e.inserted:
        return "it inserted rows that may match keys this MERGE inserted as new"
    if e.inserts_unmatched and t.inserted:
        return "it is a MERGE that inserted keys it found absent; this write inserts rows too"
    if t_over and e_over and (t.static_overwrite or e.static_overwrite
                              or t.overwritten & e.overwritten):
        return "both overwrite the same partitions"
    if t.compacted & e.compacted:
        return f"both compacted partition(s) {_some(t.compacted & e.compacted)}"
    return None


def _some(parts: frozenset[str]) -> str:
    names = sorted(p or "(the table)" for p in parts)
    return ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
