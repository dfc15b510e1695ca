"""Executor side: turn one task's rows into staged ACID files, one per (partition, directory, N).

Everything is staged under ``<table>/_hiveacid_staging/<W>/<task attempt>/`` (hidden), so a failed
or duplicate attempt never touches the table; the commit publishes only the files named by the
messages of the attempts Spark reports as successful.
"""
from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Optional, Protocol, Sequence

import numpy as np
import pyarrow as pa

from ..acid import bucket_codec
from ..acid.bucketing import bucket_ids
from ..acid.names import base_dir_name, bucket_file_name, delta_dir_name
from ..acid.layout import TableLayout
from ..exceptions import HiveAcidError, InvalidOptionError, PathExistsError
from ..io.filesystem import FileSystem
from .acid_file import (
    BASE_STRIPE_SIZE,
    DELTA_STRIPE_SIZE,
    AcidFileWriter,
    FileSummary,
    copy_insert_events,
)
from .in_place import existing_summary, final_path
from .partitioning import group_rows, partition_path
from .plain_file import PlainFileWriter, merge_plain_files, plain_file_name
from .replace_region import Replacement, outside
from .schema import ColumnMapping, row_type_of

log = logging.getLogger(__name__)

#: Files a task keeps open at once (each holds its ORC writer's buffers, 2-5 MB).
MAX_OPEN_FILES = 32
#: Rows a task holds for partitions whose file is not open, before writing the largest out.
PENDING_BYTES = 64 << 20
#: A partition's held rows are written (its file opened) once they reach this.
FLUSH_KEY_BYTES = 4 << 20


@dataclass(frozen=True)
class StagedFile:
    """One finished file in staging and where it belongs in the table."""

    partition: str  # relative leaf directory, '' when unpartitioned
    dir_name: str  # base_W, delta_W_W_SSSS or delete_delta_W_W_SSSS
    bucket: int
    path: str  # staged location
    inserts: int = 0
    deletes: int = 0


@dataclass(frozen=True)
class TableSpec:
    """What a task needs to know about the table (picklable)."""

    table_path: str
    row_type: pa.StructType
    partition_names: tuple[str, ...] = ()
    bucket_columns: tuple[str, ...] = ()
    bucket_types: tuple[str, ...] = ()
    num_buckets: int = 0
    bucketing_version: int = 2
    compression: str = "ZLIB"
    insert_only: bool = False  # plain files of file_format (docs/format.md §9), not ACID ORC
    file_format: str = "orc"

    @property
    def bucketed(self) -> bool:
        return self.num_buckets > 0

    def data_file_name(self, n: int) -> str:
        """The name of writer (or bucket) ``n``'s file: ``bucket_0000N``, or Hive's ``00000N_0``
        in an insert-only table."""
        return plain_file_name(n) if self.insert_only else bucket_file_name(n)

    @classmethod
    def of(cls, table_path: str, layout: TableLayout) -> "TableSpec":
        """What the tasks of a write to the table at ``table_path`` need to know."""
        types = {n.lower(): t for n, t in layout.columns}
        return cls(
            table_path=table_path, row_type=row_type_of(layout),
            partition_names=tuple(n for n, _ in layout.partition_columns),
            bucket_columns=tuple(layout.bucket_columns),
            bucket_types=tuple(types[c.lower()] for c in layout.bucket_columns),
            num_buckets=layout.num_buckets, bucketing_version=layout.bucketing_version,
            compression=layout.compression, insert_only=layout.insert_only,
            file_format=layout.file_format)


@dataclass(frozen=True)
class InsertTarget:
    """Which directory inserts go to: ``base_W`` or ``delta_W_W_S``.

    ``statement_per_task``: bucketed tables written by several tasks at once put each task's rows
    in its own statement directory (S = task index), so no two tasks write the same bucket file.
    """

    write_id: int
    statement_id: int = 0
    base: bool = False
    statement_per_task: bool = False
    #: a static partition overwrite's region: every row must be inside it
    replacement: Optional[Replacement] = None
    #: one writer writes the whole statement (``write_table``): no other task shares its names
    sole_writer: bool = False


