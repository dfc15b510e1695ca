"""The data files of insert-only (micro-managed) tables: plain ORC or Parquet (docs/format.md §9).

An insert-only table (``transactional_properties=insert_only``) keeps Hive's directories
(``delta_W_W_SSSS/``, ``base_W/``) but holds plain files of the table's format in them: the
table's columns only, no ACID event struct, no ``bucket_`` prefix, no key index, no
``_orc_acid_version``. Hive's FileSinkOperator names each file after the task that wrote it
(``Utilities.getTaskId``: six-digit task number, ``_``, attempt), or after the bucket for a
bucketed table (``Utilities.replaceTaskIdFromFilename``): ``000000_0``, ``000001_0``...

Files are written as Hive 3 reads them:

* column names in lower case, as Hive names columns (Hive 3 reads plain ORC files by column
  name, case-sensitively by default: ``orc.schema.evolution.case.sensitive``). Struct fields keep
  the table's names (lower case in every table a metastore holds);
* Parquet timestamps as INT96 holding the UTC wall clock, as Hive and Spark write them (Hive 3
  cannot read INT64 timestamps: ``ClassCastException: LongWritable cannot be cast to
  TimestampWritable``, fixed in Hive 4), decimals as fixed-length byte arrays.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from typing import BinaryIO, Iterable, Optional, Sequence

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq

from ..acid.names import ParsedDir, is_hidden, parse_bucket_file
from ..acid.orc import sniff_format
from ..acid.state import list_files_recursive
from ..exceptions import InvalidOptionError, UnsupportedOperationError
from ..io.filesystem import FileSystem
from .acid_file import DELTA_STRIPE_SIZE, ROW_INDEX_STRIDE, FileSummary, orc_codec
from .nested_nulls import null_children_of_null_structs

log = logging.getLogger(__name__)

ORC, PARQUET = "orc", "parquet"
PLAIN_FORMATS = (ORC, PARQUET)
#: Compression of a new table when none is given: Hive's ORC default, and Spark's Parquet default
#: (every Parquet reader Hive ships reads Snappy).
DEFAULT_COMPRESSION = {ORC: "ZLIB", PARQUET: "SNAPPY"}
_PARQUET_CODECS = {"NONE": "none", "UNCOMPRESSED": "none", "ZLIB": "gzip", "GZIP": "gzip",
                   "SNAPPY": "snappy", "ZSTD": "zstd"}


def plain_file_name(n: int) -> str:
    """Hive's name for the file of task (or bucket) ``n``: ``000003_0`` (attempt 0: one attempt's
    files are published)."""
    return f"{n:06d}_0"


def check_format(name: str) -> str:
    """``orc`` or ``parquet`` (any case); other formats are refused, naming the option."""
    low = name.strip().lower()
    if low not in PLAIN_FORMATS:
        raise InvalidOptionError(
            f"Option fileFormat='{name}' is not supported: use orc or parquet (full-ACID tables "
            "are always ORC; insert-only tables may be ORC or Parquet)")
    return low


def format_of_input_format(input_format: Optional[str]) -> Optional[str]:
    """``orc`` / ``parquet`` for a metastore table's InputFormat class (None: another format)."""
    low = (input_format or "").lower()
    if "orc" in low:
        return ORC
    if "parquet" in low:
        return PARQUET
    return None


def parquet_codec(compression: str) -> str:
    """pyarrow's codec for a compression name (ours, or Hive's ``parquet.compression``)."""
    try:
        return _PARQUET_CODECS[compression.strip().upper()]
    except KeyError:
        raise InvalidOptionError(
            f"Unsupported Parquet compression '{compression}': use NONE, SNAPPY, ZLIB (written as "
            "GZIP) or ZSTD. (pyarrow's LZ4 is LZ4_RAW, which the Parquet readers of Hive 3 "
            "cannot read.)") from None


def check_codec(file_format: str, compression: str) -> None:
    """Raise InvalidOptionError when ``compression`` cannot be written in ``file_format``."""
    if file_format == PARQUET:
        parquet_codec(compression)
    else:
        orc_codec(compression)


