"""``df.write.format("hiveacid")``: append (INSERT) and overwrite (INSERT OVERWRITE), into a path or
a table named in a Hive Metastore, through one writer and one commit path.

Spark runs a Python data source writer in three kinds of processes, and no Python object lives
through the job:

1. :func:`create_writer` (Spark's planning worker, on the driver host): checks the options and the
   DataFrame's schema against the table (errors here open nothing; a new path-mode table is
   created), begins the transaction (write id; a metastore transaction also takes its lock) and
   hands it over (:meth:`Transaction.hand_over`: a metastore transaction gets a keep-alive
   process that watches the Spark driver and aborts the transaction if the driver dies). The writer
   keeps only picklable data: the table, the transaction's handle, the column mapping.
2. :meth:`HiveAcidArrowWriter.write` (executor tasks): stages this task attempt's files under
   ``<table>/_hiveacid_staging/<W>/``; tasks never talk to a metastore (path-mode tasks refresh
   their write id's heartbeat file).
3. :meth:`HiveAcidArrowWriter.commit` (another driver-side worker): resumes the transaction,
   stops the keep-alive process, and publishes the files named by the successful attempts'
   messages and commits (``txn.committer.commit_write``). :meth:`abort` aborts and removes
   everything staged; Spark calls it when the job or the commit fails.
"""
from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, TypeVar, overload

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from ..catalog import TableRef, table_ref
from ..exceptions import TransactionAbortedError
from ..io.filesystem import FileSystem
from ..txn.base import TxnHandle
from ..txn.committer import commit_write, empty_bases
from ..txn.keepalive import KeepAliveProcess
from ..write.options import WriteOptions
from ..acid.layout import staging_dir
from ..txn.abort import abort_and_clean
from ..write.staging import keep_or_discard, open_staging, remove_staging
from ..write.replace_region import replacement
from ..write.schema import ColumnMapping, map_columns
from ..write.task_writer import InsertTarget, StagedFile, TableSpec, stage_batches
from ._compat import driver_process, in_spark_worker

log = logging.getLogger(__name__)


@dataclass
class HiveAcidCommitMessage(WriterCommitMessage):
    task: int
    attempt: int
    files: list[StagedFile]


