"""The streaming source without Spark: offsets over committed write ids, admission control, and
the plan of each micro-batch.

An offset is ``{"writeId": W}``: every write id up to W has been read. A new stream's first offset
is ``{"writeId": -1, "snapshotPending": true}`` (the first micro-batch returns the current
snapshot, as delta-spark's source does), or, with ``startingVersion=N``, ``{"writeId": N-1}``
(``latest``: the table's current version). The table's version is its *low watermark*: the
highest write id up to which every write id has ended (a write id still open holds it back, so a
write that commits late is never skipped).

A micro-batch (A, B] returns the rows inserted by the committed write ids in (A, B]
(``read.ranges``). Write ids that delete or replace rows (a ``delete_delta``, a ``base`` of an
INSERT OVERWRITE) are *change commits*: a micro-batch never mixes them with inserts; by default one
stops the stream with an error naming it, ``skipChangeCommits=true`` skips it, and the change feed
(``readChangeFeed=true``) streams it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Optional

from .. import options as opt
from ..acid.names import ParsedDir
from ..acid.snapshot import ValidIdList
from ..exceptions import InvalidOptionError, StreamingError
from ..read.ranges import (
    WriteIdRange, check_not_erased, event_write_ids, insert_slices, is_compacted, snapshot_at,
    with_slices,
)
from ..catalog import table_ref
from ..read.options import ReadOptions
from ..read.scan import TableScan
from .versions import low_watermark, partitions_written

log = logging.getLogger(__name__)

WRITE_ID = "writeId"
PENDING = "snapshotPending"
#: Options of a stream or feed, not of the table read under it.
STREAM_ONLY = ("validwriteids", "startingversion", "endingversion", "readchangefeed",
               "maxwriteidspertrigger", "maxfilespertrigger", "skipchangecommits")


@dataclass(frozen=True)
class SourceOptions:
    starting_version: Optional[str] = None  # a write id, or "latest"
    max_write_ids: Optional[int] = None
    max_files: Optional[int] = None
    skip_change_commits: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> "SourceOptions":
        opt.refuse_blank(options, "startingVersion")
        if opt.get(options, "endingVersion") is not None:
            raise InvalidOptionError(
                "Option endingVersion is for batch reads of the change feed (spark.read); a "
                "stream reads each write id as it commits, from startingVersion on. To stop at "
                "the table's current version, run the stream with .trigger(availableNow=True)")
        start = opt.value(options, "startingVersion")
        if start is not None and start.lower() != "latest":
            opt.parse_int_text(start, "Option startingVersion")
            if int(start) < 0:
                raise InvalidOptionError(
                    f"Option startingVersion={start} must be a write id >= 0 or 'latest'")
        return cls(start.lower() if start else None,
                   opt.value(options, "maxWriteIdsPerTrigger"),
                   opt.value(options, "maxFilesPerTrigger"),
                   opt.value(options, "skipChangeCommits"))


@dataclass
class Version:
    """One write id above the stream's offset that left directories in the table."""

    write_id: int
    files: int = 0
    change: bool = False  # deletes or replaces rows
    where: list[str] = field(default_factory=list)  # directories, for messages


