"""DELETE / UPDATE / MERGE as Spark jobs writing split-update events (hive-acid-format.md §7).

Every operation is one transaction (one write id W):

1. allocate W and remember the snapshot it reads (``txnlog.begin``);
2. read the target through the ``hiveacid`` reader at that snapshot with ``row__id``;
3. compute, per affected row, a *delete* statement id and/or an *insert* statement id (and the new
   values), as a Spark plan;
4. one ``mapInArrow`` pass writes delete events to ``delete_delta_W_W_S/bucket_N`` (N = writer id
   of the target row's bucket property, events sorted) and new rows to ``delta_W_W_S'/bucket_N``
   into staging; the tasks return the staged file list;
5. publish and commit with Hive's write-set rule: a concurrent DELETE/UPDATE/MERGE that committed
   deletes in the same partition first makes this one fail with CommitConflictError.

Rows are shuffled by (old partition, writer id) before step 4, so every delete file is written by
exactly one task. Inserts of unbucketed tables use the task index as N (unique per task); inserts
of bucketed tables use Hive's bucket hash, and two tasks producing the same bucket are merged at
commit.
"""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from ..acid import txnlog
from ..acid.layout import TableLayout
from ..io.filesystem import FileSystem
from ..io.registry import get_filesystem
from .commit import CommitResult, commit_write
from .schema import map_columns
from .task_writer import (NO_HEARTBEAT, DeleteWriter, InsertTarget, InsertWriter, StagedFile,
                          TableSpec)

log = logging.getLogger(__name__)

ROW_ID = "row__id"
DEL_STMT, INS_STMT = "__hiveacid_del_stmt", "__hiveacid_ins_stmt"
OWID, BP, RID = "__hiveacid_owid", "__hiveacid_bp", "__hiveacid_rid"
OLD_PREFIX = "__hiveacid_old_"
STAGED_SCHEMA = "partition string, dir_name string, bucket int, path string, inserts long, deletes long"


@dataclass(frozen=True)
class DmlTaskSpec:
    """Everything an executor needs to write one DML task (picklable)."""

    uri: str
    options: dict
    table: TableSpec
    write_id: int
    data_names: tuple[str, ...]  # table data + partition column names, in the batch
    layout_json: str
    txnlog_heartbeat: bool = True  # False for metastore tables: their txn lives in the metastore


