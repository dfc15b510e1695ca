"""The change feed of write ids (A, B]: every row inserted, deleted or updated, with
``_change_type`` (insert, delete, update_preimage, update_postimage), ``_commit_version`` (the
write id) and ``_commit_timestamp`` (where the table records it: the path-mode log).

* Inserts are the insert events of (A, B] (``read.ranges``: the delta directories of a snapshot at
  B, events filtered by write id), read without applying any delete.
* Deletes are the delete events of (A, B]. A delete event carries only the ROW__ID of the row it
  deletes, so the row's values come from its insert event: the data files of the same partition
  and bucket (in a snapshot at B, deletes not applied), joined on ROW__ID.
* An UPDATE is the delete + insert pair of one write id (Hive's split update): in a write id with
  both, deletes are ``update_preimage`` and inserts ``update_postimage``.
* An INSERT OVERWRITE (a ``base_W`` no compactor wrote) deletes every row live before it in the
  partitions it replaced and inserts the rows of its base (:func:`plan_overwrite`); a range is
  cut at each overwrite (``stream.changefeed``), since a snapshot after it no longer shows the
  deltas before it.

A major compaction erases the events it folds into its base: a feed from A needs every compacted
base chosen at B to be at most A; otherwise StreamingError names the oldest version it can start
from (``read.ranges.check_not_erased``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..acid.orc import delete_key_columns, is_acid_schema, key_arrays, open_orc
from ..acid.snapshot import ValidIdList
from ..exceptions import CorruptFileError, UnsupportedOperationError
from ..io.filesystem import FileSystem
from .plan import FileSlice, ReadTask
from .ranges import (
    WriteIdRange, check_not_erased, dir_of, event_write_ids, insert_slices, with_slices,
)
from .reader import ReadSpec, TaskReader
from ..acid.names import ROW_ID_COLUMN
from .scan import TableScan

CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP = "_change_type", "_commit_version", "_commit_timestamp"
CHANGE_FIELDS = (pa.field(CHANGE_TYPE, pa.string()), pa.field(COMMIT_VERSION, pa.int64()),
                 pa.field(COMMIT_TIMESTAMP, pa.timestamp("us", tz="UTC")))
INSERT, DELETE = "insert", "delete"
PREIMAGE, POSTIMAGE = "update_preimage", "update_postimage"
SNAPSHOT, REPLACED = "snapshot", "replaced"  # task kinds: every row inserted / deleted
_KEYS = ("__owid", "__bucket", "__rowid")


@dataclass(frozen=True)
class ChangeTask:
    """One Spark task of a change feed: ``kind`` is "insert" (insert events of the range),
    "delete" (one data slice, joined with its delete events of the range), "snapshot" (a
    stream's first micro-batch: every row, as inserted at the snapshot's version) or "replaced"
    (every row of a partition an INSERT OVERWRITE replaced, as deleted at its write id)."""

    kind: str
    task: ReadTask


@dataclass(frozen=True)
class ChangeSpec:
    """What every change task needs (picklable)."""

    data: ReadSpec  # row__id + the output's table columns, at snapshot B
    out_schema: pa.Schema  # the output's table columns + the change columns
    rng: Optional[WriteIdRange]  # None: a snapshot
    updates: frozenset[int] = frozenset()
    times: tuple[tuple[int, float], ...] = ()  # (write id, commit time in epoch seconds)
    snapshot_version: int = 0


def change_schema(columns: Sequence[pa.Field]) -> pa.Schema:
    """The feed's schema: the table columns asked for, then the change columns."""
    return pa.schema(list(columns) + list(CHANGE_FIELDS))


