"""One full-ACID ORC data file (``bucket_N``): insert or delete events plus Hive's footer metadata.

Event schema (docs/format.md §5.1), field names exactly as Hive writes them::

    struct<operation:int, originalTransaction:bigint, bucket:int, rowId:bigint,
           currentTransaction:bigint, row:struct<...table columns...>>

Footer metadata (§5.2): ``hive.acid.key.index`` (the last key of every stripe, each followed by
';'), ``hive.acid.stats`` ("inserts,updates,deletes") and ``hive.acid.version`` = "2". Events are
written with pyarrow's columnar ORC writer; the metadata is added afterwards by
:mod:`spark_hive_acid.write.orc_tail`.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc

from ..exceptions import InvalidOptionError
from ..io.filesystem import FileSystem, LocalFileSystem
from .orc_concat import concat_orc
from .nested_nulls import null_children_of_null_structs
from .orc_tail import add_user_metadata

ACID_FIELDS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")
INSERT, DELETE = 0, 2
ACID_VERSION = b"2"
#: Hive's delta writers divide the table's stripe size by hive.exec.orc.base.delta.ratio (8).
DELTA_STRIPE_SIZE = 8 << 20
BASE_STRIPE_SIZE = 64 << 20
ROW_INDEX_STRIDE = 10_000

_CODECS = {"NONE": "uncompressed", "ZLIB": "zlib", "SNAPPY": "snappy", "LZ4": "lz4", "ZSTD": "zstd"}


def orc_codec(compression: str) -> str:
    """pyarrow's codec name for a Hive ``orc.compress`` value."""
    try:
        return _CODECS[compression.upper()]
    except KeyError:
        raise InvalidOptionError(
            f"Unsupported compression '{compression}': use one of {', '.join(_CODECS)}") from None


def event_schema(row_type: pa.StructType) -> pa.Schema:
    return pa.schema([
        pa.field("operation", pa.int32()), pa.field("originalTransaction", pa.int64()),
        pa.field("bucket", pa.int32()), pa.field("rowId", pa.int64()),
        pa.field("currentTransaction", pa.int64()), pa.field("row", row_type),
    ])


def _columns(rows: pa.RecordBatch) -> list[pa.Array]:
    """The table columns of an insert batch, as pyarrow's ORC writer must get them inside the
    ``row`` struct (``write.nested_nulls``)."""
    return [null_children_of_null_structs(c) for c in rows.columns]


@dataclass(frozen=True)
class FileSummary:
    path: str
    inserts: int
    deletes: int

    @property
    def rows(self) -> int:
        return self.inserts + self.deletes


