"""The change feed as a batch read: ``spark.read.format("hiveacid").option("readChangeFeed",
"true").option("startingVersion", A).option("endingVersion", B)``: the changes of write ids A to B
(both included; B defaults to the table's current version). See ``read.changes``."""
from __future__ import annotations

from typing import Mapping, Optional

import pyarrow as pa

from .. import options as opt
from ..exceptions import InvalidOptionError, NotEnoughHistoryError, StreamingError
from ..acid.snapshot import ValidIdList
from ..io.filesystem import FileSystem
from ..read.changes import (
    INSERT, ChangeSpec, ChangeTask, change_schema, plan_changes, plan_overwrite,
)
from ..catalog import TableRef, table_ref
from ..read.options import ReadOptions
from ..read.ranges import is_compacted, snapshot_at
from ..read.scan import TableScan
from .source import PENDING, STREAM_ONLY, WRITE_ID, StreamPlanner
from .versions import commit_times, low_watermark, partitions_written


def wants_change_feed(options: Mapping[str, str]) -> bool:
    return bool(opt.value(options, "readChangeFeed"))


def read_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options of the table read under a feed (without the feed's own)."""
    out = {k.lower(): v for k, v in options.items()}
    for k in STREAM_ONLY:
        out.pop(k, None)
    return out


def _version(options: Mapping[str, str], name: str) -> Optional[int]:
    """A write id option of a batch feed (``latest`` is a stream's, refused here)."""
    raw = opt.value(options, name)
    if raw is None:
        return None
    number = opt.parse_int_text(raw, f"Option {name}")
    if number < 0:
        raise InvalidOptionError(f"Option {name}={number} must be >= 0")
    return number


def feed_table(options: Mapping[str, str]) -> tuple[TableRef, TableScan]:
    """The table a feed reads (resolved once) and its scan now."""
    read = read_options(options)
    table = table_ref(read, in_worker=True)
    return table, table.scan(ReadOptions.parse(read))


def feed_columns(scan: TableScan) -> pa.Schema:
    return change_schema([pa.field(c.name, c.type) for c in scan.default_columns()])


Planned = tuple[FileSystem, list[tuple[ChangeSpec, ChangeTask]]]


def batch_change_feed(options: Mapping[str, str], out_schema: Optional[pa.Schema] = None
                      ) -> Planned:
    """Plan a batch change-feed read of the options' table and version range (``out_schema``:
    the columns as Spark wants them, default :func:`feed_columns`): the file system and the
    (spec, task) pairs."""
    start = _version(options, "startingVersion")
    if start is None:
        raise InvalidOptionError(
            "Option readChangeFeed=true needs startingVersion (the first write id whose changes "
            "are returned); endingVersion (default: the table's current version) is the last")
    table, now = feed_table(options)
    snap = now.source.write_ids
    low = low_watermark(snap)
    end = _version(options, "endingVersion")
    if end is None:
        end = low
    elif end > low:
        raise InvalidOptionError(
            f"Option endingVersion={end}: the table's current version is {low} (every write id "
            f"up to it has ended; {low + 1} is still open or not yet written)")
    if end < start:
        raise InvalidOptionError(f"Option endingVersion={end} is below startingVersion={start}")
    return plan_feed(table, now, snap, start - 1, end, out_schema)


def _scan(now: TableScan, snap: ValidIdList, version: int) -> TableScan:
    return now.at(snapshot_at(snap, version))


def plan_feed(table: TableRef, now: TableScan, snap: ValidIdList, low: int, high: int,
              out_schema: Optional[pa.Schema] = None) -> Planned:
    """The changes of write ids (low, high]: the range is cut at each INSERT OVERWRITE (a
    snapshot after one no longer shows the deltas before it), each piece planned at its end.
    A snapshot in the range older than a major compaction's base cannot be read any more
    (Hive's ACID_NOT_ENOUGH_HISTORY): StreamingError names the oldest version to start from."""
    try:
        return _plan_feed(table, now, snap, low, high, out_schema)
    except NotEnoughHistoryError as e:
        erased = max((pl.state.base.write_id
                      for pl in _scan(now, snap, low_watermark(snap)).plan.partitions
                      if pl.state.base is not None), default=high)
        raise StreamingError(
            f"A major compaction erased the history of write ids up to {erased} that the change "
            f"feed of versions {low + 1} to {high} needs ({e}). The oldest version it can start "
            f"from now is {erased + 1}: startingVersion={erased + 1}") from e


def _plan_feed(table: TableRef, now: TableScan, snap: ValidIdList, low: int, high: int,
               out_schema: Optional[pa.Schema]) -> Planned:
    at_high = _scan(now, snap, high)
    out_schema = out_schema or feed_columns(at_high)
    fs = at_high.fs
    overwrites = sorted({d.write_id for pl in at_high.plan.partitions
                         for d in pl.state.all_acid_dirs
                         if d.is_base and low < d.write_id <= high and snap.is_valid(d.write_id)
                         and not is_compacted(fs, d)})
    times = commit_times(table, low, high)
    written = partitions_written(table, low, high)
    pairs: list[tuple[ChangeSpec, ChangeTask]] = []
    lo = low
    for w in overwrites + [None]:
        hi = high if w is None else w - 1
        if hi > lo:
            spec, tasks = plan_changes(at_high if hi == high else _scan(now, snap, hi),
                                       out_schema, lo, times, written)
            pairs += [(spec, t) for t in tasks]
        if w is not None:
            tasks, inserts, deletes = plan_overwrite(
                _scan(now, snap, w), _scan(now, snap, w - 1), out_schema, times)
            pairs += [(inserts if t.kind == INSERT else deletes, t) for t in tasks]
            lo = w
    return fs, pairs


def stream_change_batch(planner: StreamPlanner, start: dict, end: dict, out_schema: pa.Schema
                        ) -> Planned:
    """The change rows of micro-batch (start, end] of a change-feed stream: its first batch is the
    snapshot (every row an insert at the snapshot's version), then the changes of each range."""
    now = planner.now()
    snap = now.source.write_ids
    b = int(end[WRITE_ID])
    if start.get(PENDING):
        scan = _scan(now, snap, b)
        spec, tasks = plan_changes(scan, out_schema, None, commit_times(planner.table, b - 1, b))
        return scan.fs, [(spec, t) for t in tasks]
    return plan_feed(planner.table, now, snap, int(start[WRITE_ID]), b, out_schema)