class PlainFileWriter:
    """Streams rows into one plain ORC or Parquet file (the table's columns, Hive's names).

    ``write_inserts`` has the signature of
    :meth:`~spark_hive_acid.write.acid_file.AcidFileWriter.write_inserts` so the task writers
    treat both kinds alike; the write id and bucket property are not stored (insert-only files have
    no ACID columns: a directory's name gives its rows' write id).
    """

    def __init__(self, fs: FileSystem, path: str, row_type: pa.StructType, file_format: str, *,
                 compression: str, stripe_size: int = DELTA_STRIPE_SIZE,
                 exclusive: bool = False):
        self.fs, self.path, self.format = fs, path, file_format
        #: create the file only if absent (PathExistsError from close(), nothing written)
        self.exclusive = exclusive
        # on a store that writes in place the file goes to a local temporary file first and is
        # uploaded whole on close (where it lands may change until then: place_at)
        self._tmp_dir = tempfile.mkdtemp(prefix="hiveacid-") if fs.writes_in_place else None
        self.schema = pa.schema([pa.field(f.name.lower(), f.type) for f in row_type])
        self.inserts = 0
        self._closed = False
        self._buffer: list[pa.RecordBatch] = []
        self._buffered_bytes = 0
        self._group_bytes = stripe_size  # Parquet: one row group per this many bytes
        self._out: BinaryIO
        if self._tmp_dir is not None:
            self._out = open(os.path.join(self._tmp_dir, "data"), "wb")
        else:
            parent = path.rsplit("/", 1)[0]
            if parent and parent != path:
                fs.mkdirs(parent)
            self._out = fs.open_output_exclusive(path) if exclusive else fs.open_output(path)
        try:
            if file_format == PARQUET:
                self._writer = pq.ParquetWriter(
                    self._out, self.schema, compression=parquet_codec(compression),
                    use_deprecated_int96_timestamps=True, use_compliant_nested_type=True)
            else:
                self._writer = po.ORCWriter(
                    self._out, compression=orc_codec(compression), stripe_size=stripe_size,
                    row_index_stride=ROW_INDEX_STRIDE, batch_size=65536)
        except BaseException:
            self._drop()
            raise

    def write_inserts(self, rows: pa.RecordBatch | pa.Table, write_id: int = 0,
                      bucket_property: int = 0) -> None:
        """Append ``rows`` (the table's data columns, in table order)."""
        if rows.num_rows == 0:
            return
        batches = rows.to_batches() if isinstance(rows, pa.Table) else [rows]
        for b in batches:
            columns = ([null_children_of_null_structs(c) for c in b.columns]
                       if self.format == ORC else b.columns)  # write.nested_nulls
            self._buffer.append(pa.RecordBatch.from_arrays(columns, schema=self.schema))
            self._buffered_bytes += b.nbytes
            self.inserts += b.num_rows
        if self.format == ORC or self._buffered_bytes >= self._group_bytes:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._writer.write(pa.Table.from_batches(self._buffer, schema=self.schema))
            self._buffer, self._buffered_bytes = [], 0

    def close(self) -> FileSummary:
        """Finish the file (a file with no rows is still a valid file of the table's schema)."""
        if self._closed:
            raise InvalidOptionError(f"{self.path} already closed")
        self._closed = True
        try:
            self._flush()
            if self.inserts == 0 and self.format == ORC:
                self._writer.write(self.schema.empty_table())
            self._writer.close()
        except BaseException:
            self._drop()
            raise
        self._out.close()
        if self._tmp_dir is not None:
            try:
                with open(self._out.name, "rb") as src, \
                        (self.fs.open_output_exclusive(self.path) if self.exclusive
                         else self.fs.open_output(self.path)) as dst:
                    shutil.copyfileobj(src, dst, 4 << 20)
            finally:
                shutil.rmtree(self._tmp_dir, ignore_errors=True)
        return FileSummary(self.path, self.inserts, 0)

    def place_at(self, path: str) -> None:
        """Before :meth:`close`: upload to ``path`` instead, created only if absent (a file
        written in place: ``write.in_place``)."""
        if self._tmp_dir is None or self._closed:
            raise InvalidOptionError(f"{self.path} cannot be placed at {path} now")
        self.path, self.exclusive = path, True

    def _drop(self) -> None:
        """Leave nothing: an exclusive or local-first file is abandoned, a plain one removed."""
        abort = getattr(self._out, "abort", None)
        if abort is not None:
            abort()
        else:
            self._out.close()
        if self._tmp_dir is not None:
            shutil.rmtree(self._tmp_dir, ignore_errors=True)
        elif abort is None:
            self.fs.delete(self.path)

    def discard(self) -> None:
        """Close and remove the file (a failed task)."""
        if self._closed:
            self.fs.delete(self.path)
            return
        self._closed = True
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - already failing
            pass
        self._drop()