def spark_to_arrow_schema(schema: StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(schema, timezone="UTC")


_Writer = TypeVar("_Writer", bound="HiveAcidArrowWriter")


@overload
def create_writer(options: dict, schema: StructType, overwrite: bool) -> "HiveAcidArrowWriter": ...


@overload
def create_writer(options: dict, schema: StructType, overwrite: bool,
                  writer_class: type[_Writer]) -> _Writer: ...


def create_writer(options: dict, schema: StructType, overwrite: bool,
                  writer_class: Optional[type[HiveAcidArrowWriter]] = None) -> "HiveAcidArrowWriter":
    """``HiveAcidDataSource.writer(schema, overwrite)``; runs in Spark's planning worker.
    ``writer_class``: a subclass of :class:`HiveAcidArrowWriter` (the streaming sink's)."""
    table = table_ref(options, in_worker=in_spark_worker())
    wopts = WriteOptions.parse(table.options, require_path=False)
    arrow_schema = spark_to_arrow_schema(schema)
    layout, created = table.prepare_write(arrow_schema, wopts)
    rep = replacement(layout, wopts, overwrite, table.display)
    mapping = map_columns(layout, arrow_schema, table=table.display,
                          constants=rep.constants if rep else (),
                          fill_missing=wopts.merge_schema)
    fs, path = table.location()
    spec = TableSpec.of(path, layout)
    operation = "overwrite" if overwrite else ("create" if created else "append")
    txn = table.begin(operation)
    try:
        open_staging(fs, path, txn.write_id)
        target = InsertTarget(txn.write_id, 0, base=overwrite,
                              statement_per_task=spec.bucketed and not overwrite,
                              replacement=rep)
        handle, keeper = txn.hand_over(driver_process())
    except BaseException as e:
        abort_and_clean(fs, path, txn, f"could not hand the transaction over: {e}")
        raise
    writer = (writer_class or HiveAcidArrowWriter)(
        table, fs, spec, mapping, handle, target,
        overwrite and not wopts.dynamic_overwrite and rep is None, keeper)
    try:
        # Spark pickles the writer right after this returns and would not call abort() if that
        # failed: make sure it cannot, while the transaction can still be aborted here.
        pickle.dumps(writer)
    except BaseException as e:
        writer._stop_keeper()
        abort_and_clean(fs, path, handle, f"could not build the writer: {e}")
        raise
    log.info("write id %d (%s) into %s handed to the job", handle.write_id, operation,
             table.display)
    return writer


class HiveAcidArrowWriter(DataSourceArrowWriter):
    """Picklable: plain data only; each process rebuilds its file system and connections."""

    def __init__(self, table: TableRef, fs: FileSystem, spec: TableSpec, mapping: ColumnMapping,
                 handle: TxnHandle, target: InsertTarget, replace_all: bool,
                 helper: Optional[KeepAliveProcess] = None):
        self.table = table
        self.fs = fs  # file systems pickle by their settings: no catalog call in a task
        self.spec = spec
        self.mapping = mapping
        self.handle = handle
        self.target = target
        self.replace_all = replace_all
        self.helper = helper

    @property
    def write_id(self) -> int:
        return self.handle.write_id

    def _stop_keeper(self) -> None:
        if self.helper is not None:
            self.helper.stop()

    def write(self, iterator: Iterator[pa.RecordBatch]) -> HiveAcidCommitMessage:
        task, attempt, files = stage_task(self.fs, self.spec, self.target,
                                          self.write_id, self.mapping, iterator,
                                          heartbeat=self.handle.task_heartbeat())
        return HiveAcidCommitMessage(task, attempt, files)

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        """Publish and commit. The keep-alive process keeps watching the driver until the commit
        is through: if the driver dies mid-publish, it aborts and removes what was published; if
        the commit fails, Spark calls :meth:`abort`, which decides what becomes of it."""
        fs = self.fs
        staged = [f for m in messages if isinstance(m, HiveAcidCommitMessage) for f in m.files]
        try:
            txn = self.handle.resume()
        except TransactionAbortedError:  # gone: nothing left to keep alive or to abort
            self._stop_keeper()
            remove_staging(fs, self.spec.table_path, self.write_id)
            raise
        rep = self.target.replacement
        try:
            empty = (empty_bases(txn, fs, self.spec, staged, replace_all=self.replace_all,
                                 region=rep.region if rep else None,
                                 ensure=rep.ensure if rep else ())
                     if self.target.base else [])
        except BaseException as e:
            abort_and_clean(fs, self.spec.table_path, txn, f"{type(e).__name__}: {e}")
            raise
        self._commit_resumed(txn, staged, empty)
        self._stop_keeper()

    def _commit_resumed(self, txn: Any, staged: list[StagedFile], empty: list[str]) -> None:
        """Publish and commit the resumed transaction (the streaming sink adds its progress)."""
        rep = self.target.replacement
        commit_write(self.fs, self.spec, txn, staged, empty_bases=empty,
                     static_overwrite=self.target.base and self.replace_all,
                     replaced=rep.region if rep else None)

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        """Abort; where that cannot be confirmed (a metastore out of reach, or a commit whose
        outcome is unknown) the keep-alive process takes the abort over and retries until the
        metastore answers, so the transaction never stays open holding its lock."""
        confirmed = False
        try:
            confirmed = abort_and_clean(self.fs, self.spec.table_path, self.handle,
                                        "Spark job failed")
        finally:
            if self.helper is not None:  # unconfirmed: it retries, and needs what staging holds
                (self.helper.stop if confirmed else self.helper.abort)()


def stage_task(fs: Any, table: TableSpec, target: InsertTarget, write_id: int,
               mapping: ColumnMapping, iterator: Iterator[pa.RecordBatch], *,
               heartbeat: Any = None) -> tuple[int, int, list[StagedFile]]:
    """Executor side of an insert job: stage this task attempt's files under the write id's
    hidden staging dir (discarded on failure); returns (task, attempt, staged files)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    task = ctx.partitionId() if ctx is not None else 0
    attempt = ctx.taskAttemptId() if ctx is not None else 0
    stage = fs.join(staging_dir(fs, table.table_path, write_id),
                    f"task-{task:05d}-attempt-{attempt}")
    files = stage_batches(fs, table, target, mapping, iterator, stage, task, heartbeat=heartbeat)
    keep_or_discard(fs, table.table_path, write_id, stage)  # a straggler of an aborted job
    return task, attempt, files
