"""``HiveAcidTable.restoreToVersion(v)``: the table as it was at write id ``v``, as one new write.

One transaction: the partitions whose content may differ from version ``v``
(``tableops.restore_plan``) are read at ``v`` through the ``hiveacid`` reader (time travel) and
written as ``base_W`` in one Spark job (the DML job's task writer, ``spark.dml.stage_dml``); those
that held no row at ``v`` get an empty ``base_W``. Older versions stay readable (time travel,
change feed: the restore deletes what changed after ``v`` and inserts ``v``'s rows again).
Conflict rules: a restore is computed from rows it read, so a concurrent write that changed a
partition it rewrites makes one of the two fail (``txn.conflicts``).
"""
from __future__ import annotations

import logging
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..catalog import TableRef
from ..acid.partitions import DEFAULT_PARTITION, parse_partition_name
from ..exceptions import InvalidOptionError
from ..tableops.replace import table_layout
from ..tableops.restore_plan import partition_names, partitions_to_restore
from ..txn.session import WriteSession
from ..write.task_writer import TableSpec
from . import dml
from ._compat import library_errors
from .datasource import FORMAT_NAME

log = logging.getLogger(__name__)
RESTORE = "restore"


def restore_to_version(spark: Any, ref: TableRef, version: int) -> dict:
    """See the module docstring; returns the metrics (``partitions``: those rewritten)."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidOptionError(f"restoreToVersion({version!r}) needs a write id (an int >= 0)")
    ref.scan({"versionAsOf": str(version)}).write_ids  # a version that cannot be read: fail now
    layout = table_layout(ref)
    fs, path = ref.location()
    spec = TableSpec.of(path, layout)
    txn = ref.begin(RESTORE)
    with WriteSession(fs, path, txn, RESTORE) as session:
        write_ids, txns = (s.to_string() for s in txn.read_snapshot())
        now = ref.scan({"validWriteIds": write_ids, "validTxns": txns})
        then = ref.scan({"versionAsOf": str(version)})
        parts = partitions_to_restore(now.plan, then.plan, version)
        staged = []
        if parts:
            reader = (spark.read.format(FORMAT_NAME).options(**ref.reader_options())
                      .option("versionAsOf", str(version)))
            with library_errors():
                rows = _only(reader.load(), parts, spec.partition_names,
                             partition_names(then.plan) <= set(parts))
            staged = dml.stage_dml(spark, fs, spec, layout, txn.write_id, _inserts(rows, spec),
                                   txn.handle().task_heartbeat(), base=True)
        written = {f.partition for f in staged}
        result = session.commit(spec, staged, empty_bases=[p for p in parts if p not in written],
                                reads_table=True)
    log.info("Restored %s to version %d: write id %d rewrote %d partition(s)", ref.display,
             version, txn.write_id, len(parts))
    return dict(result.metrics, partitions=[p for p in parts if p], **txn.ids())


def _only(df: DataFrame, parts: list[str], names: tuple[str, ...], everything: bool) -> DataFrame:
    """The rows of ``df`` in the partitions ``parts`` (all of them: ``everything``)."""
    if everything or not names:
        return df
    types = dict(df.dtypes)

    def one(part: str) -> Column:
        values = parse_partition_name(part)
        conds = []
        for n in names:
            v = values.get(n)
            v = None if v == DEFAULT_PARTITION else v
            conds.append(F.col(f"`{n}`").isNull() if v is None
                         else F.col(f"`{n}`") == F.lit(v).cast(types[n]))
        return reduce(lambda a, b: a & b, conds)
    return df.filter(reduce(lambda a, b: a | b, [one(p) for p in parts]))


def _inserts(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """The DML job's plan (``spark.dml``) of inserting ``rows``: no deletes, statement 0."""
    cols = [F.lit(None).cast("long").alias(dml.OWID), F.lit(None).cast("int").alias(dml.BP),
            F.lit(None).cast("long").alias(dml.RID), F.lit(None).cast("int").alias(dml.DEL_STMT),
            F.lit(0).cast("int").alias(dml.INS_STMT)]
    cols += [rows[f"`{p}`"].alias(dml.OLD_PREFIX + p) for p in spec.partition_names]
    cols += [rows[f"`{n}`"] for n in dml.table_data_names(spec)]
    return rows.select(cols)
