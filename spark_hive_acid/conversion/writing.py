"""Reading the rows of some groups at a snapshot and writing them as the target's Parquet files.

The rows come from the one planner and task reader (``read.plan``, ``read.reader``): a snapshot
at write id W, deletes applied, each row with its ROW__ID. Only the file slices that can hold a
wanted group are read (by their directory's write-id range and their bucket); rows are then kept
by their group (vectorised), split by group and written, one Parquet file per group and worker,
by threads (pyarrow decodes and encodes without the GIL).
"""
from __future__ import annotations

import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..acid.bucket_codec import decode_writer_id
from ..acid.names import ROW_ID_COLUMN
from ..read.plan import ACID, FileSlice
from ..read.ranges import dir_of
from ..read.reader import TaskReader
from ..read.scan import TableScan
from .changes import Group, partition_of
from .keys import GroupKey, in_groups, key_arrays, split_by_group

log = logging.getLogger(__name__)

#: rows buffered per group before they are written as one Parquet row group
FLUSH_ROWS = 1 << 17


@dataclass(frozen=True)
class Want:
    """The rows wanted from one partition: all of them, or those of write id ``write_id`` and of
    ``groups``."""

    all: bool = False
    write_id: Optional[int] = None
    groups: frozenset[Group] = frozenset()


@dataclass(frozen=True)
class WrittenFile:
    """A data file written for the target (not yet committed)."""

    path: str  # where it was written (a path or URI of the target's file system)
    group: GroupKey
    partition_values: tuple[Any, ...]  # the partition columns' values (Python), table order
    rows: int
    size: int
    metadata: pq.FileMetaData = field(compare=False, repr=False)
    null_counts: dict[str, int] = field(compare=False, default_factory=dict)


class FileTarget(Protocol):
    """What the writer needs from a target (``conversion.iceberg``, ``conversion.delta``)."""

    partition_columns: list[str]

    def data_file_path(self, key: GroupKey, tag: str) -> str: ...

    def open_output(self, path: str) -> Any: ...

    def file_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch: ...

    def file_schema(self) -> pa.Schema: ...


def _may_hold(s: FileSlice, want: Want) -> bool:
    if want.all:
        return True
    d = dir_of(s)
    if d is None:  # an original (pre-ACID) file: synthetic ROW__IDs of write id 0
        lo, hi, base = 0, 0, False
    else:
        lo, hi, base = (0 if d.is_base else d.min_write_id), d.max_write_id, d.is_base
    w = want.write_id
    if w is not None and lo <= w <= hi and (not base or hi == w):
        return True
    return any(lo <= owid <= hi and (s.kind != ACID or decode_writer_id(bp) == s.bucket_id)
               for owid, bp, _ in want.groups)


def select(scan: TableScan, wants: dict[str, Want]) -> list[tuple[FileSlice, str, Want]]:
    """The slices of ``scan`` that can hold wanted rows, with their partition name."""
    plan = scan.plan
    names = [partition_of(plan, pl) for pl in plan.partitions]
    out = []
    for s in plan.slices:
        name = names[s.partition_index]
        want = wants.get(name)
        if want is not None and _may_hold(s, want):
            out.append((s, name, want))
    return out


