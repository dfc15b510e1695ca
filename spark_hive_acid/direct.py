"""Reading and writing tables in this process, without Spark (as ``deltalake.write_deltalake``):
small jobs, scripts and tests need no JVM.

:func:`write_table` writes exactly the files the Spark writer writes and commits through the same
transaction protocol (the path-mode log or a metastore transaction); :func:`read_table` is the
Spark reader's planner and task reader run in-process.
"""
from __future__ import annotations

import inspect
import json
import logging
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

import pyarrow as pa

from . import options as opt
from .acid.layout import staging_dir
from .acid.partitions import DEFAULT_PARTITION, value_string
from .acid.partition_condition import PartitionCondition
from .catalog import TableRef, open_scan, table_ref
from .direct_args import Columns, check_write_call, column_list, read_options
from .exceptions import InvalidOptionError, SchemaMismatchError
from .io.filesystem import FileSystem
from .progress import Progress
from .read.reader import TaskReader
from .read.scan import TableScan
from .stream.changefeed import change_feed_table
from .txn.base import Transaction
from .txn.hms_read import ReadLease
from .txn.committer import empty_bases
from .txn.session import WriteSession
from .write.options import WriteOptions
from .write.replace_region import Replacement, replacement
from .write.schema import ColumnMapping, map_columns
from .write.task_writer import InsertTarget, StagedFile, TableSpec, stage_batches

__all__ = ["read_table", "write_table"]

log = logging.getLogger(__name__)

ArrowData = Union[pa.Table, pa.RecordBatch, pa.RecordBatchReader, Iterable[pa.RecordBatch]]
MODES = ("append", "overwrite")


def write_table(data: ArrowData, path: Optional[str] = None, *, table: Optional[str] = None,
                mode: str = "append", partition_by: Columns = None,
                bucket_by: Columns = None, num_buckets: Optional[int] = None,
                partition_overwrite_mode: str = "static",
                options: Optional[Mapping[str, str]] = None,
                partition: Optional[Mapping[str, Any]] = None, **misspelt: Any) -> dict:
    """Append (INSERT) or overwrite (INSERT OVERWRITE) Arrow data into a Hive ACID table.

    Args:
        data: a ``pyarrow.Table``, ``RecordBatch``, ``RecordBatchReader`` or an iterable of record
            batches of one schema; columns are matched to the table's by name.
        path: the table directory (path mode; created on first write), or
        table: ``db.table`` in a Hive Metastore (option ``metastoreUri`` in ``options``).
        mode: ``"append"`` or ``"overwrite"``.
        partition_by, bucket_by, num_buckets: creation options of a new path-mode table (checked
            against an existing table); columns as a list or one string ``"day"`` / ``"a,b"``.
        partition_overwrite_mode: ``"static"`` (an overwrite replaces the whole table) or
            ``"dynamic"`` (only the partitions present in the data).
        options: any other write option (``compression``, ``tableProperties``,
            ``txnTimeoutSeconds``, ``replaceWhere``, ``mergeSchema``, metastore and storage
            options; docs/writing.md).
        partition: with ``mode="overwrite"``, Hive's ``INSERT OVERWRITE ... PARTITION (c=1)``:
            ``{"c": 1}`` replaces exactly that partition (empty when no row arrives; with some of
            the partition columns, every partition matching them); the data may leave those
            columns out (option ``partitionSpec``).

    Returns the metrics: ``numInsertedRows``, ``numFiles``, ``writeId`` (and ``txnId``).
    """
    check_write_call(data, path, misspelt,
                     [p for p in inspect.signature(write_table).parameters if p != "misspelt"])
    planned = plan_write(data, path, table=table, mode=mode, partition_by=partition_by,
                         bucket_by=bucket_by, num_buckets=num_buckets,
                         partition_overwrite_mode=partition_overwrite_mode, options=options,
                         partition=partition)
    txn = planned.ref.begin(planned.operation)
    with WriteSession(planned.fs, planned.location, txn, "write_table") as session, \
            Progress(f"write_table into {planned.ref.display}", _batch_count(data),
                     "batches") as progress:
        planned.batches = progress.iterate(planned.batches)
        staged, empty = stage_write(planned, txn, 0)
        result = session.commit(planned.spec, staged, empty_bases=empty,
                                static_overwrite=planned.replace_all, replaced=planned.region)
    return dict(result.metrics, **txn.ids())


@dataclass
class PlannedWrite:
    """A write checked against its table, before any transaction: what :func:`stage_write`
    needs (``write_table`` and ``transaction()`` both go through it)."""

    ref: TableRef
    fs: FileSystem
    location: str
    spec: TableSpec
    mapping: ColumnMapping
    rep: Optional[Replacement]
    overwrite: bool
    created: bool
    replace_all: bool  # an overwrite of the whole table (static mode, no partition region)
    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]

    @property
    def operation(self) -> str:
        return "overwrite" if self.overwrite else ("create" if self.created else "append")

    @property
    def region(self) -> Optional[PartitionCondition]:
        return self.rep.region if self.rep else None