def plan_changes(scan: TableScan, out_schema: pa.Schema, low: Optional[int],
                 times: Mapping[int, float] | None = None,
                 written: Optional[Mapping[int, Optional[Sequence[str]]]] = None
                 ) -> tuple[ChangeSpec, list[ChangeTask]]:
    """The change tasks of (``low``, B], ``scan`` being the table at snapshot B (``low`` None:
    the whole snapshot B, as inserts). ``out_schema``: :func:`change_schema` of the columns;
    ``times``: commit times by write id; ``written``: see ``read.ranges.check_not_erased``."""
    if scan.insert_only:
        raise UnsupportedOperationError(
            f"{scan.display} is an insert-only table: it has no change feed (it only ever gets "
            "inserts); stream its new rows with readStream.format('hiveacid') instead")
    data = scan.read_spec(_data_schema(scan, out_schema))
    times = dict(times or {})
    b = scan.write_ids.high_watermark
    if low is None:
        spec = ChangeSpec(data, out_schema, None, times=tuple(sorted(times.items())),
                          snapshot_version=b)
        return spec, [ChangeTask(SNAPSHOT, t) for t in scan.tasks()]
    check_not_erased(scan.fs, scan.plan, low, "the change feed", written)
    rng = WriteIdRange.of_range(scan.write_ids, low)
    inserted: set[int] = set()
    deleted: set[int] = set()
    for pl in scan.plan.partitions:
        for d in pl.state.deltas + pl.state.delete_deltas:
            if d.max_write_id > low:
                ids = event_write_ids(scan.fs, d, pl.dir_files.get(d.path, []), rng)
                (deleted if d.is_delete else inserted).update(ids)
    spec = ChangeSpec(replace(data, write_ids=rng), out_schema, rng,
                      frozenset(inserted & deleted), tuple(sorted(times.items())), b)
    tasks = [ChangeTask(INSERT, t) for t in
             with_slices(scan.plan, insert_slices(scan.plan, rng)).tasks(
                 scan.options.split_bytes, 2)]
    if deleted:
        for s in scan.plan.slices:
            if any(_delete_dir_max(d.path) > low for d in s.deletes):
                tasks.append(ChangeTask(DELETE, ReadTask((s,))))
    return spec, tasks


def plan_overwrite(at_w: TableScan, before: TableScan, out_schema: pa.Schema,
                   times: Mapping[int, float] | None = None) -> tuple[list[ChangeTask], ChangeSpec,
                                                                      ChangeSpec]:
    """The changes of an INSERT OVERWRITE, write id W (``at_w``: the table at W, ``before``: at
    W-1): in each partition it replaced (a ``base_W`` that no compactor wrote), every row live
    before is deleted and every row of ``base_W`` inserted. Returns the tasks and the specs of
    its inserts and of its deletes (a task's kind says which)."""
    w = at_w.write_ids.high_watermark
    arrow = _data_schema(at_w, out_schema)
    replaced = {pl.path for pl in at_w.plan.partitions
                if pl.state.base is not None and pl.state.base.write_id == w}
    rng = WriteIdRange.of_range(at_w.write_ids, w - 1)
    stamp = tuple(sorted((times or {}).items()))
    inserts = ChangeSpec(replace(at_w.read_spec(arrow), write_ids=rng), out_schema, rng,
                         times=stamp, snapshot_version=w)
    deletes = ChangeSpec(before.read_spec(arrow), out_schema, None, times=stamp,
                         snapshot_version=w)
    base_slices = [replace(s, deletes=(), check_current_write_id=True) for s in at_w.plan.slices
                   if (d := dir_of(s)) is not None and d.is_base and d.write_id == w]
    tasks = [ChangeTask(INSERT, t) for t in
             with_slices(at_w.plan, base_slices).tasks(at_w.options.split_bytes, 2)]
    old = [s for s in before.plan.slices if before.plan.partitions[s.partition_index].path
           in replaced]
    tasks += [ChangeTask(REPLACED, t) for t in
              with_slices(before.plan, old).tasks(before.options.split_bytes, 2)]
    return tasks, inserts, deletes


def _data_schema(scan: TableScan, out_schema: pa.Schema) -> pa.Schema:
    """row__id + the output's table columns (what every change task reads)."""
    table_cols = [f for f in out_schema if f.name not in {c.name for c in CHANGE_FIELDS}]
    names = [ROW_ID_COLUMN] + [f.name for f in table_cols if f.name.lower() != ROW_ID_COLUMN]
    return pa.schema([pa.field(n, scan.all_columns(True)[0].type) if n == ROW_ID_COLUMN
                      else next(f for f in table_cols if f.name == n) for n in names])


def _delete_dir_max(path: str) -> int:
    d = dir_of(FileSlice(path, 0, "acid", 0, 0))
    return d.max_write_id if d is not None else -1


