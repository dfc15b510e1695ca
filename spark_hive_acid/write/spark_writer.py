"""The Spark glue for ``df.write.format("hiveacid")``: append (INSERT) and overwrite (INSERT OVERWRITE).

``create_writer`` runs once in Spark's planning worker: it checks options and schema (nothing is
written when they are wrong), creates the table if needed and allocates the job's write id. Each
task's :meth:`HiveAcidArrowWriter.write` stages files per task *attempt*; :meth:`commit` (a driver
side worker) publishes the files named by the successful attempts' messages and commits the write
id; :meth:`abort` aborts it and removes everything staged.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from ..acid import txnlog
from ..acid.layout import TableLayout
from ..io.registry import get_filesystem
from .commit import commit_write, list_partitions
from .options import WriteOptions
from .schema import ColumnMapping, map_columns
from .table_setup import resolve_table
from .task_writer import InsertTarget, InsertWriter, StagedFile, TableSpec

log = logging.getLogger(__name__)


@dataclass
class HiveAcidCommitMessage(WriterCommitMessage):
    task: int
    attempt: int
    files: list[StagedFile]


def spark_to_arrow_schema(schema: StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(schema, timezone="UTC")


def table_spec(path: str, layout: TableLayout) -> TableSpec:
    from .schema import row_type_of
    types = dict((n.lower(), t) for n, t in layout.columns)
    return TableSpec(
        table_path=path, row_type=row_type_of(layout),
        partition_names=tuple(n for n, _ in layout.partition_columns),
        bucket_columns=tuple(layout.bucket_columns),
        bucket_types=tuple(types[c.lower()] for c in layout.bucket_columns),
        num_buckets=layout.num_buckets, bucketing_version=layout.bucketing_version,
        compression=layout.compression)


def create_writer(options: dict, schema: StructType, overwrite: bool) -> "HiveAcidArrowWriter":
    """Entry point for ``HiveAcidDataSource.writer(schema, overwrite)``.

    With the ``table`` option (and no path) the write goes through the Hive Metastore
    (:mod:`spark_hive_acid.write.metastore_mode`).
    """
    if str(options.get("table") or "").strip():
        from .metastore_mode import create_writer as create_metastore_writer
        return create_metastore_writer(options, schema, overwrite)  # type: ignore[return-value]
    opts = WriteOptions.parse(options)
    fs, path = get_filesystem(opts.path, opts.raw)
    arrow_schema = spark_to_arrow_schema(schema)
    layout, created = resolve_table(fs, path, opts, arrow_schema)
    mapping = map_columns(layout, arrow_schema, table=path)
    operation = "overwrite" if overwrite else ("create" if created else "append")
    txn = txnlog.begin(fs, path, operation, timeout_s=opts.txn_timeout_s)
    spec = table_spec(path, layout)
    target = InsertTarget(txn.write_id, 0, base=overwrite,
                          statement_per_task=spec.bucketed and not overwrite)
    return HiveAcidArrowWriter(opts.path, opts.raw, spec, mapping, txn, target,
                               overwrite and not opts.dynamic_overwrite)


class HiveAcidArrowWriter(DataSourceArrowWriter):
    """Picklable: holds only plain data; the file system is rebuilt in each process."""

    def __init__(self, uri: str, options: dict, table: TableSpec, mapping: ColumnMapping,
                 txn: txnlog.Transaction, target: InsertTarget, replace_all: bool):
        self.uri = uri
        self.options = options
        self.table = table
        self.mapping = mapping
        self.txn = txn
        self.target = target
        self.replace_all = replace_all

    def _fs(self):
        return get_filesystem(self.uri, self.options)[0]

    def write(self, iterator: Iterator[pa.RecordBatch]) -> HiveAcidCommitMessage:
        task, attempt, files = stage_task(self._fs(), self.table, self.target, self.txn.write_id,
                                          self.mapping, iterator)
        return HiveAcidCommitMessage(task, attempt, files)

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        fs = self._fs()
        staged = [f for m in messages if isinstance(m, HiveAcidCommitMessage) for f in m.files]
        empty: list[str] = []
        if self.target.base:
            written = {f.partition for f in staged}
            if self.replace_all:
                empty = [p for p in list_partitions(fs, self.table.table_path,
                                                    len(self.table.partition_names))
                         if p not in written]
            if not self.table.partition_names and "" not in written:
                empty = [""]
        result = commit_write(fs, self.table, self.txn, staged, empty_bases=empty)
        log.info("Write id %d committed: %s", self.txn.write_id, result.metrics)

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        txnlog.abort(self._fs(), self.table.table_path, self.txn.write_id, "Spark job failed")


def stage_task(fs, table, target, write_id: int, mapping, iterator, *, heartbeat=None):
    """Executor side of an insert job: stage this task attempt's files under the write id's
    hidden staging dir (discarded on failure); returns (task, attempt, staged files).
    ``heartbeat`` replaces the path-mode log heartbeat (metastore tables keep theirs elsewhere)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    task = ctx.partitionId() if ctx is not None else 0
    attempt = ctx.taskAttemptId() if ctx is not None else 0
    stage = fs.join(txnlog.staging_dir(fs, table.table_path, write_id),
                    f"task-{task:05d}-attempt-{attempt}")
    writer = InsertWriter(fs, table, target, stage, task, heartbeat=heartbeat)
    try:
        for batch in iterator:
            data, parts = mapping.conform(batch)
            writer.write(data, parts)
        files = writer.close()
    except BaseException:
        writer.discard()
        raise
    return task, attempt, files
