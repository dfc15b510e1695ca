"""The user-facing table API, shaped like delta-spark's ``DeltaTable``.

::

    t = HiveAcidTable.forPath(spark, "/warehouse/orders")      # or forName(spark, "db.orders")
    t.delete("status = 'cancelled'")
    t.update("id = 7", set={"qty": "qty + 1"})
    (t.alias("t").merge(updates.alias("s"), "t.id = s.id")
        .whenMatchedUpdate(set={"qty": "s.qty"})
        .whenNotMatchedInsertAll()
        .execute())
    t.history().show()

One class serves both kinds of table: it holds a :class:`~spark_hive_acid.catalog.base.TableRef`
(a path, or a table named in a Hive Metastore), and each DML call is one transaction of that
table (one write id): it reads the table at the transaction's snapshot, writes delete/insert
events, and commits all at once or not at all.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Optional, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import options as opt
from ..catalog import MetastoreTable, PathTable, TableRef, metastore_table
from ..catalog.detail import is_acid_table_dir
from ..acid.partitions import partition_name, value_string
from .. import tableops
from ..exceptions import InvalidOptionError
from ..metastore.model import CompactionRequestResult, TableInfo
from ..metastore.uris import SPARK_CONF_KEYS
from . import convert, dml, table_create
from ._compat import data_source_exists, library_errors, mark_session, session_marked
from .datasource import FORMAT_NAME, HiveAcidDataSource
from .expressions import (
    ColumnOrStr, assignments, referenced_columns, to_column, union_names,
)
from .merge import HiveAcidMergeBuilder
from .statement import Statement, event_columns, resolve_set
from .table_facts import history_frame, detail_frame
from .worker_python import check_worker_python

log = logging.getLogger(__name__)

DEFAULT_ALIAS = "target"


def ensure_registered(spark: SparkSession) -> None:
    """Register the ``hiveacid`` format on this session unless it already is (registering over
    the statically found ``pyspark_hiveacid`` would log a WARN on every use)."""
    if session_marked(spark):
        return
    check_worker_python(spark)  # before Spark fails in a worker without saying why
    if data_source_exists(spark, FORMAT_NAME):
        mark_session(spark)
        return
    try:
        spark.dataSource.register(HiveAcidDataSource)
    except Exception as e:  # noqa: BLE001 - already registered (statically or by the user)
        log.debug("hiveacid registration: %s", e)
    mark_session(spark)


def spark_conf_of(spark: Any) -> dict[str, str]:
    """The Spark conf entries that name a metastore (``spark.hadoop.hive.metastore.uris`` ...)."""
    out = {}
    for key in SPARK_CONF_KEYS:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001 - a conf that cannot be read is simply not set
            value = None
        if value:
            out[key] = value
    return out


class HiveAcidTable:
    """A Hive ACID table in a directory (``forPath``) or named in a Hive Metastore (``forName``,
    ``create``)."""

    def __init__(self, spark: SparkSession, table: TableRef, alias: Optional[str] = None):
        self._spark = spark
        self._ref = table
        self._alias = alias

    # --- construction ------------------------------------------------------------------------------
    @classmethod
    def forPath(cls, spark: SparkSession, path: str,
                options: Optional[Mapping[str, str]] = None) -> "HiveAcidTable":
        """The table at ``path``; raises if there is no Hive ACID table there."""
        opt.check_entry(options, "HiveAcidTable", "HiveAcidTable.forPath")
        table = PathTable.existing(path, options)
        ensure_registered(spark)
        return cls(spark, table)

    @classmethod
    def forName(cls, spark: SparkSession, name: str,
                options: Optional[Mapping[str, str]] = None) -> "HiveAcidTable":
        """The Hive ACID table ``db.tbl`` (or ``tbl`` in ``default``) of the Hive Metastore.

        The metastore is the ``metastoreUri`` option, else the Spark conf
        ``spark.hadoop.hive.metastore.uris``, else ``hive.metastore.uris`` in
        ``$HIVE_CONF_DIR/hive-site.xml``. Other options: ``metastoreTimeout``,
        ``lockWaitTimeout``, ``heartbeatInterval`` (docs/metastore.md). Raises TableNotFoundError,
        NotAnAcidTableError, MetastoreUnavailableError (naming the URI).
        """
        opt.check_entry(options, "HiveAcidTable", "HiveAcidTable.forName")
        table = MetastoreTable.from_options({**opt.lowered(options), "table": name},
                                            spark_conf_of(spark))
        info = table.info()
        ensure_registered(spark)
        return cls(spark, MetastoreTable(info.db, info.name, table.options))

    @classmethod
    def create(cls, spark: SparkSession, name: str, schema: Any, *,
               partitionBy: Optional[Any] = None, bucketBy: Optional[Any] = None,
               numBuckets: Optional[int] = None, properties: Optional[Mapping[str, str]] = None,
               location: Optional[str] = None, bucketingVersion: Optional[int] = None,
               compression: Optional[str] = None, ifNotExists: bool = False,
               options: Optional[Mapping[str, str]] = None) -> "HiveAcidTable":
        """Create an empty transactional (full-ACID, ORC) table and return it: at the path
        ``name`` (anything with a ``/`` or a scheme: ``/data/t``, ``hdfs://nn/t``; path mode), or
        registered as ``db.table`` in the Hive Metastore.

        ``schema``: a StructType or DDL string with every column, partition columns included
        (``char(n)`` / ``varchar(n)`` are kept as such); ``partitionBy`` / ``bucketBy``: column
        names (list or comma-separated); ``location``: a metastore table's directory (default
        the warehouse's). Hive 2.x metastores accept full-ACID tables only when bucketed
        (``bucketBy`` + ``numBuckets``). A table already there is an error unless
        ``ifNotExists``.
        """
        opt.check_entry(options, "HiveAcidTable", "HiveAcidTable.create")
        ref = table_create.create(
            spark_conf_of(spark), name, schema, partitionBy=partitionBy, bucketBy=bucketBy,
            numBuckets=numBuckets, properties=properties, location=location,
            bucketingVersion=bucketingVersion, compression=compression,
            ifNotExists=ifNotExists, options=options)
        if ref.full_name is None:
            return cls.forPath(spark, name, options)
        return cls.forName(spark, ref.display, ref.options)

    def alias(self, name: str) -> "HiveAcidTable":
        """The same table under an alias usable in conditions (``"t.id = s.id"``)."""
        return HiveAcidTable(self._spark, self._ref, name)

    # --- identity ----------------------------------------------------------------------------------
    @property
    def name(self) -> Optional[str]:
        """``db.table`` for a table of the metastore; None for a table known by its path."""
        return self._ref.full_name

    @property
    def metastore_uri(self) -> Optional[str]:
        return self._ref.metastore_uri

    def info(self) -> TableInfo:
        """The table's current metastore entry (tables by name only)."""
        return metastore_table(self._ref, "info()").info()

    @property
    def _fs(self) -> Any:
        return self._ref.location()[0]

    def __repr__(self) -> str:
        alias = f".alias({self._alias!r})" if self._alias else ""
        if self._ref.metastore_uri is not None:
            return (f"HiveAcidTable.forName(spark, {self._ref.display!r}, "
                    f"options={{'metastoreUri': {self.metastore_uri!r}}}){alias}")
        return f"HiveAcidTable.forPath(spark, {self._ref.display!r}){alias}"

    # --- reading -----------------------------------------------------------------------------------
    def _reader(self) -> Any:
        return self._spark.read.format(FORMAT_NAME).options(
            **opt.restrict(self._ref.reader_options(), "spark.read"))

    def _load(self, reader: Any) -> DataFrame:
        with library_errors():
            return reader.load()

    def toDF(self, version: Optional[int] = None, timestamp: Optional[str] = None) -> DataFrame:
        """The table's current committed snapshot as a DataFrame; ``version``: as of that write
        id (option versionAsOf); ``timestamp``: as of that time (option timestampAsOf)."""
        reader = self._reader()
        if version is not None:
            reader = reader.option("versionAsOf", str(version))
        if timestamp is not None:
            reader = reader.option("timestampAsOf", str(timestamp))
        df = self._load(reader)
        return df.alias(self._alias) if self._alias else df

    def count(self) -> int:
        """The number of rows in the current snapshot, without handing Spark the rows.

        ``toDF().count()`` makes the source produce every row (and, since PySpark's Python data
        sources cannot prune columns, every column) only for Spark to count them. This reads with
        option ``countRows``: each task applies the deletes to the ACID keys alone (not decoded
        where stripe statistics prove them) and returns one number."""
        with library_errors():
            row = self._load(self._reader().option("countRows", "true")) \
                .agg(F.sum("row_count")).first()
        return int(row[0] or 0) if row is not None else 0

    def history(self, limit: Optional[int] = None) -> DataFrame:
        """One row per write id, newest first (at most ``limit``): writeId, state
        (committed/aborted/open), operation, startedAt, finishedAt, partitions, numInsertedRows,
        numDeletedRows, reason. A table with no log of its own (written by Hive, or of a
        metastore) tells it from its directories (times and counts unknown)."""
        return history_frame(self._spark, self._ref, limit)

    def snapshot(self) -> str:
        """The current snapshot as a ValidWriteIdList string, for option ``validWriteIds``."""
        return self._ref.snapshot().to_string()

    def detail(self) -> DataFrame:
        """One row: name, location, format, kind, columns, partition and bucket columns, number
        of partitions and files, size in bytes, current write id, open and aborted write ids,
        snapshot."""
        return detail_frame(self._spark, self._ref)

    @staticmethod
    def isHiveAcidTable(spark: SparkSession, path: str,
                        options: Optional[Mapping[str, str]] = None) -> bool:
        """Whether ``path`` is a directory holding a Hive ACID table (never raises)."""
        return is_acid_table_dir(path, options)

    # --- DML (each statement one transaction: spark/statement.py) -------------------------------
    def _statement(self) -> Statement:
        return Statement(self._spark, self._ref, self._alias or DEFAULT_ALIAS)

    def delete(self, condition: Optional[ColumnOrStr] = None) -> dict:
        """Delete the rows matching ``condition`` (all rows when None). Returns metrics.

        Delete events carry no row, so the target is read with only ``row__id``, the partition
        columns and the columns the condition reads (the Python source gets no column pruning
        from Spark; without this a DELETE would decode every column).
        """
        def build(load: dml.TargetLoader, spec: Any) -> DataFrame:
            full = load()
            used = [] if condition is None else referenced_columns(full, to_column(condition))
            t = full if used is None else load(union_names(used, spec.partition_names))
            rows = t.filter(to_column(condition)) if condition is not None else t
            types = dict(full.dtypes)
            nulls = {n: F.lit(None).cast(types[n]) for n in dml.table_data_names(spec)}
            return rows.select(event_columns(t, 0, None, spec, nulls))
        return self._statement().run("delete", build)

    def update(self, condition: Optional[ColumnOrStr] = None,
               set: Optional[Mapping[str, Any]] = None) -> dict:
        """Set columns of the rows matching ``condition``: ``set={"col": "expr" or Column}``.

        Split-update: each row is deleted (``delete_delta_W_W_0``) and re-inserted with its new
        values (``delta_W_W_1``). Changing partition or bucketing columns moves the row to the
        right partition / bucket.
        """
        set = assignments(set, "update(set=...)")

        def build(load: dml.TargetLoader, spec: Any) -> DataFrame:
            t = load()
            changes = resolve_set(t, set, "update(set=...)")
            types = dict(t.dtypes)
            values = {n: (changes[n].cast(types[n]) if n in changes else t[n])
                      for n in dml.table_data_names(spec)}
            rows = t.filter(to_column(condition)) if condition is not None else t
            return rows.select(event_columns(t, 0, 1, spec, values))
        return self._statement().run("update", build)

    def merge(self, source: DataFrame, condition: ColumnOrStr) -> HiveAcidMergeBuilder:
        """Start a MERGE of ``source`` into this table on ``condition``; see HiveAcidMergeBuilder."""
        return HiveAcidMergeBuilder(self._statement(), source, condition)

    # --- replacing partitions, schema, restore (each one transaction: docs/writing.md) ---------
    def truncate(self) -> dict:
        """Empty the table (``TRUNCATE TABLE``) as one ACID write: every partition gets an empty
        ``base_W``; older versions keep their rows (time travel, change feed) until
        :meth:`vacuum`. Returns the metrics and ``partitions``."""
        return tableops.truncate(self._ref)

    def dropPartitions(self, condition: Any) -> dict:
        """Empty the partitions ``condition`` selects (``ALTER TABLE ... DROP PARTITION`` as an
        ACID write: a new empty ``base_W`` in each; the partitions stay, with no rows; older
        versions keep their rows). ``condition``: SQL on the partition columns
        (``"day < '2024-01-01'"``) or a spec (``{"day": "2024-01-01"}``)."""
        return tableops.drop_partitions(self._ref, condition)

    def addColumns(self, columns: Any) -> None:
        """``ALTER TABLE ... ADD COLUMNS``: new data columns at the end; rows written before read
        NULL for them (so does Hive). ``columns``: a DDL string (``"note string, qty int"``), a
        StructType, or ``(name, Hive type)`` pairs. Path mode: a new schema version of the
        table; by name: the metastore's ``alter_table``."""
        self._ref.add_columns(table_create.column_list(columns))

    def restoreToVersion(self, version: int) -> dict:
        """Make the table what it was at write id ``version`` (delta-spark's
        ``restoreToVersion``), as one new write: the partitions that changed since are rewritten
        with their rows at ``version``. Returns the metrics and ``partitions``."""
        from .restore import restore_to_version
        return restore_to_version(self._spark, self._ref, version)
    # --- leaving Hive ACID: conversion to Iceberg / Delta (docs/convert.md) --------------------------
    def convertToIceberg(self, catalog: Any, identifier: str, history: bool = True,
                         verify: bool = True) -> dict:
        """Convert into a new Iceberg table (``catalog``: a pyiceberg Catalog or its properties),
        one snapshot per write id; returns what was done and the verdict."""
        return convert.run(self._ref, convert.iceberg(catalog, identifier), mirror_mode=False,
                           history=history, verify=verify)

    def convertToDelta(self, path: str, history: bool = True, verify: bool = True,
                       storageOptions: Optional[Mapping[str, str]] = None) -> dict:
        """Convert into a new Delta table at ``path``, one version per write id."""
        return convert.run(self._ref, convert.delta(path, storageOptions), mirror_mode=False,
                           history=history, verify=verify)

    def mirrorToIceberg(self, catalog: Any, identifier: str, verify: bool = True) -> dict:
        """Convert on the first call, then apply the write ids committed since, exactly once."""
        return convert.run(self._ref, convert.iceberg(catalog, identifier), mirror_mode=True,
                           verify=verify)

    def mirrorToDelta(self, path: str, verify: bool = True,
                      storageOptions: Optional[Mapping[str, str]] = None) -> dict:
        """Convert on the first call, then apply the write ids committed since, exactly once."""
        return convert.run(self._ref, convert.delta(path, storageOptions), mirror_mode=True,
                           verify=verify)

    def mirrorStream(self, checkpointLocation: str, delta: Optional[str] = None,
                     icebergCatalog: Any = None, icebergTable: Optional[str] = None,
                     trigger: Optional[dict] = None) -> Any:
        """The mirror as a Spark stream (default ``Trigger.AvailableNow``); a StreamingQuery."""
        if delta is None and (icebergCatalog is None or icebergTable is None):
            raise InvalidOptionError("mirrorStream needs delta=PATH, or icebergCatalog= and "
                                     "icebergTable=")
        target = (convert.delta(delta) if delta is not None
                  else convert.iceberg(icebergCatalog, str(icebergTable)))
        return convert.mirror_stream(self._spark, self._ref, self._ref.reader_options(), target,
                                     checkpointLocation, trigger)

    # --- maintenance -------------------------------------------------------------------------------
    def abortStaleTransactions(self, olderThanSeconds: Optional[float] = None) -> list[int]:
        """Abort open write ids idle longer than their timeout (or ``olderThanSeconds``), removing
        their files. Returns the aborted ids. Path-mode tables only."""
        return self._ref.abort_stale(olderThanSeconds)

    def repairTransactionLog(self, writeId: Optional[int] = None,
                             state: Optional[str] = None) -> Optional[int]:
        """Rebuild the damaged record of a path-mode table's transaction log (reads and writes
        stop with TransactionLogDamagedError until then). A record followed by others is rebuilt
        from them; the newest one needs ``writeId`` and ``state`` ("committed" or "aborted"): the
        error lists the candidates. Returns the record's sequence number (None: nothing damaged)."""
        return self._ref.repair_log(writeId, state)

    def compact(self, kind: str = "major", partitions: Optional[Sequence[Any]] = None) -> dict:
        """Compact the table now, in Spark tasks (one per output file): ``"major"`` (one
        ``base_H`` of the live rows per partition) or ``"minor"`` (the deltas merged into
        ``delta_a_b`` + ``delete_delta_a_b``), as Hive's compactor writes them (docs/compaction.md).
        ``partitions``: names (``"p=1/q=a"``) or dicts (``{"p": 1, "q": "a"}``); default all.
        Returns the metrics (partitions, directories/files/bytes before and after, rows, events
        dropped, write id range, duration). Readers and writers keep working meanwhile; obsolete
        directories stay until :meth:`vacuum`."""
        from ..compaction.runner import compact
        from .compaction import spark_runner

        names = None if partitions is None else [_partition_name(p) for p in partitions]
        return compact(self._ref, kind, names, spark_runner(self._spark),
                       self._spark.sparkContext.defaultParallelism)

    def compactIfNeeded(self) -> dict:
        """Apply Hive's Initiator rules per partition (more than 10 delta directories -> minor;
        delta/base size above 0.1 -> major; table properties ``compactorthreshold.*`` and
        ``no_auto_compaction`` as Hive reads them) and run the compactions they call for. Returns
        ``{"decisions": [...], "major": metrics or None, "minor": metrics or None}``."""
        from ..compaction.runner import compact_if_needed
        from .compaction import spark_runner

        return compact_if_needed(self._ref, spark_runner(self._spark),
                                 self._spark.sparkContext.defaultParallelism)

    def vacuum(self, retentionHours: float = 168.0, dryRun: bool = False) -> dict:
        """Remove the directories compaction (or a newer base) made obsolete once they have been
        hidden for ``retentionHours`` (the bound on how long a read may run), aborted directories,
        and staging left by killed writers; also checkpoints a path-mode table's log. Tables of a
        metastore follow Hive's Cleaner rule besides (no transaction or lock older than the
        compaction still open). ``dryRun=True`` only lists them. Returns what was (or would be)
        removed and what was kept (docs/compaction.md)."""
        from ..compaction.vacuum import vacuum_table

        return vacuum_table(self._ref, retentionHours, dryRun)

    def doctor(self, engines: Any = None, thresholds: Optional[Mapping[str, Any]] = None) -> dict:
        """The table's health: per partition deltas, cleans, other engines' known misreads, the
        metastore's compactions (``hiveacid doctor``, docs/maintenance.md); a JSON-able dict."""
        from ..maintenance.doctor import doctor_table

        return doctor_table(self._ref, engines, dict(thresholds or {}))

    def requestCompaction(self, kind: str = "major", partition: Any = None
                          ) -> CompactionRequestResult:
        """Queue a ``major`` or ``minor`` compaction in the metastore (of ``partition`` for a
        partitioned table: ``{"ds": "x"}``, a value list or ``"ds=x"``). Returns
        ``CompactionRequestResult(id, state, accepted)``; a compactor worker on some metastore
        (``hive.compactor.worker.threads`` > 0) must run it."""
        table = metastore_table(self._ref, "requestCompaction()")
        client = table.client()
        with client:
            return client.request_compaction(table.db, table.name, partition, kind)

    def compactions(self) -> DataFrame:
        """The metastore's compaction queue/history for this table (``SHOW COMPACTIONS``)."""
        table = metastore_table(self._ref, "compactions()")
        client = table.client()
        with client:
            infos = client.compactions(table.db, table.name)
        rows = [(i.id, i.partition, (i.type or "").lower(), i.state, i.worker_id, i.start_ms,
                 i.run_as, i.highest_txn_id, i.end_ms) for i in infos]
        schema = ("id long, partition string, type string, state string, workerId string, "
                  "startMs long, runAs string, highestTxnId long, endMs long")
        return self._spark.createDataFrame(rows, schema)


def _partition_name(p: Any) -> str:
    """``"p=1/q=a"`` as given, or the Hive directory name of ``{"p": 1, "q": "a"}``."""
    if isinstance(p, str):
        return p.strip("/")
    if isinstance(p, Mapping):
        return partition_name(list(p), [value_string(v) for v in p.values()])
    raise InvalidOptionError(f"Partition {p!r}: give a name like 'p=1' or a dict like {{'p': 1}}")