class Heartbeat(Protocol):
    """Keeps the write id alive while a task writes; called before every batch (it decides how
    often to really beat: ``spark_hive_acid.txn.keepalive.TaskHeartbeat``)."""

    def maybe(self) -> None: ...


class InsertWriter:
    """Routes insert rows to one AcidFileWriter per (partition, N)."""

    def __init__(self, fs: FileSystem, table: TableSpec, target: InsertTarget, stage_dir: str,
                 task_index: int, heartbeat: Optional[Heartbeat] = None):
        if not 0 <= task_index <= bucket_codec.MAX_WRITER_ID:
            raise InvalidOptionError(
                f"Task index {task_index} exceeds Hive's 4096 writers per statement; "
                "coalesce the DataFrame to at most 4096 partitions before writing")
        self.fs, self.table, self.target = fs, table, target
        self.stage_dir, self.task_index = stage_dir, task_index
        self.stmt = task_index if target.statement_per_task else target.statement_id
        self.dir_name = (base_dir_name(target.write_id) if target.base
                         else delta_dir_name(target.write_id, target.write_id, self.stmt))
        # open files, least recently used first; closed segments of files evicted to stay under
        # MAX_OPEN_FILES, concatenated on close
        self._files: OrderedDict[tuple[str, int], AcidFileWriter | PlainFileWriter] = OrderedDict()
        self._spilled: dict[tuple[str, int], list[FileSummary]] = {}
        # rows of keys whose file is not open: written in bulk, so that rows scattered over
        # thousands of partitions do not open and close a file per batch (the churn itself
        # fragments the C++ writers' heap far beyond what the open files need)
        self._pending: dict[tuple[str, int], list[pa.RecordBatch]] = {}
        self._pending_size: dict[tuple[str, int], int] = {}
        self._beat = heartbeat
        names = [f.name.lower() for f in table.row_type]
        self._bucket_idx = [names.index(c.lower()) for c in table.bucket_columns]
        # object stores: each file straight at its final name when no other task can write that
        # name (write.in_place); a bucketed overwrite's files are merged into place by the commit
        self._in_place = fs.writes_in_place and (not table.bucketed or target.statement_per_task
                                                 or target.sole_writer)

    def _path(self, partition: str, n: int, suffix: str = "") -> str:
        return self.fs.join(self.stage_dir, *([partition] if partition else []), self.dir_name,
                            self.table.data_file_name(n) + suffix)

    @property
    def _stripe_size(self) -> int:
        return BASE_STRIPE_SIZE if self.target.base else DELTA_STRIPE_SIZE

    def _writer(self, partition: str, n: int) -> AcidFileWriter | PlainFileWriter:
        """The open file of (partition, N). At most ``MAX_OPEN_FILES`` are open at once (each
        holds its ORC/Parquet writer's buffers, a few MB): beyond that the least recently used one
        is closed as a segment, and :meth:`close` concatenates a key's segments into one file."""
        key = (partition, n)
        w = self._files.get(key)
        if w is not None:
            self._files.move_to_end(key)
            return w
        if len(self._files) >= MAX_OPEN_FILES:
            old_key, old = self._files.popitem(last=False)
            self._spilled.setdefault(old_key, []).append(old.close())
        path = self._path(partition, n, f".segment{len(self._spilled.get(key, ()))}")
        if self.table.insert_only:
            w = PlainFileWriter(self.fs, path, self.table.row_type, self.table.file_format,
                                compression=self.table.compression, stripe_size=self._stripe_size)
        else:
            w = AcidFileWriter(self.fs, path, self.table.row_type,
                               compression=self.table.compression, stripe_size=self._stripe_size)
        self._files[key] = w
        return w

    def write(self, data: pa.RecordBatch, partitions: Sequence[pa.Array]) -> None:
        """Write rows: ``data`` holds the table's data columns in order, ``partitions`` the
        partition column values of the same rows."""
        if data.num_rows == 0:
            return
        if self._beat is not None:
            self._beat.maybe()
        buckets: Optional[np.ndarray] = None
        if self.table.bucketed:
            buckets = bucket_ids([data.column(i) for i in self._bucket_idx], self.table.bucket_types,
                                 self.table.num_buckets, self.table.bucketing_version,
                                 names=self.table.bucket_columns)
        groups = group_rows(list(partitions), buckets, num_rows=data.num_rows)
        for key, idx in groups:
            if buckets is not None:
                values, n = key[:-1], key[-1]
            else:
                values, n = key, self.task_index
            rep = self.target.replacement
            if rep is not None:
                named = dict(zip(self.table.partition_names, values))
                if not rep.region.matches(named):
                    raise outside(named, rep)
            part = partition_path(self.table.partition_names, values)
            rows = data if len(idx) == data.num_rows else data.take(pa.array(idx))
            self._add((part, n), rows)
        while sum(self._pending_size.values()) > PENDING_BYTES:
            self._flush(max(self._pending_size, key=self._pending_size.__getitem__))

    def _add(self, key: tuple[str, int], rows: pa.RecordBatch) -> None:
        if key in self._files:
            self._writer(*key).write_inserts(rows, self.target.write_id,
                                             bucket_codec.encode(key[1], self.stmt))
            return
        self._pending.setdefault(key, []).append(rows)
        self._pending_size[key] = self._pending_size.get(key, 0) + rows.nbytes
        if self._pending_size[key] >= FLUSH_KEY_BYTES:
            self._flush(key)

    def _flush(self, key: tuple[str, int], last: bool = False) -> None:
        """Write a key's held rows; ``last``: no more will come, so a file opened for them is
        closed at once instead of joining the open ones."""
        rows = self._pending.pop(key)
        del self._pending_size[key]
        opened = key not in self._files
        w = self._writer(*key)
        for r in rows:
            w.write_inserts(r, self.target.write_id, bucket_codec.encode(key[1], self.stmt))
        if last and opened:
            del self._files[key]
            done = self._finish(key, w)  # before the key is entered in _spilled
            self._spilled.setdefault(key, []).append(done)

    def _final(self, partition: str, n: int) -> str:
        return final_path(self.fs, self.table.table_path, partition, self.dir_name,
                          self.table.data_file_name(n))

    def _finish(self, key: tuple[str, int], w: AcidFileWriter | PlainFileWriter) -> FileSummary:
        """Close the last writer of ``key``: at its final name when it is the key's only file
        and the file is written in place (another attempt of this task may have placed it first:
        that file is kept and reported)."""
        if not (self._in_place and key not in self._spilled):
            return w.close()
        target = self._final(*key)
        w.place_at(target)
        try:
            return w.close()
        except PathExistsError:
            log.info("%s was placed by another attempt of this task: kept", target)
            ins, _ = existing_summary(self.fs, target, file_format=self.table.file_format
                                      if self.table.insert_only else "orc")
            return FileSummary(target, ins, 0)

    def close(self) -> list[StagedFile]:
        for key in list(self._pending):
            self._flush(key, last=True)
        for key, w in list(self._files.items()):
            del self._files[key]
            done = self._finish(key, w)  # before the key is entered in _spilled
            self._spilled.setdefault(key, []).append(done)
        out = []
        for (part, n), segments in sorted(self._spilled.items()):
            s = segments[0] if len(segments) == 1 else self._concat(part, n, segments)
            out.append(StagedFile(part, self.dir_name, n, s.path, inserts=s.inserts))
        self._spilled.clear()
        return out

    def _concat(self, partition: str, n: int, segments: list[FileSummary]) -> FileSummary:
        """One file with the rows of a key's segments (ACID row ids renumbered), a stripe at a
        time: what the file would be had it stayed open."""
        dest = self._final(partition, n) if self._in_place else self._path(partition, n)
        paths = [s.path for s in segments]
        try:
            if self.table.insert_only:
                merged = merge_plain_files(self.fs, paths, dest, self.table.row_type,
                                           self.table.file_format, self.table.compression,
                                           self._stripe_size, exclusive=self._in_place)
            else:
                w = AcidFileWriter(self.fs, dest, self.table.row_type,
                                   compression=self.table.compression,
                                   stripe_size=self._stripe_size, exclusive=self._in_place)
                for p in paths:
                    copy_insert_events(self.fs, p, w, self.target.write_id,
                                       bucket_codec.encode(n, self.stmt))
                merged = w.close()
        except PathExistsError:  # another attempt of this task placed it: kept
            ins, _ = existing_summary(self.fs, dest, file_format=self.table.file_format
                                      if self.table.insert_only else "orc")
            merged = FileSummary(dest, ins, 0)
        for p in paths:
            self.fs.delete(p)
        return merged

    def discard(self) -> None:
        for w in self._files.values():
            w.discard()
        for key, segments in self._spilled.items():
            for s in segments:
                if not (self._in_place and s.path == self._final(*key)):  # never a placed file
                    self.fs.delete(s.path)
        self._files.clear()
        self._spilled.clear()
        self._pending.clear()
        self._pending_size.clear()


