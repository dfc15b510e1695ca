"""Writing one output file of a compaction (runs in a Spark task, or in-process).

* Insert units (major: live rows; minor: valid insert events) go through the table reader
  (``read.reader.TaskReader``), which applies the snapshot, the delete events (major only) and
  Hive's synthetic ROW__IDs of original files. Each row is written back as an insert event with
  its **original** ROW__ID (``AcidFileWriter.write_keyed_inserts``), as Hive's compactor does.
* Delete units (minor) copy the valid delete events of the range's delete deltas, sorted.

Rows are written in key order (originalTransaction, bucket, rowId): the unit's files are read in
key order (``plan._slice_order``) and the order is checked batch by batch; only if a file breaks
it (a foreign writer) are the unit's rows gathered and sorted in memory. Memory is otherwise a
stripe's worth of rows plus the delete-event set of the partition's bucket.

A big unit may run as several *segments* (``compaction.segments``), each a unit of consecutive
slices written here like any other; the result's ``keys`` let the driver check they join up.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np
import pyarrow as pa

from ..acid.orc import delete_key_columns, key_arrays, open_orc
from ..acid.snapshot import ValidIdList
from ..exceptions import SchemaMismatchError
from ..io.filesystem import FileSystem
from ..read.reader import ReadSpec, TaskReader
from ..write.acid_file import AcidFileWriter
from ..write.plain_file import PlainFileWriter
from .plan import Unit

log = logging.getLogger(__name__)


#: The first and the last (originalTransaction, bucket, rowId) of a file.
KeyRange = tuple[tuple[int, int, int], tuple[int, int, int]]


@dataclass(frozen=True)
class UnitResult:
    """What a unit wrote (picklable, returned to the driver)."""

    partition: str
    dir_name: str
    bucket: int
    path: str
    inserts: int
    deletes: int
    read_events: int  # events (rows) read before filtering
    bytes: int
    # (first, last) (originalTransaction, bucket, rowId) written: how segments of one file are
    # checked to follow each other (compaction.segments); None without rows
    keys: Optional[KeyRange] = None
    fallback: bool = False  # written with the fallback (microsecond) row type


def run_unit(fs: FileSystem, unit: Unit, spec: ReadSpec, row_type: pa.StructType,
             compression: str, fallback: Optional[tuple[ReadSpec, pa.StructType]] = None,
             plain_format: Optional[str] = None) -> UnitResult:
    """Write ``unit``'s staged file; see the module docstring. ``plain_format`` ("orc" or
    "parquet"): an insert-only table, whose files are plain rows of that format. Timestamps are
    copied in nanoseconds; a file holding values beyond the nanosecond range (years before 1677
    or after 2262) makes the unit use ``fallback`` (microseconds) instead."""
    if unit.delete_files:
        return _deletes(fs, unit, spec.write_ids, row_type, compression)
    write = (_sorted_inserts if plain_format is None
             else functools.partial(_plain_rows, file_format=plain_format))
    try:
        return write(fs, unit, spec, row_type, compression)
    except (SchemaMismatchError, pa.ArrowInvalid) as e:
        if fallback is None:
            raise
        log.warning("%s: timestamps out of the nanosecond range (%s): copied in microseconds",
                    unit.path, e)
        return dataclasses.replace(write(fs, unit, fallback[0], fallback[1], compression),
                                   fallback=True)


def _plain_rows(fs: FileSystem, unit: Unit, spec: ReadSpec, row_type: pa.StructType,
                compression: str, *, file_format: str) -> UnitResult:
    """An insert-only table's unit: its rows, in file order, into one plain file."""
    writer = PlainFileWriter(fs, unit.path, row_type, file_format, compression=compression,
                             stripe_size=unit.stripe_size or (64 << 20),
                             exclusive=fs.writes_in_place)
    try:
        for b in _rows(fs, unit, spec):
            writer.write_inserts(pa.RecordBatch.from_arrays(
                [c if c.type.equals(f.type) else c.cast(f.type) for c, f in zip(b.columns, row_type)],
                names=[f.name for f in row_type]))
        summary = writer.close()
    except BaseException:
        writer.discard()
        raise
    return UnitResult(unit.partition, unit.dir_name, unit.bucket, summary.path, summary.inserts,
                      0, summary.inserts, file_size(fs, summary.path))


def _sorted_inserts(fs: FileSystem, unit: Unit, spec: ReadSpec, row_type: pa.StructType,
                    compression: str) -> UnitResult:
    result = _inserts(fs, unit, spec, row_type, compression, sort_all=False)
    if result is None:
        log.warning("%s: the input files' rows are not in ROW__ID order; sorting them in memory",
                    unit.path)
        result = _inserts(fs, unit, spec, row_type, compression, sort_all=True)
        assert result is not None, "sorted in memory, the rows are in order"
    return result


def _rows(fs: FileSystem, unit: Unit, spec: ReadSpec) -> Iterator[pa.RecordBatch]:
    reader = TaskReader(fs, spec)
    for s in unit.slices:
        yield from reader.read_slice(s)


