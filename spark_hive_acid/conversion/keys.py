"""Row groups: how the rows of a Hive ACID table are laid out in the target's files.

Every row of a full-ACID table has a ROW__ID (original write id, bucket property, row id) that
never changes, not even when a compaction moves the row into another file. The converter puts the
rows of one *group* -- one partition, one original write id, one bucket property and one range of
``2**CHUNK_BITS`` row ids -- into the same target file(s), and names each file after its group.
A later delete or update of Hive rows then names the groups it touches by their ROW__IDs alone,
and the converter rewrites exactly those groups' files (copy-on-write) from our read of the Hive
table at that write id. Nothing besides the target's own metadata (its current files and their
names) is needed to find them, so a mirror that crashed resumes from the target alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np
import pyarrow as pa

#: row ids per group: a file never holds more than 2**20 rows of one write id and bucket
CHUNK_BITS = 20
_NAME = re.compile(r"^hive-(\d+)-(\d+)-(\d+)-[0-9a-z_-]+\.parquet$")


@dataclass(frozen=True, order=True)
class GroupKey:
    """One group of rows: ``partition`` is the Hive partition directory below the table
    (``"ds=1/h=2"``; ``""`` unpartitioned)."""

    partition: str
    write_id: int
    bucket: int  # the bucket property as stored (signed 32-bit read as unsigned here)
    chunk: int

    def file_name(self, tag: str) -> str:
        """``hive-<write id>-<bucket property>-<chunk>-<tag>.parquet``; ``tag`` makes it unique."""
        return f"hive-{self.write_id}-{self.bucket}-{self.chunk}-{tag}.parquet"


def parse_file_name(partition: str, name: str) -> Optional[GroupKey]:
    """The group a target file holds, from its name (None: not a file the converter wrote)."""
    m = _NAME.match(name)
    if m is None:
        return None
    return GroupKey(partition, int(m.group(1)), int(m.group(2)), int(m.group(3)))


def key_arrays(row_id: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(write id, bucket property as uint32, chunk) of every row, from the ``row__id`` struct."""
    if isinstance(row_id, pa.ChunkedArray):
        row_id = row_id.combine_chunks()
    owid = row_id.field("writeId").to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    bp = row_id.field("bucketId").to_numpy(zero_copy_only=False).astype(np.int64) & 0xFFFFFFFF
    chunk = row_id.field("rowId").to_numpy(zero_copy_only=False).astype(np.int64) >> CHUNK_BITS
    return owid, bp, chunk


def split_by_group(batch: pa.RecordBatch, partition: str, row_id_index: int = 0
                   ) -> Iterator[tuple[GroupKey, pa.RecordBatch]]:
    """The rows of ``batch`` per group (in their order), without the ``row__id`` column."""
    if batch.num_rows == 0:
        return
    owid, bp, chunk = key_arrays(batch.column(row_id_index))
    rest = batch.drop_columns([batch.schema.names[row_id_index]])
    if (owid[0] == owid).all() and (bp[0] == bp).all() and (chunk[0] == chunk).all():
        yield GroupKey(partition, int(owid[0]), int(bp[0]), int(chunk[0])), rest
        return
    order = np.lexsort((chunk, bp, owid))  # stable: rows keep their order within a group
    o, b, c = owid[order], bp[order], chunk[order]
    edges = np.flatnonzero((o[1:] != o[:-1]) | (b[1:] != b[:-1]) | (c[1:] != c[:-1])) + 1
    starts = np.concatenate(([0], edges))
    ends = np.concatenate((edges, [len(order)]))
    for s, e in zip(starts, ends):
        yield (GroupKey(partition, int(o[s]), int(b[s]), int(c[s])),
               rest.take(pa.array(order[s:e])))


def in_groups(row_id: pa.Array, wanted: set[tuple[int, int, int]]) -> np.ndarray:
    """A mask of the rows whose (write id, bucket property, chunk) is in ``wanted``."""
    owid, bp, chunk = key_arrays(row_id)
    if not wanted:
        return np.zeros(len(owid), dtype=bool)
    packed = np.array(sorted(wanted), dtype=np.int64)
    keys = np.stack([owid, bp, chunk], axis=1)
    # rows and wanted keys as one structured view each, then a vectorised membership test
    view = np.dtype([("a", np.int64), ("b", np.int64), ("c", np.int64)])
    rows = np.ascontiguousarray(keys).view(view).ravel()
    want = np.ascontiguousarray(packed).view(view).ravel()
    return np.isin(rows, want)