def stage_batches(fs: FileSystem, table: TableSpec, target: InsertTarget, mapping: ColumnMapping,
                  batches: Iterable[pa.RecordBatch], stage_dir: str, task_index: int,
                  heartbeat: Optional[Heartbeat] = None) -> list[StagedFile]:
    """Stage the rows of ``batches`` (matched to the table by ``mapping``) under ``stage_dir``, as
    one writer (task) does; on any failure what was staged is discarded."""
    writer = InsertWriter(fs, table, target, stage_dir, task_index, heartbeat=heartbeat)
    try:
        for batch in batches:
            data, parts = mapping.conform(batch)
            writer.write(data, parts)
        return writer.close()
    except BaseException:
        writer.discard()
        raise


@dataclass
class _DeleteBuffer:
    owid: list = field(default_factory=list)
    bp: list = field(default_factory=list)
    rid: list = field(default_factory=list)


class DeleteWriter:
    """Writes delete events to one file per (partition, writer id of the target row), each sorted
    by (originalWriteId, bucketProperty, rowId).

    By default it collects each group and sorts it on close (memory: 20 bytes an event). With
    ``sorted_input`` the events arrive sorted by (partition, writer id, key), as the DML job's
    sort delivers them, and stream straight into one open file at a time: memory stays bounded by
    a batch, however many events a group has.
    """

    def __init__(self, fs: FileSystem, table: TableSpec, write_id: int, statement_id: int,
                 stage_dir: str, heartbeat: Optional[Heartbeat] = None,
                 sorted_input: bool = False):
        self.fs, self.table, self.write_id = fs, table, write_id
        self.stage_dir = stage_dir
        self.dir_name = delta_dir_name(write_id, write_id, statement_id, delete=True)
        self._groups: dict[tuple[str, int], _DeleteBuffer] = {}
        self._beat = heartbeat
        self.sorted_input = sorted_input
        self._open: Optional[tuple[tuple[str, int], AcidFileWriter]] = None
        self._last_key: Optional[tuple[int, int, int]] = None
        self._written: list[StagedFile] = []
        # object stores: the one task a (partition, writer id) is shuffled to writes its file
        # straight at its final name (write.in_place)
        self._in_place = fs.writes_in_place

    def write(self, original_write_ids: np.ndarray, bucket_properties: np.ndarray,
              row_ids: np.ndarray, partitions: Sequence[pa.Array]) -> None:
        n = len(row_ids)
        if n == 0:
            return
        if self._beat is not None:
            self._beat.maybe()
        bp = np.asarray(bucket_properties, dtype=np.int32)
        writer_ids = bucket_codec.decode_writer_ids(bp)
        for key, idx in group_rows(list(partitions), writer_ids, num_rows=n):
            part = partition_path(self.table.partition_names, key[:-1])
            if self.sorted_input:
                self._stream((part, key[-1]), np.asarray(original_write_ids, dtype=np.int64)[idx],
                             bp[idx], np.asarray(row_ids, dtype=np.int64)[idx])
                continue
            buf = self._groups.setdefault((part, key[-1]), _DeleteBuffer())
            buf.owid.append(np.asarray(original_write_ids, dtype=np.int64)[idx])
            buf.bp.append(bp[idx])
            buf.rid.append(np.asarray(row_ids, dtype=np.int64)[idx])

    def _file_path(self, part: str, n: int) -> str:
        if self._in_place:
            return final_path(self.fs, self.table.table_path, part, self.dir_name,
                              bucket_file_name(n))
        return self.fs.join(self.stage_dir, *([part] if part else []), self.dir_name,
                            bucket_file_name(n))

    def _new_file(self, part: str, n: int) -> AcidFileWriter:
        return AcidFileWriter(self.fs, self._file_path(part, n), self.table.row_type,
                              compression=self.table.compression, exclusive=self._in_place)

    def _close(self, part: str, n: int, w: AcidFileWriter) -> StagedFile:
        try:
            s = w.close()
        except PathExistsError:  # another attempt of this task placed it: kept
            log.info("%s was placed by another attempt of this task: kept", w.path)
            _, dels = existing_summary(self.fs, w.path, deletes=True)
            return StagedFile(part, self.dir_name, n, w.path, deletes=dels)
        return StagedFile(part, self.dir_name, n, s.path, deletes=s.deletes)

    def _stream(self, key: tuple[str, int], owid: np.ndarray, bp: np.ndarray,
                rid: np.ndarray) -> None:
        if self._open is None or self._open[0] != key:
            self._finish_open()
            if any((f.partition, f.bucket) == key for f in self._written):
                raise HiveAcidError(f"Delete events of {key} arrived after others: the input of "
                                    "a sorted_input DeleteWriter must be sorted by partition and "
                                    "writer id")
            self._open = (key, self._new_file(*key))
            self._last_key = None
        first = (int(owid[0]), int(bp[0]), int(rid[0]))
        if (self._last_key is not None and first < self._last_key) or not _keys_sorted(owid, bp, rid):
            raise HiveAcidError(f"Delete events of {key} are not sorted by "
                                "(originalWriteId, bucket, rowId)")
        self._open[1].write_deletes(owid, bp, rid, self.write_id)
        self._last_key = (int(owid[-1]), int(bp[-1]), int(rid[-1]))

    def _finish_open(self) -> None:
        if self._open is not None:
            (part, n), w = self._open
            self._open = None
            self._written.append(self._close(part, n, w))

    def close(self) -> list[StagedFile]:
        self._finish_open()
        out, self._written = self._written, []
        for (part, n), buf in sorted(self._groups.items()):
            owid, bp, rid = (np.concatenate(x) for x in (buf.owid, buf.bp, buf.rid))
            order = np.lexsort((rid, bp, owid))
            w = self._new_file(part, n)
            w.write_deletes(owid[order], bp[order], rid[order], self.write_id)
            out.append(self._close(part, n, w))
        self._groups.clear()
        return out


def _keys_sorted(owid: np.ndarray, bp: np.ndarray, rid: np.ndarray) -> bool:
    """Whether (owid, bp, rid) never decreases, vectorised."""
    if len(rid) < 2:
        return True
    o1, o0, b1, b0, r1, r0 = owid[1:], owid[:-1], bp[1:], bp[:-1], rid[1:], rid[:-1]
    return bool(np.all((o1 > o0) | ((o1 == o0) & ((b1 > b0) | ((b1 == b0) & (r1 >= r0))))))