def _write_task(spec: DmlTaskSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor side of step 4: stage delete and insert events of one task."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    task = ctx.partitionId() if ctx is not None else 0
    attempt = ctx.taskAttemptId() if ctx is not None else 0
    fs, _ = get_filesystem(spec.uri, spec.options)
    stage = fs.join(txnlog.staging_dir(fs, spec.table.table_path, spec.write_id),
                    f"dml-{task:05d}-attempt-{attempt}")
    layout = TableLayout.from_json(spec.layout_json)
    deleters: dict[int, DeleteWriter] = {}
    inserters: dict[int, InsertWriter] = {}
    mapping = None
    old_parts = [OLD_PREFIX + n for n in spec.table.partition_names]
    beat = None if spec.txnlog_heartbeat else NO_HEARTBEAT
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            names = batch.schema.names
            dels = batch.column(names.index(DEL_STMT))
            ins = batch.column(names.index(INS_STMT))
            for stmt in [s for s in pc.unique(dels).to_pylist() if s is not None]:
                sel = batch.filter(pc.equal(dels, stmt))
                w = deleters.get(stmt)
                if w is None:
                    w = deleters[stmt] = DeleteWriter(fs, spec.table, spec.write_id, stmt, stage,
                                                      heartbeat=beat)
                w.write(sel.column(names.index(OWID)).to_numpy(zero_copy_only=False),
                        sel.column(names.index(BP)).to_numpy(zero_copy_only=False),
                        sel.column(names.index(RID)).to_numpy(zero_copy_only=False),
                        [sel.column(names.index(p)) for p in old_parts])
            for stmt in [s for s in pc.unique(ins).to_pylist() if s is not None]:
                sel = batch.filter(pc.equal(ins, stmt)).select(list(spec.data_names))
                if mapping is None:
                    mapping = map_columns(layout, sel.schema, table=spec.table.table_path)
                w = inserters.get(stmt)
                if w is None:
                    w = inserters[stmt] = InsertWriter(
                        fs, spec.table, InsertTarget(spec.write_id, stmt), stage, task,
                        heartbeat=beat)
                data, parts = mapping.conform(sel)
                w.write(data, parts)
        staged: list[StagedFile] = []
        for w in list(deleters.values()) + list(inserters.values()):
            staged.extend(w.close())
    except BaseException:
        for w in inserters.values():
            w.discard()
        fs.delete(stage, recursive=True)
        raise
    yield pa.RecordBatch.from_pylist(
        [{"partition": f.partition, "dir_name": f.dir_name, "bucket": f.bucket, "path": f.path,
          "inserts": f.inserts, "deletes": f.deletes} for f in staged],
        schema=pa.schema([("partition", pa.string()), ("dir_name", pa.string()),
                          ("bucket", pa.int32()), ("path", pa.string()),
                          ("inserts", pa.int64()), ("deletes", pa.int64())]))


@contextmanager
def heartbeats(fs: FileSystem, table_path: str, write_id: int, every_s: float = 60.0):
    """Keep W alive from the driver while its jobs run."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every_s):
            txnlog.heartbeat(fs, table_path, write_id)

    t = threading.Thread(target=run, name=f"hiveacid-heartbeat-{write_id}", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()


def run_dml(spark, uri: str, options: dict, fs: FileSystem, table: TableSpec, layout: TableLayout,
            txn: txnlog.Transaction, plan) -> CommitResult:
    """Steps 4-5 for a prepared plan DataFrame with the columns of the module docstring."""
    staged = stage_dml(spark, uri, options, table, layout, txn.write_id, plan)
    dml_parts = sorted({f.partition for f in staged if f.deletes})
    return commit_write(fs, table, txn, staged, dml_partitions=dml_parts)


def stage_dml(spark, uri: str, options: dict, table: TableSpec, layout: TableLayout,
              write_id: int, plan, *, txnlog_heartbeat: bool = True) -> list[StagedFile]:
    """Step 4: run the Spark job that stages the delete/insert events of write id ``write_id``;
    returns the staged files (nothing is in the table yet)."""
    from pyspark.sql import functions as F

    part_cols = [OLD_PREFIX + n for n in table.partition_names]
    writer_id = F.shiftright(F.col(BP), 16).bitwiseAND(0xFFF)
    # Deletes: all events of one (old partition, writer id) in one task. Pure inserts (no row id):
    # spread by a hash of the row, deterministic so that task retries see the same rows.
    key = F.when(F.col(BP).isNotNull(), writer_id).otherwise(
        F.pmod(F.xxhash64(*[F.col(f"`{c}`") for c in table_data_names(table)]), F.lit(1024)))
    # No explicit partition count: adaptive execution then coalesces the (mostly empty) shuffle
    # partitions, so a small DML does not start spark.sql.shuffle.partitions Python tasks.
    # Coalescing only merges whole partitions: one (partition, writer id) group stays in one task.
    shuffled = plan.repartition(*[F.col(c) for c in part_cols], key)
    spec = DmlTaskSpec(uri, options, table, write_id,
                       tuple(table_data_names(table)), layout.to_json(), txnlog_heartbeat)
    rows = map_in_arrow(shuffled, lambda it: _write_task(spec, it), STAGED_SCHEMA).collect()
    return [StagedFile(r["partition"], r["dir_name"], r["bucket"], r["path"], r["inserts"],
                       r["deletes"]) for r in rows]


def map_in_arrow(df, func, schema: str):
    """``df.mapInArrow(func, schema)`` without PySpark's pandas check.

    PySpark 4.3 builds mapInArrow's UDF through ``pandas_udf``, which refuses to run when pandas is
    not installed although the Arrow path never uses it. Without pandas we build the same UDF
    through PySpark's internal ``_create_udf`` (the Python worker needs no pandas either).
    """
    try:
        import pandas  # noqa: F401
        return df.mapInArrow(func, schema)
    except ImportError:
        pass
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import _create_udf
    from pyspark.util import PythonEvalType

    udf = _create_udf(func, schema, PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    col = udf(*[df[c] for c in df.columns])
    return DataFrame(df._jdf.mapInArrow(col._jc, False, None), df.sparkSession)


def table_data_names(table: TableSpec) -> list[str]:
    return [f.name for f in table.row_type] + list(table.partition_names)
