"""What write ids a table has, for the streaming source and the change feed: its low watermark,
and, where the table keeps the path-mode log, when each write id committed, what it did and
which partitions it wrote."""
from __future__ import annotations

from typing import Optional

from ..acid.snapshot import ValidIdList
from ..catalog import TableRef


def low_watermark(snapshot: ValidIdList) -> int:
    """The highest write id up to which every write id has ended (committed or aborted)."""
    open_ids = [e for e in snapshot.exceptions if e not in snapshot.aborted]
    return min(open_ids) - 1 if open_ids else snapshot.high_watermark


def commit_times(table: TableRef, low: int, high: int) -> dict[int, float]:
    """``{write id: commit time (epoch seconds)}`` for write ids in (low, high], where the table
    records it (the path-mode log); empty otherwise."""
    return {ev.write_id: ev.time for ev in table.commit_records() or ()
            if low < ev.write_id <= high and ev.committed}


def operations(table: TableRef) -> Optional[dict[int, str]]:
    """``{write id: operation}`` from the path-mode log (None without one)."""
    records = table.commit_records()
    if records is None:
        return None
    return {e.write_id: str(e.operation) for e in records if e.committed}


def partitions_written(table: TableRef, low: int, high: int
                       ) -> Optional[dict[int, Optional[list[str]]]]:
    """``{write id: partitions it wrote}`` for the committed write ids in (low, high] of a
    path-mode table's log (None for a record that does not say: one rebuilt by repair_log);
    None when the table keeps no log."""
    records = table.commit_records()
    if records is None:
        return None
    return {ev.write_id: list(ev.partitions) if ev.operation else None for ev in records
            if low < ev.write_id <= high and ev.committed}