class AcidFileWriter:
    """Streams events into one ``bucket_N`` file; :meth:`close` adds the footer metadata.

    Insert events get rowIds 0, 1, 2... in write order. Delete events must be passed sorted by
    (originalWriteId, bucketProperty, rowId).
    """

    def __init__(self, fs: FileSystem, path: str, row_type: pa.StructType, *,
                 compression: str = "ZLIB", stripe_size: int = DELTA_STRIPE_SIZE,
                 exclusive: bool = False):
        self.fs = fs
        self.path = path
        #: create the file only if absent (PathExistsError from close(), nothing written)
        self.exclusive = exclusive
        self.row_type = row_type
        self.schema = event_schema(row_type)
        self._local = isinstance(fs, LocalFileSystem) and not exclusive
        if self._local:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._tmp_dir: Optional[str] = None
            self._local_path = path
        else:
            self._tmp_dir = tempfile.mkdtemp(prefix="hiveacid-")
            self._local_path = os.path.join(self._tmp_dir, "bucket.orc")
        self._writer = po.ORCWriter(self._local_path, compression=orc_codec(compression),
                                    stripe_size=stripe_size, row_index_stride=ROW_INDEX_STRIDE,
                                    batch_size=65536)
        self._next_row_id = 0
        self.inserts = 0
        self.deletes = 0
        # For the key index: insert runs (first row index, owid, bp, first rowId), in file order.
        # Delete files read their stripes' last keys back on close instead: keeping every key
        # would cost 20 bytes an event, and a delete file may hold tens of millions.
        self._insert_runs: list[tuple[int, int, int, int]] = []
        self._keyed = False  # events written with their own keys (write_events): read keys back
        self._closed = False

    @property
    def rows(self) -> int:
        return self.inserts + self.deletes

    def write_inserts(self, rows: pa.RecordBatch | pa.Table, write_id: int, bucket_property: int) -> None:
        """Append insert events for ``rows`` (the table's data columns, in table order)."""
        n = rows.num_rows
        if n == 0:
            return
        if self.deletes:
            raise InvalidOptionError("An ACID file holds either insert or delete events, not both")
        if isinstance(rows, pa.Table):
            rows = rows.combine_chunks().to_batches()[0] if rows.num_rows else rows
        row = pa.StructArray.from_arrays(_columns(rows), fields=list(self.row_type))
        first = self._next_row_id
        batch = pa.RecordBatch.from_arrays([
            pa.array(np.zeros(n, dtype=np.int32)),
            pa.array(np.full(n, write_id, dtype=np.int64)),
            pa.array(np.full(n, bucket_property, dtype=np.int32)),
            pa.array(np.arange(first, first + n, dtype=np.int64)),
            pa.array(np.full(n, write_id, dtype=np.int64)),
            row,
        ], schema=self.schema)
        self._writer.write(pa.Table.from_batches([batch]))
        self._insert_runs.append((self.inserts, write_id, bucket_property, first))
        self._next_row_id += n
        self.inserts += n

    def write_deletes(self, original_write_ids: np.ndarray, bucket_properties: np.ndarray,
                      row_ids: np.ndarray, write_id: "int | np.ndarray") -> None:
        """Append delete events (sorted by the caller) made by write id ``write_id`` (or, when
        compaction copies events of several writes, one currentTransaction per event)."""
        n = len(row_ids)
        if n == 0:
            return
        if self.inserts:
            raise InvalidOptionError("An ACID file holds either insert or delete events, not both")
        owid = np.asarray(original_write_ids, dtype=np.int64)
        bp = np.asarray(bucket_properties, dtype=np.int32)
        rid = np.asarray(row_ids, dtype=np.int64)
        cur = np.asarray(write_id, dtype=np.int64)
        cur = np.full(n, int(cur), dtype=np.int64) if cur.ndim == 0 else cur
        children = [pa.nulls(n, f.type) for f in self.row_type]
        row = pa.StructArray.from_arrays(children, fields=list(self.row_type),
                                         mask=pa.array(np.ones(n, dtype=bool)))
        batch = pa.RecordBatch.from_arrays([
            pa.array(np.full(n, DELETE, dtype=np.int32)), pa.array(owid), pa.array(bp),
            pa.array(rid), pa.array(cur), row,
        ], schema=self.schema)
        self._writer.write(pa.Table.from_batches([batch]))
        self.deletes += n

    def write_keyed_inserts(self, original_write_ids: np.ndarray, bucket_properties: np.ndarray,
                            row_ids: np.ndarray, rows: pa.RecordBatch | pa.Table) -> None:
        """Append insert events that keep their own ROW__ID (compaction: each row stays
        ``(owid, bp, rowId)`` with currentTransaction = owid, as Hive's compactor writes it).
        The caller passes them sorted by (owid, bp, rowId)."""
        n = len(row_ids)
        if n == 0:
            return
        if self.deletes:
            raise InvalidOptionError("An ACID file holds either insert or delete events, not both")
        if isinstance(rows, pa.Table):
            rows = rows.combine_chunks().to_batches()[0]
        owid = pa.array(np.asarray(original_write_ids, dtype=np.int64))
        batch = pa.RecordBatch.from_arrays([
            pa.array(np.zeros(n, dtype=np.int32)), owid,
            pa.array(np.asarray(bucket_properties, dtype=np.int32)),
            pa.array(np.asarray(row_ids, dtype=np.int64)), owid,
            pa.StructArray.from_arrays(_columns(rows), fields=list(self.row_type)),
        ], schema=self.schema)
        self._writer.write(pa.Table.from_batches([batch]))
        self._keyed = True
        self.inserts += n

    def _insert_key_at(self, index: int) -> tuple[int, int, int]:
        """The (owid, bp, rowId) key of the insert event at file position ``index``."""
        run = max((r for r in self._insert_runs if r[0] <= index), key=lambda r: r[0])
        return run[1], run[2], run[3] + (index - run[0])

    def _stripe_last_keys(self) -> list[tuple[int, int, int]]:
        """The key of the last event of each stripe (what ``hive.acid.key.index`` lists). pyorc
        seeks to a stripe's last row through the row index instead of decoding the stripe: a delete
        stripe can hold tens of millions of events (they compress to almost nothing)."""
        with open(self._local_path, "rb") as fh:
            r = pyorc.Reader(fh, column_names=("originalTransaction", "bucket", "rowId"))
            stripes = [r.read_stripe(i) for i in range(r.num_of_stripes)]
            if not self.deletes and not self._keyed:
                ends = np.cumsum([len(s) for s in stripes])
                return [self._insert_key_at(int(e) - 1) for e in ends if self.inserts]
            out: list[tuple[int, int, int]] = []
            for stripe in stripes:
                stripe.seek(len(stripe) - 1)
                write_id, bucket, row_id = next(stripe)
                out.append((int(write_id), int(bucket), int(row_id)))
            return out

    def close(self) -> FileSummary:
        if self._closed:
            raise InvalidOptionError(f"{self.path} already closed")
        self._closed = True
        if self.rows == 0:  # still a valid ORC file with the full event schema
            self._writer.write(self.schema.empty_table())
        self._writer.close()
        keys = ["%d,%d,%d;" % key for key in self._stripe_last_keys()] if self.rows else []
        meta = {
            "hive.acid.key.index": "".join(keys).encode("utf-8"),
            "hive.acid.stats": f"{self.inserts},0,{self.deletes}".encode("utf-8"),
            "hive.acid.version": ACID_VERSION,
        }
        with open(self._local_path, "r+b") as f:
            add_user_metadata(f, meta)
        if self._tmp_dir is not None:  # not a local file system: written locally, then copied
            try:
                with open(self._local_path, "rb") as src, \
                        (self.fs.open_output_exclusive(self.path) if self.exclusive
                         else self.fs.open_output(self.path)) as dst:
                    shutil.copyfileobj(src, dst, 4 << 20)
            finally:
                shutil.rmtree(self._tmp_dir, ignore_errors=True)
        return FileSummary(self.path, self.inserts, self.deletes)

    def place_at(self, path: str) -> None:
        """Before :meth:`close`: upload to ``path`` instead, created only if absent (a file
        written in place: ``write.in_place``). The events are in a local file until then."""
        if self._local or self._closed:
            raise InvalidOptionError(f"{self.path} cannot be placed at {path} now")
        self.path, self.exclusive = path, True

    def discard(self) -> None:
        """Close and remove the file (a failed task)."""
        if not self._closed:
            self._closed = True
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - already failing
                pass
        if self._tmp_dir:
            shutil.rmtree(self._tmp_dir, ignore_errors=True)
        else:
            self.fs.delete(self.path)