class GroupSink:
    """Buffers the rows of each group and writes them to one Parquet file per group."""

    def __init__(self, target: FileTarget, columns: list[str], tag: str):
        self.target, self.columns, self.tag = target, columns, tag
        self.parts = [columns.index(c) for c in target.partition_columns]
        self.buffers: dict[GroupKey, list[pa.RecordBatch]] = {}
        self.counts: dict[GroupKey, int] = {}
        self.writers: dict[GroupKey, tuple[str, Any, pq.ParquetWriter]] = {}
        self.nulls: dict[GroupKey, dict[str, int]] = {}
        self.first: dict[GroupKey, tuple[Any, ...]] = {}

    def add(self, key: GroupKey, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if key not in self.first:
            self.first[key] = tuple(batch.column(i)[0].as_py() for i in self.parts)
        self.buffers.setdefault(key, []).append(batch)
        self.counts[key] = self.counts.get(key, 0) + batch.num_rows
        nulls = self.nulls.setdefault(key, {})
        for name, col in zip(batch.schema.names, batch.columns):
            nulls[name] = nulls.get(name, 0) + col.null_count
        if self.counts[key] >= FLUSH_ROWS:
            self._flush(key)

    def _flush(self, key: GroupKey) -> None:
        batches = self.buffers.pop(key, [])
        self.counts[key] = 0
        if not batches:
            return
        schema = self.target.file_schema()
        table = pa.Table.from_batches([self.target.file_batch(b) for b in batches])
        if not table.schema.equals(schema, check_metadata=True):
            table = table.cast(schema)
        if key not in self.writers:
            path = self.target.data_file_path(key, self.tag)
            out = self.target.open_output(path)
            self.writers[key] = (path, out, pq.ParquetWriter(out, schema, compression="zstd"))
        self.writers[key][2].write_table(table)

    def close(self) -> list[WrittenFile]:
        for key in list(self.buffers):
            self._flush(key)
        out = []
        for key, (path, stream, writer) in self.writers.items():
            writer.close()
            meta = writer.writer.metadata
            size = stream.tell()
            stream.close()
            out.append(WrittenFile(path, key, self.first[key], meta.num_rows, size, meta,
                                   self.nulls.get(key, {})))
        self.writers.clear()
        return out

    def abort(self) -> None:
        for _, stream, writer in self.writers.values():
            try:
                writer.close()
                stream.close()
            except Exception:  # noqa: BLE001 - closing after a failure: the first error counts
                pass


def write_groups(scan: TableScan, wants: dict[str, Want], target: FileTarget, columns: list[str],
                 version: int, workers: int = 2,
                 on_rows: Optional[Callable[[int], None]] = None) -> list[WrittenFile]:
    """Read the wanted rows of ``scan`` (the table at write id ``version``) and write them as the
    target's files; ``columns``: the table's columns (data, then partition)."""
    work = select(scan, wants)
    if not work:
        return []
    arrow = pa.schema([pa.field(ROW_ID_COLUMN, scan.all_columns(True)[0].type)] +
                      [pa.field(c.name, c.type) for c in scan.all_columns(False)
                       if c.name in columns])
    spec = scan.read_spec(arrow)
    run = uuid.uuid4().hex[:12]
    lanes: list[list[tuple[FileSlice, str, Want]]] = [[] for _ in range(max(1, workers))]
    sizes = [0] * len(lanes)
    for item in sorted(work, key=lambda x: -x[0].size):  # largest first, onto the lightest lane
        i = int(np.argmin(sizes))
        lanes[i].append(item)
        sizes[i] += item[0].size

    def lane(i: int) -> list[WrittenFile]:
        reader = TaskReader(scan.fs, spec)
        sink = GroupSink(target, columns, f"v{version}-{run}-{i}")
        try:
            for s, name, want in lanes[i]:
                for batch in reader.read_slice(s):
                    batch = _keep(batch, want)
                    if on_rows is not None:
                        on_rows(batch.num_rows)
                    for key, part in split_by_group(batch, name):
                        sink.add(key, part)
            return sink.close()
        except BaseException:
            sink.abort()
            raise

    active = [i for i in range(len(lanes)) if lanes[i]]
    if len(active) == 1:
        return lane(active[0])
    with ThreadPoolExecutor(len(active), thread_name_prefix="hiveacid-convert") as pool:
        return [f for files in pool.map(lane, active) for f in files]


def _keep(batch: pa.RecordBatch, want: Want) -> pa.RecordBatch:
    if want.all or batch.num_rows == 0:
        return batch
    rid = batch.column(0)
    mask = in_groups(rid, set(want.groups))
    if want.write_id is not None:
        mask |= key_arrays(rid)[0] == want.write_id
    if mask.all():
        return batch
    return batch.filter(pa.array(mask))
