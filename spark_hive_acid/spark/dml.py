"""DELETE / UPDATE / MERGE as Spark jobs writing split-update events (docs/format.md §7).

Every operation is one transaction (one write id W):

1. begin the transaction (``TableRef.begin``: a write id, and the snapshot it reads);
2. read the target through the ``hiveacid`` reader at that snapshot with ``row__id``;
3. compute, per affected row, a *delete* statement id and/or an *insert* statement id (and the new
   values), as a Spark plan;
4. one ``mapInArrow`` pass writes delete events to ``delete_delta_W_W_S/bucket_N`` (N = writer id
   of the target row's bucket property, events sorted) and new rows to ``delta_W_W_S'/bucket_N``
   into staging; the tasks return the staged file list;
5. publish and commit (``txn.committer.commit_write``) with Hive's write-set rule: a concurrent
   DELETE/UPDATE/MERGE that committed deletes in the same partition first makes this one fail
   with CommitConflictError.

The same runner (:func:`run_dml`) serves path-mode and metastore tables: they differ only in the
transaction their :class:`~spark_hive_acid.catalog.base.TableRef` begins.

Rows are shuffled by (old partition, writer id) before step 4, so every delete file is written by
exactly one task. Inserts of unbucketed tables use the task index as N (unique per task); inserts
of bucketed tables use Hive's bucket hash, and two tasks producing the same bucket are merged at
commit.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..acid.layout import TableLayout
from ..catalog.base import TableRef
from ..exceptions import UnsupportedOperationError
from ..io.filesystem import FileSystem
from ..acid.names import ROW_ID_COLUMN
from ..txn.session import WriteSession
from ..txn.keepalive import TaskHeartbeat
from ..acid.layout import staging_dir
from ..write.schema import map_columns
from ..write.staging import keep_or_discard
from ..write.task_writer import DeleteWriter, InsertTarget, InsertWriter, StagedFile, TableSpec
from ._compat import map_in_arrow
from .job_progress import run_with_progress

log = logging.getLogger(__name__)

ROW_ID = ROW_ID_COLUMN  # the target's row__id column in the plan
DEL_STMT, INS_STMT = "__hiveacid_del_stmt", "__hiveacid_ins_stmt"
OWID, BP, RID = "__hiveacid_owid", "__hiveacid_bp", "__hiveacid_rid"
OLD_PREFIX = "__hiveacid_old_"
#: ``load(columns=None)``: the DML target at the transaction's snapshot, with row__id, aliased; with
#: ``columns``, only those (plus row__id) are read
TargetLoader = Callable[..., DataFrame]
STAGED_SCHEMA = "partition string, dir_name string, bucket int, path string, inserts long, deletes long"


@dataclass(frozen=True)
class DmlTaskSpec:
    """Everything an executor needs to write one DML task (picklable)."""

    fs: FileSystem
    table: TableSpec
    write_id: int
    data_names: tuple[str, ...]  # table data + partition column names, in the batch
    layout_json: str
    heartbeat: TaskHeartbeat
    base: bool = False  # inserts go to base_W (a restore), not delta_W_W_S


def _write_task(spec: DmlTaskSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor side of step 4: stage delete and insert events of one task."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    task = ctx.partitionId() if ctx is not None else 0
    attempt = ctx.taskAttemptId() if ctx is not None else 0
    fs = spec.fs
    stage = fs.join(staging_dir(fs, spec.table.table_path, spec.write_id),
                    f"dml-{task:05d}-attempt-{attempt}")
    layout = TableLayout.from_json(spec.layout_json)
    deleters: dict[int, DeleteWriter] = {}
    inserters: dict[int, InsertWriter] = {}
    mapping = None
    old_parts = [OLD_PREFIX + n for n in spec.table.partition_names]
    beat = spec.heartbeat
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            names = batch.schema.names
            dels = batch.column(names.index(DEL_STMT))
            ins = batch.column(names.index(INS_STMT))
            for stmt in [s for s in pc.unique(dels).to_pylist() if s is not None]:
                sel = batch.filter(pc.equal(dels, stmt))
                deleter = deleters.get(stmt)
                if deleter is None:
                    deleter = deleters[stmt] = DeleteWriter(fs, spec.table, spec.write_id, stmt, stage,
                                                            heartbeat=beat, sorted_input=True)
                deleter.write(sel.column(names.index(OWID)).to_numpy(zero_copy_only=False),
                              sel.column(names.index(BP)).to_numpy(zero_copy_only=False),
                              sel.column(names.index(RID)).to_numpy(zero_copy_only=False),
                              [sel.column(names.index(p)) for p in old_parts])
            for stmt in [s for s in pc.unique(ins).to_pylist() if s is not None]:
                sel = batch.filter(pc.equal(ins, stmt)).select(list(spec.data_names))
                if mapping is None:
                    mapping = map_columns(layout, sel.schema, table=spec.table.table_path)
                inserter = inserters.get(stmt)
                if inserter is None:
                    inserter = inserters[stmt] = InsertWriter(
                        fs, spec.table, InsertTarget(spec.write_id, stmt, base=spec.base), stage,
                        task, heartbeat=beat)
                data, parts = mapping.conform(sel)
                inserter.write(data, parts)
        staged: list[StagedFile] = []
        writers: list[DeleteWriter | InsertWriter] = [*deleters.values(), *inserters.values()]
        for writer in writers:
            staged.extend(writer.close())
        keep_or_discard(fs, spec.table.table_path, spec.write_id, stage)  # straggler of an abort
    except BaseException:
        for inserter in inserters.values():
            inserter.discard()
        fs.delete(stage, recursive=True)
        raise
    yield pa.RecordBatch.from_pylist(
        [{"partition": f.partition, "dir_name": f.dir_name, "bucket": f.bucket, "path": f.path,
          "inserts": f.inserts, "deletes": f.deletes} for f in staged],
        schema=pa.schema([("partition", pa.string()), ("dir_name", pa.string()),
                          ("bucket", pa.int32()), ("path", pa.string()),
                          ("inserts", pa.int64()), ("deletes", pa.int64())]))


def run_dml(ref: TableRef, operation: str, layout: TableLayout,
            load_at: Callable[[str, str, Any], DataFrame], build: Callable, *,
            inserts_unmatched: bool = False) -> dict:
    """One DML statement as one transaction on ``ref``.

    ``load_at(write_ids, txns, columns)`` reads the target at a snapshot (with row__id; only
    ``columns`` when given); ``build(load, spec)`` returns the plan DataFrame of the module
    docstring from ``load(columns=None)``, the target at the transaction's snapshot.
    ``inserts_unmatched``: a MERGE that inserts rows no target row matched (a conflict rule).
    """
    refuse_insert_only(ref, operation, layout)
    fs, path = ref.location()
    spec = TableSpec.of(path, layout)
    txn = ref.begin(operation)
    with WriteSession(fs, path, txn, operation) as session:
        write_ids, txns = (s.to_string() for s in txn.read_snapshot())
        plan = build(lambda columns=None: load_at(write_ids, txns, columns), spec)
        staged = stage_dml(plan.sparkSession, fs, spec, layout, txn.write_id, plan,
                           txn.handle().task_heartbeat())
        result = session.commit(spec, staged, inserts_unmatched=inserts_unmatched)
    return dict(result.metrics, **txn.ids())


def refuse_insert_only(ref: TableRef, operation: str, layout: TableLayout) -> None:
    """DELETE / UPDATE / MERGE need ROW__IDs, which the plain files of an insert-only table do not
    have; Hive refuses them too (error 10414). Raised before any transaction begins."""
    if layout.insert_only:
        raise UnsupportedOperationError(
            f"Cannot {operation.upper()} table {ref.display}: it is an insert-only table "
            "(transactional_properties=insert_only), whose plain data files have no ROW__IDs, so "
            "rows cannot be deleted or updated in place. Hive refuses this too (\"Attempt to do "
            "update or delete on table ... that is insert-only transactional\"). Append with "
            "mode('append'), or rewrite the table or its partitions with mode('overwrite') "
            "(partitionOverwriteMode=dynamic for only the partitions in the data).")


def stage_dml(spark: Any, fs: FileSystem, table: TableSpec, layout: TableLayout, write_id: int,
              plan: DataFrame, heartbeat: TaskHeartbeat, *, base: bool = False
              ) -> list[StagedFile]:
    """Step 4: run the Spark job that stages the delete/insert events of write id ``write_id``;
    returns the staged files (nothing is in the table yet). ``base``: the inserts go to
    ``base_W`` (a plan of inserts only: a restore)."""
    part_cols = [OLD_PREFIX + n for n in table.partition_names]
    writer_id = F.shiftright(F.col(BP), 16).bitwiseAND(0xFFF)
    # Deletes: all events of one (old partition, writer id) in one task. Pure inserts (no row id):
    # spread by a hash of the row, deterministic so that task retries see the same rows.
    key = F.when(F.col(BP).isNotNull(), writer_id).otherwise(
        F.pmod(F.xxhash64(*[F.col(f"`{c}`") for c in table_data_names(table)]), F.lit(1024)))
    # No explicit partition count: adaptive execution then coalesces the (mostly empty) shuffle
    # partitions, so a small DML does not start spark.sql.shuffle.partitions Python tasks.
    # Coalescing only merges whole partitions: one (partition, writer id) group stays in one task.
    # Sorted within each task by (old partition, writer id, ROW__ID): delete events then stream
    # into one open file at a time, in the order Hive requires, whatever their number; Spark's
    # sort spills to disk. (The writer id of a Hive 2 bucket property is the property itself.)
    true_writer_id = F.when(F.shiftright(F.col(BP), 29).bitwiseAND(7) == 0, F.col(BP)) \
        .otherwise(writer_id)
    shuffled = plan.repartition(*[F.col(c) for c in part_cols], key).sortWithinPartitions(
        *[F.col(c) for c in part_cols], true_writer_id, F.col(OWID), F.col(BP), F.col(RID))
    spec = DmlTaskSpec(fs, table, write_id, tuple(table_data_names(table)), layout.to_json(),
                       heartbeat, base)
    job = map_in_arrow(shuffled, lambda it: _write_task(spec, it), STAGED_SCHEMA)
    rows = run_with_progress(spark, f"write id {write_id} of {table.table_path}: staging events",
                             job.collect)
    return [StagedFile(r["partition"], r["dir_name"], r["bucket"], r["path"], r["inserts"],
                       r["deletes"]) for r in rows]


def table_data_names(table: TableSpec) -> list[str]:
    return [f.name for f in table.row_type] + list(table.partition_names)
