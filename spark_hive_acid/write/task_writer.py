"""Executor side: turn one task's rows into staged ACID files, one per (partition, directory, N).

Everything is staged under ``<table>/_hiveacid_staging/<W>/<task attempt>/`` (hidden), so a failed
or duplicate attempt never touches the table; the commit publishes only the files named by the
messages of the attempts Spark reports as successful.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterable, Optional, Protocol, Sequence

import numpy as np
import pyarrow as pa

from ..acid import bucket_codec
from ..acid.bucketing import bucket_ids
from ..acid.names import base_dir_name, bucket_file_name, delta_dir_name
from ..acid.layout import TableLayout
from ..exceptions import InvalidOptionError
from ..io.filesystem import FileSystem
from .acid_file import BASE_STRIPE_SIZE, DELTA_STRIPE_SIZE, AcidFileWriter
from .partitioning import group_rows, partition_path
from .plain_file import PlainFileWriter, plain_file_name
from .schema import ColumnMapping, row_type_of

log = logging.getLogger(__name__)


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
        self._files: dict[tuple[str, int], AcidFileWriter | PlainFileWriter] = {}
        self._beat = heartbeat
        names = [f.name.lower() for f in table.row_type]
        self._bucket_idx = [names.index(c.lower()) for c in table.bucket_columns]

    def _writer(self, partition: str, n: int) -> AcidFileWriter | PlainFileWriter:
        w = self._files.get((partition, n))
        if w is None:
            path = self.fs.join(self.stage_dir, *( [partition] if partition else []),
                                self.dir_name, self.table.data_file_name(n))
            stripe_size = BASE_STRIPE_SIZE if self.target.base else DELTA_STRIPE_SIZE
            if self.table.insert_only:
                w = PlainFileWriter(self.fs, path, self.table.row_type, self.table.file_format,
                                    compression=self.table.compression, stripe_size=stripe_size)
            else:
                w = AcidFileWriter(self.fs, path, self.table.row_type,
                                   compression=self.table.compression, stripe_size=stripe_size)
            self._files[(partition, n)] = w
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
            part = partition_path(self.table.partition_names, values)
            rows = data if len(idx) == data.num_rows else data.take(pa.array(idx))
            self._writer(part, n).write_inserts(
                rows, self.target.write_id, bucket_codec.encode(n, self.stmt))

    def close(self) -> list[StagedFile]:
        out = []
        for (part, n), w in sorted(self._files.items()):
            s = w.close()
            out.append(StagedFile(part, self.dir_name, n, s.path, inserts=s.inserts))
        self._files.clear()
        return out

    def discard(self) -> None:
        for w in self._files.values():
            w.discard()
        self._files.clear()


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
    """Collects delete events per (partition, writer id of the target row) and writes each group
    sorted by (originalWriteId, bucketProperty, rowId) on close."""

    def __init__(self, fs: FileSystem, table: TableSpec, write_id: int, statement_id: int,
                 stage_dir: str, heartbeat: Optional[Heartbeat] = None):
        self.fs, self.table, self.write_id = fs, table, write_id
        self.stage_dir = stage_dir
        self.dir_name = delta_dir_name(write_id, write_id, statement_id, delete=True)
        self._groups: dict[tuple[str, int], _DeleteBuffer] = {}
        self._beat = heartbeat

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
            buf = self._groups.setdefault((part, key[-1]), _DeleteBuffer())
            buf.owid.append(np.asarray(original_write_ids, dtype=np.int64)[idx])
            buf.bp.append(bp[idx])
            buf.rid.append(np.asarray(row_ids, dtype=np.int64)[idx])

    def close(self) -> list[StagedFile]:
        out = []
        for (part, n), buf in sorted(self._groups.items()):
            owid, bp, rid = (np.concatenate(x) for x in (buf.owid, buf.bp, buf.rid))
            order = np.lexsort((rid, bp, owid))
            path = self.fs.join(self.stage_dir, *([part] if part else []), self.dir_name,
                                bucket_file_name(n))
            w = AcidFileWriter(self.fs, path, self.table.row_type, compression=self.table.compression)
            w.write_deletes(owid[order], bp[order], rid[order], self.write_id)
            s = w.close()
            out.append(StagedFile(part, self.dir_name, n, s.path, deletes=s.deletes))
        self._groups.clear()
        return out
