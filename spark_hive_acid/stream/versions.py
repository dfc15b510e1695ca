"""What write ids a table has, for the streaming source and the change feed: its current snapshot
(path-mode log, metastore, or "everything present" for a Hive-written directory without a log),
its low watermark, and when each write id committed."""
from __future__ import annotations

from typing import Mapping, Optional

from .. import options as opt
from ..acid.logstate import read_events, read_snapshot
from ..acid.snapshot import ValidIdList
from ..io.registry import get_filesystem
from ..txn.pathlog import max_write_id_in_dirs


def current_snapshot(options: Mapping[str, str]) -> ValidIdList:
    """The table's committed snapshot now (options name a path or a metastore table)."""
    table = opt.get_str(options, "table")
    if table:
        from ..metastore.api import client_from_options, table_from_options

        db, tbl = table_from_options(options)
        with client_from_options(options) as client:
            info = client.get_table(db, tbl)
            return client.read_snapshot(info.db, info.name)[0]
    fs, path = get_filesystem(opt.get_str(options, "path") or "", options)
    snap = read_snapshot(fs, path)
    if snap is None:  # no log: everything present is committed (a table Hive wrote)
        return ValidIdList.of(max_write_id_in_dirs(fs, path))
    return snap


def low_watermark(snapshot: ValidIdList) -> int:
    """The highest write id up to which every write id has ended (committed or aborted)."""
    open_ids = [e for e in snapshot.exceptions if e not in snapshot.aborted]
    return min(open_ids) - 1 if open_ids else snapshot.high_watermark


def commit_times(options: Mapping[str, str], low: int, high: int) -> dict[int, float]:
    """``{write id: commit time (epoch seconds)}`` for write ids in (low, high], where the table
    records it (the path-mode log); empty otherwise."""
    if opt.get_str(options, "table"):
        return {}
    fs, path = get_filesystem(opt.get_str(options, "path") or "", options)
    out: dict[int, float] = {}
    for ev in read_events(fs, path):
        if low < ev.write_id <= high and ev.committed:
            out[ev.write_id] = ev.time
    return out


def operations(options: Mapping[str, str]) -> Optional[dict[int, str]]:
    """``{write id: operation}`` from the path-mode log (None for metastore tables)."""
    if opt.get_str(options, "table"):
        return None
    fs, path = get_filesystem(opt.get_str(options, "path") or "", options)
    return {e.write_id: str(e.operation) for e in read_events(fs, path) if e.committed}


def partitions_written(options: Mapping[str, str], low: int, high: int
                       ) -> Optional[dict[int, Optional[list[str]]]]:
    """``{write id: partitions it wrote}`` for the committed write ids in (low, high] of a
    path-mode table's log (None for a record that does not say: one rebuilt by repair_log);
    None when the table keeps no log."""
    if opt.get_str(options, "table"):
        return None
    fs, path = get_filesystem(opt.get_str(options, "path") or "", options)
    if read_snapshot(fs, path) is None:
        return None
    out: dict[int, Optional[list[str]]] = {}
    for ev in read_events(fs, path):
        if low < ev.write_id <= high and ev.committed:
            out[ev.write_id] = list(ev.partitions) if ev.operation else None
    return out