def write_empty_plain_file(fs: FileSystem, path: str, row_type: pa.StructType, file_format: str,
                           compression: str) -> None:
    """A file with no rows (keeps an insert-overwrite base from being an empty directory)."""
    PlainFileWriter(fs, path, row_type, file_format, compression=compression).close()


def merge_plain_files(fs: FileSystem, paths: Sequence[str], dest: str, row_type: pa.StructType,
                      file_format: str, compression: str, stripe_size: int,
                      exclusive: bool = False) -> FileSummary:
    """Rewrite several staged files (one bucket of a bucketed overwrite, written by several tasks)
    as one file at ``dest``, batch by batch (``exclusive``: created only if absent)."""
    w = PlainFileWriter(fs, dest, row_type, file_format, compression=compression,
                        stripe_size=stripe_size, exclusive=exclusive)
    try:
        for p in paths:
            with fs.open_input(p) as f:
                if file_format == PARQUET:
                    pf = pq.ParquetFile(f, coerce_int96_timestamp_unit="us")
                    for batch in pf.iter_batches():
                        w.write_inserts(_as_table_batch(batch, row_type))
                else:
                    orc = po.ORCFile(f)
                    for i in range(orc.nstripes):
                        w.write_inserts(_as_table_batch(orc.read_stripe(i), row_type))
        return w.close()
    except BaseException:
        w.discard()
        raise


def _as_table_batch(batch: pa.RecordBatch, row_type: pa.StructType) -> pa.RecordBatch:
    """A batch read back from a staged file, with the table's types (ORC gives nanosecond
    timestamps: ours hold microseconds, so the cast loses nothing)."""
    arrays = [col if col.type.equals(f.type) else col.cast(f.type)
              for col, f in zip(batch.columns, row_type)]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(list(row_type)))


def detect_insert_only(fs: FileSystem, dirs: Iterable[ParsedDir], max_dirs: int = 16
                       ) -> Optional[tuple[bool, str]]:
    """What the data files of a table without a layout file say it is: ``(False, "orc")`` for
    full ACID (``bucket_N`` files, or any delete delta), ``(True, format)`` for insert-only (plain
    files named like ``000000_0``), None when the newest ``max_dirs`` directories hold no file."""
    dirs = list(dirs)
    if any(d.is_delete for d in dirs):
        return False, ORC
    for d in sorted(dirs, key=lambda d: (-d.max_write_id, d.path))[:max_dirs]:
        children = [c for c in fs.list_dir(d.path) if not is_hidden(c.name)]
        if any(not c.is_dir and parse_bucket_file(c.name) is not None for c in children):
            return False, ORC
        files = list_files_recursive(fs, d.path)
        if not files:
            continue
        fmt = sniff_format(fs, files[0].path)
        if fmt not in PLAIN_FORMATS:
            raise UnsupportedOperationError(
                f"{d.path} holds plain files that are neither ORC nor Parquet ({files[0].path}): "
                "an insert-only table stored as text, Avro or another format. hiveacid writes "
                "insert-only tables stored as ORC or Parquet only; write this one with Hive")
        return True, fmt
    return None
