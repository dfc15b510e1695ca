"""Reading and writing tables in this process, without Spark (as ``deltalake.write_deltalake``):
small jobs, scripts and tests need no JVM.

:func:`write_table` writes exactly the files the Spark writer writes and commits through the same
transaction protocol (the path-mode log or a metastore transaction); :func:`read_table` is the
Spark reader's planner and task reader run in-process.
"""
from __future__ import annotations

import logging
from typing import Iterable, Iterator, Mapping, Optional, Sequence, Union

import pyarrow as pa

from . import options as opt
from .acid.layout import staging_dir
from .catalog import open_scan, table_ref
from .exceptions import InvalidOptionError, SchemaMismatchError
from .txn.committer import empty_bases
from .txn.session import WriteSession
from .write.options import WriteOptions
from .write.schema import map_columns
from .write.task_writer import InsertTarget, TableSpec, stage_batches

__all__ = ["read_table", "write_table"]

log = logging.getLogger(__name__)

ArrowData = Union[pa.Table, pa.RecordBatch, pa.RecordBatchReader, Iterable[pa.RecordBatch]]
MODES = ("append", "overwrite")


def write_table(data: ArrowData, path: Optional[str] = None, *, table: Optional[str] = None,
                mode: str = "append", partition_by: Optional[Sequence[str]] = None,
                bucket_by: Optional[Sequence[str]] = None, num_buckets: Optional[int] = None,
                partition_overwrite_mode: str = "static",
                options: Optional[Mapping[str, str]] = None) -> dict:
    """Append (INSERT) or overwrite (INSERT OVERWRITE) Arrow data into a Hive ACID table.

    Args:
        data: a ``pyarrow.Table``, ``RecordBatch``, ``RecordBatchReader`` or an iterable of record
            batches of one schema; columns are matched to the table's by name.
        path: the table directory (path mode; created on first write), or
        table: ``db.table`` in a Hive Metastore (option ``metastoreUri`` in ``options``).
        mode: ``"append"`` or ``"overwrite"``.
        partition_by, bucket_by, num_buckets: creation options of a new path-mode table (checked
            against an existing table).
        partition_overwrite_mode: ``"static"`` (an overwrite replaces the whole table) or
            ``"dynamic"`` (only the partitions present in the data).
        options: any other write option (``compression``, ``tableProperties``,
            ``txnTimeoutSeconds``, metastore and storage options; docs/writing.md).

    Returns the metrics: ``numInsertedRows``, ``numFiles``, ``writeId`` (and ``txnId``).
    """
    if mode not in MODES:
        raise InvalidOptionError(f"write_table(mode={mode!r}): use 'append' or 'overwrite'")
    opt.check_known(options, "write_table")
    given = {"path": path, "table": table,
             "partitionBy": ",".join(partition_by) if partition_by else None,
             "bucketBy": ",".join(bucket_by) if bucket_by else None,
             "numBuckets": num_buckets, "partitionOverwriteMode": partition_overwrite_mode}
    merged = {**opt.lowered(options), **opt.lowered({k: v for k, v in given.items()
                                                     if v is not None})}
    ref = table_ref(merged)
    write_options = WriteOptions.parse(ref.options, require_path=False)
    schema, batches = _batches(data)
    layout, created = ref.prepare_write(schema, write_options)
    mapping = map_columns(layout, schema, table=ref.display)
    fs, location = ref.location()
    spec = TableSpec.of(location, layout)
    overwrite = mode == "overwrite"
    txn = ref.begin("overwrite" if overwrite else ("create" if created else "append"))
    with WriteSession(fs, location, txn, "write_table") as session:
        target = InsertTarget(txn.write_id, 0, base=overwrite, sole_writer=True)
        staged = stage_batches(fs, spec, target, mapping, _same_schema(batches, schema),
                               fs.join(staging_dir(fs, location, txn.write_id), "direct"), 0)
        empty = (empty_bases(txn, fs, spec, staged,
                             replace_all=not write_options.dynamic_overwrite)
                 if overwrite else [])
        result = session.commit(spec, staged, empty_bases=empty,
                                static_overwrite=overwrite and not write_options.dynamic_overwrite)
    return dict(result.metrics, **txn.ids())


def read_table(path: str, **options: str) -> pa.Table:
    """Read a table in-process (no Spark), e.g. ``read_table(p, validWriteIds='db.t:5:...')``."""
    opts = {"path": path, **{k: str(v).lower() if isinstance(v, bool) else str(v)
                             for k, v in options.items()}}
    return open_scan(opts).to_arrow()


def _same_schema(batches: Iterable[pa.RecordBatch], schema: pa.Schema
                 ) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        if not batch.schema.equals(schema, check_metadata=False):
            raise SchemaMismatchError(
                f"write_table: a batch has the schema {batch.schema}, not the first batch's "
                f"{schema}; nothing was written")
        yield batch


def _batches(data: ArrowData) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The data's schema and its record batches (read lazily from a reader or an iterable)."""
    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    it = iter(data)
    try:
        first = next(it)
    except StopIteration:
        raise InvalidOptionError("write_table: an empty iterable has no schema; pass a "
                                 "pyarrow.Table (it may have no rows)") from None
    if not isinstance(first, pa.RecordBatch):
        raise InvalidOptionError(
            f"write_table needs Arrow data (Table, RecordBatch, RecordBatchReader or batches), "
            f"not {type(first).__name__}")

    def chain() -> Iterator[pa.RecordBatch]:
        yield first
        yield from it
    return first.schema, chain()
