"""Reading what a range of write ids (A, B] inserted: the streaming source's micro-batches and the
inserts of the change feed.

The directories are those a snapshot at B reads (the one planner, ``read.plan``), minus what holds
only write ids <= A; the rows are filtered by their event's write id with
:class:`WriteIdRange`, a snapshot with a lower bound, so a ``delta_x_y`` spanning A (Hive
streaming ingest, minor compaction) gives exactly its events in (A, B]. A compacted base holding
write ids above A erased the events the range needs: :class:`~spark_hive_acid.exceptions.StreamingError`
says so (:func:`check_not_erased`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from ..acid.names import ParsedDir, parse_acid_dir, parse_bucket_file
from ..acid.orc import acid_field_names, flush_length, is_acid_schema, key_arrays, open_orc
from ..acid.snapshot import RangeResponse, ValidIdList
from ..acid.state import read_metadata_file
from ..exceptions import StreamingError
from ..io.filesystem import FileStatus, FileSystem
from .plan import ACID, INSERT_ONLY, RAW, FileSlice, TablePlan


@dataclass(frozen=True)
class WriteIdRange(ValidIdList):
    """A snapshot whose valid write ids are also above ``low``: (low, high watermark]."""

    low: int = -1

    @classmethod
    def of_range(cls, snapshot: ValidIdList, low: int, skip: Iterable[int] = ()) -> "WriteIdRange":
        """(``low``, snapshot's high watermark], minus the snapshot's exceptions and ``skip``."""
        aborted = sorted(set(snapshot.aborted) | set(skip))
        open_ids = [e for e in snapshot.exceptions if e not in snapshot.aborted]
        base = ValidIdList.of(snapshot.high_watermark, open_ids, aborted, snapshot.table_name)
        return cls(base.high_watermark, base.min_open, base.exceptions, base.aborted,
                   base.table_name, low)

    def is_valid(self, w: int) -> bool:
        return w > self.low and super().is_valid(w)

    @property
    def everything_valid(self) -> bool:
        return False

    def range_valid(self, lo: int, hi: int) -> RangeResponse:
        if hi <= self.low:
            return RangeResponse.NONE
        inner = super().range_valid(max(lo, self.low + 1), hi)
        return RangeResponse.SOME if lo <= self.low and inner is not RangeResponse.NONE else inner

    def valid_mask(self, ids: np.ndarray) -> np.ndarray:
        return (ids > self.low) & super().valid_mask(ids)


def snapshot_at(snapshot: ValidIdList, write_id: int) -> ValidIdList:
    """The table as of ``write_id`` (every write id up to it must have ended in ``snapshot``)."""
    if write_id >= snapshot.high_watermark and not snapshot.exceptions:
        return ValidIdList.of(max(write_id, 0), table_name=snapshot.table_name)
    aborted = [a for a in snapshot.aborted if a <= write_id]
    open_ids = [e for e in snapshot.exceptions if e <= write_id and e not in snapshot.aborted]
    return ValidIdList.of(max(write_id, 0), open_ids, aborted, snapshot.table_name)


def check_not_erased(fs: FileSystem, plan: TablePlan, low: int, what: str,
                     written: Optional[Mapping[int, Optional[Sequence[str]]]] = None) -> None:
    """StreamingError when a compacted base chosen by the plan holds write ids above ``low``:
    the compaction erased the events of (low, base] (deleted rows, and which write id did what).
    ``written``: ``{write id: partitions it wrote (None: unknown)}`` where the table records it
    (the path-mode log); a base of a partition no write id of (low, base] wrote erased nothing
    (a compactor names its base after the table's highest write id)."""
    for pl in plan.partitions:
        base = pl.state.base
        if base is None or base.write_id <= low or not is_compacted(fs, base):
            continue
        if written is not None:
            rel = pl.path[len(plan.table_path):].strip("/")
            if not any(parts is None or rel in parts
                       for w, parts in written.items() if low < w <= base.write_id):
                continue
        raise StreamingError(
            f"A major compaction ({base.path}) erased the history of write ids {low + 1} to "
            f"{base.write_id} that {what} needs. The oldest version it can start from now is "
            f"{base.write_id + 1}: start a new stream (new checkpoint) with "
            f"startingVersion={base.write_id + 1} or without startingVersion (the current "
            "snapshot first, then new write ids)")


def is_compacted(fs: FileSystem, base: ParsedDir) -> bool:
    """A compactor's base (``_vT`` or the ``_metadata_acid`` marker), not an INSERT OVERWRITE's."""
    if base.visibility_txn:
        return True
    meta = read_metadata_file(fs, base.path)
    return meta is not None and meta.get("dataFormat") == "compacted"


def dir_of(s: FileSlice) -> Optional[ParsedDir]:
    """The base/delta directory a slice's file lies in (None: an original file)."""
    parent = s.path.rstrip("/").rsplit("/", 1)[0]
    return parse_acid_dir(parent.rsplit("/", 1)[-1], parent)


def insert_slices(plan: TablePlan, rng: WriteIdRange) -> list[FileSlice]:
    """The plan's delta slices that can hold insert events of ``rng``, without their delete files
    (a range's rows are what it inserted), filtering events by write id where the directory
    holds any outside the range."""
    out = []
    for s in plan.slices:
        if s.kind not in (ACID, RAW, INSERT_ONLY):
            continue
        d = dir_of(s)
        if d is None or d.is_base or d.max_write_id <= rng.low:
            continue
        check = rng.range_valid(d.min_write_id, d.max_write_id) is not RangeResponse.ALL
        if check and s.kind != ACID:  # no write id per row: the directory must be all in range
            if rng.range_valid(d.min_write_id, d.max_write_id) is RangeResponse.NONE:
                continue
            raise StreamingError(
                f"{d.path} holds write ids {d.min_write_id} to {d.max_write_id} in files without "
                f"a write id per row (insert-only or LOAD DATA files), and only some of them are "
                f"in the range {rng.low + 1} to {rng.high_watermark} being read: a compaction "
                "merged write ids a stream had not all read. Start a new stream (new checkpoint)")
        out.append(replace(s, deletes=(), check_current_write_id=check))
    return out


def with_slices(plan: TablePlan, slices: Sequence[FileSlice]) -> TablePlan:
    return TablePlan(plan.table_path, plan.partition_names, plan.partitions, list(slices),
                     plan.schema_file)


def event_write_ids(fs: FileSystem, d: ParsedDir, files: Sequence[FileStatus],
                    valid: ValidIdList) -> list[int]:
    """The valid write ids whose events a delta or delete delta holds: its name says when it
    holds one write id; one spanning several (streaming ingest, minor compaction) is read (its
    currentTransaction column, up to the flush length)."""
    if d.min_write_id == d.max_write_id:
        return [d.min_write_id] if valid.is_valid(d.min_write_id) else []
    found: set[int] = set()
    for f in files:
        if parse_bucket_file(f.name) is None or f.size == 0:
            continue
        orc = open_orc(fs, f.path, flush_length(fs, f.path))
        if orc.nrows == 0 or not is_acid_schema(orc.schema):
            continue
        col = acid_field_names(orc.schema)["currentTransaction"]
        ids = np.unique(key_arrays(orc.read(columns=[col]), [col], f.path)[0])
        found.update(int(w) for w in ids[valid.valid_mask(ids)])
    return sorted(found)