def read_changes(fs: FileSystem, spec: ChangeSpec, task: ChangeTask) -> Iterator[pa.RecordBatch]:
    """The change rows of one task, as ``spec.out_schema`` batches."""
    if task.kind in (SNAPSHOT, REPLACED):  # every row read, as inserted / deleted at a version
        kind = INSERT if task.kind == SNAPSHOT else DELETE
        for batch in TaskReader(fs, spec.data).read(task.task):
            n = batch.num_rows
            yield _output(spec, batch, pa.array([kind] * n, pa.string()),
                          np.full(n, spec.snapshot_version, np.int64))
        return
    if task.kind == INSERT:
        for batch in TaskReader(fs, spec.data).read(task.task):
            versions = batch.column(0).field("writeId").to_numpy(zero_copy_only=False)
            kinds = np.where(np.isin(versions, list(spec.updates)), POSTIMAGE, INSERT)
            yield _output(spec, batch, pa.array(kinds, pa.string()), versions)
        return
    yield from _deleted_rows(fs, spec, task.task.slices[0])


def _deleted_rows(fs: FileSystem, spec: ChangeSpec, s: FileSlice) -> Iterator[pa.RecordBatch]:
    """The rows of slice ``s`` deleted in the range, with the deleting write id."""
    rng = spec.rng
    assert rng is not None, "delete tasks are planned for a range only (plan_changes)"
    events = _delete_events(fs, s, rng)
    if events.num_rows == 0:
        return
    at_b = ValidIdList.of(rng.high_watermark, [], sorted(rng.aborted), rng.table_name)
    reader = TaskReader(fs, replace(spec.data, write_ids=at_b))
    for batch in reader.read(ReadTask((replace(s, deletes=()),))):
        rid = batch.column(0)
        keys = pa.table({_KEYS[0]: rid.field("writeId"), _KEYS[1]: rid.field("bucketId"),
                         _KEYS[2]: rid.field("rowId"),
                         "__idx": pa.array(np.arange(batch.num_rows, dtype=np.int64))})
        hit = keys.join(events, list(_KEYS), join_type="inner", use_threads=False)
        if hit.num_rows == 0:
            continue
        versions = hit.column("__cur").to_numpy()
        kinds = np.where(np.isin(versions, list(spec.updates)), PREIMAGE, DELETE)
        rows = batch.take(hit.column("__idx").combine_chunks())
        yield _output(spec, rows, pa.array(kinds, pa.string()), versions)


def _delete_events(fs: FileSystem, s: FileSlice, rng: WriteIdRange) -> pa.Table:
    """(owid, bucket, rowId, cur) of the delete events of ``s``'s delete files in ``rng``."""
    parts = []
    for d in s.deletes:
        orc = open_orc(fs, d.path, d.flush_length, size=d.size if d.flush_length is None else None)
        if orc.nrows == 0:
            continue
        if not is_acid_schema(orc.schema):
            raise CorruptFileError(f"Delete delta file {d.path} does not have the ACID event schema")
        cols = delete_key_columns(orc.schema, d.path)
        owid, bp, rid, cur = key_arrays(orc.read(columns=cols), cols, d.path)
        keep = rng.valid_mask(cur)
        parts.append(pa.table({_KEYS[0]: owid[keep], _KEYS[1]: bp[keep].astype(np.int32),
                               _KEYS[2]: rid[keep], "__cur": cur[keep]}))
    if not parts:
        return pa.table({k: pa.array([], pa.int64()) for k in (*_KEYS, "__cur")})
    return pa.concat_tables(parts)


def _output(spec: ChangeSpec, batch: pa.RecordBatch | pa.Table, kinds: pa.Array,
            versions: np.ndarray) -> pa.RecordBatch:
    """``batch``'s table columns of the output, plus the change columns."""
    arrays = []
    for f in spec.out_schema:
        if f.name == CHANGE_TYPE:
            arrays.append(kinds)
        elif f.name == COMMIT_VERSION:
            arrays.append(pa.array(versions, pa.int64()))
        elif f.name == COMMIT_TIMESTAMP:
            arrays.append(_timestamps(spec, versions, f.type))
        else:
            arrays.append(batch.column(batch.schema.get_field_index(f.name)))
    return pa.RecordBatch.from_arrays(arrays, schema=spec.out_schema)


def _timestamps(spec: ChangeSpec, versions: np.ndarray, typ: pa.DataType) -> pa.Array:
    if not spec.times:
        return pa.nulls(len(versions), typ)
    keys = np.array([w for w, _ in spec.times], np.int64)
    values = np.array([int(t * 1_000_000) for _, t in spec.times], np.int64)
    idx = np.clip(np.searchsorted(keys, versions), 0, len(keys) - 1)
    found = keys[idx] == versions
    return pc.if_else(pa.array(found), pa.array(values[idx], pa.int64()),
                      pa.scalar(None, pa.int64())).cast(typ)
