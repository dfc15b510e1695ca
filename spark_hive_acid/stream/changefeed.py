"""The change feed as a batch read: ``spark.read.format("hiveacid").option("readChangeFeed",
"true").option("startingVersion", A).option("endingVersion", B)``: the changes of write ids A to B
(both included; B defaults to the table's current version). See ``read.changes``."""
from __future__ import annotations

from typing import Mapping, Optional

import pyarrow as pa

from .. import options as opt
from ..exceptions import InvalidOptionError
from ..read.changes import ChangeSpec, ChangeTask, change_schema, plan_changes
from ..read.ranges import snapshot_at
from ..read.scan import TableScan
from .source import PENDING, WRITE_ID, StreamPlanner
from .versions import commit_times, current_snapshot, low_watermark


def wants_change_feed(options: Mapping[str, str]) -> bool:
    return opt.get_bool(options, "readChangeFeed", False)


def read_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options of the table read under a feed (without the feed's own)."""
    out = {k.lower(): v for k, v in options.items()}
    for k in ("validwriteids", "startingversion", "endingversion", "readchangefeed",
              "maxwriteidspertrigger", "maxfilespertrigger", "skipchangecommits"):
        out.pop(k, None)
    return out


def feed_columns(scan: TableScan) -> pa.Schema:
    return change_schema([pa.field(c.name, c.type) for c in scan.default_columns()])


def batch_change_feed(options: Mapping[str, str], out_schema: Optional[pa.Schema] = None
                      ) -> tuple[TableScan, ChangeSpec, list[ChangeTask]]:
    """Plan a batch change-feed read of the options' table and version range (``out_schema``:
    the columns as Spark wants them, default :func:`feed_columns`)."""
    start = opt.get_int(options, "startingVersion", None, minimum=0)
    if start is None:
        raise InvalidOptionError(
            "Option readChangeFeed=true needs startingVersion (the first write id whose changes "
            "are returned); endingVersion (default: the table's current version) is the last")
    snap = current_snapshot(read_options(options))
    low = low_watermark(snap)
    end = opt.get_int(options, "endingVersion", None, minimum=0)
    if end is None:
        end = low
    elif end > low:
        raise InvalidOptionError(
            f"Option endingVersion={end}: the table's current version is {low} (every write id "
            f"up to it has ended; {low + 1} is still open or not yet written)")
    if end < start:
        raise InvalidOptionError(f"Option endingVersion={end} is below startingVersion={start}")
    scan = TableScan({**read_options(options),
                      "validwriteids": snapshot_at(snap, end).to_string()})
    spec, tasks = plan_changes(scan, out_schema or feed_columns(scan), start - 1,
                               commit_times(read_options(options), start - 1, end))
    return scan, spec, tasks


def stream_change_batch(planner: StreamPlanner, start: dict, end: dict, out_schema: pa.Schema
                        ) -> tuple[TableScan, ChangeSpec, list[ChangeTask]]:
    """The change rows of micro-batch (start, end] of a change-feed stream: its first batch is the
    snapshot (every row an insert at the snapshot's version), then the changes of each range."""
    snap, _ = planner.latest()
    b = int(end[WRITE_ID])
    scan = planner._scan(snapshot_at(snap, b))
    if start.get(PENDING):
        return (scan, *plan_changes(scan, out_schema, None,
                                    commit_times(planner.options, b - 1, b)))
    a = int(start[WRITE_ID])
    return (scan, *plan_changes(scan, out_schema, a, commit_times(planner.options, a, b)))