def copy_insert_events(fs: FileSystem, source: str, writer: AcidFileWriter, write_id: int,
                       bucket_property: int) -> None:
    """Append the rows of another file's insert events to ``writer`` (with the writer's row ids),
    one stripe at a time."""
    orc = po.ORCFile(fs.open_input(source))
    for i in range(orc.nstripes):
        row = orc.read_stripe(i, columns=["row"]).column(0)
        if isinstance(row, pa.ChunkedArray):
            row = row.combine_chunks()
        writer.write_inserts(pa.RecordBatch.from_arrays(row.flatten(),
                                                        names=[f.name for f in row.type]),
                             write_id, bucket_property)


def concat_acid_files(fs: FileSystem, sources: list[str], target: str) -> FileSummary:
    """One ``bucket_N`` file from ACID files of consecutive events (written in parallel), by
    copying their stripes (``orc_concat``): the key index lists every stripe's last key (the
    sources' indexes, one after the other) and the acid stats are added up."""
    counts = [0, 0, 0]  # inserts, updates, deletes

    def merge(metas: list[dict[str, bytes]]) -> dict[str, bytes]:
        for m in metas:
            for i, v in enumerate(m.get("hive.acid.stats", b"0,0,0").decode("ascii").split(",")):
                counts[i] += int(v)
        return {
            "hive.acid.key.index": b"".join(m.get("hive.acid.key.index", b"") for m in metas),
            "hive.acid.stats": ",".join(map(str, counts)).encode("ascii"),
            "hive.acid.version": ACID_VERSION,
        }

    concat_orc(fs, sources, target, merge)
    return FileSummary(target, counts[0], counts[2])


def write_empty_file(fs: FileSystem, path: str, row_type: pa.StructType, compression: str) -> None:
    """An ACID file with no events (keeps an insert-overwrite base from being an empty directory)."""
    AcidFileWriter(fs, path, row_type, compression=compression).close()


def write_acid_version_file(fs: FileSystem, dir_path: str) -> None:
    """``_orc_acid_version`` (content "2", no newline) in a new base/delta directory."""
    from ..acid.names import ACID_VERSION_FILE
    fs.write_bytes(fs.join(dir_path, ACID_VERSION_FILE), ACID_VERSION)