class StreamPlanner:
    """Offsets and micro-batch plans of one table (lives in Spark's driver-side source process)."""

    def __init__(self, options: Mapping[str, str], *, change_feed: bool = False):
        self.source = SourceOptions.parse(options)
        read = {k.lower(): v for k, v in options.items()}
        for k in STREAM_ONLY:
            read.pop(k, None)
        self.table = table_ref(read, in_worker=True)  # resolved once
        self.read = ReadOptions.parse(read)
        self.change_feed = change_feed
        self._now: Optional[TableScan] = None

    # --- the table now -------------------------------------------------------------------------
    def now(self) -> TableScan:
        """A scan of the table as it is now (its source read again: new partitions, snapshot)."""
        self._now = self.table.scan(self.read)
        return self._now

    def _scan(self, snapshot: ValidIdList) -> TableScan:
        """The table at ``snapshot``, resolved when :meth:`latest` last looked."""
        return (self._now or self.now()).at(snapshot)

    def latest(self) -> tuple[ValidIdList, int]:
        """The table's current snapshot and its low watermark."""
        snap = self.now().source.write_ids
        return snap, low_watermark(snap)

    # --- offsets -------------------------------------------------------------------------------
    def initial_offset(self) -> dict:
        start = self.source.starting_version
        if start is None:
            return {WRITE_ID: -1, PENDING: True}
        if start == "latest":
            return {WRITE_ID: self.latest()[1]}
        return {WRITE_ID: int(start) - 1}

    def latest_offset(self, start: dict, read_all: bool = False,
                      cap: Optional[int] = None) -> dict:
        """The end of the next micro-batch (``start`` itself when there is nothing new).
        ``read_all``: ignore the admission limits (Spark's ReadAllAvailable); ``cap``: read no
        write id above it (Trigger.AvailableNow's target)."""
        snap, low = self.latest()
        if cap is not None:
            low = min(low, cap)
        if start.get(PENDING):
            return {WRITE_ID: max(low, 0)}
        a = int(start[WRITE_ID])
        if low <= a:
            return start
        versions = self.versions(snap, a, low)
        if not versions:
            return start
        first = versions[0]
        if first.change:
            self._refuse(first)
            return {WRITE_ID: first.write_id}
        end, files = first.write_id, first.files
        limit_ids = None if read_all else self.source.max_write_ids
        limit_files = None if read_all else self.source.max_files
        for n, v in enumerate(versions[1:], start=2):
            if v.change or (limit_ids is not None and n > limit_ids) \
                    or (limit_files is not None and files + v.files > limit_files):
                break
            end, files = v.write_id, files + v.files
        return {WRITE_ID: end}

    def _refuse(self, v: Version) -> None:
        if self.change_feed or self.source.skip_change_commits:
            return
        raise StreamingError(
            f"Write id {v.write_id} of {self.table.display} "
            f"deleted or replaced rows ({', '.join(v.where[:3])}): a stream of inserted rows "
            "cannot follow it. Set option skipChangeCommits=true to skip such write ids, or read "
            "the change feed (option readChangeFeed=true)")

    def versions(self, snap: ValidIdList, a: int, b: int) -> list[Version]:
        """The write ids in (a, b] that left directories, with their file counts and kinds, up to
        the first INSERT OVERWRITE (a snapshot after it no longer shows the deltas before it)."""
        scan = self._scan(snapshot_at(snap, b))
        overwrites = sorted((d.write_id, d.path) for pl in scan.plan.partitions
                            for d in pl.state.all_acid_dirs
                            if d.is_base and a < d.write_id <= b and snap.is_valid(d.write_id)
                            and not is_compacted(scan.fs, d))
        if overwrites:
            w = overwrites[0][0]
            before = self.versions(snap, a, w - 1) if w - 1 > a else []
            return before + [Version(w, change=True, where=[p for x, p in overwrites if x == w])]
        check_not_erased(scan.fs, scan.plan, a, "this stream",
                         partitions_written(self.table, a, b))
        rng = WriteIdRange.of_range(snapshot_at(snap, b), a)
        found: dict[int, Version] = {}

        def add(w: int, d: ParsedDir, files: int, change: bool) -> None:
            v = found.setdefault(w, Version(w))
            v.files += files
            v.change = v.change or change
            v.where.append(d.path)

        files_by_dir: dict[str, int] = {}
        for s in insert_slices(scan.plan, rng):
            files_by_dir[s.path.rsplit("/", 1)[0]] = files_by_dir.get(s.path.rsplit("/", 1)[0], 0) \
                + (1 if s.first_stripe == 0 else 0)
        for pl in scan.plan.partitions:
            st = pl.state
            for d in st.deltas:
                if d.max_write_id <= a:
                    continue
                ids = [w for w in range(max(d.min_write_id, a + 1), d.max_write_id + 1)
                       if rng.is_valid(w)]
                if ids:
                    add(ids[0], d, files_by_dir.get(d.path, 0), False)
                    for w in ids[1:]:
                        add(w, d, 0, False)
            for d in st.delete_deltas:
                if d.max_write_id > a:
                    for w in event_write_ids(scan.fs, d, pl.dir_files.get(d.path, []), rng):
                        add(w, d, 0, True)
        return [found[w] for w in sorted(found)]

    # --- micro-batches -------------------------------------------------------------------------
    def batch_scan(self, start: dict, end: dict
                   ) -> tuple[TableScan, list, Optional[WriteIdRange]]:
        """``(scan, tasks, write-id filter)`` of the rows micro-batch (start, end] returns (no
        filter for the first, snapshot, batch; no task for a change commit that is skipped)."""
        snap, _ = self.latest()
        b = int(end[WRITE_ID])
        if start.get(PENDING):
            scan = self._scan(snapshot_at(snap, b))
            return scan, scan.tasks(), None  # the snapshot: the usual read
        a = int(start[WRITE_ID])
        versions = self.versions(snap, a, b)
        changes = [v for v in versions if v.change]
        skip = []
        if changes:
            for v in changes:
                self._refuse(v)
            skip = [v.write_id for v in changes]
        scan = self._scan(snapshot_at(snap, b))
        rng = WriteIdRange.of_range(snapshot_at(snap, b), a, skip)
        plan = with_slices(scan.plan, insert_slices(scan.plan, rng))
        return scan, plan.tasks(scan.options.split_bytes, 2), rng