def plan_write(data: ArrowData, path: Optional[str] = None, *, table: Optional[str] = None,
               mode: str = "append", partition_by: Columns = None,
               bucket_by: Columns = None, num_buckets: Optional[int] = None,
               partition_overwrite_mode: str = "static",
               options: Optional[Mapping[str, str]] = None,
               partition: Optional[Mapping[str, Any]] = None) -> PlannedWrite:
    """:func:`write_table`'s checks (arguments as there): the table resolved, the data matched
    to it, a new path-mode table created. Opens no transaction."""
    if mode not in MODES:
        raise InvalidOptionError(f"write_table(mode={mode!r}): use 'append' or 'overwrite'")
    opt.check_entry(options, "write_table")
    partition_by = column_list(partition_by, "partition_by")
    bucket_by = column_list(bucket_by, "bucket_by")
    given = {"path": path, "table": table,
             "partitionBy": ",".join(partition_by) if partition_by else None,
             "bucketBy": ",".join(bucket_by) if bucket_by else None,
             "numBuckets": num_buckets, "partitionOverwriteMode": partition_overwrite_mode,
             "partitionSpec": None if partition is None else _spec_json(partition)}
    merged = {**opt.lowered(options), **opt.lowered({k: v for k, v in given.items()
                                                     if v is not None})}
    ref = table_ref(merged)
    write_options = WriteOptions.parse(ref.options, require_path=False)
    schema, batches = _batches(data)
    overwrite = mode == "overwrite"
    layout, created = ref.prepare_write(schema, write_options)
    rep = replacement(layout, write_options, overwrite, ref.display)
    mapping = map_columns(layout, schema, table=ref.display,
                          constants=rep.constants if rep else (),
                          fill_missing=write_options.merge_schema)
    fs, location = ref.location()
    return PlannedWrite(ref, fs, location, TableSpec.of(location, layout), mapping, rep,
                        overwrite, created,
                        overwrite and not write_options.dynamic_overwrite and rep is None,
                        schema, _same_schema(batches, schema))


def stage_write(w: PlannedWrite, txn: Transaction, statement_id: int
                ) -> tuple[list[StagedFile], list[str]]:
    """Stage ``w``'s rows as statement ``statement_id`` of ``txn``'s write id; returns the staged
    files and the partitions an overwrite replaces with an empty base."""
    staged = stage_batches(w.fs, w.spec, InsertTarget(txn.write_id, statement_id,
                                                      base=w.overwrite, replacement=w.rep,
                                                      sole_writer=True),
                           w.mapping, w.batches,
                           w.fs.join(staging_dir(w.fs, w.location, txn.write_id),
                                     "direct" if statement_id == 0 else f"direct-{statement_id}"),
                           0)
    empty = (empty_bases(txn, w.fs, w.spec, staged, replace_all=w.replace_all, region=w.region,
                         ensure=w.rep.ensure if w.rep else ())
             if w.overwrite else [])
    return staged, empty


def _spec_json(partition: Mapping[str, Any]) -> str:
    """``write_table(partition={...})`` as option partitionSpec (values as Hive's text)."""
    if not isinstance(partition, Mapping):
        raise InvalidOptionError(
            f"write_table(partition={partition!r}): give a dict of partition values, e.g. "
            "{'day': '2024-01-01'}")
    return json.dumps({str(k): (DEFAULT_PARTITION if value_string(v) is None else value_string(v))
                       for k, v in partition.items()})


def read_table(path: str, **options: Any) -> pa.Table:
    """Read a table in-process (no Spark), e.g. ``read_table(p, validWriteIds='db.t:5:...')``.

    ``options``: any read option by its name (``versionAsOf=3``, ``columns=["id"]`` or
    ``"id,s"``, ``includeRowId=True``), meaning what it means in ``spark.read``:
    ``readChangeFeed=True`` with ``startingVersion`` (and ``endingVersion``) returns the change
    feed, ``countRows=True`` one ``row_count`` per task. An option of another entry point is
    refused."""
    opts = read_options(path, options)
    opt.check_entry(opts, "read_table")
    if opt.value(opts, "readChangeFeed"):
        return change_feed_table(opts)
    if opt.value(opts, "table") and opt.value(opts, "readLock"):
        ReadLease.open(opt.lowered(opts))  # before planning: a clean waits for this read
    scan = open_scan(opts)
    if scan.options.count_rows:
        return _row_counts(scan)
    return scan.to_arrow()


def _row_counts(scan: TableScan) -> pa.Table:
    """``countRows=true``: one row per task, the visible rows it read (as the Spark source)."""
    reader = TaskReader(scan.fs, scan.read_spec(pa.schema([])))
    counts = [sum(b.num_rows for b in reader.read(t)) for t in scan.tasks()]
    return pa.table({"row_count": pa.array(counts, pa.int64())})


def _batch_count(data: ArrowData) -> Optional[int]:
    """How many record batches ``data`` holds, where that is known before reading it."""
    if isinstance(data, pa.Table):
        return len(data.to_batches())
    return 1 if isinstance(data, pa.RecordBatch) else None


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