def _keys_of(batch: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rid = batch.column(0)
    return (rid.field(0).to_numpy(), rid.field(1).to_numpy(), rid.field(2).to_numpy())


def _data(batch: pa.RecordBatch, row_type: pa.StructType) -> pa.RecordBatch:
    cols = []
    for i, f in enumerate(row_type):
        col = batch.column(i + 1)
        cols.append(col if col.type.equals(f.type) else col.cast(f.type))
    return pa.RecordBatch.from_arrays(cols, names=[f.name for f in row_type])


def _increasing(owid: np.ndarray, bp: np.ndarray, rid: np.ndarray,
                last: Optional[tuple[int, int, int]]) -> bool:
    """Whether the keys strictly increase, and start above ``last``."""
    if last is not None and (int(owid[0]), int(bp[0]), int(rid[0])) <= last:
        return False
    if len(rid) < 2:
        return True
    d_o, d_b, d_r = np.diff(owid), np.diff(bp.astype(np.int64)), np.diff(rid)
    ok = (d_o > 0) | ((d_o == 0) & ((d_b > 0) | ((d_b == 0) & (d_r > 0))))
    return bool(ok.all())


def _inserts(fs: FileSystem, unit: Unit, spec: ReadSpec, row_type: pa.StructType,
             compression: str, *, sort_all: bool) -> Optional[UnitResult]:
    """The unit's file, streamed in the order its inputs are read; None (nothing written) when
    that order breaks ROW__ID order, unless ``sort_all`` sorts the rows in memory first."""
    writer = AcidFileWriter(fs, unit.path, row_type, compression=compression,
                            stripe_size=unit.stripe_size or (64 << 20),
                            exclusive=fs.writes_in_place)
    first: Optional[tuple[int, int, int]] = None
    last: Optional[tuple[int, int, int]] = None
    try:
        if sort_all:
            batches = list(_rows(fs, unit, spec))
            if batches:
                t = pa.Table.from_batches(batches).combine_chunks()
                b = t.to_batches()[0] if t.num_rows else None
                if b is not None:
                    owid, bp, rid = _keys_of(b)
                    order = np.lexsort((rid, bp, owid))
                    b = b.take(pa.array(order))
                    owid, bp, rid = owid[order], bp[order], rid[order]
                    writer.write_keyed_inserts(owid, bp, rid, _data(b, row_type))
                    first = (int(owid[0]), int(bp[0]), int(rid[0]))
                    last = (int(owid[-1]), int(bp[-1]), int(rid[-1]))
        else:
            for b in _rows(fs, unit, spec):
                owid, bp, rid = _keys_of(b)
                if not _increasing(owid, bp, rid, last):
                    writer.discard()
                    return None
                writer.write_keyed_inserts(owid, bp, rid, _data(b, row_type))
                if first is None:
                    first = (int(owid[0]), int(bp[0]), int(rid[0]))
                last = (int(owid[-1]), int(bp[-1]), int(rid[-1]))
        summary = writer.close()
    except BaseException:
        writer.discard()
        raise
    return UnitResult(unit.partition, unit.dir_name, unit.bucket, summary.path, summary.inserts, 0,
                      slice_rows(fs, unit), file_size(fs, summary.path),
                      None if first is None or last is None else (first, last))


def _deletes(fs: FileSystem, unit: Unit, write_ids: ValidIdList, row_type: pa.StructType,
             compression: str) -> UnitResult:
    parts = []
    read = 0
    for path in unit.delete_files:
        orc = open_orc(fs, path)
        if orc.nrows == 0:
            continue
        cols = delete_key_columns(orc.schema, path)
        owid, bp, rid, cur = key_arrays(orc.read(columns=cols), cols, path)
        read += len(rid)
        if not write_ids.everything_valid:
            keep = write_ids.valid_mask(cur)
            owid, bp, rid, cur = owid[keep], bp[keep], rid[keep], cur[keep]
        parts.append((owid, bp, rid, cur))
    owid, bp, rid, cur = (np.concatenate([p[i] for p in parts]) if parts
                          else np.zeros(0, np.int64) for i in range(4))
    order = np.lexsort((cur, rid, bp.astype(np.int32), owid))
    writer = AcidFileWriter(fs, unit.path, row_type, compression=compression,
                            stripe_size=unit.stripe_size or (8 << 20),
                            exclusive=fs.writes_in_place)
    try:
        writer.write_deletes(owid[order], bp[order], rid[order], cur[order])
        summary = writer.close()
    except BaseException:
        writer.discard()
        raise
    return UnitResult(unit.partition, unit.dir_name, unit.bucket, summary.path, 0, summary.deletes,
                      read, file_size(fs, summary.path))


def slice_rows(fs: FileSystem, unit: Unit) -> int:
    """Rows of the unit's whole-file slices (events read)."""
    total = 0
    for s in unit.slices:
        if s.end_stripe is None and s.first_stripe == 0:
            total += open_orc(fs, s.path, s.flush_length, size=s.file_size).nrows
    return total


def file_size(fs: FileSystem, path: str) -> int:
    st = fs.status(path)
    return st.size if st is not None else 0

